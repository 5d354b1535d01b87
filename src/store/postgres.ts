// The production store: PostgreSQL through porsager `postgres`, shared by several processes.
//
// The append is one READ COMMITTED transaction: `INSERT … ON CONFLICT DO NOTHING` (which waits
// for a concurrent insert of the same key to commit or abort before deciding) and — when nothing
// was inserted — a read of the row already there, which sees the concurrent winner. Every verdict
// comes from records.ts, exactly as in the SQLite adapter.
//
// The Group log append serializes per Group, never globally: the transaction locks the Group's
// `groups` row (`SELECT … FOR UPDATE`, after an `INSERT … ON CONFLICT DO NOTHING` for a new
// Group), so appends to one Group queue behind each other across processes while other Groups
// proceed. It then reads the state, asks group-records.ts, and writes or rolls back. A unique
// violation from a concurrent append elsewhere (the same receipt key or Event ID in another
// Group) retries the transaction, whose reads then see the winner and decide.

import postgres from '#postgres' // the patched copy in vendor/postgres (PATCHES.md)
import type {AppendResult, Candidate, LookupResult} from '../admission/log.js'
import type {SigningKey} from '../crypto/keyfile.js'
import type {AppendOutcome, GroupHead, LoggedEvent, Receipt, StoredEvent} from './group-log.js'
import {checkAppend, checkRead, headFrom, loggedEvent, receiptFrom} from './group-records.js'
import {
  AUDIT_COLUMNS,
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
  redactUrl,
  storedConfig,
} from './records.js'
import type {AcceptanceContext, AuditEntry, AuditRow, Store, StoreConfig} from './types.js'
import {POSTGRES_POLICY_LOG_SCHEMA, type PolicyLogEntry, policyEntryFrom} from './policy-log.js'
import {type GroupAppend, postgresAppendGroups} from './multi-append.js'
import {type OrgLog, postgresOrgLog} from './org-log.js'
import {type CursorTable, postgresCursors} from './cursors.js'
import {type CheckpointTable, postgresCheckpoints} from './checkpoints.js'
import {type MessageTable, ensurePostgresMessageTable, postgresMessages} from './message-table.js'
import {type MemberTable, ensurePostgresMemberTable, postgresMembers} from './member-table.js'
import {type LeaseTable, ensurePostgresLeaseTable, postgresLeases} from './lease-table.js'
import {PostgresGroupCommit} from './pg-group-commit.js'
import {listenAppends, listenMembers} from './pg-notify.js'

type Sql = postgres.Sql | postgres.TransactionSql

const SCHEMA = `
CREATE TABLE IF NOT EXISTS config (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS admission_records (
  organization_id     TEXT NOT NULL,
  signing_hash        TEXT NOT NULL,
  admission_record_id TEXT NOT NULL UNIQUE,
  document_kind       TEXT NOT NULL,
  key_id              TEXT NOT NULL,
  principal_type      TEXT NOT NULL,
  principal_id        TEXT NOT NULL,
  record              BYTEA NOT NULL,
  accepted_by_type    TEXT NOT NULL,
  accepted_by_id      TEXT NOT NULL,
  service_signature   TEXT NOT NULL,
  created_at          TEXT NOT NULL,
  PRIMARY KEY (organization_id, signing_hash)
);

CREATE OR REPLACE FUNCTION mwp_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$;
DROP TRIGGER IF EXISTS admission_records_append_only ON admission_records;
CREATE TRIGGER admission_records_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON admission_records
  FOR EACH STATEMENT EXECUTE FUNCTION mwp_append_only();

CREATE TABLE IF NOT EXISTS audit_log (
  id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at            TEXT NOT NULL,
  at_seconds    BIGINT NOT NULL,
  at_fraction   TEXT COLLATE "C" NOT NULL,
  stage         TEXT NOT NULL,
  reason        TEXT NOT NULL,
  document_kind TEXT,
  signing_hash  TEXT,
  subject       TEXT,
  detail        TEXT
);
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at_seconds, at_fraction);

CREATE TABLE IF NOT EXISTS groups (
  group_id TEXT PRIMARY KEY,
  head     BIGINT NOT NULL,
  revision BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS group_events (
  group_id           TEXT NOT NULL,
  sequence           BIGINT NOT NULL,
  event_id           TEXT NOT NULL UNIQUE,
  kind               TEXT NOT NULL,
  aggregate_revision BIGINT NOT NULL,
  bytes              BYTEA NOT NULL,
  PRIMARY KEY (group_id, sequence)
);
DROP TRIGGER IF EXISTS group_events_append_only ON group_events;
CREATE TRIGGER group_events_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON group_events
  FOR EACH STATEMENT EXECUTE FUNCTION mwp_append_only();

CREATE TABLE IF NOT EXISTS receipts (
  actor_id       TEXT NOT NULL,
  action_id      TEXT NOT NULL,
  content_hash   TEXT NOT NULL,
  group_id       TEXT NOT NULL,
  first_sequence BIGINT NOT NULL,
  last_sequence  BIGINT NOT NULL,
  document       TEXT NOT NULL,
  PRIMARY KEY (actor_id, action_id)
);
DROP TRIGGER IF EXISTS receipts_append_only ON receipts;
CREATE TRIGGER receipts_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON receipts
  FOR EACH STATEMENT EXECUTE FUNCTION mwp_append_only();
`

