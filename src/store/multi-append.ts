// Multi-Group atomic append (spec §12, §14): one Command whose transition spans several Groups —
// a child Mission created beside its parent WorkItem, a resource-usage charge against a WorkItem
// and its complete WorkItem/Mission ancestry, a child result landing on the parent WorkItem.
//
// DEVIATION from ARCHITECTURE principle 6 ("no transaction touches two Groups"): §12 requires
// that "consumption MUST update the WorkItem and its complete WorkItem/Mission ancestry in one
// atomic transition" and that an overflow in one dimension rejects the whole transition; the
// ancestry lives in different Groups, so the strict reading needs one write across them.
// Single-Group appends are unchanged; only these Commands take the multi-Group path.
// Citus/sharding caveat: on a sharded PostgreSQL (distributed by group_id) this transaction is a
// multi-shard transaction (two-phase commit across workers) — correct, but slower and not
// co-located; a future sharded deployment may co-locate a Mission tree by its root Group ID.
//
// The shape is the single-Group append's: the adapter serializes every involved Group (SQLite:
// BEGIN IMMEDIATE; PostgreSQL: the Group rows locked FOR UPDATE in sorted group_id order, so two
// multi-Group appends never deadlock and no global lock is taken), reads their state, asks
// decideAppendGroups, and writes all Events, heads and the one receipt, or nothing.

import type Database from 'better-sqlite3'
import type postgres from 'postgres'
import type {AppendOutcome, GroupHead, Receipt, StoredEvent} from './group-log.js'
import {
  EVENT_COLUMNS,
  RECEIPT_COLUMNS,
  appended,
  checkAppend,
  eventRow,
  headAfter,
  headFrom,
  receiptFrom,
  receiptRow,
} from './group-records.js'
import {POLICY_LOG_COLUMNS, policyRows} from './policy-log.js'
import {type GroupMessageRow, messageRowsIn, postgresWriteMessages} from './message-table.js'
import {type GroupMemberRow, memberRowsIn, postgresWriteMembers} from './member-table.js'
import {type GroupLeaseRow, leaseRowsIn, postgresWriteLeases} from './lease-table.js'
import {describeError} from './records.js'
import {notifyAppendedReturning} from './pg-notify.js'

/** The Events one Command appends to one Group. */
export interface GroupAppend {
  groupId: string
  /** The Group head the Events were sequenced after (0 for a Group created by this Command). */
  expectedHead: number
  events: StoredEvent[]
}

/** Sorted by group_id: the lock order of every multi-Group transaction. */
export const lockOrder = (appends: readonly GroupAppend[]): GroupAppend[] =>
  [...appends].sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0))

/** The checks that need no database: a refusal, or null when the request is well formed. */
export function checkAppendGroups(appends: GroupAppend[], receipt: Receipt): AppendOutcome | null {
  if (!Array.isArray(appends) || appends.length === 0)
    return {status: 'invalid', detail: 'a multi-Group append needs at least one Group'}
  if (receipt === null || typeof receipt !== 'object') return {status: 'invalid', detail: 'an append needs a receipt'}
  const groups = new Set<string>()
  const eventIds = new Set<string>()
  let receiptGroup = false
  for (const a of appends) {
    if (groups.has(a.groupId)) return {status: 'invalid', detail: `Group ${JSON.stringify(a.groupId)} appears twice`}
    groups.add(a.groupId)
    // The receipt belongs to the Command's own Group; the other Groups are checked against a
    // receipt naming their own range, so checkAppend's sequence checks apply to every Group.
    const own = a.groupId === receipt.groupId
    receiptGroup ||= own
    const n = Array.isArray(a.events) ? a.events.length : 0
    const probe = own
      ? receipt
      : {...receipt, groupId: a.groupId, firstSequence: a.expectedHead + 1, lastSequence: a.expectedHead + n}
    const refused = checkAppend(a.groupId, a.expectedHead, a.events, probe)
    if (refused) return refused
    for (const e of a.events) {
      if (eventIds.has(e.eventId)) return {status: 'duplicate-event-id', eventId: e.eventId}
      eventIds.add(e.eventId)
    }
  }
  if (!receiptGroup)
    return {
      status: 'invalid',
      detail: `the receipt is for Group ${JSON.stringify(receipt.groupId)}, which the append does not touch`,
    }
  return null
}

/** What an adapter reads inside its write transaction, with every involved Group serialized. */
export interface MultiAppendState {
  heads: Map<string, GroupHead | null>
  prior: Receipt | null
  takenEventId: string | null
}

