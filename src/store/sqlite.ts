// The embedded store: one SQLite file (better-sqlite3), shareable by several processes.
//
// WAL lets readers proceed while one writer commits; `synchronous=FULL` makes every commit
// durable on return; the busy timeout makes a process wait for another's write transaction
// instead of failing. The append is `BEGIN IMMEDIATE` (take the write lock first), an
// `INSERT … ON CONFLICT DO NOTHING`, and — when nothing was inserted — a read of the row already
// there, all in one transaction. Every verdict comes from records.ts.
//
// The Group log append is the same shape: `BEGIN IMMEDIATE` (SQLite has one writer, so appends
// to every Group serialize here, which is fine for the embedded store), read the Group's state,
// ask group-records.ts, then write the events, the head and the receipt, or roll back.

import {existsSync} from 'node:fs'
import Database from 'better-sqlite3'
import type {AppendResult, Candidate, LookupResult} from '../admission/log.js'
import type {SigningKey} from '../crypto/keyfile.js'
import type {AppendOutcome, GroupHead, LoggedEvent, Receipt, StoredEvent} from './group-log.js'
import {
  EVENT_COLUMNS,
  RECEIPT_COLUMNS,
  appended,
  checkAppend,
  checkRead,
  decideAppend,
  eventRow,
  headAfter,
  headFrom,
  loggedEvent,
  receiptFrom,
  receiptRow,
} from './group-records.js'
import {
  AUDIT_COLUMNS,
  AdmissionAuthority,
  ROW_COLUMNS,
  SCHEMA_VERSION,
  StoreError,
  admissionRow,
  auditInsert,
  auditQuery,
  auditRow,
  checkInit,
  checkOpen,
  configJson,
  describeError,
  storedConfig,
} from './records.js'
import type {AcceptanceContext, AuditEntry, AuditRow, Store, StoreConfig} from './types.js'
import {POLICY_LOG_COLUMNS, type PolicyLogEntry, SQLITE_POLICY_LOG_SCHEMA, policyEntryFrom, policyRows} from './policy-log.js'
import {type GroupAppend, sqliteAppendGroups} from './multi-append.js'
import {type OrgLog, sqliteOrgLog} from './org-log.js'
import {type CursorTable, sqliteCursors} from './cursors.js'
import {GroupCommitFailure, SqliteGroupCommit} from './group-commit.js'

type DB = Database.Database

const insertSql = (table: string, columns: readonly string[]) =>
  `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`

/** The Group log statements, prepared on first use. */
function groupStatements(db: DB) {
  return {
    head: db.prepare('SELECT head, revision FROM groups WHERE group_id = ?'),
    receipt: db.prepare('SELECT * FROM receipts WHERE actor_id = ? AND action_id = ?'),
    eventIdTaken: db.prepare('SELECT 1 FROM group_events WHERE event_id = ?'),
    eventIdAt: db.prepare('SELECT event_id FROM group_events WHERE group_id = ? AND sequence = ?').pluck(),
    events: db.prepare('SELECT sequence, event_id, kind, bytes FROM group_events WHERE group_id = ? AND sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ?'),
    insertEvent: db.prepare(insertSql('group_events', EVENT_COLUMNS)),
    insertReceipt: db.prepare(insertSql('receipts', RECEIPT_COLUMNS)),
    setHead: db.prepare(
      'INSERT INTO groups (group_id, head, revision) VALUES (?, ?, ?) ON CONFLICT (group_id) DO UPDATE SET head = excluded.head, revision = excluded.revision',
    ),
  }
}

/** How long a statement waits for another process's write lock before failing (ms). */
const BUSY_TIMEOUT_MS = 15_000

