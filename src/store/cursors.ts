// Durable delivery Cursors (spec §16, §17.3): per principal and Group, the highest contiguous
// sequence the principal ACKed over the wire. A Cursor only moves forward; it permits delivery
// cleanup and never touches the authoritative Group history. The SQLite table comes with the store
// (sqlite.ts adds it to an older one when opened); on PostgreSQL it is created on first use.

import type Database from 'better-sqlite3'
import type postgres from 'postgres'
import {lazyPostgresSchema} from './pg-lazy-schema.js'
import {tableFailure} from './records.js'

export interface CursorTable {
  /** Raises (never lowers) the Cursor; returns the stored value after the write. */
  advance(principalId: string, groupId: string, sequence: number): Promise<number>
  /** The stored Cursor, or null when the principal never ACKed the Group. */
  get(principalId: string, groupId: string): Promise<number | null>
}

const fail = tableFailure('the cursor table')

/** Created with the store (and added when an older store is opened: sqlite.ts). */
export const SQLITE_CURSOR_SCHEMA = `CREATE TABLE IF NOT EXISTS delivery_cursors (
    principal_id TEXT NOT NULL,
    group_id     TEXT NOT NULL,
    sequence     INTEGER NOT NULL,
    PRIMARY KEY (principal_id, group_id)
  ) STRICT`

/** The cursor upsert alone, synchronous: the store's writer runs it inside its group commit (sqlite-writes.ts). */
export function sqliteCursorAdvance(
  db: Database.Database,
): (principalId: string, groupId: string, sequence: number) => number {
  const upsert = db.prepare(`INSERT INTO delivery_cursors (principal_id, group_id, sequence) VALUES (?, ?, ?)
    ON CONFLICT (principal_id, group_id) DO UPDATE SET sequence = MAX(sequence, excluded.sequence)
    RETURNING sequence`)
  return (principalId, groupId, sequence) =>
    Number((upsert.get(principalId, groupId, sequence) as {sequence: number}).sequence)
}

/** Reads on `db`; `advance` is the store writer's (sqlite-writes.ts), which owns every write. */
export function sqliteCursors(db: Database.Database, advance: CursorTable['advance']): CursorTable {
  const select = db.prepare('SELECT sequence FROM delivery_cursors WHERE principal_id = ? AND group_id = ?')
  return {
    advance: async (principalId, groupId, sequence) => {
      try {
        return await advance(principalId, groupId, sequence)
      } catch (e) {
        return fail(e)
      }
    },
    get: async (principalId, groupId) => {
      try {
        const row = select.get(principalId, groupId) as {sequence: number} | undefined
        return row ? Number(row.sequence) : null
      } catch (e) {
        return fail(e)
      }
    },
  }
}

export function postgresCursors(sql: postgres.Sql): CursorTable {
  const ensure = lazyPostgresSchema(
    sql,
    'mwp delivery cursors',
    `CREATE TABLE IF NOT EXISTS delivery_cursors (
      principal_id TEXT NOT NULL,
      group_id     TEXT NOT NULL,
      sequence     BIGINT NOT NULL,
      PRIMARY KEY (principal_id, group_id))`,
    fail,
  )
  return {
    advance: async (principalId, groupId, sequence) => {
      await ensure()
      try {
        const [row] =
          await sql`INSERT INTO delivery_cursors (principal_id, group_id, sequence) VALUES (${principalId}, ${groupId}, ${sequence})
          ON CONFLICT (principal_id, group_id) DO UPDATE SET sequence = GREATEST(delivery_cursors.sequence, excluded.sequence)
          RETURNING sequence`
        return Number(row!.sequence)
      } catch (e) {
        return fail(e)
      }
    },
    get: async (principalId, groupId) => {
      await ensure()
      try {
        const [row] =
          await sql`SELECT sequence FROM delivery_cursors WHERE principal_id = ${principalId} AND group_id = ${groupId}`
        return row ? Number(row.sequence) : null
      } catch (e) {
        return fail(e)
      }
    },
  }
}
