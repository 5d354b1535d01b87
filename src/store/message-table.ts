// The per-Group Message table (spec §9; issue #15): what the Group Authority must know about a
// committed Message to judge a later correction, retraction or redaction — its author,
// Conversation, status and whether it was redacted — keyed (group_id, message_id). It lived in
// the in-memory Group state, which then grew with every Message (about 1.85 KB each); here it
// costs one indexed read per follow-up Command instead.
//
// Rows are derived from the Events the Authority appends (messageRowOf, called by ingress/seal.ts
// for each Event it signs) and written in the same atomic append as those Events
// (StoredEvent.message: sqlite-writes.ts / multi-append.ts / pg-group-commit.ts), so the table is
// always exactly what the log implies. Stores from before the table are backfilled from the log
// once, when opened (in pages, in one transaction: it is a one-time migration).

import type Database from 'better-sqlite3'
import type postgres from 'postgres'
import type {Principal, PrincipalType} from '../crypto/keyfile.js'
import type {StoredEvent} from './group-log.js'
import {StoreError, tableFailure} from './records.js'

/** §9: a committed Message as the authority judges its follow-ups by. */
export interface MessageRecord {
  author: Principal
  conversationId: string
  /** posted → corrected (any number of times) → retracted; redaction is orthogonal (policy act). */
  status: 'posted' | 'corrected' | 'retracted'
  redacted: boolean
}

/** What one Event does to the table: a new Message, or a follow-up changing an earlier one. */
export type MessageRow =
  | {messageId: string; posted: {author: Principal; conversationId: string}}
  | {messageId: string; change: 'corrected' | 'retracted' | 'redacted'}

const FOLLOW_UPS: Readonly<Record<string, 'corrected' | 'retracted' | 'redacted'>> = {
  'message.corrected': 'corrected',
  'message.retracted': 'retracted',
  'message.redacted': 'redacted',
}

/** The Event kinds that change the table (the backfill reads only these). */
export const MESSAGE_EVENT_KINDS = ['message.posted', ...Object.keys(FOLLOW_UPS)] as const

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The row an Event of `kind` with `payload` writes, if any (ingress/seal.ts; the backfill). */
export function messageRowOf(kind: string, payload: unknown): MessageRow | undefined {
  if (!isObj(payload)) return undefined
  if (kind === 'message.posted') {
    const m = payload.message
    if (!isObj(m) || !isObj(m.author) || typeof m.messageId !== 'string') return undefined
    const author = {type: String(m.author.type) as PrincipalType, id: String(m.author.id)}
    return {messageId: m.messageId, posted: {author, conversationId: String(m.conversationId)}}
  }
  const change = FOLLOW_UPS[kind]
  if (change === undefined || typeof payload.targetMessageId !== 'string') return undefined
  return {messageId: payload.targetMessageId, change}
}

/** The store's read of the table; the writes ride on the Group append. */
export interface MessageTable {
  /** The Message `messageId` of Group `groupId` as the committed log leaves it, or null. */
  get(groupId: string, messageId: string): Promise<MessageRecord | null>
}

const fail = tableFailure('the Message table')

function recordFrom(row: Obj): MessageRecord {
  const status = String(row.status)
  if (status !== 'posted' && status !== 'corrected' && status !== 'retracted')
    throw new StoreError('unavailable', `stored Message status ${status}`)
  return {
    author: {type: String(row.author_type) as PrincipalType, id: String(row.author_id)},
    conversationId: String(row.conversation_id),
    status,
    redacted: row.redacted === true || row.redacted === 1,
  }
}

// ---------------------------------------------------------------------------------------------
// SQLite

const SQLITE_TABLE = `CREATE TABLE IF NOT EXISTS group_messages (
    group_id        TEXT NOT NULL,
    message_id      TEXT NOT NULL,
    author_type     TEXT NOT NULL,
    author_id       TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    status          TEXT NOT NULL,
    redacted        INTEGER NOT NULL,
    PRIMARY KEY (group_id, message_id)
  ) STRICT`

