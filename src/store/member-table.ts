// The membership index (spec §8, §10.3, §17.2): for each Group and principal, the state of its
// latest Membership document — provisional, active or ended — and the sequence its visibility
// starts at, keyed (group_id, principal_id). It answers "which Groups is this principal a member
// (or a candidate) of?", which the Group log alone answers only by reading every Group: the wire
// gateway's directory subscription (wire/directory.ts) announces a principal's Groups from it.
//
// `position` is store-wide and increases with every insert or update, so "what changed for this
// principal after position P" is one range read of the (principal_id, position) index — the cost
// of a directory refresh is the new rows, never a scan of history.
//
// Rows are derived from the Membership documents the Authority's Events carry
// (authority/model/membership-documents.ts, called by ingress/seal.ts for each Event it signs) and
// written in the same atomic append as those Events (StoredEvent.members: multi-append.ts
// sqliteWriteEvents / postgresAppendGroups, pg-group-commit.ts), like the Message table
// (message-table.ts), so the index is always exactly what the log implies. Stores from before the
// table are backfilled from the log once, when opened (in pages, in one transaction).
//
// A provisional Membership whose offer expired unaccepted is not ended by any Event (§8: it
// lapses with the offer), so its row stays provisional: the index is a list of Groups worth
// looking at, not a verdict. The principal subscribing there finds the offer expired, exactly as
// it would with the Event in hand; only the Group's state decides what it may do.

import type Database from 'better-sqlite3'
import type postgres from 'postgres'
import {MEMBERSHIP_EVENT_KINDS, membershipDocumentsOf} from '../authority/model/membership-documents.js'
import type {StoredEvent} from './group-log.js'
import {MAX_NOTIFY_PAYLOAD_BYTES, MEMBERS_CHANNEL} from './pg-notify.js'
import {backfillPostgresIndex, backfillSqliteIndex} from './index-backfill.js'
import {StoreError, tableFailure} from './records.js'

export type MemberState = 'provisional' | 'active' | 'ended'

/** What one Membership document writes (the Group is the append's). */
export interface MemberRow {
  principalId: string
  state: MemberState
  /** §8: the first sequence the member may see. */
  visibilityStart: number
}

/** A row as stored: the index's answer. */
export interface MemberRecord extends MemberRow {
  groupId: string
  /** Store-wide, increasing at every write of any row. */
  position: number
}

/** The rows the Membership documents of an Event of `kind` write, in payload order (ingress/seal.ts; the backfill). */
export function memberRowsOf(kind: string, payload: unknown): MemberRow[] {
  return membershipDocumentsOf(kind, payload).map((m) => ({
    principalId: m.member.id,
    state: m.state,
    visibilityStart: m.visibilityStartSequence,
  }))
}

/** The store's read of the index; the writes ride on the Group append. */
export interface MemberTable {
  /** Up to `limit` rows of `principalId` written after `position`, any state, in position order. */
  changedAfter(principalId: string, position: number, limit: number): Promise<MemberRecord[]>
  /** Up to `limit` rows of `principalId` not ended, written after `afterPosition` (default 0), in position order. */
  live(principalId: string, afterPosition: number | undefined, limit: number): Promise<MemberRecord[]>
}

export interface GroupMemberRow {
  groupId: string
  row: MemberRow
}

/** The rows an append's Events carry, in log order. */
export const memberRowsIn = (groupId: string, events: readonly StoredEvent[]): GroupMemberRow[] =>
  events.flatMap((e) => (e.members ?? []).map((row) => ({groupId, row})))

const fail = tableFailure('the membership index')

type Obj = Record<string, unknown>

function recordFrom(row: Obj): MemberRecord {
  const state = String(row.state)
  if (state !== 'provisional' && state !== 'active' && state !== 'ended')
    throw new StoreError('unavailable', `stored Membership state ${state}`)
  return {
    groupId: String(row.group_id),
    principalId: String(row.principal_id),
    state,
    visibilityStart: Number(row.visibility_start),
    position: Number(row.position),
  }
}

function checkLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new StoreError('invalid-argument', `limit ${limit}`)
}

// ---------------------------------------------------------------------------------------------
// SQLite

/**
 * Created with the store (initSqliteStore); an older store gets it, backfilled, from
 * ensureSqliteMemberTable. The position index makes MAX(position) one index probe; rows are never
 * deleted, so MAX + 1 only grows, and SQLite's single writer means no two appends take the same.
 */
export const SQLITE_MEMBER_SCHEMA = `CREATE TABLE IF NOT EXISTS group_members (
    group_id         TEXT NOT NULL,
    principal_id     TEXT NOT NULL,
    state            TEXT NOT NULL,
    visibility_start INTEGER NOT NULL,
    position         INTEGER NOT NULL,
    PRIMARY KEY (group_id, principal_id)
  ) STRICT;
  CREATE INDEX IF NOT EXISTS group_members_by_principal ON group_members (principal_id, position);
  CREATE UNIQUE INDEX IF NOT EXISTS group_members_by_position ON group_members (position)`

/** Applies `rows`, in order, inside the caller's write transaction. */
export function sqliteMemberWrites(db: Database.Database): (rows: readonly GroupMemberRow[]) => void {
  const upsert = db.prepare(`INSERT INTO group_members (group_id, principal_id, state, visibility_start, position)
    VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(position), 0) + 1 FROM group_members))
    ON CONFLICT (group_id, principal_id) DO UPDATE SET
      state = excluded.state, visibility_start = excluded.visibility_start, position = excluded.position`)
  return (rows) => {
    for (const {groupId, row: r} of rows) upsert.run(groupId, r.principalId, r.state, r.visibilityStart)
  }
}

