// Group commit for the PostgreSQL store's single-Group appends and first-admission records (see
// group-commit.ts for SQLite).
// One append used to be one transaction of eight statements; the authority's cost on PostgreSQL
// was the statements and their socket writes, not the server. Appends that arrive while a batch
// is being written are collected and written by the next batch: one transaction that locks the
// batch's Group rows (sorted group_id order, as every multi-Group write: no deadlock between
// batches, processes or multi-append.ts), reads heads, prior receipts and taken Event IDs with one
// statement each, decides every append in arrival order exactly as a lone append would
// (decideAppend, seeing the appends accepted before it in the batch), and writes all accepted
// Events, heads and receipts with one statement each. Every caller's promise settles after the
// COMMIT: an acknowledged append is committed, as before. First-admission records are batched the
// same way: one multi-row INSERT … ON CONFLICT DO NOTHING, one read of the rows that already held
// their logical key, one COMMIT.

import postgres from '#postgres' // the patched copy in vendor/postgres (PATCHES.md)
import type {AppendOutcome, GroupHead, Receipt, StoredEvent} from './group-log.js'
import {
  EVENT_COLUMNS,
  RECEIPT_COLUMNS,
  appended,
  decideAppend,
  eventRow,
  headAfter,
  headFrom,
  receiptFrom,
  receiptRow,
} from './group-records.js'
import type {AppendResult, Candidate} from '../admission/log.js'
import {POLICY_LOG_COLUMNS, policyRows} from './policy-log.js'
import {type GroupMessageRow, messageRowsIn, postgresWriteMessages} from './message-table.js'
import {type GroupMemberRow, memberRowsIn, postgresWriteMembers} from './member-table.js'
import {type GroupLeaseRow, leaseRowsIn, postgresWriteLeases} from './lease-table.js'
import {type AdmissionAuthority, type AdmissionRow, ROW_COLUMNS, admissionRow, describeError} from './records.js'
import {notifyAppendedReturning} from './pg-notify.js'

/** Serialization failure and deadlock: the transaction did nothing and may be retried. */
const RETRYABLE = new Set(['40001', '40P01'])
const UNIQUE_VIOLATION = '23505'
const ATTEMPTS = 3
const INSERT_CHUNK = 500
/** Upper bound of appends per transaction (keeps one batch's lock set and statement size bounded). */
const MAX_BATCH = 256

/**
 * Collects requests and writes them in batches, one batch at a time: requests arriving while a
 * batch is written form the next one. `write` returns one result per request, in order.
 */
class Batcher<Q, R> {
  #queue: {request: Q; resolve: (r: R | Promise<R>) => void}[] = []
  #writing = false

  /** `write` may answer a request with a promise that settles later, outside the batch loop. */
  constructor(private readonly write: (batch: Q[]) => Promise<(R | Promise<R>)[]>) {}

  submit(request: Q): Promise<R> {
    return new Promise((resolve) => {
      this.#queue.push({request, resolve})
      if (!this.#writing) {
        this.#writing = true
        setImmediate(() => void this.#drain())
      }
    })
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, MAX_BATCH)
      const results = await this.write(batch.map((b) => b.request))
      batch.forEach((b, i) => b.resolve(results[i]!))
    }
    this.#writing = false
  }
}

/** Runs `body` in a transaction, retrying serialization failures and deadlocks (and, before the body finished, unique violations). */
async function transaction<R>(
  sql: postgres.Sql,
  body: (tx: postgres.TransactionSql) => Promise<R>,
  failed: (f: {decided: boolean; error: unknown}, decided: R | null) => R,
): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    const done: {result: R | null} = {result: null} // set when the body finished: a later error is the COMMIT's
    try {
      return (await sql.begin(async (tx) => {
        done.result = await body(tx)
        return done.result
      })) as R
    } catch (error) {
      const code = (error as {code?: string}).code ?? ''
      if ((RETRYABLE.has(code) || (code === UNIQUE_VIOLATION && done.result === null)) && attempt < ATTEMPTS) continue
      return failed({decided: done.result !== null, error}, done.result)
    }
  }
}