/** Created with the store (initSqliteStore); an older store gets it, backfilled, from ensureSqliteMessageTable. */
export const SQLITE_MESSAGE_SCHEMA = SQLITE_TABLE

/** The rows an append's Events carry, in log order. */
export const messageRowsIn = (groupId: string, events: readonly StoredEvent[]): GroupMessageRow[] =>
  events.flatMap((e) => (e.message !== undefined ? [{groupId, row: e.message}] : []))

export interface GroupMessageRow {
  groupId: string
  row: MessageRow
}

/** Applies `rows`, in order, inside the caller's write transaction. */
export function sqliteMessageWrites(db: Database.Database): (rows: readonly GroupMessageRow[]) => void {
  const insert = db.prepare(`INSERT INTO group_messages
    (group_id, message_id, author_type, author_id, conversation_id, status, redacted) VALUES (?, ?, ?, ?, ?, 'posted', 0)`)
  const status = db.prepare('UPDATE group_messages SET status = ? WHERE group_id = ? AND message_id = ?')
  const redact = db.prepare('UPDATE group_messages SET redacted = 1 WHERE group_id = ? AND message_id = ?')
  const write = (groupId: string, r: MessageRow) => {
    if ('posted' in r)
      insert.run(groupId, r.messageId, r.posted.author.type, r.posted.author.id, r.posted.conversationId)
    else if (r.change === 'redacted') redact.run(groupId, r.messageId)
    else status.run(r.change, groupId, r.messageId)
  }
  return (rows) => {
    for (const {groupId, row} of rows) write(groupId, row)
  }
}

export function sqliteMessages(db: Database.Database): MessageTable {
  const select = db.prepare('SELECT * FROM group_messages WHERE group_id = ? AND message_id = ?')
  return {
    get: async (groupId, messageId) => {
      try {
        const row = select.get(groupId, messageId) as Obj | undefined
        return row ? recordFrom(row) : null
      } catch (e) {
        return fail(e)
      }
    },
  }
}

/** Rows per backfill page. */
const BACKFILL_PAGE = 1_000

/** The rows the stored message Events of one page imply, in log order. */
function rowsOf(page: readonly Obj[]): GroupMessageRow[] {
  const rows: GroupMessageRow[] = []
  for (const e of page) {
    const bytes = e.bytes as Uint8Array
    const doc = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as Obj
    const row = messageRowOf(String(e.kind), doc.payload)
    if (row !== undefined) rows.push({groupId: String(e.group_id), row})
  }
  return rows
}

/**
 * Adds the table to a store opened from an earlier build and fills it from the stored log, in
 * pages of Events in (group_id, sequence) order, in one BEGIN IMMEDIATE transaction (another
 * process opening the store meanwhile waits, then finds the table). Returns the rows written;
 * nothing happens when the table exists.
 */
