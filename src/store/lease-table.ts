// The active-lease index (spec §6.3, §11.3; ACCEPTANCE B9): for each Group and WorkItem, the
// Execution Lease its last work.started issued — holder Agent, Lease ID and Session Epoch — until
// an Event closes it, keyed (group_id, work_item_id). It answers "which active leases does this
// Agent hold under a Session Epoch older than n?", which the Group log alone answers only by
// folding every Group: opening a replacement session (authority/ingress/sessions.ts) revokes
// exactly the leases it lists, so its cost is the Agent's leases, never the Groups or their history.
//
// Rows are derived from the Events alone (leaseRowsOf, called by ingress/seal.ts for each Event it
// signs) and written in the same atomic append as those Events (StoredEvent.leases:
// multi-append.ts sqliteWriteEvents / postgresAppendGroups, pg-group-commit.ts), like the
// membership index (member-table.ts). Stores from before the table are backfilled from the log
// once, when opened (in pages, in one transaction), by the same function.
//
// A lease that simply times out is closed by no Event (§11.3 "timeout expires it"), so its row
// stays until the WorkItem's next transition (a re-offer fences it): the index is a list of leases
// worth looking at, not a verdict. The revocation Command is decided on the Group's state, which
// refuses an expired or already closed lease and appends nothing.

import type Database from 'better-sqlite3'
import type postgres from 'postgres'
import type {StoredEvent} from './group-log.js'
import {backfillPostgresIndex, backfillSqliteIndex} from './index-backfill.js'
import {StoreError, tableFailure} from './records.js'

/**
 * What one Event writes for one WorkItem: the lease it now holds (work.started), or null when the
 * Event closed whatever lease it held. `workItemId: null`: every WorkItem of the Group (a Mission
 * end, MISSION_ENDS).
 */
export type LeaseRow =
  | {workItemId: string; lease: {agentId: string; leaseId: string; sessionEpoch: number; ownershipEpoch: number} | null}
  | {workItemId: null; lease: null}

/** A row as stored: the index's answer. */
export interface ActiveLeaseRecord {
  groupId: string
  workItemId: string
  agentId: string
  leaseId: string
  sessionEpoch: number
  /** The Ownership Epoch the lease was issued under. */
  ownershipEpoch: number
}

/** Where a page of ActiveLeaseRecords ends: the next page starts after it. */
export interface LeaseCursor {
  groupId: string
  workItemId: string
}

/** The store's read of the index; the writes ride on the Group append. */
export interface LeaseTable {
  /**
   * Up to `limit` rows of Agent `agentId` issued under a Session Epoch below `belowSessionEpoch`,
   * after `after` (absent: from the start), in (groupId, workItemId) order.
   */
  olderThan(
    agentId: string,
    belowSessionEpoch: number,
    after: LeaseCursor | undefined,
    limit: number,
  ): Promise<ActiveLeaseRecord[]>
}

/**
 * The Events that end a WorkItem's Execution Lease (§11.3: checkpoint, block and submission
 * release it; reassignment, cancellation, failure and session replacement revoke it; a re-offer
 * fences an expired one; a child Mission fences ownership). Kind names are literal here, as the
 * store reads stored Events of any build.
 */
const CLOSING_KINDS: ReadonlySet<string> = new Set([
  'work.checkpointed',
  'work.blocked',
  'work.submitted',
  'work.failed',
  'work.cancelled',
  'work.offer.created',
  'mission.child.created',
  'ext.missionweaveprotocol.core.lease_revoked',
])
/**
 * A Mission's end: cancellation and failure revoke every active lease (§10.2); an approved Mission
 * takes no more leased Commands (§7.1), so none of its leases is left to revoke.
 */