function connect(url: string): postgres.Sql {
  return postgres(url, {
    max: 4,
    connect_timeout: 10,
    idle_timeout: 30,
    onnotice: () => {}, // "relation already exists, skipping" and the like
    connection: {application_name: 'mwp'},
    // Seconds before a pooled connection reconnects after its `retries`-th failed attempt in a
    // row. The library's default grows to 20 s, and every Command answered during an outage adds
    // a failed attempt: after a restart the store was back, yet the server kept refusing for up to
    // 20 s (issue #15). Capped at 1 s: an outage costs a failed connect a second, no more.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
  })
}

async function readConfig(sql: Sql): Promise<{version: string; config: string} | null> {
  const [t] = await sql`SELECT to_regclass('config') IS NOT NULL AS present`
  return storedConfig(t?.present ? await sql<{name: string; value: string}[]>`SELECT name, value FROM config` : null)
}

const environment = (e: unknown, where: string): StoreError =>
  e instanceof StoreError
    ? e
    : new StoreError('unavailable', `cannot use the PostgreSQL store ${where}: ${describeError(e)}`, {cause: e})

export async function initPostgresStore(url: string, config: StoreConfig): Promise<void> {
  const where = redactUrl(url)
  const wanted = configJson(config)
  const sql = connect(url)
  try {
    await sql.begin(async (tx) => {
      // Concurrent inits of one database serialize here (CREATE … IF NOT EXISTS is not race-free).
      await tx`SELECT pg_advisory_xact_lock(hashtext('mwp store init'))`
      if (checkInit(await readConfig(tx), wanted, where) === 'create') {
        await tx.unsafe(SCHEMA).simple()
        await tx.unsafe(POSTGRES_POLICY_LOG_SCHEMA).simple()
        await tx`INSERT INTO config ${tx([
          {name: 'schema-version', value: SCHEMA_VERSION},
          {name: 'store-config', value: wanted},
        ])}`
      }
    })
  } catch (e) {
    throw environment(e, where)
  } finally {
    await sql.end({timeout: 5})
  }
}

export async function openPostgresStore(url: string, admissionKey?: SigningKey): Promise<Store> {
  const where = redactUrl(url)
  const sql = connect(url)
  try {
    const config = checkOpen(await readConfig(sql), where)
    await addLaterTables(sql)
    await ensurePostgresMessageTable(sql)
    await ensurePostgresMemberTable(sql)
    await ensurePostgresLeaseTable(sql)
    return new PostgresStore(sql, url, new AdmissionAuthority(config, admissionKey))
  } catch (e) {
    await sql.end({timeout: 1})
    throw environment(e, where)
  }
}

/**
 * Tables added after schema version 1 was first released, for stores initialized before them:
 * created once, under the init lock, and only when missing (their trigger DDL would otherwise
 * lock the table on every open).
 */
