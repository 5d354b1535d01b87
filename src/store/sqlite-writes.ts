// Every write of the embedded SQLite store, on one connection of its own (sqlite-writer.ts runs
// this on a worker thread). better-sqlite3 is synchronous: under `synchronous=FULL` each COMMIT
// blocks its thread for an fsync, so on the thread that also verifies Commands and writes to
// sockets every commit would stall the whole authority. Here the stall is this connection's only.
//
// Admission records, Group appends, delivery cursors and audit entries of one event-loop turn
// share one transaction and one COMMIT (group-commit.ts); the multi-Group append and the
// Organization log keep their own BEGIN IMMEDIATE transactions. Every method returns plain data
// (structured-clonable): verdicts, never connections or prepared statements.

import Database from 'better-sqlite3'
import type {AppendOutcome, Receipt, StoredEvent} from './group-log.js'
import {
  EVENT_COLUMNS,
  RECEIPT_COLUMNS,
  appended,
  decideAppend,
  headFrom,
  receiptFrom,
  receiptRow,
} from './group-records.js'
import {AUDIT_COLUMNS, ROW_COLUMNS, type AuditInsert} from './records.js'
import {POLICY_LOG_COLUMNS} from './policy-log.js'
import {type GroupAppend, sqliteAppendGroups, sqliteWriteEvents} from './multi-append.js'
import {type OrgAppendOutcome, type OrgEntry, type OrgReceipt, sqliteOrgAppend} from './org-log.js'
import {sqliteCursorAdvance} from './cursors.js'
import {type StoredCheckpoint, sqliteCheckpointPut} from './checkpoints.js'
import {sqliteMessageWrites} from './message-table.js'
import {sqliteMemberWrites} from './member-table.js'
import {sqliteLeaseWrites} from './lease-table.js'
import {SqliteGroupCommit} from './group-commit.js'

type DB = Database.Database

/** How long a statement waits for another process's write lock before failing (ms). */
const BUSY_TIMEOUT_MS = 15_000

/**
 * The writer's automatic checkpoint threshold, in pages (16 MB of WAL at 4 KB pages; SQLite's
 * default is 1,000): where the WAL file restarts, after the checkpoint thread copied most of it
 * (sqlite-checkpointer.ts). Measured over 12,000 appends: at 1,000 pages three times as many
 * COMMITs took over 5 ms as at 4,096.
 */
export const WAL_BACKSTOP_PAGES = 4_096

