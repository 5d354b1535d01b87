// The store contract shared by the SQLite and PostgreSQL adapters (see ../shared/ARCHITECTURE.md).
// The Admission Log, the trusted acceptance context, the protected audit log, the Organization
// configuration the store holds, and the per-Group event log (group-log.ts).

import type {AcceptanceContext, AdmissionLog, TrustedContextSource} from '../admission/log.js'
import type {Principal} from '../signing/profiles.js'
import type {GroupLog} from './group-log.js'
import type {PolicyLogReader} from './policy-log.js'
import type {CursorTable} from './cursors.js'
import type {CheckpointTable} from './checkpoints.js'
import type {MessageTable} from './message-table.js'
import type {MemberTable} from './member-table.js'
import type {LeaseTable} from './lease-table.js'
import type {OrgLog} from './org-log.js'

/** Command freshness window (§6.4, last paragraphs): how old / how far ahead `issuedAt` may be. */
export interface FreshnessWindow {
  maxAgeSeconds: number
  maxFutureSkewSeconds: number
}

export const DEFAULT_FRESHNESS: FreshnessWindow = {maxAgeSeconds: 300, maxFutureSkewSeconds: 60}

/** Organization configuration kept in the store (never a private key). */
export interface StoreConfig {
  organizationId: string
  /**
   * The Organization admission service: the only writer of First-Admission Records. `keyFile`
   * optionally names where its private key file lives on the admitting host (the key itself is
   * never stored), so `mwp admit` needs no --admission-key.
   */
  admissionService: {principal: Principal; keyId: string; publicKey: string; keyFile?: string}
  freshness: FreshnessWindow
}

/** One protected diagnostic: never sent on the wire, readable by the local operator. */
export interface AuditEntry {
  /** RFC 3339 UTC time the failure was recorded. */
  at: string
  /** parse | schema | signature-envelope | key-resolution | canonicalization | signature | admission | freshness */
  stage: string
  reason: string
  documentKind?: string
  signingHash?: string
  /** What was presented (file name, action ID, …), for the operator. */
  subject?: string
  detail?: string
}

export interface AuditRow extends AuditEntry {
  id: number
}

export interface Store extends AdmissionLog, TrustedContextSource, GroupLog, PolicyLogReader {
  readonly url: string
  readonly config: StoreConfig
  /** Appends one audit entry (durable on return). */
  audit(entry: AuditEntry): Promise<void>
  /** Audit entries in insertion order, optionally only those at or after `since` (instant). */
  listAudit(options?: {since?: string; limit?: number}): Promise<AuditRow[]>
  /** The Organization-scoped log: Session Epochs and Agent Card registrations (org-log.ts). */
  organizationLog(): OrgLog
  /** Durable per-principal per-Group delivery Cursors (cursors.ts). */
  cursors(): CursorTable
  /** Signed folded-state checkpoints per Group: a cold-start optimization, never trusted unverified (checkpoints.ts). */
  checkpoints(): CheckpointTable
  /** §9: the committed Messages of each Group, written by the Group append (message-table.ts). */
  messages(): MessageTable
  /** §8: each principal's Memberships across Groups, written by the Group append (member-table.ts). */
  members(): MemberTable
  /** §6.3/§11.3: each Agent's active Execution Leases across Groups, written by the Group append (lease-table.ts). */
  leases(): LeaseTable
  /**
   * Push notice of appends committed by any process sharing the store (PostgreSQL LISTEN/NOTIFY,
   * pg-notify.ts): `listener` gets the Group ID of each append after its COMMIT, never for a
   * rolled-back one; `onResync` runs when notices may have been lost (listener reconnected).
   * Resolves once listening; the returned function stops it. Undefined where the store cannot
   * push (SQLite): callers poll.
   */
  watchAppends?(listener: (groupId: string) => void, onResync?: () => void): Promise<() => Promise<void>>
  /**
   * Push notice of membership index writes by any process sharing the store, like watchAppends:
   * `listener` gets the principal ID of each changed row after its COMMIT (member-table.ts).
   * Undefined where the store cannot push (SQLite).
   */
  watchMembers?(listener: (principalId: string) => void, onResync?: () => void): Promise<() => Promise<void>>
  close(): Promise<void>
}

export type {AcceptanceContext}
