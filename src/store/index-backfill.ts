// The derived index tables (group_messages, group_members, group_leases) of a store opened from
// an earlier build: created and filled from the stored log in pages of Events in
// (group_id, sequence) order, in one transaction that another process opening the same store
// waits for (SQLite BEGIN IMMEDIATE; PostgreSQL the store-init advisory lock), after which it
// finds the table. Nothing happens when the table exists. Each returns the Events read.

import type Database from 'better-sqlite3'
import type postgres from 'postgres'

type Obj = Record<string, unknown>

const BACKFILL_PAGE = 1_000

/** One index row and the Group it belongs to. */
export interface GroupRow<Row> {
  groupId: string
  row: Row
}

interface IndexTable<Row> {
  table: string
  /** The Event kinds whose payloads give rows. */
  kinds: readonly string[]
  /** The rows one stored Event implies. */
  rowsOf: (kind: string, payload: unknown) => readonly Row[]
}

/** The rows the stored Events of one page (group_id, sequence, kind, bytes) imply, in log order. */
function pageRows<Row>(index: IndexTable<Row>, page: readonly Obj[]): GroupRow<Row>[] {
  const rows: GroupRow<Row>[] = []
  for (const e of page) {
    const bytes = e.bytes as Uint8Array
    const doc = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as Obj
    for (const row of index.rowsOf(String(e.kind), doc.payload)) rows.push({groupId: String(e.group_id), row})
  }
  return rows
}

export function backfillSqliteIndex<Row>(
  db: Database.Database,
  index: IndexTable<Row> & {
    schema: string
    writes: (db: Database.Database) => (rows: readonly GroupRow<Row>[]) => void
  },
): number {
  const exists = () => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(index.table)
  if (exists()) return 0
  db.exec('BEGIN IMMEDIATE')
  try {
    let read = 0
    if (!exists()) {
      db.exec(index.schema)
      const write = index.writes(db)
      const kinds = index.kinds.map(() => '?').join(', ')
      const page = db.prepare(`SELECT group_id, sequence, kind, bytes FROM group_events
        WHERE kind IN (${kinds}) AND (group_id, sequence) > (?, ?) ORDER BY group_id, sequence LIMIT ${BACKFILL_PAGE}`)
      let after: [string, number] = ['', 0]
      for (;;) {
        const events = page.all(...index.kinds, ...after) as Obj[]
        if (events.length === 0) break
        write(pageRows(index, events))
        read += events.length
        const last = events[events.length - 1]!
        after = [String(last.group_id), Number(last.sequence)]
      }
    }
    db.exec('COMMIT')
    return read
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK')
  }
}

export async function backfillPostgresIndex<Row>(
  sql: postgres.Sql,
  index: IndexTable<Row> & {
    create: (tx: postgres.TransactionSql) => Promise<unknown>
    write: (tx: postgres.TransactionSql, rows: readonly GroupRow<Row>[]) => Promise<void>
  },
): Promise<number> {
  // pg_tables, not to_regclass: a plain catalog query reads with the statement's snapshot, so
  // after the lock it sees a table another process created meanwhile (to_regclass's cached
  // catalog view did not: two processes opening an older store at once both backfilled).
  const present = async (q: postgres.Sql | postgres.TransactionSql) =>
    Boolean(
      (
        await q`SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables
          WHERE schemaname = current_schema() AND tablename = ${index.table}) AS present`
      )[0]?.present,
    )
  if (await present(sql)) return 0
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('mwp store init'))`
    if (await present(tx)) return 0
    await index.create(tx)
    let read = 0
    let after: [string, number] = ['', 0]
    for (;;) {
      const events = await tx`SELECT group_id, sequence, kind, bytes FROM group_events
        WHERE kind IN ${tx(index.kinds)} AND (group_id, sequence) > (${after[0]}, ${after[1]})
        ORDER BY group_id, sequence LIMIT ${BACKFILL_PAGE}`
      if (events.length === 0) break
      await index.write(tx, pageRows(index, events))
      read += events.length
      const last = events[events.length - 1]!
      after = [String(last.group_id), Number(last.sequence)]
    }
    return read
  })
}