const MISSION_ENDS: ReadonlySet<string> = new Set(['mission.cancelled', 'mission.terminated', 'mission.approved'])
/** The kinds leaseRowsOf reads: the backfill selects only these. */
export const LEASE_EVENT_KINDS: readonly string[] = [
  'work.started',
  'work.contract.revised',
  ...CLOSING_KINDS,
  ...MISSION_ENDS,
]

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The rows an Event of `kind` writes (ingress/seal.ts; the backfill). */
export function leaseRowsOf(kind: string, payload: unknown): LeaseRow[] {
  if (!isObj(payload)) return []
  if (MISSION_ENDS.has(kind)) return [{workItemId: null, lease: null}]
  const workItemId = payload.workItemId
  if (typeof workItemId !== 'string') return []
  if (kind === 'work.started') {
    const l = payload.lease
    if (!isObj(l) || typeof l.holderAgentId !== 'string' || typeof l.leaseId !== 'string') return []
    if (typeof l.sessionEpoch !== 'number' || typeof l.ownershipEpoch !== 'number') return []
    const lease = {
      agentId: l.holderAgentId,
      leaseId: l.leaseId,
      sessionEpoch: l.sessionEpoch,
      ownershipEpoch: l.ownershipEpoch,
    }
    return [{workItemId, lease}]
  }
  // §10.4: a revision adding an unmet dependency to running work revokes its lease.
  if (kind === 'work.contract.revised')
    return typeof payload.revokedLeaseId === 'string' ? [{workItemId, lease: null}] : []
  return CLOSING_KINDS.has(kind) ? [{workItemId, lease: null}] : []
}

export interface GroupLeaseRow {
  groupId: string
  row: LeaseRow
}

/** The rows an append's Events carry, in log order. */
export const leaseRowsIn = (groupId: string, events: readonly StoredEvent[]): GroupLeaseRow[] =>
  events.flatMap((e) => (e.leases ?? []).map((row) => ({groupId, row})))

const fail = tableFailure('the lease index')

function recordFrom(row: Obj): ActiveLeaseRecord {
  return {
    groupId: String(row.group_id),
    workItemId: String(row.work_item_id),
    agentId: String(row.agent_id),
    leaseId: String(row.lease_id),
    sessionEpoch: Number(row.session_epoch),
    ownershipEpoch: Number(row.ownership_epoch),
  }
}

function checkRead(belowSessionEpoch: number, limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new StoreError('invalid-argument', `limit ${limit}`)
  if (!Number.isSafeInteger(belowSessionEpoch))
    throw new StoreError('invalid-argument', `Session Epoch ${belowSessionEpoch}`)
}

// ---------------------------------------------------------------------------------------------
// SQLite

/** Created with the store (initSqliteStore); an older store gets it, backfilled, from ensureSqliteLeaseTable. */
export const SQLITE_LEASE_SCHEMA = `CREATE TABLE IF NOT EXISTS group_leases (
    group_id      TEXT NOT NULL,
    work_item_id  TEXT NOT NULL,
    agent_id      TEXT NOT NULL,
    lease_id      TEXT NOT NULL,
    session_epoch INTEGER NOT NULL,
    ownership_epoch INTEGER NOT NULL,
    PRIMARY KEY (group_id, work_item_id)
  ) STRICT;
  CREATE INDEX IF NOT EXISTS group_leases_by_agent ON group_leases (agent_id, group_id, work_item_id)`

/** Applies `rows`, in order, inside the caller's write transaction. */
export function sqliteLeaseWrites(db: Database.Database): (rows: readonly GroupLeaseRow[]) => void {
  const upsert = db.prepare(`INSERT INTO group_leases
      (group_id, work_item_id, agent_id, lease_id, session_epoch, ownership_epoch) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (group_id, work_item_id) DO UPDATE SET agent_id = excluded.agent_id, lease_id = excluded.lease_id,
      session_epoch = excluded.session_epoch, ownership_epoch = excluded.ownership_epoch`)
  const remove = db.prepare('DELETE FROM group_leases WHERE group_id = ? AND work_item_id = ?')
  const removeGroup = db.prepare('DELETE FROM group_leases WHERE group_id = ?')
  return (rows) => {
    for (const {groupId, row: r} of rows) {
      if (r.workItemId === null) removeGroup.run(groupId)
      else if (r.lease === null) remove.run(groupId, r.workItemId)
      else {
        const l = r.lease
        upsert.run(groupId, r.workItemId, l.agentId, l.leaseId, l.sessionEpoch, l.ownershipEpoch)
      }
    }
  }
}