const SCHEMA = `
CREATE TABLE IF NOT EXISTS config (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS admission_records (
  organization_id     TEXT NOT NULL,
  signing_hash        TEXT NOT NULL,
  admission_record_id TEXT NOT NULL UNIQUE,
  document_kind       TEXT NOT NULL,
  key_id              TEXT NOT NULL,
  principal_type      TEXT NOT NULL,
  principal_id        TEXT NOT NULL,
  record              BLOB NOT NULL,
  accepted_by_type    TEXT NOT NULL,
  accepted_by_id      TEXT NOT NULL,
  service_signature   TEXT NOT NULL,
  created_at          TEXT NOT NULL,
  PRIMARY KEY (organization_id, signing_hash)
) STRICT;

CREATE TRIGGER IF NOT EXISTS admission_records_no_update BEFORE UPDATE ON admission_records
BEGIN SELECT RAISE(ABORT, 'admission_records is append-only'); END;
CREATE TRIGGER IF NOT EXISTS admission_records_no_delete BEFORE DELETE ON admission_records
BEGIN SELECT RAISE(ABORT, 'admission_records is append-only'); END;

CREATE TABLE IF NOT EXISTS audit_log (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  at            TEXT NOT NULL,
  at_seconds    INTEGER NOT NULL,
  at_fraction   TEXT NOT NULL,
  stage         TEXT NOT NULL,
  reason        TEXT NOT NULL,
  document_kind TEXT,
  signing_hash  TEXT,
  subject       TEXT,
  detail        TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at_seconds, at_fraction);

CREATE TABLE IF NOT EXISTS groups (
  group_id TEXT PRIMARY KEY,
  head     INTEGER NOT NULL,
  revision INTEGER NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS group_events (
  group_id           TEXT NOT NULL,
  sequence           INTEGER NOT NULL,
  event_id           TEXT NOT NULL UNIQUE,
  kind               TEXT NOT NULL,
  aggregate_revision INTEGER NOT NULL,
  bytes              BLOB NOT NULL,
  PRIMARY KEY (group_id, sequence)
) STRICT;

CREATE TRIGGER IF NOT EXISTS group_events_no_update BEFORE UPDATE ON group_events
BEGIN SELECT RAISE(ABORT, 'group_events is append-only'); END;
CREATE TRIGGER IF NOT EXISTS group_events_no_delete BEFORE DELETE ON group_events
BEGIN SELECT RAISE(ABORT, 'group_events is append-only'); END;

CREATE TABLE IF NOT EXISTS receipts (
  actor_id       TEXT NOT NULL,
  action_id      TEXT NOT NULL,
  content_hash   TEXT NOT NULL,
  group_id       TEXT NOT NULL,
  first_sequence INTEGER NOT NULL,
  last_sequence  INTEGER NOT NULL,
  document       TEXT NOT NULL,
  PRIMARY KEY (actor_id, action_id)
) STRICT;

CREATE TRIGGER IF NOT EXISTS receipts_no_update BEFORE UPDATE ON receipts
BEGIN SELECT RAISE(ABORT, 'receipts is append-only'); END;
CREATE TRIGGER IF NOT EXISTS receipts_no_delete BEFORE DELETE ON receipts
BEGIN SELECT RAISE(ABORT, 'receipts is append-only'); END;
`

function connect(path: string, create: boolean): DB {
  const db = new Database(path, {fileMustExist: !create, timeout: BUSY_TIMEOUT_MS})
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
  } catch (e) {
    db.close()
    throw e
  }
  return db
}

function readConfig(db: DB): {version: string; config: string} | null {
  const present = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'config'").get()
  return storedConfig(present ? (db.prepare('SELECT name, value FROM config').all() as {name: unknown; value: unknown}[]) : null)
}

const environment = (e: unknown, where: string): StoreError =>
  e instanceof StoreError ? e : new StoreError('unavailable', `cannot use the SQLite store ${where}: ${describeError(e)}`)

export async function initSqliteStore(path: string, config: StoreConfig): Promise<void> {
  const where = `sqlite:${path}`
  const wanted = configJson(config)
  let db: DB | undefined
  try {
    db = connect(path, true)
    db.exec('BEGIN IMMEDIATE')
    try {
      if (checkInit(readConfig(db), wanted, where) === 'create') {
        db.exec(SCHEMA)
        db.exec(SQLITE_POLICY_LOG_SCHEMA)
        const insert = db.prepare('INSERT INTO config (name, value) VALUES (?, ?)')
        insert.run('schema-version', SCHEMA_VERSION)
        insert.run('store-config', wanted)
      }
      db.exec('COMMIT')
    } finally {
      if (db.inTransaction) db.exec('ROLLBACK')
    }
  } catch (e) {
    throw environment(e, where)
  } finally {
    db?.close()
  }
}