/** The append decision: a refusal (nothing is written), or null to write everything. */
export function decideAppendGroups(
  state: MultiAppendState,
  appends: GroupAppend[],
  receipt: Receipt,
): AppendOutcome | null {
  const {prior} = state
  if (prior)
    return prior.contentHash === receipt.contentHash
      ? {status: 'duplicate', receipt: prior}
      : {status: 'action-id-collision'}
  for (const a of lockOrder(appends)) {
    const head = state.heads.get(a.groupId) ?? null
    const current = head?.sequence ?? 0
    if (current !== a.expectedHead) return {status: 'head-moved', head: current, groupId: a.groupId}
  }
  if (state.takenEventId !== null) return {status: 'duplicate-event-id', eventId: state.takenEventId}
  for (const a of appends) {
    const head = state.heads.get(a.groupId) ?? null
    if (head && a.events[0]!.aggregateRevision < head.revision) {
      return {
        status: 'invalid',
        detail: `aggregate revision ${a.events[0]!.aggregateRevision} is below the revision ${head.revision} of ${a.groupId}`,
      }
    }
  }
  return null
}

/** The outcome of a successful multi-Group append: the receipt Group's sequence range. */
const appendedFor = (appends: GroupAppend[], receipt: Receipt): AppendOutcome =>
  appended(appends.find((a) => a.groupId === receipt.groupId)!.events)

// ---------------------------------------------------------------------------------------------
// SQLite: one writer, so BEGIN IMMEDIATE serializes every Group at once.

/** The prepared statements the SQLite multi-Group append runs (the writer's: sqlite-writes.ts). */
export interface SqliteAppendStatements {
  head: Database.Statement
  receipt: Database.Statement
  eventIdTaken: Database.Statement
  insertEvent: Database.Statement
  insertReceipt: Database.Statement
  insertPolicy: Database.Statement
  setHead: Database.Statement
  /** The group_messages rows of appended Events (message-table.ts). */
  writeMessages: (rows: readonly GroupMessageRow[]) => void
  /** The group_members rows of appended Events (member-table.ts). */
  writeMembers: (rows: readonly GroupMemberRow[]) => void
  /** The group_leases rows of appended Events (lease-table.ts). */
  writeLeases: (rows: readonly GroupLeaseRow[]) => void
}

/**
 * Writes one Group's Events, its new head and their §20 Policy Log rows (all in the caller's
 * transaction): the single-Group append (sqlite-writes.ts) and the multi-Group one share it.
 */
export function sqliteWriteEvents(s: SqliteAppendStatements, groupId: string, events: StoredEvent[]): void {
  for (const e of events) {
    const row = eventRow(groupId, e)
    s.insertEvent.run(...EVENT_COLUMNS.map((c) => row[c]))
  }
  const head = headAfter(events)
  s.setHead.run(groupId, head.sequence, head.revision)
  for (const row of policyRows(groupId, events)) s.insertPolicy.run(...POLICY_LOG_COLUMNS.map((c) => row[c]))
  s.writeMessages(messageRowsIn(groupId, events))
  s.writeMembers(memberRowsIn(groupId, events))
  s.writeLeases(leaseRowsIn(groupId, events))
}

