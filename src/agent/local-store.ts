// The Agent's durable local state (spec §11.1, §16): per Group a distinct inbox, Cursor and work
// queue, in one SQLite file (WAL, synchronous=FULL). The queues are a projection (projection.ts)
// of the verified Group Events; deleting the file and re-applying the same Events rebuilds them.
//
// API:
//   AgentStore.open(path, {agentId, faultHook?})   opens or creates the file; drains contiguous inbox rows
//   join(groupId, afterSequence)                   a Group the Agent learned of; cursor = afterSequence
//                                                  (visibility start − 1); a no-op when already joined
//   apply(event)                                   one Event → {applied, buffered, duplicate}; `applied`
//                                                  counts it and the buffered Events it made contiguous
//   deliveredThrough(groupId, sequence)            the server's "delivered through" marker (an ACK frame,
//                                                  as the wire client reads it): sequences up to it that
//                                                  never arrived were not for this Agent (attention filter,
//                                                  visibility), so the Cursor may pass them; returns
//                                                  how many Events it then applied
//   cursor(groupId) / groups() / queue(groupId) / entry(groupId, workItemId)
//   buffered(groupId)                              sequences waiting in the inbox for a gap to close
//   pendingIntents() / resolveIntent(id)           the outbox: what the runtime must act on
//   setPriorityClass(groupId, cls)                 a Group-level scheduling input (default 0)
//   dumpQueues()                                   canonical JSON of every queue, for rebuild checks
//   close()
//
// Applying one Event is one transaction: dedupe (Event ID, or sequence ≤ Cursor) → contiguity
// (sequence = Cursor + 1, else buffer it in the inbox: the Cursor never passes a gap) → projection
// → outbox intents → applied Event ID → Cursor. A crash anywhere in it leaves the previous state;
// re-delivery (at-least-once, §16) then applies the Event once.
//
// Intent rule: intents are written with the Event that asks for them, so a crash between applying
// and acting loses none, and a duplicate Event (deduplicated) adds none. An intent a later Event
// makes moot (projection.ts intentStillOpen: the offer was taken or replaced, the item left this
// Agent's queue …) is closed in that Event's transaction. So a rebuild from the Events re-derives
// exactly the intents whose situation is still open — including ones the runtime had resolved
// before the file was lost (acting on them again is idempotent: an offer is re-evaluated, a queued
// item re-scheduled) — and none of the closed ones. `stop` and `group-ended` are never moot.

import Database from 'better-sqlite3'
import {canonicalize} from '../json/jcs.js'
import {type JsonObject, parseJsonBytes} from '../json/parse.js'
import type {DeliveredEvent} from '../wire/client.js'
import {knownEvent} from '../authority/model/events.js'
import type {BufferedCommand} from './offline-binding.js'
import {mutated} from '../mutants.js'
import {
  type GroupView,
  type IntentDraft,
  type WorkEntry,
  emptyGroupView,
  foldGroup,
  foldWorkItem,
  intentStillOpen,
  intentsOf,
  touchedWorkItems,
} from './projection.js'

export interface AgentStoreOptions {
  agentId: string
  /** Called between the statements of an apply transaction with the step's name; a throw aborts it. */
  faultHook?: (step: ApplyStep) => void
}

/** The named steps of one apply transaction, in order. */
export const APPLY_STEPS = [
  'begin',
  'dedupe',
  'contiguity',
  'buffer',
  'projection',
  'queue',
  'intents',
  'applied',
  'cursor',
  'unbuffer',
  'skip',
  'committed',
] as const
export type ApplyStep = (typeof APPLY_STEPS)[number]

export interface GroupRow {
  groupId: string
  cursor: number
  visibilityStart: number
  missionId: string | null
  priorityClass: number
  /** The highest "delivered through" marker seen (deliveredThrough). */
  deliveredThrough: number
  ended: GroupView['ended']
  view: GroupView
}

export interface QueueEntry extends WorkEntry {
  priorityClass: number
}

export type Intent = IntentDraft & {id: number; groupId: string}

