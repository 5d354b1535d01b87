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
import {backfillPostgresIndex, backfillSqliteIndex} from './index-backfill.js'
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

/** messageRowOf as a list, for the backfill. */
const messageRowsOf = (kind: string, payload: unknown): MessageRow[] => {
  const row = messageRowOf(kind, payload)
  return row === undefined ? [] : [row]
}

/** Adds the table to a store opened from an earlier build, filled from the stored log (index-backfill.ts). */
export function ensureSqliteMessageTable(db: Database.Database): number {
  return backfillSqliteIndex(db, {
    table: 'group_messages',
    schema: SQLITE_TABLE,
    kinds: MESSAGE_EVENT_KINDS,
    rowsOf: messageRowsOf,
    writes: sqliteMessageWrites,
  })
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

/** The PostgreSQL counterpart of ensureSqliteMessageTable (index-backfill.ts). */
export async function ensurePostgresMessageTable(sql: postgres.Sql): Promise<number> {
  return backfillPostgresIndex(sql, {
    table: 'group_messages',
    create: (tx) =>
      tx`CREATE TABLE IF NOT EXISTS group_messages (
      group_id        TEXT NOT NULL,
      message_id      TEXT NOT NULL,
      author_type     TEXT NOT NULL,
      author_id       TEXT NOT NULL,
      conversation_id TEXT NOT NULL,
      status          TEXT NOT NULL,
      redacted        BOOLEAN NOT NULL,
      PRIMARY KEY (group_id, message_id))`,
    kinds: MESSAGE_EVENT_KINDS,
    rowsOf: messageRowsOf,
    write: postgresWriteMessages,
  })
}
