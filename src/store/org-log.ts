// The Organization-scoped log (spec §15.1/§15.2, ACCEPTANCE H8): the two bootstrap facts that
// live outside every Group — `…identity.session_opened` (a new Agent Session Epoch) and
// `…registry.agent_card_registered` — with their idempotency receipts.
//
// Each entry is versioned per (kind, subject): a session_opened entry's version is the Session
// Epoch it issues for the Agent, an agent_card_registered entry's version is the card version.
// An append names the version it decided on top of (`expectedVersion`, the subject's current
// highest version); a moved version refuses the append, so two processes issuing a Session Epoch
// for one Agent never both win — the loser decides again (strictly higher epochs, §6.3).
//
// On SQLite the tables come with the store and are added when a store initialized before this log
// existed is opened (sqlite.ts); on PostgreSQL they are created on first use (CREATE … IF NOT
// EXISTS). Rows are append-only.

import type Database from 'better-sqlite3'
import type postgres from 'postgres'
import {lazyPostgresSchema} from './pg-lazy-schema.js'
import {StoreError, describeError} from './records.js'

/** One Organization-scoped Event: its exact signed bytes plus the fields the log indexes. */
export interface OrgEntry {
  eventId: string
  kind: string
  /** The Agent (or other Principal) ID the fact is about. */
  subjectId: string
  /** Session Epoch (session_opened) or card version (agent_card_registered). */
  version: number
  bytes: Uint8Array
}

/** The receipt of one accepted Organization-scoped Command, keyed by (actorId, actionId). */
export interface OrgReceipt {
  actorId: string
  actionId: string
  contentHash: string
  /** The receipt document (JSON text), returned verbatim. */
  document: string
}

export type OrgAppendOutcome =
  | {status: 'appended'}
  | {status: 'duplicate'; receipt: OrgReceipt}
  | {status: 'action-id-collision'}
  /** The subject's highest version is no longer `expectedVersion`: decide again. */
  | {status: 'version-moved'; current: number}
  | {status: 'unavailable'; detail: string}

export interface OrgLog {
  /** The highest version recorded for (kind, subjectId), 0 when none. Throws StoreError. */
  currentVersion(kind: string, subjectId: string): Promise<number>
  /** Appends the entry and its receipt atomically, or nothing. */
  append(entry: OrgEntry, expectedVersion: number, receipt: OrgReceipt): Promise<OrgAppendOutcome>
  receipt(actorId: string, actionId: string): Promise<OrgReceipt | null>
  /** The stored bytes of one Organization-scoped Event, or null. */
  event(eventId: string): Promise<Uint8Array | null>
}

/** Created with the store (and added when an older store is opened: sqlite.ts). */
export const SQLITE_ORG_LOG_SCHEMA = `
CREATE TABLE IF NOT EXISTS org_events (
  position   INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id   TEXT NOT NULL UNIQUE,
  kind       TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  version    INTEGER NOT NULL,
  bytes      BLOB NOT NULL,
  UNIQUE (kind, subject_id, version)
) STRICT;
CREATE TRIGGER IF NOT EXISTS org_events_no_update BEFORE UPDATE ON org_events
BEGIN SELECT RAISE(ABORT, 'org_events is append-only'); END;
CREATE TRIGGER IF NOT EXISTS org_events_no_delete BEFORE DELETE ON org_events
BEGIN SELECT RAISE(ABORT, 'org_events is append-only'); END;
CREATE TABLE IF NOT EXISTS org_receipts (
  actor_id     TEXT NOT NULL,
  action_id    TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  document     TEXT NOT NULL,
  PRIMARY KEY (actor_id, action_id)
) STRICT;
CREATE TRIGGER IF NOT EXISTS org_receipts_no_update BEFORE UPDATE ON org_receipts
BEGIN SELECT RAISE(ABORT, 'org_receipts is append-only'); END;
CREATE TRIGGER IF NOT EXISTS org_receipts_no_delete BEFORE DELETE ON org_receipts
BEGIN SELECT RAISE(ABORT, 'org_receipts is append-only'); END;
`

const POSTGRES_SCHEMA = `
CREATE TABLE IF NOT EXISTS org_events (
  position   BIGSERIAL PRIMARY KEY,
  event_id   TEXT NOT NULL UNIQUE,
  kind       TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  version    BIGINT NOT NULL,
  bytes      BYTEA NOT NULL,
  UNIQUE (kind, subject_id, version)
);
CREATE TABLE IF NOT EXISTS org_receipts (
  actor_id     TEXT NOT NULL,
  action_id    TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  document     TEXT NOT NULL,
  PRIMARY KEY (actor_id, action_id)
);
-- The same append-only guard as the Group log's tables (mwp_append_only() comes with the store schema).
CREATE OR REPLACE TRIGGER org_events_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON org_events
  FOR EACH STATEMENT EXECUTE FUNCTION mwp_append_only();
CREATE OR REPLACE TRIGGER org_receipts_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON org_receipts
  FOR EACH STATEMENT EXECUTE FUNCTION mwp_append_only();
`

const receiptFrom = (raw: Record<string, unknown>): OrgReceipt => ({
  actorId: String(raw.actor_id),
  actionId: String(raw.action_id),
  contentHash: String(raw.content_hash),
  document: String(raw.document),
})

/** The prior receipt, or the version check, refuses an append; null lets it write. */
function refusal(
  prior: OrgReceipt | null,
  receipt: OrgReceipt,
  current: number,
  expectedVersion: number,
): OrgAppendOutcome | null {
  if (prior)
    return prior.contentHash === receipt.contentHash
      ? {status: 'duplicate', receipt: prior}
      : {status: 'action-id-collision'}
  if (current !== expectedVersion) return {status: 'version-moved', current}
  return null
}

