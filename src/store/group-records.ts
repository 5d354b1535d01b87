// Group log logic shared by the SQLite and PostgreSQL adapters: request checks, the append
// decision, and row shapes. The adapters read the Group's state inside their write transaction,
// ask decideAppend, and either roll back with its refusal or write exactly the rows built here.

import type {AppendOutcome, GroupHead, LoggedEvent, Receipt, StoredEvent} from './group-log.js'
import {StoreError} from './records.js'

const text = (v: unknown): v is string => typeof v === 'string' && v.length > 0
const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0

/** The checks that need no database: a refusal, or null when the request is well formed. */
export function checkAppend(
  groupId: string,
  expectedHead: number,
  events: StoredEvent[],
  receipt: Receipt,
  expectedHeadEventId?: string,
): AppendOutcome | null {
  const invalid = (detail: string): AppendOutcome => ({status: 'invalid', detail})
  if (!text(groupId)) return invalid('groupId must be a non-empty string')
  if (!count(expectedHead)) return invalid('expectedHead must be a whole number >= 0')
  if (expectedHeadEventId !== undefined && (!text(expectedHeadEventId) || expectedHead === 0))
    return invalid('expectedHeadEventId names the Event at an expectedHead >= 1')
  if (!Array.isArray(events) || events.length === 0) return invalid('an append needs at least one event')
  if (receipt === null || typeof receipt !== 'object') return invalid('an append needs a receipt')
  if (
    !text(receipt.actorId) ||
    !text(receipt.actionId) ||
    !text(receipt.contentHash) ||
    typeof receipt.document !== 'string'
  ) {
    return invalid('the receipt needs actorId, actionId, contentHash and document')
  }
  if (receipt.groupId !== groupId) return invalid(`the receipt is for Group ${JSON.stringify(receipt.groupId)}`)
  const seen = new Set<string>()
  for (const [i, e] of events.entries()) {
    if (
      !text(e.eventId) ||
      !text(e.kind) ||
      !count(e.aggregateRevision) ||
      !(e.bytes instanceof Uint8Array) ||
      e.bytes.length === 0
    ) {
      return invalid(`event ${i} needs eventId, kind, aggregateRevision >= 0 and non-empty bytes`)
    }
    if (e.sequence !== expectedHead + 1 + i) {
      return {
        status: 'sequence-mismatch',
        detail: `event ${i} declares sequence ${e.sequence}; the store assigns ${expectedHead + 1 + i}`,
      }
    }
    if (seen.has(e.eventId)) return {status: 'duplicate-event-id', eventId: e.eventId}
    seen.add(e.eventId)
    if (i > 0 && e.aggregateRevision < events[i - 1]!.aggregateRevision)
      return invalid(`event ${i} lowers the aggregate revision`)
  }
  const last = expectedHead + events.length
  if (receipt.firstSequence !== expectedHead + 1 || receipt.lastSequence !== last) {
    return {
      status: 'sequence-mismatch',
      detail: `the receipt names sequences ${receipt.firstSequence}..${receipt.lastSequence}; the store assigns ${expectedHead + 1}..${last}`,
    }
  }
  return null
}

/** What an adapter reads inside its write transaction, with the Group serialized. */
export interface AppendState {
  head: GroupHead | null
  /** The receipt already stored under the request's (actorId, actionId). */
  prior: Receipt | null
  /** One of the request's event IDs already in the log, if any. */
  takenEventId: string | null
  /** The Event ID at the request's expectedHead (null: none); read only when the request names one. */
  headEventId?: string | null
}

/**
 * The append decision: a refusal (nothing is written), or null to write. A known (actorId,
 * actionId) is answered first, so a retry after the head moved still gets its original receipt.
 * With `expectedHeadEventId`, the head must also be that very Event (GroupLog.append).
 */