/** One connection in WAL mode with durable commits; `create` allows a new file. */
export function connectSqlite(path: string, create: boolean): DB {
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

const insertSql = (table: string, columns: readonly string[]) =>
  `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`

/** An admission row as the worker receives it: BLOBs may arrive as plain Uint8Arrays. */
export type AdmissionRowValues = Record<(typeof ROW_COLUMNS)[number], unknown>

/** The first-admission insert: inserted, or the row already there (raw, for records.ts to judge). */
export type AdmitOutcome = {inserted: true} | {inserted: false; existing: Record<string, unknown> | null}

const bindable = (v: unknown) =>
  v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v

export class SqliteWrites {
  readonly #commits: SqliteGroupCommit
  readonly #s
  readonly #orgAppend
  readonly #advance
  readonly #putCheckpoint

  constructor(private readonly db: DB) {
    // The checkpoints' bulk runs beside this connection (sqlite-checkpointer.ts), not inside its COMMITs.
    db.pragma(`wal_autocheckpoint = ${WAL_BACKSTOP_PAGES}`)
    this.#commits = new SqliteGroupCommit(db)
    this.#s = {
      selectAdmission: db.prepare('SELECT * FROM admission_records WHERE organization_id = ? AND signing_hash = ?'),
      insertAdmission: db.prepare(`${insertSql('admission_records', ROW_COLUMNS)} ON CONFLICT DO NOTHING`),
      insertAudit: db.prepare(insertSql('audit_log', AUDIT_COLUMNS)),
      head: db.prepare('SELECT head, revision FROM groups WHERE group_id = ?'),
      receipt: db.prepare('SELECT * FROM receipts WHERE actor_id = ? AND action_id = ?'),
      eventIdTaken: db.prepare('SELECT 1 FROM group_events WHERE event_id = ?'),
      eventIdAt: db.prepare('SELECT event_id FROM group_events WHERE group_id = ? AND sequence = ?').pluck(),
      insertEvent: db.prepare(insertSql('group_events', EVENT_COLUMNS)),
      insertReceipt: db.prepare(insertSql('receipts', RECEIPT_COLUMNS)),
      insertPolicy: db.prepare(insertSql('policy_log', POLICY_LOG_COLUMNS)),
      setHead: db.prepare(
        'INSERT INTO groups (group_id, head, revision) VALUES (?, ?, ?) ON CONFLICT (group_id) DO UPDATE SET head = excluded.head, revision = excluded.revision',
      ),
      writeMessages: sqliteMessageWrites(db),
      writeMembers: sqliteMemberWrites(db),
      writeLeases: sqliteLeaseWrites(db),
    }
    this.#orgAppend = sqliteOrgAppend(db)
    this.#advance = sqliteCursorAdvance(db)
    this.#putCheckpoint = sqliteCheckpointPut(db)
  }

  /** Settles after the shared transaction committed (group-commit.ts). */
  admit(row: AdmissionRowValues): Promise<AdmitOutcome> {
    const s = this.#s
    return this.#commits.run((): AdmitOutcome => {
      if (s.insertAdmission.run(...ROW_COLUMNS.map((c) => bindable(row[c]))).changes === 1) return {inserted: true}
      const existing = s.selectAdmission.get(row.organization_id, row.signing_hash) as
        Record<string, unknown> | undefined
      return {inserted: false, existing: existing ?? null}
    })
  }

  /** One step of the shared write transaction: the Group's state is read inside it (group-records.ts decides). */
  append(
    groupId: string,
    expectedHead: number,
    events: StoredEvent[],
    receipt: Receipt,
    expectedHeadEventId?: string,
  ): Promise<AppendOutcome> {
    const s = this.#s
    return this.#commits.run((): AppendOutcome => {
      const prior = s.receipt.get(receipt.actorId, receipt.actionId) as Record<string, unknown> | undefined
      const state = {
        head: headFrom(s.head.get(groupId) as Record<string, unknown> | undefined),
        prior: prior ? receiptFrom(prior) : null,
        takenEventId: events.find((e) => s.eventIdTaken.get(e.eventId) !== undefined)?.eventId ?? null,
        // Read inside this write step: an earlier step of the same batch may have written it.
        headEventId:
          expectedHeadEventId === undefined
            ? undefined
            : ((s.eventIdAt.get(groupId, expectedHead) as string | undefined) ?? null),
      }
      const verdict = decideAppend(state, expectedHead, events, receipt, expectedHeadEventId)
      if (verdict) return verdict // nothing was written
      sqliteWriteEvents(s, groupId, events)
      const r = receiptRow(receipt)
      s.insertReceipt.run(...RECEIPT_COLUMNS.map((c) => r[c]))
      return appended(events)
    })
  }

  /** Multi-Group atomic append (multi-append.ts): its own BEGIN IMMEDIATE transaction. */
  async appendGroups(appends: GroupAppend[], receipt: Receipt): Promise<AppendOutcome> {
    return sqliteAppendGroups(this.db, this.#s, appends, receipt)
  }

  orgAppend(entry: OrgEntry, expectedVersion: number, receipt: OrgReceipt): Promise<OrgAppendOutcome> {
    return this.#orgAppend(entry, expectedVersion, receipt)
  }

  /** Raises (never lowers) a delivery cursor; returns the stored value. */
  advanceCursor(principalId: string, groupId: string, sequence: number): Promise<number> {
    return this.#commits.run(() => this.#advance(principalId, groupId, sequence))
  }

  /** Stores a Group checkpoint (checkpoints.ts) in the shared write transaction. */
  putCheckpoint(checkpoint: StoredCheckpoint): Promise<void> {
    return this.#commits.run(() => this.#putCheckpoint(checkpoint))
  }

  audit(row: AuditInsert): Promise<void> {
    return this.#commits.run(() => {
      this.#s.insertAudit.run(...AUDIT_COLUMNS.map((c) => row[c]))
    })
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}

/** The operations a writer thread serves: SqliteWrites' methods by name. */
export type WriteOp = Exclude<keyof SqliteWrites, 'close'>
