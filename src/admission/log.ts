// The Admission Log seam (spec §6.4 "First-Admission Record").
//
// The log is keyed by (organizationId, signingHash). Every operation returns a typed outcome:
// never a caller-supplied boolean. Whether the accepting service was authenticated and whether
// append-only integrity holds are facts the ADAPTER establishes and reports; a record never
// proves them about itself. The real stores (src/store) and the conformance runner's scripted
// adapter implement this same interface.

import type {Principal} from '../signing/profiles.js'

/** A record as held by the log: its exact bytes and the service the adapter authenticated. */
export interface AuthenticatedRecord {
  /** Exact record bytes (one JSON object); validated by the caller, never trusted as is. */
  record: Uint8Array
  /** The accepting service identity established by the adapter for this record. */
  authenticatedService: Principal
}

export type LookupResult =
  | ({status: 'found'} & AuthenticatedRecord)
  | {status: 'authoritative-absence'}
  | {status: 'unauthenticated' | 'integrity-failed' | 'unavailable' | 'indeterminate'; detail?: string}

export type AppendResult =
  | ({status: 'committed' | 'existing'} & AuthenticatedRecord)
  | {
      status: 'conflict' | 'unauthenticated' | 'integrity-failed' | 'unavailable' | 'indeterminate' | 'commit-failed'
      detail?: string
    }

/** What a new First-Admission Record is appended under. */
export interface Candidate {
  organizationId: string
  signingHash: string
  documentKind: string
  keyId: string
  principal: Principal
  admissionRecordId: string
  /** `JSON.stringify(record, null, 2) + "\n"`, the nine fields in schema order. */
  bytes: Uint8Array
}

export interface AdmissionLog {
  /** Authoritative lookup of the one record for (organizationId, signingHash). */
  lookup(organizationId: string, signingHash: string): Promise<LookupResult>
  /**
   * One atomic append-or-return-existing for the candidate's logical key: `committed` with the
   * stored record, `existing` with a compatible record already there (e.g. a concurrent winner),
   * or `conflict` when the key holds a record for another kind, key ID or Principal.
   */
  appendOrReturnExisting(candidate: Candidate): Promise<AppendResult>
}

/** Trusted acceptance context: the Organization's admission service and its clock. */
export interface AcceptanceContext {
  admissionRecordId: string
  /** Organization-assigned trusted acceptance instant (spelling retained; any offset allowed). */
  trustedAcceptedAt: string
  acceptedBy: Principal
}

export interface TrustedContextSource {
  /** Called at most once per first admission, and only after an authoritative absence. */
  acceptanceContext(): Promise<AcceptanceContext>
}