export function decideAppend(
  state: AppendState,
  expectedHead: number,
  events: StoredEvent[],
  receipt: Receipt,
  expectedHeadEventId?: string,
): AppendOutcome | null {
  const {prior, head} = state
  if (prior)
    return prior.contentHash === receipt.contentHash
      ? {status: 'duplicate', receipt: prior}
      : {status: 'action-id-collision'}
  const current = head?.sequence ?? 0
  if (current !== expectedHead) return {status: 'head-moved', head: current}
  if (expectedHeadEventId !== undefined && state.headEventId !== expectedHeadEventId)
    return {status: 'head-moved', head: current}
  if (state.takenEventId !== null) return {status: 'duplicate-event-id', eventId: state.takenEventId}
  if (head && events[0]!.aggregateRevision < head.revision) {
    return {
      status: 'invalid',
      detail: `aggregate revision ${events[0]!.aggregateRevision} is below the Group revision ${head.revision}`,
    }
  }
  return null
}

/** The Group head after a successful append. */
export function headAfter(events: StoredEvent[]): GroupHead {
  const last = events[events.length - 1]!
  return {sequence: last.sequence, revision: last.aggregateRevision}
}

export function appended(events: StoredEvent[]): AppendOutcome {
  return {status: 'appended', firstSequence: events[0]!.sequence, lastSequence: events[events.length - 1]!.sequence}
}

// ---------------------------------------------------------------------------------------------
// Rows

export const EVENT_COLUMNS = ['group_id', 'sequence', 'event_id', 'kind', 'aggregate_revision', 'bytes'] as const

export const RECEIPT_COLUMNS = [
  'actor_id',
  'action_id',
  'content_hash',
  'group_id',
  'first_sequence',
  'last_sequence',
  'document',
] as const

type Row<C extends readonly string[]> = Record<C[number], string | number | Buffer>

export function eventRow(groupId: string, e: StoredEvent): Row<typeof EVENT_COLUMNS> {
  return {
    group_id: groupId,
    sequence: e.sequence,
    event_id: e.eventId,
    kind: e.kind,
    aggregate_revision: e.aggregateRevision,
    bytes: Buffer.from(e.bytes.buffer, e.bytes.byteOffset, e.bytes.byteLength),
  }
}

export function receiptRow(r: Receipt): Row<typeof RECEIPT_COLUMNS> {
  return {
    actor_id: r.actorId,
    action_id: r.actionId,
    content_hash: r.contentHash,
    group_id: r.groupId,
    first_sequence: r.firstSequence,
    last_sequence: r.lastSequence,
    document: r.document,
  }
}

/** Selected rows back to values (PostgreSQL returns BIGINT as text, BYTEA as a Buffer). */
export function receiptFrom(raw: Record<string, unknown>): Receipt {
  return {
    actorId: String(raw.actor_id),
    actionId: String(raw.action_id),
    contentHash: String(raw.content_hash),
    groupId: String(raw.group_id),
    firstSequence: Number(raw.first_sequence),
    lastSequence: Number(raw.last_sequence),
    document: String(raw.document),
  }
}

export function headFrom(raw: Record<string, unknown> | undefined): GroupHead | null {
  return raw ? {sequence: Number(raw.head), revision: Number(raw.revision)} : null
}

export function loggedEvent(raw: Record<string, unknown>): LoggedEvent {
  return {
    sequence: Number(raw.sequence),
    eventId: String(raw.event_id),
    kind: String(raw.kind),
    bytes: new Uint8Array(raw.bytes as Uint8Array),
  }
}

/** Checks read() arguments; throws StoreError('invalid-argument'). */
export function checkRead(groupId: string, afterSequence: number, limit: number, maxBytes?: number): void {
  if (!text(groupId)) throw new StoreError('invalid-argument', 'groupId must be a non-empty string')
  if (!count(afterSequence)) throw new StoreError('invalid-argument', 'afterSequence must be a whole number >= 0')
  if (!(count(limit) && limit > 0)) throw new StoreError('invalid-argument', 'limit must be a positive integer')
  if (maxBytes !== undefined && !(count(maxBytes) && maxBytes > 0))
    throw new StoreError('invalid-argument', 'maxBytes must be a positive integer')
}
