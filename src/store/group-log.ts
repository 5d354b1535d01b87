// The per-Group event log the Group Authority writes through (spec §15, §16; ARCHITECTURE.md
// principles 2, 3 and 6). One write operation: `append` stores a Command's Events, advances the
// Group head and revision, and records the Command's idempotency receipt — atomically, or
// nothing. Appends to one Group serialize; different Groups never wait on each other.
//
// The store never writes or rewrites signed bytes: the caller assigns each Event's sequence inside
// the Event it signs, and the store checks that sequence against the one it would assign.

import type {GroupAppend} from './multi-append.js'

import type {PolicyRecord} from './policy-log.js'
import type {MessageRow} from './message-table.js'
import type {MemberRow} from './member-table.js'
import type {LeaseRow} from './lease-table.js'

/** One Event to append: the exact signed bytes plus the fields the store indexes and checks. */
export interface StoredEvent {
  eventId: string
  kind: string
  /** The Group sequence declared inside `bytes`; must be expectedHead + 1, + 2, … in order. */
  sequence: number
  /** The Group aggregate revision declared inside `bytes`; the Group revision becomes the last. */
  aggregateRevision: number
  /** Exact signed Event bytes, stored and returned byte for byte. */
  bytes: Uint8Array
  /** §20: set when the Event is a Policy Log fact; the append writes its policy_log row atomically. */
  policyRecord?: PolicyRecord
  /** §9: set when the Event posts or follows up a Message; the append writes its group_messages row atomically (message-table.ts). */
  message?: MessageRow
  /** §8: the Membership documents the Event carries; the append writes their group_members rows atomically (member-table.ts). */
  members?: MemberRow[]
  /** §11.3: the Execution Leases the Event opens or closes; the append writes their group_leases rows atomically (lease-table.ts). */
  leases?: LeaseRow[]
}

/** An Event read back from the log. */
export interface LoggedEvent {
  sequence: number
  eventId: string
  kind: string
  bytes: Uint8Array
}

/** The idempotency receipt of one accepted Command, keyed by (actorId, actionId) (spec §15.1). */
export interface Receipt {
  actorId: string
  actionId: string
  /** Canonical hash of the signed Command content; a different hash under the key is a collision. */
  contentHash: string
  groupId: string
  /** The sequences of the Events the Command appended. */
  firstSequence: number
  lastSequence: number
  /** The receipt document (JSON text) returned to the actor, stored and returned verbatim. */
  document: string
}

export interface GroupHead {
  /** The highest sequence in the Group (0 before its first Event). */
  sequence: number
  /** The Group aggregate revision: the last Event's aggregateRevision. */
  revision: number
}

export type AppendOutcome =
  /** Written and durable. */
  | {status: 'appended'; firstSequence: number; lastSequence: number}
  /** `expectedHead` is not the Group's head (0 for an unknown Group). Nothing written. */
  | {status: 'head-moved'; head: number; groupId?: string}
  /** The same (actorId, actionId) and contentHash were already accepted: the original receipt. */
  | {status: 'duplicate'; receipt: Receipt}
  /** The (actorId, actionId) was already accepted with different content. Nothing written. */
  | {status: 'action-id-collision'}
  /** An Event's declared sequence (or the receipt's range) is not the one the store assigns. */
  | {status: 'sequence-mismatch'; detail: string}
  /** An Event ID already in the log (in any Group) or repeated in the batch. Nothing written. */
  | {status: 'duplicate-event-id'; eventId: string}
  /** A malformed request (no events, receipt for another Group, revision going backwards …). */
  | {status: 'invalid'; detail: string}
  /** The database could not be used; nothing was written. */
  | {status: 'unavailable'; detail: string}
  /** The write may or may not have committed: look the receipt up before retrying. */
  | {status: 'indeterminate'; detail: string}

export interface GroupLog {
  /** The Group's head, or null for a Group with no Events. Throws StoreError('unavailable'). */
  head(groupId: string): Promise<GroupHead | null>
  /**
   * Appends `events` (sequences expectedHead + 1 … expectedHead + n) and `receipt`, and advances
   * the head and revision, in one atomic write. `expectedHead` is 0 for a new Group.
   * `expectedHeadEventId`, when given, must be the Event ID at `expectedHead`, else `head-moved`:
   * an append decided on the Events of an earlier append still in flight (pipelined, see
   * authority/append-pipeline.ts) commits only on exactly those Events, never on other Events
   * that happen to end at the same sequence.
   */
  append(
    groupId: string,
    expectedHead: number,
    events: StoredEvent[],
    receipt: Receipt,
    expectedHeadEventId?: string,
  ): Promise<AppendOutcome>
  /**
   * One Command's Events in several Groups (§12/§14 ancestry updates, see multi-append.ts), with
   * the one receipt (its groupId names the Command's Group), atomically, or nothing. A moved head
   * in any Group is `head-moved` with that Group's ID and leaves every Group unchanged.
   */
  appendGroups(appends: GroupAppend[], receipt: Receipt): Promise<AppendOutcome>
  /**
   * Up to `limit` Events with sequence > `afterSequence`, in sequence order, and the head they were
   * read at: more exist exactly when the last sequence returned (or `afterSequence`) < `head`.
   * `maxBytes`, when given, also bounds the page by the Events' stored bytes in all: a page never
   * holds more, except one Event alone that is larger (a page is never empty while Events remain),
   * so a replay page costs bounded memory and read time whatever the Events' sizes.
   * Throws StoreError ('invalid-argument' | 'unavailable').
   */
  read(
    groupId: string,
    afterSequence: number,
    limit: number,
    maxBytes?: number,
  ): Promise<{events: LoggedEvent[]; head: number}>
  /** The receipt stored for (actorId, actionId), or null. Throws StoreError('unavailable'). */
  receipt(actorId: string, actionId: string): Promise<Receipt | null>
}
