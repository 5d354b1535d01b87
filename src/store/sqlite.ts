// The embedded store: one SQLite file (better-sqlite3), shareable by several processes.
//
// WAL lets readers proceed while one writer commits; `synchronous=FULL` makes every commit
// durable on return; the busy timeout makes a process wait for another's write transaction
// instead of failing. This connection only reads; every write runs on the store's writer thread
// (sqlite-writer.ts, sqlite-writes.ts) inside a transaction that reads what it decides on: the
// admission insert (`INSERT … ON CONFLICT DO NOTHING`, then the row already there) and the Group
// append (the Group's head, receipt and Event IDs, then the events, head and receipt, or
// nothing). Every verdict comes from records.ts and group-records.ts.

import {accessSync, constants, existsSync} from 'node:fs'
import {dirname} from 'node:path'
import type Database from 'better-sqlite3'
import type {AppendResult, Candidate, LookupResult} from '../admission/log.js'
import type {SigningKey} from '../crypto/keyfile.js'
import type {AppendOutcome, GroupHead, LoggedEvent, Receipt, StoredEvent} from './group-log.js'
import {checkAppend, checkRead, headFrom, loggedEvent, receiptFrom} from './group-records.js'
import {
  AdmissionAuthority,
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
import {type PolicyLogEntry, SQLITE_POLICY_LOG_SCHEMA, policyEntryFrom} from './policy-log.js'
import type {GroupAppend} from './multi-append.js'
import {type OrgLog, SQLITE_ORG_LOG_SCHEMA, sqliteOrgReads} from './org-log.js'
import {type CursorTable, SQLITE_CURSOR_SCHEMA, sqliteCursors} from './cursors.js'
import {type CheckpointTable, SQLITE_CHECKPOINT_SCHEMA, sqliteCheckpoints} from './checkpoints.js'
import {type MessageTable, SQLITE_MESSAGE_SCHEMA, ensureSqliteMessageTable, sqliteMessages} from './message-table.js'
import {type MemberTable, SQLITE_MEMBER_SCHEMA, ensureSqliteMemberTable, sqliteMembers} from './member-table.js'
import {type LeaseTable, SQLITE_LEASE_SCHEMA, ensureSqliteLeaseTable, sqliteLeases} from './lease-table.js'
import {GroupCommitFailure} from './group-commit.js'
import {InlineWriter, SqliteWriter, type Writer} from './sqlite-writer.js'
import {connectSqlite} from './sqlite-writes.js'

type DB = Database.Database

/** The Group log's read statements, prepared on first use (the writes are sqlite-writes.ts'). */
function groupStatements(db: DB) {
  return {
    head: db.prepare('SELECT head, revision FROM groups WHERE group_id = ?'),
    receipt: db.prepare('SELECT * FROM receipts WHERE actor_id = ? AND action_id = ?'),
    events: db.prepare(
      'SELECT sequence, event_id, kind, bytes FROM group_events WHERE group_id = ? AND sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ?',
    ),
  }
}

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

function readConfig(db: DB): {version: string; config: string} | null {
  const present = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'config'").get()
  return storedConfig(
    present ? (db.prepare('SELECT name, value FROM config').all() as {name: unknown; value: unknown}[]) : null,
  )
}

const environment = (e: unknown, where: string): StoreError =>
  e instanceof StoreError
    ? e
    : new StoreError('unavailable', `cannot use the SQLite store ${where}: ${describeError(e)}`, {cause: e})

/** What an errno from access(2) means for a store file or its directory. */
const NOT_WRITABLE: Record<string, string> = {
  EACCES: 'read-only for this user',
  EPERM: 'immutable (or writing it is not permitted)',
  EROFS: 'on a read-only file system',
}

/**
 * Issue #15: a store file that opens but cannot be written used to fail at its first write, deep
 * inside a Command (INTERNAL_ERROR, or an uncaught StoreError after the command had begun). Every
 * opener of a store may write (admission records, the audit log, the tables added to schema 1),
 * so an open refuses up front, naming the file and the cause: the file itself, and its directory
 * when SQLite must create the -wal/-shm files beside it. access(2) answers for this process's user
 * and honours the immutable attribute even for root (for whom mode bits alone never stop writes).
 */
function checkWritable(path: string, where: string): void {
  const directoryNeeded = !existsSync(path) || !existsSync(`${path}-wal`) || !existsSync(`${path}-shm`)
  const targets: [string, string][] = [
    ...(existsSync(path) ? [['file', path] as [string, string]] : []),
    ...(directoryNeeded ? [['directory', dirname(path)] as [string, string]] : []),
  ]
  for (const [what, target] of targets) {
    try {
      accessSync(target, constants.W_OK)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'unknown'
      throw new StoreError(
        'unavailable',
        `the SQLite store ${where} cannot be written: its ${what} ${target} is ${NOT_WRITABLE[code] ?? 'not writable'} (${code})`,
        {cause: e},
      )
    }
  }
}

/** How long a short-lived process waits at open for another process's write lock (checkNotLocked). */
const OPEN_LOCK_WAIT_MS = 5_000

/**
 * Issue #15: a CLI writer on a store another process keeps write-locked (an open BEGIN IMMEDIATE
 * or EXCLUSIVE) waited out the 15 s busy timeout at each write of its Command — 45 s — and then
 * reported the store outage as INTERNAL_ERROR (exit 1). A short-lived process (inlineWrites) takes
 * and releases the write lock once at open instead, within OPEN_LOCK_WAIT_MS: a server's own
 * transactions last milliseconds, so only a lock held on purpose fails this, as an environment
 * error naming the file. Nothing is written (an empty transaction). A server does not probe: it
 * waits a lock out per write and answers retryable INTERNAL_ERROR meanwhile (ingress/admit.ts).
 */
function checkNotLocked(db: DB, where: string): void {
  const waits = db.pragma('busy_timeout', {simple: true}) as number
  db.pragma(`busy_timeout = ${OPEN_LOCK_WAIT_MS}`)
  try {
    db.exec('BEGIN IMMEDIATE')
    db.exec('ROLLBACK')
  } catch (e) {
    if ((e as {code?: unknown}).code !== 'SQLITE_BUSY') throw e
    throw new StoreError(
      'unavailable',
      `the SQLite store ${where} is locked by another process: no write lock within ${OPEN_LOCK_WAIT_MS / 1000} s (SQLITE_BUSY)`,
      {cause: e},
    )
  } finally {
    db.pragma(`busy_timeout = ${waits}`)
  }
}

/** The tables added to schema version 1 after its first release: created with a new store, added to an older one when opened. */
const LATER_TABLES = [
  SQLITE_POLICY_LOG_SCHEMA,
  SQLITE_ORG_LOG_SCHEMA,
  SQLITE_CURSOR_SCHEMA,
  SQLITE_CHECKPOINT_SCHEMA,
  SQLITE_MESSAGE_SCHEMA,
  SQLITE_MEMBER_SCHEMA,
  SQLITE_LEASE_SCHEMA,
].join(';\n')

export async function initSqliteStore(path: string, config: StoreConfig): Promise<void> {
  const where = `sqlite:${path}`
  const wanted = configJson(config)
  let db: DB | undefined
  try {
    checkWritable(path, where)
    db = connectSqlite(path, true)
    db.exec('BEGIN IMMEDIATE')
    try {
      if (checkInit(readConfig(db), wanted, where) === 'create') {
        db.exec(SCHEMA)
        db.exec(LATER_TABLES)
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

export async function openSqliteStore(
  path: string,
  url: string,
  admissionKey?: SigningKey,
  inlineWrites = false,
): Promise<Store> {
  const where = `sqlite:${path}`
  if (!existsSync(path)) throw new StoreError('not-initialized', `no initialized store at ${where}; run mwp store init`)
  let db: DB | undefined
  try {
    checkWritable(path, where)
    db = connectSqlite(path, false)
    if (inlineWrites) checkNotLocked(db, where)
    const config = checkOpen(readConfig(db), where)
    // Tables added after schema version 1 was first released, for stores initialized before them
    // (IF NOT EXISTS: nothing is written when they are there). The Message table is filled from
    // the log when it is added (message-table.ts), so it comes first; so is the membership index
    // (member-table.ts) and the lease index (lease-table.ts).
    ensureSqliteMessageTable(db)
    ensureSqliteMemberTable(db)
    ensureSqliteLeaseTable(db)
    db.exec(LATER_TABLES)
    return new SqliteStore(db, path, url, new AdmissionAuthority(config, admissionKey), inlineWrites)
  } catch (e) {
    db?.close()
    throw environment(e, where)
  }
}

class SqliteStore implements Store {
  readonly config: StoreConfig
  private readonly selectRow
  private groupSql: ReturnType<typeof groupStatements> | undefined
  /** Every write goes to the writer (sqlite-writer.ts); this connection only reads. */
  private readonly writer: Writer

  constructor(
    private readonly db: DB,
    path: string,
    readonly url: string,
    private readonly authority: AdmissionAuthority,
    inlineWrites: boolean,
  ) {
    this.config = authority.config
    this.selectRow = db.prepare('SELECT * FROM admission_records WHERE organization_id = ? AND signing_hash = ?')
    this.writer = inlineWrites ? new InlineWriter(path) : new SqliteWriter(path)
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
      // Settles only after the writer's shared transaction committed (group-commit.ts).
      const outcome = await this.writer.call('admit', row)
      return outcome.inserted
        ? this.authority.committed(row)
        : this.authority.resolveExisting(outcome.existing ? admissionRow(outcome.existing) : undefined, candidate)
    } catch (e) {
      if (e instanceof GroupCommitFailure && e.phase === 'commit')
        return {status: 'commit-failed', detail: describeError(e)}
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
      throw new StoreError('unavailable', `cannot read the Group head: ${describeError(e)}`, {cause: e})
    }
  }

  async receipt(actorId: string, actionId: string): Promise<Receipt | null> {
    try {
      return this.readReceipt(actorId, actionId)
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the receipt: ${describeError(e)}`, {cause: e})
    }
  }

  async read(
    groupId: string,
    afterSequence: number,
    limit: number,
    maxBytes?: number,
  ): Promise<{events: LoggedEvent[]; head: number}> {
    checkRead(groupId, afterSequence, limit, maxBytes)
    try {
      // One read transaction (a WAL snapshot): the events and the head agree.
      return this.db.transaction(() => {
        const head = this.readHead(groupId)?.sequence ?? 0
        if (maxBytes === undefined) {
          const rows = this.group.events.all(groupId, afterSequence, head, limit) as Record<string, unknown>[]
          return {events: rows.map(loggedEvent), head}
        }
        // Row by row, so the rows past the byte bound are never read (the read runs on the caller's thread).
        const events: LoggedEvent[] = []
        let bytes = 0
        for (const row of this.group.events.iterate(groupId, afterSequence, head, limit) as Iterable<
          Record<string, unknown>
        >) {
          const size = (row.bytes as Uint8Array).byteLength
          if (events.length > 0 && bytes + size > maxBytes) break
          bytes += size
          events.push(loggedEvent(row))
        }
        return {events, head}
      })()
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the Group log: ${describeError(e)}`, {cause: e})
    }
  }

  /** Multi-Group atomic append (multi-append.ts): one BEGIN IMMEDIATE transaction. */
  async appendGroups(appends: GroupAppend[], receipt: Receipt): Promise<AppendOutcome> {
    try {
      return await this.writer.call('appendGroups', appends, receipt)
    } catch (e) {
      return {status: 'unavailable', detail: describeError(e)}
    }
  }

  async append(
    groupId: string,
    expectedHead: number,
    events: StoredEvent[],
    receipt: Receipt,
    expectedHeadEventId?: string,
  ): Promise<AppendOutcome> {
    const refused = checkAppend(groupId, expectedHead, events, receipt, expectedHeadEventId)
    if (refused) return refused
    try {
      // One step of the writer's shared write transaction; settles after it committed (group-commit.ts).
      return await this.writer.call('append', groupId, expectedHead, events, receipt, expectedHeadEventId)
    } catch (e) {
      if (e instanceof GroupCommitFailure && e.phase === 'commit')
        return {status: 'indeterminate', detail: `commit failed: ${describeError(e)}`}
      return {status: 'unavailable', detail: describeError(e)}
    }
  }

  async policyLog(groupId: string): Promise<PolicyLogEntry[]> {
    try {
      return (
        this.db.prepare('SELECT * FROM policy_log WHERE group_id = ? ORDER BY sequence').all(groupId) as Record<
          string,
          unknown
        >[]
      ).map(policyEntryFrom)
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the Policy Log: ${describeError(e)}`, {cause: e})
    }
  }

  async acceptanceContext(): Promise<AcceptanceContext> {
    return this.authority.acceptanceContext()
  }

  async audit(entry: AuditEntry): Promise<void> {
    const row = auditInsert(entry)
    try {
      await this.writer.call('audit', row)
    } catch (e) {
      throw new StoreError('unavailable', `cannot write the audit log: ${describeError(e)}`, {cause: e})
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
      throw new StoreError('unavailable', `cannot read the audit log: ${describeError(e)}`, {cause: e})
    }
  }

  private orgLog: OrgLog | undefined
  private cursorTable: CursorTable | undefined
  private checkpointTable: CheckpointTable | undefined
  private messageTable: MessageTable | undefined
  private memberTable: MemberTable | undefined
  members(): MemberTable {
    return (this.memberTable ??= sqliteMembers(this.db))
  }

  private leaseTable: LeaseTable | undefined
  leases(): LeaseTable {
    return (this.leaseTable ??= sqliteLeases(this.db))
  }
  messages(): MessageTable {
    return (this.messageTable ??= sqliteMessages(this.db))
  }
  checkpoints(): CheckpointTable {
    return (this.checkpointTable ??= sqliteCheckpoints(this.db, (c) => this.writer.call('putCheckpoint', c)))
  }
  organizationLog(): OrgLog {
    // Reads here; the append goes to the writer.
    return (this.orgLog ??= {
      ...sqliteOrgReads(this.db),
      append: (entry, expectedVersion, receipt) =>
        this.writer
          .call('orgAppend', entry, expectedVersion, receipt)
          .catch((e: unknown) => ({status: 'unavailable' as const, detail: describeError(e)})),
    })
  }
  cursors(): CursorTable {
    return (this.cursorTable ??= sqliteCursors(this.db, (principalId, groupId, sequence) =>
      this.writer.call('advanceCursor', principalId, groupId, sequence),
    ))
  }

  async close(): Promise<void> {
    await this.writer.close()
    if (this.db.open) this.db.close()
  }
}
