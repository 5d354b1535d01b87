// First admission and historical replay (spec §6.4, ACCEPTANCE D1-D18, N5-N6).
//
// Both start from a completed six-stage verification and never change its results. Every
// failure is wire AUTH_INVALID_SIGNATURE with protected stage `admission` and a stable reason.
//
// First admission:  lookup (exactly once, first) →
//   found                  → validate the stored record → done (no context, no append)
//   authoritative absence  → trusted context → trusted time inside the key interval (before any
//                            append) → candidate → append-or-return-existing → validate THE
//                            RETURNED record (committed or concurrent winner) → done
//   anything else          → fail closed
// Historical replay: lookup → found → validate; never context, never append.

import {Rejection, Verified} from '../signing/verify.js'
import type {AcceptanceContext, AdmissionLog, AppendResult, LookupResult, TrustedContextSource} from './log.js'
import {
  AdmissionFault,
  type FirstAdmissionRecord,
  candidateRecord,
  parseTrustedTime,
  validateRecord,
  withinKeyInterval,
} from './record.js'

export interface Admitted {
  ok: true
  record: FirstAdmissionRecord
  /** Exact bytes of the authoritative record. */
  recordBytes: Uint8Array
  /** found: an earlier admission (idempotent retry); committed: this call; existing: a concurrent winner. */
  outcome: 'found' | 'committed' | 'existing'
}

export type AdmissionResult = Admitted | Rejection

/** Admission anchors only what the verifier issued: an object shaped like a Verified is not one. */
function issuedByVerifier(verified: Verified): void {
  if (!Verified.is(verified)) throw new TypeError('admission needs a Verified issued by verify() or verifyOffThread()')
}

const reject = (fault: AdmissionFault): Rejection =>
  new Rejection({stage: 'admission', reason: fault.reason, detail: fault.detail})

type Stored = Extract<AppendResult, {status: 'committed' | 'existing'}>
const isStored = (r: AppendResult): r is Stored => r.status === 'committed' || r.status === 'existing'

/** Maps a non-found lookup or non-success append to its protected reason. */
function logFault(
  result: Exclude<LookupResult, {status: 'found'}> | Exclude<AppendResult, Stored>,
  phase: 'lookup' | 'append',
): AdmissionFault {
  const detail = 'detail' in result ? result.detail : undefined
  switch (result.status) {
    case 'authoritative-absence':
      return new AdmissionFault('record-missing', 'no First-Admission Record for this signing hash')
    case 'unauthenticated':
      return new AdmissionFault('log-authentication-failed', detail)
    case 'integrity-failed':
      return new AdmissionFault(
        phase === 'append' ? 'append-integrity-not-established' : 'log-integrity-failed',
        detail,
      )
    case 'unavailable':
      return new AdmissionFault('log-unavailable', detail)
    case 'indeterminate':
      return new AdmissionFault('log-indeterminate', detail)
    case 'conflict':
      return new AdmissionFault(
        'record-conflict',
        detail ?? 'the log holds an incompatible record for this signing hash',
      )
    case 'commit-failed':
      return new AdmissionFault('commit-failed', detail)
  }
}

/**
 * First admission of a newly presented, six-stage-verified document. `documentBytes` are the
 * exact received bytes (used only to refuse an Event anchoring itself).
 */
export interface AdmitOptions {
  /**
   * A further check of a NEW admission at the trusted acceptance context, run after the key
   * interval check and before anything is appended (Command freshness). Not run for a record
   * that already exists: an unchanged retry returns the original result.
   */
  gate?: (context: AcceptanceContext) => Rejection | null
}

export async function admitFirst(
  verified: Verified,
  documentBytes: Uint8Array,
  log: AdmissionLog,
  trusted: TrustedContextSource,
  options: AdmitOptions = {},
): Promise<AdmissionResult> {
  issuedByVerifier(verified)
  const found = await log.lookup(verified.organizationId, verified.signingHash)
  if (found.status === 'found')
    return settle(verified, documentBytes, found.record, found.authenticatedService, 'found')
  if (found.status !== 'authoritative-absence') return reject(logFault(found, 'lookup'))

  const context = await trusted.acceptanceContext()
  if (context.acceptedBy.type !== 'service')
    return reject(new AdmissionFault('context-not-service', 'the acceptance context names a non-service Principal'))
  const t = parseTrustedTime(context.trustedAcceptedAt)
  if (t === null)
    return reject(
      new AdmissionFault('malformed-trusted-time', `trustedAcceptedAt ${JSON.stringify(context.trustedAcceptedAt)}`),
    )
  // Checked before append: a signer cannot backdate past a revocation into a new admission.
  if (!withinKeyInterval(verified, t)) {
    return reject(
      new AdmissionFault(
        'trusted-time-outside-key-interval',
        `trusted acceptance time ${context.trustedAcceptedAt} is outside the key's validity`,
      ),
    )
  }

  const gated = options.gate?.(context)
  if (gated) return gated

  const {bytes} = candidateRecord(verified, context)
  const appended = await log.appendOrReturnExisting({
    organizationId: verified.organizationId,
    signingHash: verified.signingHash,
    documentKind: verified.kind,
    keyId: verified.keyId,
    principal: verified.principal,
    admissionRecordId: context.admissionRecordId,
    bytes,
  })
  if (!isStored(appended)) return reject(logFault(appended, 'append'))
  return settle(verified, documentBytes, appended.record, appended.authenticatedService, appended.status)
}

/** Historical replay: a found, valid record anchors a document verified with historical evidence. */
export async function replayHistorical(
  verified: Verified,
  documentBytes: Uint8Array,
  log: AdmissionLog,
): Promise<AdmissionResult> {
  issuedByVerifier(verified)
  const found = await log.lookup(verified.organizationId, verified.signingHash)
  if (found.status !== 'found') return reject(logFault(found, 'lookup'))
  return settle(verified, documentBytes, found.record, found.authenticatedService, 'found')
}

function settle(
  verified: Verified,
  documentBytes: Uint8Array,
  recordBytes: Uint8Array,
  service: {type: 'agent' | 'human' | 'service'; id: string},
  outcome: Admitted['outcome'],
): AdmissionResult {
  const record = validateRecord(verified, documentBytes, recordBytes, service)
  if (record instanceof AdmissionFault) return reject(record)
  return {ok: true, record, recordBytes, outcome}
}