interface PendingAppend {
  groupId: string
  expectedHead: number
  events: StoredEvent[]
  receipt: Receipt
  expectedHeadEventId?: string
}

export class PostgresGroupCommit {
  readonly #appends: Batcher<PendingAppend, AppendOutcome>
  readonly #admissions: Batcher<{row: AdmissionRow; candidate: Candidate}, AppendResult>

  constructor(sql: postgres.Sql, authority: AdmissionAuthority) {
    const write = (batch: PendingAppend[], wait: boolean) =>
      transaction(
        sql,
        (tx) => decideAndWrite(tx, batch, wait),
        ({decided, error}, outcomes) => {
          // Refusals wrote nothing and stay true; the accepted appends share the COMMIT's fate. The
          // server refused it: nothing was written. A lost connection leaves the outcome unknown.
          const outcome: AppendOutcome = !decided
            ? {status: 'unavailable', detail: describeError(error)}
            : error instanceof postgres.PostgresError
              ? {status: 'unavailable', detail: `commit refused: ${describeError(error)}`}
              : {status: 'indeterminate', detail: `commit outcome unknown: ${describeError(error)}`}
          return batch.map((_, i) => {
            const own = outcomes?.[i]
            return own !== undefined && own !== LOCKED_OUT && own.status !== 'appended' ? own : outcome
          })
        },
      )
    // A batch never waits for a Group another transaction holds (ARCHITECTURE principle 3: no
    // global lock): such appends leave the batch and wait for their own Group's lock alone, on
    // another pooled connection, while later batches go on.
    this.#appends = new Batcher(async (batch) => {
      const outcomes = await write(batch, false)
      return outcomes.map((o, i) =>
        o === LOCKED_OUT ? write([batch[i]!], true).then(([alone]) => alone as AppendOutcome) : o,
      )
    })
    this.#admissions = new Batcher((batch) =>
      transaction(
        sql,
        (tx) => admit(tx, authority, batch),
        ({decided, error}) => {
          const result: AppendResult = !decided
            ? {status: 'unavailable', detail: describeError(error)}
            : error instanceof postgres.PostgresError
              ? {status: 'commit-failed', detail: describeError(error)}
              : {status: 'indeterminate', detail: `commit outcome unknown: ${describeError(error)}`}
          return batch.map(() => result)
        },
      ),
    )
  }

  /** A well-formed append (checkAppend passed); settles after its batch committed or failed. */
  append(
    groupId: string,
    expectedHead: number,
    events: StoredEvent[],
    receipt: Receipt,
    expectedHeadEventId?: string,
  ): Promise<AppendOutcome> {
    return this.#appends.submit({
      groupId,
      expectedHead,
      events,
      receipt,
      ...(expectedHeadEventId !== undefined ? {expectedHeadEventId} : {}),
    })
  }

  /** A prepared first-admission row: committed, the record already holding its key, or a failure. */
  admit(row: AdmissionRow, candidate: Candidate): Promise<AppendResult> {
    return this.#admissions.submit({row, candidate})
  }
}

async function admit(
  tx: postgres.TransactionSql,
  authority: AdmissionAuthority,
  batch: {row: AdmissionRow; candidate: Candidate}[],
): Promise<AppendResult[]> {
  const rows = batch.map((b) => b.row)
  const inserted = new Set<string>()
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK)
    for (const r of await tx`INSERT INTO admission_records ${tx(chunk, ...ROW_COLUMNS)} ON CONFLICT DO NOTHING RETURNING admission_record_id`)
      inserted.add(String(r.admission_record_id))
  }
  const others = rows.filter((r) => !inserted.has(r.admission_record_id))
  const existing = new Map<string, AdmissionRow>()
  if (others.length > 0) {
    for (const raw of await tx`SELECT a.* FROM admission_records a JOIN unnest(${others.map((r) => r.organization_id)}::text[], ${others.map((r) => r.signing_hash)}::text[]) AS k(o, h)
        ON a.organization_id = k.o AND a.signing_hash = k.h`) {
      const row = admissionRow(raw)
      existing.set(key(row.organization_id, row.signing_hash), row)
    }
  }
  return batch.map(({row, candidate}) =>
    inserted.has(row.admission_record_id)
      ? authority.committed(row)
      : authority.resolveExisting(existing.get(key(row.organization_id, row.signing_hash)), candidate),
  )
}