export function sqliteLeases(db: Database.Database): LeaseTable {
  const older = db.prepare(`SELECT * FROM group_leases WHERE agent_id = ? AND session_epoch < ?
    AND (group_id, work_item_id) > (?, ?) ORDER BY group_id, work_item_id LIMIT ?`)
  return {
    olderThan: async (agentId, belowSessionEpoch, after, limit) => {
      checkRead(belowSessionEpoch, limit)
      try {
        const rows = older.all(agentId, belowSessionEpoch, after?.groupId ?? '', after?.workItemId ?? '', limit)
        return (rows as Obj[]).map(recordFrom)
      } catch (e) {
        return fail(e)
      }
    },
  }
}

/** Adds the index to a store opened from an earlier build, filled from the stored log (index-backfill.ts). */
export function ensureSqliteLeaseTable(db: Database.Database): number {
  return backfillSqliteIndex(db, {
    table: 'group_leases',
    schema: SQLITE_LEASE_SCHEMA,
    kinds: LEASE_EVENT_KINDS,
    rowsOf: leaseRowsOf,
    writes: sqliteLeaseWrites,
  })
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

const POSTGRES_SCHEMA = `
CREATE TABLE IF NOT EXISTS group_leases (
  group_id      TEXT NOT NULL,
  work_item_id  TEXT NOT NULL,
  agent_id      TEXT NOT NULL,
  lease_id      TEXT NOT NULL,
  session_epoch BIGINT NOT NULL,
  ownership_epoch BIGINT NOT NULL,
  PRIMARY KEY (group_id, work_item_id));
CREATE INDEX IF NOT EXISTS group_leases_by_agent ON group_leases (agent_id, group_id, work_item_id);`

/**
 * Applies `rows` (several Groups' appends), in order, inside the caller's transaction. The rows
 * are the appending Groups' own (whose Group rows the transaction holds locked), so no lock of
 * its own is needed; they apply one statement each, in log order, since one append may open and
 * close the same WorkItem's lease (a session's revocation and the new start, decide/work.ts).
 */
export async function postgresWriteLeases(tx: postgres.TransactionSql, rows: readonly GroupLeaseRow[]): Promise<void> {
  for (const {groupId, row: r} of rows) {
    if (r.workItemId === null) await tx`DELETE FROM group_leases WHERE group_id = ${groupId}`
    else if (r.lease === null)
      await tx`DELETE FROM group_leases WHERE group_id = ${groupId} AND work_item_id = ${r.workItemId}`
    else
      await tx`INSERT INTO group_leases (group_id, work_item_id, agent_id, lease_id, session_epoch, ownership_epoch)
        VALUES (${groupId}, ${r.workItemId}, ${r.lease.agentId}, ${r.lease.leaseId}, ${r.lease.sessionEpoch},
          ${r.lease.ownershipEpoch})
        ON CONFLICT (group_id, work_item_id) DO UPDATE SET agent_id = excluded.agent_id, lease_id = excluded.lease_id,
          session_epoch = excluded.session_epoch, ownership_epoch = excluded.ownership_epoch`
  }
}

export function postgresLeases(sql: postgres.Sql): LeaseTable {
  return {
    olderThan: async (agentId, belowSessionEpoch, after, limit) => {
      checkRead(belowSessionEpoch, limit)
      try {
        const rows = await sql`SELECT * FROM group_leases WHERE agent_id = ${agentId}
          AND session_epoch < ${belowSessionEpoch}
          AND (group_id, work_item_id) > (${after?.groupId ?? ''}, ${after?.workItemId ?? ''})
          ORDER BY group_id, work_item_id LIMIT ${limit}`
        return rows.map(recordFrom)
      } catch (e) {
        return fail(e)
      }
    },
  }
}

/** The PostgreSQL counterpart of ensureSqliteLeaseTable (index-backfill.ts). */
export async function ensurePostgresLeaseTable(sql: postgres.Sql): Promise<number> {
  return backfillPostgresIndex(sql, {
    table: 'group_leases',
    create: (tx) => tx.unsafe(POSTGRES_SCHEMA).simple(),
    kinds: LEASE_EVENT_KINDS,
    rowsOf: leaseRowsOf,
    write: postgresWriteLeases,
  })
}