export async function openSqliteStore(path: string, url: string, admissionKey?: SigningKey): Promise<Store> {
  const where = `sqlite:${path}`
  if (!existsSync(path)) throw new StoreError('not-initialized', `no initialized store at ${where}; run mwp store init`)
  let db: DB | undefined
  try {
    db = connect(path, false)
    const config = checkOpen(readConfig(db), where)
    return new SqliteStore(db, url, new AdmissionAuthority(config, admissionKey))
  } catch (e) {
    db?.close()
    throw environment(e, where)
  }
}

class SqliteStore implements Store {
  readonly config: StoreConfig
  private readonly selectRow
  private readonly insertRow
  private readonly insertAudit
  private groupSql: ReturnType<typeof groupStatements> | undefined
  /** Admission records and Group appends share one write transaction per event-loop turn (group-commit.ts). */
  private readonly commits: SqliteGroupCommit

  constructor(
    private readonly db: DB,
    readonly url: string,
    private readonly authority: AdmissionAuthority,
  ) {
    this.config = authority.config
    this.selectRow = db.prepare('SELECT * FROM admission_records WHERE organization_id = ? AND signing_hash = ?')
    this.insertRow = db.prepare(
      `INSERT INTO admission_records (${ROW_COLUMNS.join(', ')}) VALUES (${ROW_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT DO NOTHING`,
    )
    this.insertAudit = db.prepare(`INSERT INTO audit_log (${AUDIT_COLUMNS.join(', ')}) VALUES (${AUDIT_COLUMNS.map(() => '?').join(', ')})`)
    this.commits = new SqliteGroupCommit(db)
  }

  private stored(organizationId: string, signingHash: string) {
    const raw = this.selectRow.get(organizationId, signingHash) as Record<string, unknown> | undefined
    return raw && admissionRow(raw)
  }

  async lookup(organizationId: string, signingHash: string): Promise<LookupResult> {
    const refused = this.authority.refuseLookup(organizationId)
    if (refused) return refused
    try {
      const row = this.stored(organizationId, signingHash)
      return row ? this.authority.authenticate(row) : {status: 'authoritative-absence'}
    } catch (e) {
      return {status: 'unavailable', detail: describeError(e)}
    }
  }

  async appendOrReturnExisting(candidate: Candidate): Promise<AppendResult> {
    const prepared = this.authority.prepare(candidate)
    if ('refused' in prepared) return prepared.refused
    const {row} = prepared
    try {
      // Settles only after the shared transaction committed (group-commit.ts).
      return await this.commits.run(() =>
        this.insertRow.run(...ROW_COLUMNS.map((c) => row[c])).changes === 1
          ? this.authority.committed(row)
          : this.authority.resolveExisting(this.stored(row.organization_id, row.signing_hash), candidate),
      )
    } catch (e) {
      if (e instanceof GroupCommitFailure && e.phase === 'commit') return {status: 'commit-failed', detail: describeError(e)}
      return {status: 'unavailable', detail: describeError(e)}
    }
  }

  private get group(): ReturnType<typeof groupStatements> {
    return (this.groupSql ??= groupStatements(this.db))
  }

  private readHead(groupId: string): GroupHead | null {
    return headFrom(this.group.head.get(groupId) as Record<string, unknown> | undefined)
  }

  private readReceipt(actorId: string, actionId: string): Receipt | null {
    const raw = this.group.receipt.get(actorId, actionId) as Record<string, unknown> | undefined
    return raw ? receiptFrom(raw) : null
  }