const key = (actorId: string, actionId: string) => `${actorId}\u0000${actionId}`

/** A batched append whose Group row another transaction holds (see the append Batcher). */
const LOCKED_OUT = Symbol('locked-out')

async function decideAndWrite(
  tx: postgres.TransactionSql,
  batch: PendingAppend[],
  wait: boolean,
): Promise<(AppendOutcome | typeof LOCKED_OUT)[]> {
  const creating = [...new Set(batch.filter((p) => p.expectedHead === 0).map((p) => p.groupId))]
  // Rows this transaction inserts for new Groups; those whose appends are all refused are removed
  // again below, as a lone append's rollback would (a Group with no Events has no row).
  const created =
    creating.length > 0
      ? (
          await tx`INSERT INTO groups (group_id, head, revision) SELECT unnest(${creating}::text[]), 0, 0 ON CONFLICT DO NOTHING RETURNING group_id`
        ).map((r) => String(r.group_id))
      : []
  const groupIds = [...new Set(batch.map((p) => p.groupId))].sort()
  // The per-Group locks, in sorted order.
  const heads = new Map<string, GroupHead | null>(groupIds.map((g) => [g, null]))
  const rows = wait
    ? await tx`SELECT group_id, head, revision FROM groups WHERE group_id IN ${tx(groupIds)} ORDER BY group_id FOR UPDATE`
    : await tx`SELECT group_id, head, revision FROM groups WHERE group_id IN ${tx(groupIds)} ORDER BY group_id FOR UPDATE SKIP LOCKED`
  for (const row of rows) heads.set(String(row.group_id), headFrom(row))
  // Skipped rows are either absent or held by another transaction; the held ones leave the batch.
  const unlocked = groupIds.filter((g) => heads.get(g) === null)
  const held = new Set(
    unlocked.length === 0
      ? []
      : (await tx`SELECT group_id FROM groups WHERE group_id IN ${tx(unlocked)}`).map((r) => String(r.group_id)),
  )
  const actors = batch.map((p) => p.receipt.actorId)
  const actions = batch.map((p) => p.receipt.actionId)
  const receipts = new Map<string, Receipt>()
  for (const row of await tx`SELECT r.* FROM receipts r JOIN unnest(${actors}::text[], ${actions}::text[]) AS k(actor_id, action_id)
      ON r.actor_id = k.actor_id AND r.action_id = k.action_id`) {
    const r = receiptFrom(row)
    receipts.set(key(r.actorId, r.actionId), r)
  }
  const taken = new Set<string>(
    (
      await tx`SELECT event_id FROM group_events WHERE event_id IN ${tx(batch.flatMap((p) => p.events.map((e) => e.eventId)))}`
    ).map((r) => String(r.event_id)),
  )
  // The Event IDs at the heads that pipelined appends name (GroupLog.append expectedHeadEventId):
  // the committed ones read here, the ones this batch accepts recorded as it goes.
  const chained = batch.filter((p) => p.expectedHeadEventId !== undefined)
  const idAt = new Map<string, string>()
  if (chained.length > 0) {
    for (const row of await tx`SELECT e.group_id, e.sequence, e.event_id FROM group_events e
        JOIN unnest(${chained.map((p) => p.groupId)}::text[], ${chained.map((p) => p.expectedHead)}::bigint[]) AS k(group_id, sequence)
        ON e.group_id = k.group_id AND e.sequence = k.sequence`) {
      idAt.set(`${String(row.group_id)}\u0000${Number(row.sequence)}`, String(row.event_id))
    }
  }

  const outcomes: (AppendOutcome | typeof LOCKED_OUT)[] = []
  const eventRows: ReturnType<typeof eventRow>[] = []
  const policy: ReturnType<typeof policyRows> = []
  const messages: GroupMessageRow[] = []
  const members: GroupMemberRow[] = []
  const leases: GroupLeaseRow[] = []
  const receiptRows: ReturnType<typeof receiptRow>[] = []
  const newHeads = new Map<string, GroupHead>()
  for (const p of batch) {
    if (held.has(p.groupId)) {
      outcomes.push(LOCKED_OUT)
      continue
    }
    const k = key(p.receipt.actorId, p.receipt.actionId)
    const state = {
      head: heads.get(p.groupId) ?? null,
      prior: receipts.get(k) ?? null,
      takenEventId: p.events.find((e) => taken.has(e.eventId))?.eventId ?? null,
      headEventId:
        p.expectedHeadEventId === undefined ? undefined : (idAt.get(`${p.groupId}\u0000${p.expectedHead}`) ?? null),
    }
    const verdict = decideAppend(state, p.expectedHead, p.events, p.receipt, p.expectedHeadEventId)
    if (verdict) {
      outcomes.push(verdict)
      continue
    }
    // Accepted: later appends of this batch see it exactly as they would see a committed one.
    for (const e of p.events) {
      eventRows.push(eventRow(p.groupId, e))
      taken.add(e.eventId)
      idAt.set(`${p.groupId}\u0000${e.sequence}`, e.eventId)
    }
    policy.push(...policyRows(p.groupId, p.events))
    messages.push(...messageRowsIn(p.groupId, p.events))
    members.push(...memberRowsIn(p.groupId, p.events))
    leases.push(...leaseRowsIn(p.groupId, p.events))
    const head = headAfter(p.events)
    heads.set(p.groupId, head)
    newHeads.set(p.groupId, head)
    receipts.set(k, p.receipt)
    receiptRows.push(receiptRow(p.receipt))
    outcomes.push(appended(p.events))
  }
  const unused = created.filter((g) => !newHeads.has(g))
  if (unused.length > 0) await tx`DELETE FROM groups WHERE group_id IN ${tx(unused)} AND head = 0`
  if (receiptRows.length === 0) return outcomes
  for (let i = 0; i < eventRows.length; i += INSERT_CHUNK)
    await tx`INSERT INTO group_events ${tx(eventRows.slice(i, i + INSERT_CHUNK), ...EVENT_COLUMNS)}`
  if (policy.length > 0) await tx`INSERT INTO policy_log ${tx(policy, ...POLICY_LOG_COLUMNS)}`
  if (messages.length > 0) await postgresWriteMessages(tx, messages)
  await postgresWriteLeases(tx, leases)
  const ids = [...newHeads.keys()]
  await tx`UPDATE groups AS g SET head = v.head, revision = v.revision
    FROM (SELECT unnest(${ids}::text[]) AS group_id, unnest(${ids.map((g) => newHeads.get(g)!.sequence)}::bigint[]) AS head,
                 unnest(${ids.map((g) => newHeads.get(g)!.revision)}::bigint[]) AS revision) AS v
    WHERE g.group_id = v.group_id
    ${notifyAppendedReturning(tx, 'g.group_id')}` // delivered to LISTENers on COMMIT only (pg-notify.ts)
  for (let i = 0; i < receiptRows.length; i += INSERT_CHUNK)
    await tx`INSERT INTO receipts ${tx(receiptRows.slice(i, i + INSERT_CHUNK), ...RECEIPT_COLUMNS)}`
  // Last: it takes the membership index's write lock (member-table.ts postgresWriteMembers).
  await postgresWriteMembers(tx, members)
  return outcomes
}