export function sqliteAppendGroups(
  db: Database.Database,
  s: SqliteAppendStatements,
  appends: GroupAppend[],
  receipt: Receipt,
): AppendOutcome {
  const refused = checkAppendGroups(appends, receipt)
  if (refused) return refused
  const rollback = () => {
    try {
      if (db.open && db.inTransaction) db.exec('ROLLBACK')
    } catch {
      // the transaction is gone either way
    }
  }
  try {
    db.exec('BEGIN IMMEDIATE')
    const prior = s.receipt.get(receipt.actorId, receipt.actionId) as Record<string, unknown> | undefined
    const heads = new Map(
      appends.map((a) => [a.groupId, headFrom(s.head.get(a.groupId) as Record<string, unknown> | undefined)]),
    )
    const taken = appends.flatMap((a) => a.events).find((e) => s.eventIdTaken.get(e.eventId) !== undefined)
    const verdict = decideAppendGroups(
      {heads, prior: prior ? receiptFrom(prior) : null, takenEventId: taken?.eventId ?? null},
      appends,
      receipt,
    )
    if (verdict) {
      rollback() // nothing was written
      return verdict
    }
    for (const a of lockOrder(appends)) sqliteWriteEvents(s, a.groupId, a.events)
    const r = receiptRow(receipt)
    s.insertReceipt.run(...RECEIPT_COLUMNS.map((c) => r[c]))
  } catch (e) {
    rollback()
    return {status: 'unavailable', detail: describeError(e)}
  }
  try {
    db.exec('COMMIT')
  } catch (e) {
    rollback()
    return {status: 'indeterminate', detail: `commit failed: ${describeError(e)}`}
  }
  return appendedFor(appends, receipt)
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: lock each Group row in sorted group_id order inside one transaction.

/** Thrown inside the transaction to roll it back with a decided outcome. */
class Refusal {
  constructor(readonly outcome: AppendOutcome) {}
}

const RETRYABLE = new Set(['40001', '40P01'])
const UNIQUE_VIOLATION = '23505'
const ATTEMPTS = 3

export async function postgresAppendGroups(
  sql: postgres.Sql,
  appends: GroupAppend[],
  receipt: Receipt,
): Promise<AppendOutcome> {
  const refused = checkAppendGroups(appends, receipt)
  if (refused) return refused
  const ordered = lockOrder(appends)
  for (let attempt = 1; ; attempt++) {
    let decided = false // the transaction body finished: any later error is the COMMIT's
    try {
      return await sql.begin(async (tx) => {
        const heads = new Map<string, GroupHead | null>()
        for (const a of ordered) {
          // A new Group's row is created (and so locked) in the same sorted order.
          if (a.expectedHead === 0)
            await tx`INSERT INTO groups (group_id, head, revision) VALUES (${a.groupId}, 0, 0) ON CONFLICT DO NOTHING`
          const [raw] = await tx`SELECT head, revision FROM groups WHERE group_id = ${a.groupId} FOR UPDATE`
          heads.set(a.groupId, headFrom(raw))
        }
        const [prior] =
          await tx`SELECT * FROM receipts WHERE actor_id = ${receipt.actorId} AND action_id = ${receipt.actionId}`
        const ids = ordered.flatMap((a) => a.events.map((e) => e.eventId))
        const [taken] = await tx`SELECT event_id FROM group_events WHERE event_id IN ${tx(ids)} LIMIT 1`
        const verdict = decideAppendGroups(
          {heads, prior: prior ? receiptFrom(prior) : null, takenEventId: taken ? String(taken.event_id) : null},
          appends,
          receipt,
        )
        if (verdict) throw new Refusal(verdict) // roll back (new Groups' rows too)
        for (const a of ordered) {
          await tx`INSERT INTO group_events ${tx(
            a.events.map((e) => eventRow(a.groupId, e)),
            ...EVENT_COLUMNS,
          )}`
          const after = headAfter(a.events)
          // The notify rides on the head update; LISTENers get it on COMMIT only (pg-notify.ts).
          await tx`UPDATE groups SET head = ${after.sequence}, revision = ${after.revision} WHERE group_id = ${a.groupId} ${notifyAppendedReturning(tx, 'group_id')}`
          const policy = policyRows(a.groupId, a.events)
          if (policy.length > 0) await tx`INSERT INTO policy_log ${tx(policy, ...POLICY_LOG_COLUMNS)}`
          await postgresWriteMessages(tx, messageRowsIn(a.groupId, a.events))
          await postgresWriteLeases(tx, leaseRowsIn(a.groupId, a.events))
        }
        await tx`INSERT INTO receipts ${tx(receiptRow(receipt), ...RECEIPT_COLUMNS)}`
        // Last: it takes the membership index's write lock (member-table.ts postgresWriteMembers).
        await postgresWriteMembers(
          tx,
          ordered.flatMap((a) => memberRowsIn(a.groupId, a.events)),
        )
        decided = true
        return appendedFor(appends, receipt)
      })
    } catch (e) {
      if (e instanceof Refusal) return e.outcome
      const code = (e as {code?: string}).code ?? ''
      if (RETRYABLE.has(code) || (code === UNIQUE_VIOLATION && !decided)) {
        if (attempt < ATTEMPTS) continue
        return {status: 'unavailable', detail: `gave up after ${ATTEMPTS} attempts: ${describeError(e)}`}
      }
      if (!decided) return {status: 'unavailable', detail: describeError(e)}
      return (e as {name?: string}).name === 'PostgresError'
        ? {status: 'unavailable', detail: `commit refused: ${describeError(e)}`}
        : {status: 'indeterminate', detail: `commit outcome unknown: ${describeError(e)}`}
    }
  }
}