export function ensureSqliteMessageTable(db: Database.Database): number {
  const exists = () => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'group_messages'").get()
  if (exists()) return 0
  db.exec('BEGIN IMMEDIATE')
  try {
    let written = 0
    if (!exists()) {
      db.exec(SQLITE_TABLE)
      const write = sqliteMessageWrites(db)
      const kinds = MESSAGE_EVENT_KINDS.map(() => '?').join(', ')
      const page = db.prepare(`SELECT group_id, sequence, kind, bytes FROM group_events
        WHERE kind IN (${kinds}) AND (group_id, sequence) > (?, ?) ORDER BY group_id, sequence LIMIT ${BACKFILL_PAGE}`)
      let after: [string, number] = ['', 0]
      for (;;) {
        const events = page.all(...MESSAGE_EVENT_KINDS, ...after) as Obj[]
        if (events.length === 0) break
        write(rowsOf(events))
        written += events.length
        const last = events[events.length - 1]!
        after = [String(last.group_id), Number(last.sequence)]
      }
    }
    db.exec('COMMIT')
    return written
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK')
  }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/** Applies `rows` (several Groups' appends), in order, inside the caller's transaction. */
export async function postgresWriteMessages(
  tx: postgres.TransactionSql,
  rows: readonly GroupMessageRow[],
): Promise<void> {
  const posted: Record<string, string | boolean>[] = []
  const changes: {groupId: string; messageId: string; change: 'corrected' | 'retracted' | 'redacted'}[] = []
  for (const {groupId, row: r} of rows) {
    if ('posted' in r)
      posted.push({
        group_id: groupId,
        message_id: r.messageId,
        author_type: r.posted.author.type,
        author_id: r.posted.author.id,
        conversation_id: r.posted.conversationId,
        status: 'posted',
        redacted: false,
      })
    else changes.push({groupId, messageId: r.messageId, change: r.change})
  }
  // A follow-up names a Message committed before it (decided on it), so every new Message can be
  // inserted first; the follow-ups then apply in log order.
  for (let i = 0; i < posted.length; i += 500)
    await tx`INSERT INTO group_messages ${tx(posted.slice(i, i + 500), 'group_id', 'message_id', 'author_type', 'author_id', 'conversation_id', 'status', 'redacted')}`
  for (const c of changes) {
    if (c.change === 'redacted')
      await tx`UPDATE group_messages SET redacted = TRUE WHERE group_id = ${c.groupId} AND message_id = ${c.messageId}`
    else
      await tx`UPDATE group_messages SET status = ${c.change} WHERE group_id = ${c.groupId} AND message_id = ${c.messageId}`
  }
}

export function postgresMessages(sql: postgres.Sql): MessageTable {
  return {
    get: async (groupId, messageId) => {
      try {
        const [row] = await sql`SELECT * FROM group_messages WHERE group_id = ${groupId} AND message_id = ${messageId}`
        return row ? recordFrom(row) : null
      } catch (e) {
        return fail(e)
      }
    },
  }
}

/**
 * The PostgreSQL counterpart of ensureSqliteMessageTable: created and backfilled once, under the
 * store init lock, in one transaction, only when missing.
 */
export async function ensurePostgresMessageTable(sql: postgres.Sql): Promise<number> {
  // pg_tables, not to_regclass: a plain catalog query reads with the statement's snapshot, so
  // after the lock it sees a table another process created meanwhile (to_regclass's cached
  // catalog view did not: two processes opening an older store at once both backfilled).
  const present = async (q: postgres.Sql | postgres.TransactionSql) =>
    Boolean(
      (
        await q`SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables
          WHERE schemaname = current_schema() AND tablename = 'group_messages') AS present`
      )[0]?.present,
    )
  if (await present(sql)) return 0
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('mwp store init'))`
    if (await present(tx)) return 0
    await tx`CREATE TABLE IF NOT EXISTS group_messages (
      group_id        TEXT NOT NULL,
      message_id      TEXT NOT NULL,
      author_type     TEXT NOT NULL,
      author_id       TEXT NOT NULL,
      conversation_id TEXT NOT NULL,
      status          TEXT NOT NULL,
      redacted        BOOLEAN NOT NULL,
      PRIMARY KEY (group_id, message_id))`
    let written = 0
    let after: [string, number] = ['', 0]
    for (;;) {
      const events = await tx`SELECT group_id, sequence, kind, bytes FROM group_events
        WHERE kind IN ${tx(MESSAGE_EVENT_KINDS)} AND (group_id, sequence) > (${after[0]}, ${after[1]})
        ORDER BY group_id, sequence LIMIT ${BACKFILL_PAGE}`
      if (events.length === 0) break
      await postgresWriteMessages(tx, rowsOf(events))
      written += events.length
      const last = events[events.length - 1]!
      after = [String(last.group_id), Number(last.sequence)]
    }
    return written
  })
}