/** The version and receipt lookups both the reads and the append need. */
function sqliteLookups(db: Database.Database) {
  const version = db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM org_events WHERE kind = ? AND subject_id = ?')
  const stored = db.prepare('SELECT * FROM org_receipts WHERE actor_id = ? AND action_id = ?')
  return {
    current: (kind: string, subjectId: string) => Number((version.get(kind, subjectId) as {v: number}).v),
    receipt: (actorId: string, actionId: string) => {
      const raw = stored.get(actorId, actionId) as Record<string, unknown> | undefined
      return raw ? receiptFrom(raw) : null
    },
  }
}

/** The append, in a transaction of its own: the SQLite store's writer runs it (sqlite-writes.ts). */
export function sqliteOrgAppend(db: Database.Database): OrgLog['append'] {
  const {current, receipt} = sqliteLookups(db)
  const insertEvent = db.prepare(
    'INSERT INTO org_events (event_id, kind, subject_id, version, bytes) VALUES (?, ?, ?, ?, ?)',
  )
  const insertReceipt = db.prepare(
    'INSERT INTO org_receipts (actor_id, action_id, content_hash, document) VALUES (?, ?, ?, ?)',
  )
  return async (entry, expectedVersion, r) => {
    try {
      return db
        .transaction((): OrgAppendOutcome => {
          const refused = refusal(
            receipt(r.actorId, r.actionId),
            r,
            current(entry.kind, entry.subjectId),
            expectedVersion,
          )
          if (refused) return refused
          insertEvent.run(entry.eventId, entry.kind, entry.subjectId, entry.version, Buffer.from(entry.bytes))
          insertReceipt.run(r.actorId, r.actionId, r.contentHash, r.document)
          return {status: 'appended'}
        })
        .immediate()
    } catch (e) {
      return {status: 'unavailable', detail: describeError(e)}
    }
  }
}

/** The reads, on the SQLite store's read connection. */
export function sqliteOrgReads(db: Database.Database): Omit<OrgLog, 'append'> {
  const {current, receipt} = sqliteLookups(db)
  const event = db.prepare('SELECT bytes FROM org_events WHERE event_id = ?')
  const guarded = <T>(what: string, f: () => T): T => {
    try {
      return f()
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the Organization log (${what}): ${describeError(e)}`, {cause: e})
    }
  }
  return {
    currentVersion: async (kind, subjectId) => guarded('version', () => current(kind, subjectId)),
    receipt: async (actorId, actionId) => guarded('receipt', () => receipt(actorId, actionId)),
    event: async (eventId) =>
      guarded('event', () => {
        const raw = event.get(eventId) as {bytes: Uint8Array} | undefined
        return raw ? new Uint8Array(raw.bytes) : null
      }),
  }
}

type Sql = postgres.Sql

export function postgresOrgLog(sql: Sql): OrgLog {
  const ensure = lazyPostgresSchema(sql, 'mwp org log', POSTGRES_SCHEMA, (e) => {
    throw new StoreError('unavailable', `cannot create the Organization log: ${describeError(e)}`, {cause: e})
  })
  const current = async (q: Sql | postgres.TransactionSql, kind: string, subjectId: string) =>
    Number(
      (
        await q`SELECT COALESCE(MAX(version), 0) AS v FROM org_events WHERE kind = ${kind} AND subject_id = ${subjectId}`
      )[0]!.v,
    )
  const receipt = async (q: Sql | postgres.TransactionSql, actorId: string, actionId: string) => {
    const [raw] = await q`SELECT * FROM org_receipts WHERE actor_id = ${actorId} AND action_id = ${actionId}`
    return raw ? receiptFrom(raw) : null
  }
  const guarded = async <T>(what: string, f: () => Promise<T>): Promise<T> => {
    await ensure()
    try {
      return await f()
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the Organization log (${what}): ${describeError(e)}`, {cause: e})
    }
  }
  return {
    currentVersion: (kind, subjectId) => guarded('version', () => current(sql, kind, subjectId)),
    receipt: (actorId, actionId) => guarded('receipt', () => receipt(sql, actorId, actionId)),
    event: (eventId) =>
      guarded('event', async () => {
        const [raw] = await sql`SELECT bytes FROM org_events WHERE event_id = ${eventId}`
        return raw ? new Uint8Array(raw.bytes as Uint8Array) : null
      }),
    append: async (entry, expectedVersion, r) => {
      await ensure()
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          return await sql.begin(async (tx) => {
            // One writer per subject at a time: the version check and the insert agree.
            await tx`SELECT pg_advisory_xact_lock(hashtext(${entry.kind + '\n' + entry.subjectId}))`
            const refused = refusal(
              await receipt(tx, r.actorId, r.actionId),
              r,
              await current(tx, entry.kind, entry.subjectId),
              expectedVersion,
            )
            if (refused) return refused
            await tx`INSERT INTO org_events (event_id, kind, subject_id, version, bytes)
              VALUES (${entry.eventId}, ${entry.kind}, ${entry.subjectId}, ${entry.version}, ${Buffer.from(entry.bytes)})`
            await tx`INSERT INTO org_receipts (actor_id, action_id, content_hash, document)
              VALUES (${r.actorId}, ${r.actionId}, ${r.contentHash}, ${r.document})`
            return {status: 'appended'} as OrgAppendOutcome
          })
        } catch (e) {
          // A concurrent insert of the same receipt key: the retry's reads see the winner.
          if ((e as {code?: string}).code === '23505') continue
          return {status: 'unavailable', detail: describeError(e)}
        }
      }
      return {status: 'unavailable', detail: 'gave up after repeated unique-key contention'}
    },
  }
}