async function addLaterTables(sql: postgres.Sql): Promise<void> {
  const [row] = await sql`SELECT to_regclass('policy_log') IS NOT NULL AS present`
  if (row?.present) return
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('mwp store init'))`
    const [again] = await tx`SELECT to_regclass('policy_log') IS NOT NULL AS present`
    if (!again?.present) await tx.unsafe(POSTGRES_POLICY_LOG_SCHEMA).simple()
  })
}

async function selectRow(sql: Sql, organizationId: string, signingHash: string) {
  const [raw] =
    await sql`SELECT * FROM admission_records WHERE organization_id = ${organizationId} AND signing_hash = ${signingHash}`
  return raw && admissionRow(raw)
}

async function selectHead(sql: Sql, groupId: string, lock = false): Promise<GroupHead | null> {
  const [raw] =
    await sql`SELECT head, revision FROM groups WHERE group_id = ${groupId} ${lock ? sql`FOR UPDATE` : sql``}`
  return headFrom(raw)
}

async function selectReceipt(sql: Sql, actorId: string, actionId: string): Promise<Receipt | null> {
  const [raw] = await sql`SELECT * FROM receipts WHERE actor_id = ${actorId} AND action_id = ${actionId}`
  return raw ? receiptFrom(raw) : null
}

class PostgresStore implements Store {
  readonly config: StoreConfig
  private readonly commits: PostgresGroupCommit

  constructor(
    private readonly sql: postgres.Sql,
    readonly url: string,
    private readonly authority: AdmissionAuthority,
  ) {
    this.config = authority.config
    this.commits = new PostgresGroupCommit(sql, authority)
  }

  async lookup(organizationId: string, signingHash: string): Promise<LookupResult> {
    const refused = this.authority.refuseLookup(organizationId)
    if (refused) return refused
    try {
      const row = await selectRow(this.sql, organizationId, signingHash)
      return row ? this.authority.authenticate(row) : {status: 'authoritative-absence'}
    } catch (e) {
      return {status: 'unavailable', detail: describeError(e)}
    }
  }

  async appendOrReturnExisting(candidate: Candidate): Promise<AppendResult> {
    const prepared = this.authority.prepare(candidate)
    if ('refused' in prepared) return prepared.refused
    // Batched with the records arriving meanwhile into one transaction (pg-group-commit.ts).
    return this.commits.admit(prepared.row, candidate)
  }

  async head(groupId: string): Promise<GroupHead | null> {
    try {
      return await selectHead(this.sql, groupId)
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the Group head: ${describeError(e)}`, {cause: e})
    }
  }

  async receipt(actorId: string, actionId: string): Promise<Receipt | null> {
    try {
      return await selectReceipt(this.sql, actorId, actionId)
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
      // The head first: every event up to it is committed (they commit together), so the page
      // and the head agree without a snapshot.
      const head = (await selectHead(this.sql, groupId))?.sequence ?? 0
      // With a byte bound the running total is taken over the `limit` rows only (octet_length
      // reads a stored value's size without detoasting it), and only the rows within the bound
      // are sent.
      const rows =
        maxBytes === undefined
          ? await this.sql`SELECT sequence, event_id, kind, bytes FROM group_events
        WHERE group_id = ${groupId} AND sequence > ${afterSequence} AND sequence <= ${head}
        ORDER BY sequence LIMIT ${limit}`
          : await this.sql`SELECT sequence, event_id, kind, bytes FROM (
          SELECT sequence, event_id, kind, bytes,
            SUM(octet_length(bytes)) OVER (ORDER BY sequence ROWS UNBOUNDED PRECEDING) AS total,
            ROW_NUMBER() OVER (ORDER BY sequence) AS n
          FROM (SELECT sequence, event_id, kind, bytes FROM group_events
            WHERE group_id = ${groupId} AND sequence > ${afterSequence} AND sequence <= ${head}
            ORDER BY sequence LIMIT ${limit}) AS page
        ) AS sized WHERE total <= ${maxBytes} OR n = 1 ORDER BY sequence`
      return {events: rows.map(loggedEvent), head}
    } catch (e) {
      throw new StoreError('unavailable', `cannot read the Group log: ${describeError(e)}`, {cause: e})
    }
  }

  /** Multi-Group atomic append (multi-append.ts): Group rows locked in sorted group_id order. */
  async appendGroups(appends: GroupAppend[], receipt: Receipt): Promise<AppendOutcome> {
    return postgresAppendGroups(this.sql, appends, receipt)
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
    // Batched with the appends arriving meanwhile into one transaction (pg-group-commit.ts).
    return this.commits.append(groupId, expectedHead, events, receipt, expectedHeadEventId)
  }

  async policyLog(groupId: string): Promise<PolicyLogEntry[]> {
    try {
      return (await this.sql`SELECT * FROM policy_log WHERE group_id = ${groupId} ORDER BY sequence`).map(
        policyEntryFrom,
      )
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
      await this.sql`INSERT INTO audit_log ${this.sql(row, ...AUDIT_COLUMNS)}`
    } catch (e) {
      throw new StoreError('unavailable', `cannot write the audit log: ${describeError(e)}`, {cause: e})
    }
  }

  async listAudit(options?: {since?: string; limit?: number}): Promise<AuditRow[]> {
    const {since, limit} = auditQuery(options)
    const sql = this.sql
    try {
      const rows = await sql`SELECT * FROM audit_log
        ${since ? sql`WHERE at_seconds > ${since.seconds} OR (at_seconds = ${since.seconds} AND at_fraction >= ${since.fraction})` : sql``}
        ORDER BY id ${limit !== null ? sql`LIMIT ${limit}` : sql``}`
      return rows.map(auditRow)
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
    return (this.memberTable ??= postgresMembers(this.sql))
  }

  private leaseTable: LeaseTable | undefined
  leases(): LeaseTable {
    return (this.leaseTable ??= postgresLeases(this.sql))
  }
  messages(): MessageTable {
    return (this.messageTable ??= postgresMessages(this.sql))
  }
  checkpoints(): CheckpointTable {
    return (this.checkpointTable ??= postgresCheckpoints(this.sql))
  }
  organizationLog(): OrgLog {
    return (this.orgLog ??= postgresOrgLog(this.sql))
  }
  cursors(): CursorTable {
    return (this.cursorTable ??= postgresCursors(this.sql))
  }

  /** LISTEN for the notify every Group append issues in its transaction (pg-notify.ts). */
  async watchAppends(listener: (groupId: string) => void, onResync?: () => void): Promise<() => Promise<void>> {
    try {
      return await listenAppends(this.sql, listener, onResync)
    } catch (e) {
      throw new StoreError('unavailable', `cannot listen for Group appends: ${describeError(e)}`, {cause: e})
    }
  }

  async watchMembers(listener: (principalId: string) => void, onResync?: () => void): Promise<() => Promise<void>> {
    try {
      return await listenMembers(this.sql, listener, onResync)
    } catch (e) {
      throw new StoreError('unavailable', `cannot listen for membership changes: ${describeError(e)}`, {cause: e})
    }
  }

  async close(): Promise<void> {
    await this.sql.end({timeout: 5})
  }
}