export interface ApplyResult {
  /** Events applied by this call: the delivered one and the buffered ones it made contiguous. */
  applied: number
  buffered: boolean
  duplicate: boolean
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS agent_groups (
  group_id TEXT PRIMARY KEY,
  cursor INTEGER NOT NULL,
  visibility_start INTEGER NOT NULL,
  mission_id TEXT,
  priority_class INTEGER NOT NULL DEFAULT 0,
  delivered_through INTEGER NOT NULL DEFAULT 0,
  ended TEXT,
  view TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS agent_inbox (
  group_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (group_id, sequence)
) STRICT;
CREATE TABLE IF NOT EXISTS agent_queue (
  group_id TEXT NOT NULL,
  work_item_id TEXT NOT NULL,
  state TEXT NOT NULL,
  mine INTEGER NOT NULL,
  deadline TEXT,
  priority_class INTEGER NOT NULL,
  checkpoint_hash TEXT,
  ownership_epoch INTEGER NOT NULL,
  entry TEXT NOT NULL,
  PRIMARY KEY (group_id, work_item_id)
) STRICT;
CREATE INDEX IF NOT EXISTS agent_queue_mine ON agent_queue (mine, state, deadline);
CREATE TABLE IF NOT EXISTS agent_applied (
  group_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  PRIMARY KEY (group_id, event_id)
) STRICT;
CREATE TABLE IF NOT EXISTS agent_intents (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  group_id TEXT NOT NULL,
  work_item_id TEXT,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  done INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS agent_intents_open ON agent_intents (done, group_id, work_item_id);
CREATE TABLE IF NOT EXISTS agent_attempts (
  group_id TEXT NOT NULL,
  work_item_id TEXT NOT NULL,
  ownership_epoch INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  PRIMARY KEY (group_id, work_item_id, ownership_epoch)
) STRICT;
CREATE TABLE IF NOT EXISTS agent_offline (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  command TEXT NOT NULL
) STRICT;
`

interface GroupDbRow {
  group_id: string
  cursor: number
  visibility_start: number
  mission_id: string | null
  priority_class: number
  delivered_through: number
  ended: string | null
  view: string
}

interface IntentDbRow {
  id: number
  group_id: string
  work_item_id: string | null
  kind: string
  payload: string
}

const toGroupRow = (r: GroupDbRow): GroupRow => ({
  groupId: r.group_id,
  cursor: r.cursor,
  visibilityStart: r.visibility_start,
  missionId: r.mission_id,
  priorityClass: r.priority_class,
  deliveredThrough: r.delivered_through,
  ended: r.ended === null ? null : (JSON.parse(r.ended) as GroupView['ended']),
  view: JSON.parse(r.view) as GroupView,
})

// The outbox rows are written only by this module from IntentDraft values, so reading one back
// gives the draft it was written from.
const toIntent = (r: IntentDbRow): Intent =>
  ({id: r.id, groupId: r.group_id, workItemId: r.work_item_id, kind: r.kind, payload: JSON.parse(r.payload)}) as Intent

/** The Event fields the fold reads, from a verified Event document. */
function appliedEventOf(document: JsonObject) {
  const payload = document.payload
  return knownEvent({
    kind: String(document.kind),
    groupId: String(document.groupId),
    sequence: Number(document.sequence),
    aggregateRevision: Number(document.aggregateRevision),
    payload: typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? payload : {},
  })
}

export class AgentStore {
  readonly #db: Database.Database
  readonly #agentId: string
  /** When this process opened the store (the self-test's replay-projects-nothing mutant reads it). */
  readonly #openedAt = Date.now()
  readonly #hook: (step: ApplyStep) => void
  readonly #stmt

  private constructor(db: Database.Database, options: AgentStoreOptions) {
    this.#db = db
    this.#agentId = options.agentId
    this.#hook = options.faultHook ?? (() => {})
    this.#stmt = {
      group: db.prepare<[string], GroupDbRow>('SELECT * FROM agent_groups WHERE group_id = ?'),
      groups: db.prepare<[], GroupDbRow>('SELECT * FROM agent_groups ORDER BY group_id'),
      owned: db.prepare<[], {n: number}>(
        "SELECT count(*) AS n FROM agent_queue WHERE mine = 1 AND state IN ('queued', 'active', 'blocked')",
      ),
      join: db.prepare(
        `INSERT INTO agent_groups (group_id, cursor, visibility_start, view) VALUES (?, ?, ?, ?)
         ON CONFLICT (group_id) DO NOTHING`,
      ),
      applied: db.prepare<[string, string], {one: number}>(
        'SELECT 1 AS one FROM agent_applied WHERE group_id = ? AND event_id = ?',
      ),
      buffer: db.prepare(
        'INSERT INTO agent_inbox (group_id, sequence, event_id, bytes) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      inboxAt: db.prepare<[string, number], {event_id: string; bytes: Buffer}>(
        'SELECT event_id, bytes FROM agent_inbox WHERE group_id = ? AND sequence = ?',
      ),
      firstBuffered: db.prepare<[string], {sequence: number}>(
        'SELECT min(sequence) AS sequence FROM agent_inbox WHERE group_id = ?',
      ),
      markThrough: db.prepare(
        'UPDATE agent_groups SET delivered_through = max(delivered_through, ?) WHERE group_id = ?',
      ),
      skipTo: db.prepare('UPDATE agent_groups SET cursor = ? WHERE group_id = ? AND cursor = ?'),
      inbox: db.prepare<[string], {sequence: number}>(
        'SELECT sequence FROM agent_inbox WHERE group_id = ? ORDER BY sequence',
      ),
      unbuffer: db.prepare('DELETE FROM agent_inbox WHERE group_id = ? AND sequence <= ?'),
      queue: db.prepare<[string], {entry: string; priority_class: number}>(
        'SELECT entry, priority_class FROM agent_queue WHERE group_id = ? ORDER BY work_item_id',
      ),
      entry: db.prepare<[string, string], {entry: string; priority_class: number}>(
        'SELECT entry, priority_class FROM agent_queue WHERE group_id = ? AND work_item_id = ?',
      ),
      putEntry: db.prepare(
        `INSERT INTO agent_queue (group_id, work_item_id, state, mine, deadline, priority_class, checkpoint_hash,
           ownership_epoch, entry)
         VALUES (@groupId, @workItemId, @state, @mine, @deadline, @priorityClass, @checkpointHash, @ownershipEpoch, @entry)
         ON CONFLICT (group_id, work_item_id) DO UPDATE SET state = excluded.state, mine = excluded.mine,
           deadline = excluded.deadline, checkpoint_hash = excluded.checkpoint_hash,
           ownership_epoch = excluded.ownership_epoch, entry = excluded.entry`,
      ),
      openIntentsOf: db.prepare<[string, string], IntentDbRow>(
        'SELECT * FROM agent_intents WHERE done = 0 AND group_id = ? AND work_item_id = ? ORDER BY id',
      ),
      addIntent: db.prepare('INSERT INTO agent_intents (group_id, work_item_id, kind, payload) VALUES (?, ?, ?, ?)'),
      closeIntent: db.prepare('UPDATE agent_intents SET done = 1 WHERE id = ?'),
      pending: db.prepare<[], IntentDbRow>('SELECT * FROM agent_intents WHERE done = 0 ORDER BY id'),
      markApplied: db.prepare('INSERT INTO agent_applied (group_id, event_id, sequence) VALUES (?, ?, ?)'),
      advance: db.prepare(
        'UPDATE agent_groups SET cursor = ?, mission_id = ?, ended = ?, view = ? WHERE group_id = ? AND cursor = ?',
      ),
      attempt: db.prepare<[string, string, number], {attempt: number}>(
        'SELECT attempt FROM agent_attempts WHERE group_id = ? AND work_item_id = ? AND ownership_epoch = ?',
      ),
      setAttempt: db.prepare(
        `INSERT INTO agent_attempts (group_id, work_item_id, ownership_epoch, attempt) VALUES (?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET attempt = excluded.attempt`,
      ),
      bufferOffline: db.prepare('INSERT INTO agent_offline (command) VALUES (?)'),
      offline: db.prepare<[], {id: number; command: string}>('SELECT id, command FROM agent_offline ORDER BY id'),
      unbufferOffline: db.prepare('DELETE FROM agent_offline WHERE id = ?'),
      setClass: db.prepare('UPDATE agent_groups SET priority_class = ? WHERE group_id = ?'),
      setQueueClass: db.prepare('UPDATE agent_queue SET priority_class = ? WHERE group_id = ?'),
    }
  }

  static open(path: string, options: AgentStoreOptions): AgentStore {
    const db = new Database(path)
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
    db.exec(SCHEMA)
    const store = new AgentStore(db, options)
    // A crash between an apply and the drain after it leaves contiguous Events in the inbox.
    for (const g of store.groups()) store.#drain(g.groupId)
    return store
  }

  join(groupId: string, afterSequence: number): void {
    if (!Number.isSafeInteger(afterSequence) || afterSequence < 0)
      throw new RangeError(`afterSequence must be a non-negative integer, got ${afterSequence}`)
    this.#stmt.join.run(groupId, afterSequence, afterSequence + 1, JSON.stringify(emptyGroupView(groupId)))
  }

  apply(event: DeliveredEvent): ApplyResult {
    if (this.#stmt.group.get(event.groupId) === undefined)
      throw new Error(`Event ${event.eventId} for Group ${event.groupId}, which this Agent has not joined`)
    const outcome = this.#applyOne(event.groupId, event.sequence, event.eventId, event.bytes, event.document)
    if (outcome !== 'applied') return {applied: 0, buffered: outcome === 'buffered', duplicate: outcome === 'duplicate'}
    return {applied: 1 + this.#drain(event.groupId), buffered: false, duplicate: false}
  }

  deliveredThrough(groupId: string, sequence: number): number {
    if (!Number.isSafeInteger(sequence) || sequence < 0)
      throw new RangeError(`sequence must be a non-negative integer, got ${sequence}`)
    if (this.#stmt.markThrough.run(sequence, groupId).changes !== 1)
      throw new Error(`a delivered-through marker for Group ${groupId}, which this Agent has not joined`)
    return this.#drain(groupId)
  }

  /**
   * Applies buffered Events that have become contiguous, each in its own transaction, passing
   * missing sequences only up to the delivered-through marker; returns how many it applied.
   */
  #drain(groupId: string): number {
    let applied = 0
    for (;;) {
      const group = this.#stmt.group.get(groupId)!
      const at = group.cursor + 1
      const row = this.#stmt.inboxAt.get(groupId, at)
      if (row === undefined) {
        if (group.delivered_through < at) return applied
        // Filtered sequences: up to the marker, or to just before the next buffered Event.
        const next = this.#stmt.firstBuffered.get(groupId)?.sequence ?? null
        const to = next === null || next > group.delivered_through ? group.delivered_through : next - 1
        this.#db.transaction(() => {
          if (this.#stmt.skipTo.run(to, groupId, group.cursor).changes !== 1)
            throw new Error(`the Cursor of ${groupId} moved under a skip`)
          this.#hook('skip')
        })()
        this.#hook('committed')
        continue
      }
      const document = parseJsonBytes(row.bytes) as JsonObject
      if (this.#applyOne(groupId, at, row.event_id, row.bytes, document) !== 'applied') return applied
      applied++
    }
  }

  #applyOne(
    groupId: string,
    sequence: number,
    eventId: string,
    bytes: Uint8Array,
    document: JsonObject,
  ): 'applied' | 'buffered' | 'duplicate' {
    const hook = this.#hook
    const s = this.#stmt
    const outcome = this.#db.transaction(() => {
      hook('begin')
      const group = toGroupRow(s.group.get(groupId)!)
      const duplicate = sequence <= group.cursor || s.applied.get(groupId, eventId) !== undefined
      hook('dedupe')
      if (duplicate) return 'duplicate' as const
      hook('contiguity')
      if (sequence !== group.cursor + 1) {
        s.buffer.run(groupId, sequence, eventId, bytes)
        hook('buffer')
        return 'buffered' as const
      }
      const event = appliedEventOf(document)
      let view = group.view
      if (event !== null) {
        // Only a Mission end touches every entry; any other Event reads the one it names.
        const all = () => s.queue.all(groupId).map((r) => JSON.parse(r.entry) as WorkEntry)
        view = foldGroup(group.view, event, this.#agentId)
        const changes: {before: WorkEntry | undefined; after: WorkEntry}[] = []
        const skipped = mutated('replay-projects-nothing') && Date.parse(String(document.occurredAt)) < this.#openedAt
        for (const id of skipped ? [] : touchedWorkItems(event, all)) {
          const row = s.entry.get(groupId, id)
          const before = row === undefined ? undefined : (JSON.parse(row.entry) as WorkEntry)
          const after = foldWorkItem(before, event, view, this.#agentId, id)
          if (after !== undefined) changes.push({before, after})
        }
        hook('projection')
        for (const {after} of changes) {
          s.putEntry.run({
            groupId,
            workItemId: after.workItemId,
            state: after.state,
            mine: after.mine ? 1 : 0,
            deadline: after.deadline,
            priorityClass: group.priorityClass,
            checkpointHash: after.checkpoint?.hash ?? null,
            ownershipEpoch: after.ownershipEpoch,
            entry: canonicalize(after),
          })
          hook('queue')
        }
        for (const {before, after} of changes) {
          for (const open of s.openIntentsOf.all(groupId, after.workItemId)) {
            if (!intentStillOpen(toIntent(open), after)) s.closeIntent.run(open.id)
          }
          for (const intent of intentsOf(before, after, event.kind))
            s.addIntent.run(groupId, intent.workItemId, intent.kind, canonicalize(intent.payload))
        }
        if (group.view.ended === null && view.ended !== null)
          s.addIntent.run(groupId, null, 'group-ended', canonicalize({cause: view.ended.kind}))
        hook('intents')
      }
      s.markApplied.run(groupId, eventId, sequence)
      hook('applied')
      const moved = s.advance.run(
        sequence,
        view.missionId,
        view.ended === null ? null : JSON.stringify(view.ended),
        JSON.stringify(view),
        groupId,
        group.cursor,
      )
      if (moved.changes !== 1) throw new Error(`the Cursor of ${groupId} moved under apply`)
      hook('cursor')
      s.unbuffer.run(groupId, sequence)
      hook('unbuffer')
      return 'applied' as const
    })()
    hook('committed')
    return outcome
  }

  cursor(groupId: string): number | null {
    return this.#stmt.group.get(groupId)?.cursor ?? null
  }

  buffered(groupId: string): number[] {
    return this.#stmt.inbox.all(groupId).map((r) => r.sequence)
  }

  groups(): GroupRow[] {
    return this.#stmt.groups.all().map(toGroupRow)
  }

  group(groupId: string): GroupRow | null {
    const row = this.#stmt.group.get(groupId)
    return row === undefined ? null : toGroupRow(row)
  }

  /** WorkItems this Agent owns and has not finished, across every Group (admission control's capacity). */
  ownedUnfinished(): number {
    return this.#stmt.owned.get()!.n
  }

  queue(groupId: string): QueueEntry[] {
    return this.#stmt.queue
      .all(groupId)
      .map((r) => ({...(JSON.parse(r.entry) as WorkEntry), priorityClass: r.priority_class}))
  }

  entry(groupId: string, workItemId: string): QueueEntry | null {
    const r = this.#stmt.entry.get(groupId, workItemId)
    return r === undefined ? null : {...(JSON.parse(r.entry) as WorkEntry), priorityClass: r.priority_class}
  }

  pendingIntents(): Intent[] {
    return this.#stmt.pending.all().map(toIntent)
  }

  resolveIntent(id: number): void {
    this.#stmt.closeIntent.run(id)
  }

  /**
   * §11.4: the retry attempt of one ownership of a WorkItem (1 until a retryable failure). Kept
   * across restarts so the contract's maxAttempts bounds the runs, not the processes; not derived
   * from Events: deleting the database starts the count again.
   */
  attempt(groupId: string, workItemId: string, ownershipEpoch: number): number {
    return this.#stmt.attempt.get(groupId, workItemId, ownershipEpoch)?.attempt ?? 1
  }

  setAttempt(groupId: string, workItemId: string, ownershipEpoch: number, attempt: number): void {
    this.#stmt.setAttempt.run(groupId, workItemId, ownershipEpoch, attempt)
  }

  /**
   * §11.5: a Command buffered while the Group service was unreachable, committed before the work
   * goes on (synchronous=FULL), so a crash before reconnecting still reconciles it. Not derived
   * from Events: deleting the database loses what was not yet reconciled.
   */
  bufferOffline(command: BufferedCommand): void {
    this.#stmt.bufferOffline.run(JSON.stringify(command))
  }

  /** The buffered Commands, oldest first (the order they are reconciled in). */
  offlineBuffer(): {id: number; command: BufferedCommand}[] {
    // Rows are written only by bufferOffline from BufferedCommand values.
    return this.#stmt.offline.all().map((r) => ({id: r.id, command: JSON.parse(r.command) as BufferedCommand}))
  }

  /** Drops a buffered Command the authority answered (accepted, or refused for good). */
  unbufferOffline(id: number): void {
    this.#stmt.unbufferOffline.run(id)
  }

  setPriorityClass(groupId: string, cls: number): void {
    if (!Number.isSafeInteger(cls)) throw new RangeError(`priority class must be an integer, got ${cls}`)
    this.#db.transaction(() => {
      if (this.#stmt.setClass.run(cls, groupId).changes !== 1) throw new Error(`Group ${groupId} is not joined`)
      this.#stmt.setQueueClass.run(cls, groupId)
    })()
  }

  /** Every queue as canonical JSON: per Group (by ID), per WorkItem (by ID), the scheduling members. */
  dumpQueues(): string {
    return canonicalize(
      this.groups().map((g) => ({
        group: g.groupId,
        cursor: g.cursor,
        ended: g.ended,
        workItems: this.queue(g.groupId).map((e) => ({
          workItem: e.workItemId,
          state: e.state,
          mine: e.mine,
          priorityClass: e.priorityClass,
          deadline: e.deadline,
          checkpointHash: e.checkpoint?.hash ?? null,
          ownershipEpoch: e.ownershipEpoch,
          revision: e.revision,
        })),
      })),
    )
  }

  close(): void {
    this.#db.close()
  }
}