  async head(groupId: string): Promise<GroupHead | null> {
    try {
      return this.readHead(groupId)
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the Group head: ${describeError(e)}`)
    }
  }

  async receipt(actorId: string, actionId: string): Promise<Receipt | null> {
    try {
      return this.readReceipt(actorId, actionId)
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the receipt: ${describeError(e)}`)
    }
  }

  async read(groupId: string, afterSequence: number, limit: number): Promise<{events: LoggedEvent[]; head: number}> {
    checkRead(groupId, afterSequence, limit)
    try {
      // One read transaction (a WAL snapshot): the events and the head agree.
      return this.db.transaction(() => {
        const head = this.readHead(groupId)?.sequence ?? 0
        const rows = this.group.events.all(groupId, afterSequence, head, limit) as Record<string, unknown>[]
        return {events: rows.map(loggedEvent), head}
      })()
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the Group log: ${describeError(e)}`)
    }
  }

  /** Multi-Group atomic append (multi-append.ts): one BEGIN IMMEDIATE transaction. */
  async appendGroups(appends: GroupAppend[], receipt: Receipt): Promise<AppendOutcome> {
    return sqliteAppendGroups(this.db, appends, receipt)
  }

  async append(groupId: string, expectedHead: number, events: StoredEvent[], receipt: Receipt, expectedHeadEventId?: string): Promise<AppendOutcome> {
    const refused = checkAppend(groupId, expectedHead, events, receipt, expectedHeadEventId)
    if (refused) return refused
    try {
      // One step of the shared write transaction; settles after it committed (group-commit.ts).
      return await this.commits.run((): AppendOutcome => {
      const s = this.group
      const state = {
        head: this.readHead(groupId),
        prior: this.readReceipt(receipt.actorId, receipt.actionId),
        takenEventId: events.find((e) => s.eventIdTaken.get(e.eventId) !== undefined)?.eventId ?? null,
        // Read inside this write step: an earlier step of the same batch may have written it.
        headEventId: expectedHeadEventId === undefined ? undefined : ((s.eventIdAt.get(groupId, expectedHead) as string | undefined) ?? null),
      }
      const verdict = decideAppend(state, expectedHead, events, receipt, expectedHeadEventId)
      if (verdict) return verdict // nothing was written
      for (const e of events) {
        const row = eventRow(groupId, e)
        s.insertEvent.run(...EVENT_COLUMNS.map((c) => row[c]))
      }
      // §20 Policy Log rows ride in the same transaction (policy-log.ts); prepared only when used.
      for (const row of policyRows(groupId, events)) this.db.prepare(insertSql('policy_log', POLICY_LOG_COLUMNS)).run(...POLICY_LOG_COLUMNS.map((c) => row[c]))
      const head = headAfter(events)
      s.setHead.run(groupId, head.sequence, head.revision)
      const r = receiptRow(receipt)
      s.insertReceipt.run(...RECEIPT_COLUMNS.map((c) => r[c]))
      return appended(events)
      })
    } catch (e) {
      if (e instanceof GroupCommitFailure && e.phase === 'commit') return {status: 'indeterminate', detail: `commit failed: ${describeError(e)}`}
      return {status: 'unavailable', detail: describeError(e)}
    }
  }

  async policyLog(groupId: string): Promise<PolicyLogEntry[]> {
    try {
      return (this.db.prepare('SELECT * FROM policy_log WHERE group_id = ? ORDER BY sequence').all(groupId) as Record<string, unknown>[]).map(policyEntryFrom)
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the Policy Log: ${describeError(e)}`)
    }
  }

  async acceptanceContext(): Promise<AcceptanceContext> {
    return this.authority.acceptanceContext()
  }

  async audit(entry: AuditEntry): Promise<void> {
    const row = auditInsert(entry)
    try {
      this.insertAudit.run(...AUDIT_COLUMNS.map((c) => row[c]))
    } catch (e) {
      throw new StoreError('unavailable', `cannot write the audit log: ${describeError(e)}`)
    }
  }

  async listAudit(options?: {since?: string; limit?: number}): Promise<AuditRow[]> {
    const {since, limit} = auditQuery(options)
    let sql = 'SELECT * FROM audit_log'
    const params: (string | number)[] = []
    if (since) {
      sql += ' WHERE at_seconds > ? OR (at_seconds = ? AND at_fraction >= ?)'
      params.push(since.seconds, since.seconds, since.fraction)
    }
    sql += ' ORDER BY id'
    if (limit !== null) {
      sql += ' LIMIT ?'
      params.push(limit)
    }
    try {
      return (this.db.prepare(sql).all(...params) as Record<string, unknown>[]).map(auditRow)
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the audit log: ${describeError(e)}`)
    }
  }

  private orgLog: OrgLog | undefined
  private cursorTable: CursorTable | undefined
  organizationLog(): OrgLog {
    return (this.orgLog ??= sqliteOrgLog(this.db))
  }
  cursors(): CursorTable {
    return (this.cursorTable ??= sqliteCursors(this.db))
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close()
  }
}