export function sqliteMembers(db: Database.Database): MemberTable {
  const changed = db.prepare(
    'SELECT * FROM group_members WHERE principal_id = ? AND position > ? ORDER BY position LIMIT ?',
  )
  const live = db.prepare(
    "SELECT * FROM group_members WHERE principal_id = ? AND position > ? AND state <> 'ended' ORDER BY position LIMIT ?",
  )
  const read = (statement: Database.Statement, principalId: string, after: number, limit: number) => {
    checkLimit(limit)
    try {
      return (statement.all(principalId, after, limit) as Obj[]).map(recordFrom)
    } catch (e) {
      return fail(e)
    }
  }
  return {
    changedAfter: async (principalId, position, limit) => read(changed, principalId, position, limit),
    live: async (principalId, afterPosition, limit) => read(live, principalId, afterPosition ?? 0, limit),
  }
}

/** Adds the index to a store opened from an earlier build, filled from the stored log (index-backfill.ts). */
export function ensureSqliteMemberTable(db: Database.Database): number {
  return backfillSqliteIndex(db, {
    table: 'group_members',
    schema: SQLITE_MEMBER_SCHEMA,
    kinds: MEMBERSHIP_EVENT_KINDS,
    rowsOf: memberRowsOf,
    writes: sqliteMemberWrites,
  })
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/** Positions are drawn from this sequence; the write lock below makes them commit in order. */
const POSTGRES_SCHEMA = `
CREATE SEQUENCE IF NOT EXISTS group_members_position;
CREATE TABLE IF NOT EXISTS group_members (
  group_id         TEXT NOT NULL,
  principal_id     TEXT NOT NULL,
  state            TEXT NOT NULL,
  visibility_start BIGINT NOT NULL,
  position         BIGINT NOT NULL DEFAULT nextval('group_members_position'),
  PRIMARY KEY (group_id, principal_id));
CREATE INDEX IF NOT EXISTS group_members_by_principal ON group_members (principal_id, position);`

/**
 * Applies `rows` (several Groups' appends), in order, inside the caller's transaction, as its last
 * statement. A sequence value is taken at INSERT time, not at COMMIT, so two concurrent appends
 * could commit positions 10 then 9, and a reader that saw 10 would never look at 9 again. The
 * transaction-scoped lock taken first makes the appends that write rows commit one after the
 * other, in position order. Only appends carrying Membership documents take it (a few in a
 * Mission's life), and as their last lock, after every Group row lock, so it adds no deadlock.
 * Each changed principal is notified on MEMBERS_CHANNEL (delivered at COMMIT only, pg-notify.ts).
 */
export async function postgresWriteMembers(
  tx: postgres.TransactionSql,
  rows: readonly GroupMemberRow[],
): Promise<void> {
  if (rows.length === 0) return
  // One statement may not update a row twice (ON CONFLICT): the last write of each key wins, in
  // the order of those last writes, which is what applying them one by one would leave.
  const last = new Map<string, GroupMemberRow>()
  for (const r of rows) {
    const key = `${r.groupId}\u0000${r.row.principalId}`
    last.delete(key)
    last.set(key, r)
  }
  const values = [...last.values()].map(({groupId, row}) => ({
    group_id: groupId,
    principal_id: row.principalId,
    state: row.state,
    visibility_start: row.visibilityStart,
  }))
  await tx`SELECT pg_advisory_xact_lock(hashtext('mwp group_members'))`
  for (let i = 0; i < values.length; i += 500)
    await tx`INSERT INTO group_members ${tx(values.slice(i, i + 500), 'group_id', 'principal_id', 'state', 'visibility_start')}
      ON CONFLICT (group_id, principal_id) DO UPDATE SET
        state = excluded.state, visibility_start = excluded.visibility_start, position = excluded.position`
  const principals = [...new Set(values.map((v) => v.principal_id))]
  await tx`SELECT pg_notify(${MEMBERS_CHANNEL}, p) FROM unnest(${principals}::text[]) AS p
    WHERE octet_length(p) <= ${MAX_NOTIFY_PAYLOAD_BYTES}`
}

export function postgresMembers(sql: postgres.Sql): MemberTable {
  const read = async (principalId: string, after: number, limit: number, liveOnly: boolean) => {
    checkLimit(limit)
    try {
      const rows = await sql`SELECT * FROM group_members WHERE principal_id = ${principalId} AND position > ${after}
        ${liveOnly ? sql`AND state <> 'ended'` : sql``} ORDER BY position LIMIT ${limit}`
      return rows.map(recordFrom)
    } catch (e) {
      return fail(e)
    }
  }
  return {
    changedAfter: (principalId, position, limit) => read(principalId, position, limit, false),
    live: (principalId, afterPosition, limit) => read(principalId, afterPosition ?? 0, limit, true),
  }
}

/** The PostgreSQL counterpart of ensureSqliteMemberTable (index-backfill.ts). */
export async function ensurePostgresMemberTable(sql: postgres.Sql): Promise<number> {
  return backfillPostgresIndex(sql, {
    table: 'group_members',
    create: (tx) => tx.unsafe(POSTGRES_SCHEMA).simple(),
    kinds: MEMBERSHIP_EVENT_KINDS,
    rowsOf: memberRowsOf,
    write: postgresWriteMembers,
  })
}
