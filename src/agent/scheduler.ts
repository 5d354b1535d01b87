// The Worker-owned Scheduler (spec §11.1, §11.3): picks which queued WorkItem of which Group runs
// next on one of the Worker's N execution slots. Pure and deterministic: no I/O, no clock, no
// randomness; the caller passes time as milliseconds, and ties break by Group ID, then by
// WorkItem ID, never by Map insertion order.
//
// API (the runtime in src/agent/ drives it):
//   new Scheduler({slots, maxWaitMs, ...})      options below
//   setGroup(groupId, {weight, priorityClass, quota?})
//                                               register a Group or change its policy; a change
//                                               takes effect at the next decision
//   dropGroup(groupId)                          forget a Group with no running item
//   upsert(item, now)                           enqueue or update a queued (or running) item
//   remove(groupId, workItemId)                 drop a queued item
//   dispatch(now, available?)                   choose one item for a free slot and mark it running
//   release(groupId, workItemId, usedMs, now, requeue)
//                                               the item gave its slot back (finished, checkpointed,
//                                               blocked, preempted) after usedMs of slot time
//   preemption(now, available?)                 which running preemptible item to ask to checkpoint
//   nextOverdueAt()                             when a waiting Group next becomes overdue: the
//                                               runtime's timer for calling preemption(now) again
//   disclosure(groupId, workItemId, now)        §11.2 schedule estimate for one queued item
//
// Cross-Group order is start-time fair queueing over slot time. Each Group has a tag, its charged
// slot time divided by its effective weight (weight × classShareFactor^priorityClass). A dispatch
// charges the item's estimate; its release corrects the charge to the slot time actually used, so
// 1 s items and 10 s items are weighed by what they consume, not by how often they start. The
// Group with the smallest tag goes next; a Group that was idle re-enters at the virtual time V
// (the smallest tag among Groups with ready work at the last dispatch, never decreasing), so
// idling earns no credit. A weight or class change rescales the Group's lead over V, so queued
// work reorders at the next decision.
//
// Priority class only scales the share, and anti-starvation caps it: a Group with ready work and
// nothing running for maxWaitMs is overdue and takes the next free slot ahead of every share
// (oldest wait first), and preemption(now) asks a preemptible item to checkpoint for it. So even at
// the largest class gap policy allows, a backlogged Group waits at most maxWaitMs plus the longest
// non-preemptible stretch of a running item (several Groups overdue at once go oldest first, one
// more stretch per Group ahead). Highest-priority-first without such a bound is non-conforming
// (§11.1).
//
// Within a Group: deadline first (none = last), then the Coordinator's requestedUrgency, then FIFO
// (enqueuedAt, then WorkItem ID). Urgency never touches the Group's tag: it reorders the Group's
// own items only, so it cannot move the Group ahead of its share (ACCEPTANCE F2).

import {IndexedHeap, type HeapEntry} from './indexed-heap.js'
import {type Disclosure, type DisclosureInputs, discloseSchedule} from './scheduler-disclosure.js'

export type {Disclosure} from './scheduler-disclosure.js'

/** work-contract.schema.json requestedUrgency, lowest first. */
export const URGENCIES = ['routine', 'normal', 'high', 'critical'] as const
export type Urgency = (typeof URGENCIES)[number]
const URGENCY_RANK: ReadonlyMap<string, number> = new Map(URGENCIES.map((u, rank) => [u, rank]))

/** Set by the MissionOwner or Organization policy, never by a Coordinator. */
export interface GroupPolicy {
  /** Relative share of slot time, > 0. */
  weight: number
  /** Organization priority class, an integer 0 … options.maxPriorityClass; higher gets more. */
  priorityClass: number
  /** At most this many running items of the Group at once (a positive integer); none = no cap. */
  quota?: number
}

export interface SchedulerOptions {
  /** Execution slots (the Agent Card's maximum concurrency). */
  slots: number
  /** Anti-starvation bound: a Group with ready work and nothing running this long is overdue. */
  maxWaitMs: number
  /** How much one priority class multiplies a Group's share (default 2). */
  classShareFactor?: number
  /** The highest priority class policy allows (default 3): the largest gap is 0 … this. */
  maxPriorityClass?: number
  /**
   * Share preemption: when a Group with ready work and nothing running trails a running Group by
   * more than this much normalized slot time (ms of slot time per unit of effective weight), ask
   * the leader to checkpoint. None = only overdue waits preempt.
   */
  preemptLagMs?: number
  /** Disclosed times are rounded outward to this granularity (default 1000 ms). */
  disclosureGranularityMs?: number
  /** The charge of an item without an estimate in a Group with no finished run yet (default 60 s). */
  defaultEstimateMs?: number
}

export interface QueuedItem {
  groupId: string
  workItemId: string
  /**
   * Expected slot time of its next run, ms. Absent: its Group's learned estimate — the mean of its
   * finished runs' slot time, halving the weight of older ones — or defaultEstimateMs before any.
   */
  estimateMs?: number
  /** When it entered its Group's queue (FIFO key), ms. */
  enqueuedAt: number
  /** The contract deadline, ms. */
  deadline?: number
  /** The Coordinator's requestedUrgency: orders items within its own Group only. */
  urgency?: Urgency
  /** False while gated (awaiting execution approval, unmet dependency, blocked). */
  eligible: boolean
  /** Named resources it needs free to start. */
  resources?: readonly string[]
  /** May be asked to checkpoint and give its slot back. */
  preemptible: boolean
}

export interface PreemptionRequest {
  groupId: string
  workItemId: string
}

interface ItemRecord extends HeapEntry {
  item: QueuedItem
  group: GroupState
  running: boolean
  /** Slot time charged at dispatch (the estimate then). */
  chargedMs: number
  startedAt: number
  preemptRequested: boolean
  // The within-Group order keys, copied out of the item so the heap compares flat numbers.
  deadlineKey: number
  urgencyRank: number
  enqueuedAt: number
  workItemId: string
}

interface GroupState {
  id: string
  policy: GroupPolicy
  effectiveWeight: number
  /** Charged slot time / effective weight, plus re-entry at V. */
  tag: number
  ready: IndexedHeap<ItemRecord>
  items: Map<string, ItemRecord>
  running: number
  /** When `ready` last went from empty to non-empty. */
  readySince: number
  /** When `running` last dropped to 0. */
  idleSince: number
  /** What its finished runs used, for items without an estimate (null before the first). */
  learnedMs: number | null
}

const byItemOrder = (a: ItemRecord, b: ItemRecord): boolean => {
  if (a.deadlineKey !== b.deadlineKey) return a.deadlineKey < b.deadlineKey
  if (a.urgencyRank !== b.urgencyRank) return a.urgencyRank > b.urgencyRank
  if (a.enqueuedAt !== b.enqueuedAt) return a.enqueuedAt < b.enqueuedAt
  return a.workItemId < b.workItemId
}

/** The default of SchedulerOptions.classShareFactor (the runtime's). */
export const DEFAULT_CLASS_SHARE_FACTOR = 2

/** A Group's effective weight: its share of slot time against the others' (weight × factor^class). */
export function effectiveWeight(policy: GroupPolicy, classShareFactor = DEFAULT_CLASS_SHARE_FACTOR): number {
  return policy.weight * classShareFactor ** policy.priorityClass
}

const finite = (n: number) => typeof n === 'number' && Number.isFinite(n)

export class Scheduler {
  private readonly slots: number
  private readonly maxWaitMs: number
  private readonly classShareFactor: number
  private readonly maxPriorityClass: number
  private readonly preemptLagMs: number | undefined
  private readonly granularityMs: number
  private readonly defaultEstimateMs: number
  private readonly groups = new Map<string, GroupState>()
  /** Groups in Group ID order: every scan walks this, so ties never depend on insertion order. */
  private ordered: GroupState[] = []
  /** Running items, oldest dispatch first. */
  private readonly runningItems: ItemRecord[] = []
  private virtualTime = 0

  constructor(options: SchedulerOptions) {
    const {slots, maxWaitMs} = options
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError('slots must be a positive integer')
    if (!finite(maxWaitMs) || maxWaitMs < 0) throw new RangeError('maxWaitMs must be a finite number ≥ 0')
    this.slots = slots
    this.maxWaitMs = maxWaitMs
    this.classShareFactor = options.classShareFactor ?? DEFAULT_CLASS_SHARE_FACTOR
    this.maxPriorityClass = options.maxPriorityClass ?? 3
    this.preemptLagMs = options.preemptLagMs
    this.granularityMs = options.disclosureGranularityMs ?? 1000
    this.defaultEstimateMs = options.defaultEstimateMs ?? 60_000
    if (!finite(this.classShareFactor) || this.classShareFactor < 1)
      throw new RangeError('classShareFactor must be ≥ 1')
    if (!Number.isInteger(this.maxPriorityClass) || this.maxPriorityClass < 0)
      throw new RangeError('maxPriorityClass must be an integer ≥ 0')
    if (!finite(this.granularityMs) || this.granularityMs <= 0)
      throw new RangeError('disclosureGranularityMs must be > 0')
  }

  /** Registers a Group or changes its policy; queued work is reordered at the next decision. */
  setGroup(groupId: string, policy: GroupPolicy): void {
    if (!finite(policy.weight) || policy.weight <= 0) throw new RangeError('weight must be a finite number > 0')
    const cls = policy.priorityClass
    if (!Number.isInteger(cls) || cls < 0 || cls > this.maxPriorityClass)
      throw new RangeError(`priorityClass must be an integer 0 … ${this.maxPriorityClass}`)
    if (policy.quota !== undefined && (!Number.isInteger(policy.quota) || policy.quota < 1))
      throw new RangeError('quota must be a positive integer')
    const weight = effectiveWeight(policy, this.classShareFactor)
    const existing = this.groups.get(groupId)
    if (existing === undefined) {
      const group: GroupState = {
        id: groupId,
        policy: {...policy},
        effectiveWeight: weight,
        tag: this.virtualTime,
        ready: new IndexedHeap(byItemOrder),
        items: new Map(),
        running: 0,
        readySince: -Infinity,
        idleSince: -Infinity,
        learnedMs: null,
      }
      this.groups.set(groupId, group)
      const at = this.ordered.findIndex((g) => g.id > groupId)
      this.ordered.splice(at < 0 ? this.ordered.length : at, 0, group)
      return
    }
    // The Group's lead over virtual time is service it already received in normalized units:
    // rescaling it by the weight ratio makes the new share apply from the next decision on.
    if (existing.tag > this.virtualTime)
      existing.tag = this.virtualTime + ((existing.tag - this.virtualTime) * existing.effectiveWeight) / weight
    existing.policy = {...policy}
    existing.effectiveWeight = weight
  }

  /** Forgets a Group (the Worker left it); its queued items go with it. */
  dropGroup(groupId: string): void {
    const group = this.groups.get(groupId)
    if (group === undefined) return
    if (group.running > 0) throw new Error(`group ${groupId} still has running items: release them first`)
    this.groups.delete(groupId)
    this.ordered = this.ordered.filter((g) => g !== group)
  }

  /** Enqueues an item, or updates a known one (a running one keeps running with the new figures). */
  upsert(item: QueuedItem, now: number): void {
    const group = this.group(item.groupId)
    if (item.estimateMs !== undefined && (!finite(item.estimateMs) || item.estimateMs < 0))
      throw new RangeError('estimateMs must be a finite number ≥ 0')
    const urgencyRank = URGENCY_RANK.get(item.urgency ?? 'normal')
    if (urgencyRank === undefined) throw new RangeError(`unknown urgency ${String(item.urgency)}`)
    // A copy, so the caller's later edits cannot reorder a heap behind its back; built field by
    // field (one object shape for every record, which keeps the heap comparisons monomorphic).
    const copy: QueuedItem = {
      groupId: item.groupId,
      workItemId: item.workItemId,
      estimateMs: item.estimateMs,
      enqueuedAt: item.enqueuedAt,
      deadline: item.deadline,
      urgency: item.urgency,
      eligible: item.eligible,
      resources: item.resources === undefined ? undefined : [...item.resources],
      preemptible: item.preemptible,
    }
    let record = group.items.get(item.workItemId)
    if (record === undefined) {
      record = {
        item: copy,
        group,
        running: false,
        chargedMs: 0,
        startedAt: 0,
        preemptRequested: false,
        deadlineKey: copy.deadline ?? Infinity,
        urgencyRank,
        enqueuedAt: copy.enqueuedAt,
        workItemId: copy.workItemId,
        heapIndex: -1,
      }
      group.items.set(item.workItemId, record)
    } else {
      group.ready.remove(record)
      record.item = copy
    }
    record.deadlineKey = copy.deadline ?? Infinity
    record.urgencyRank = urgencyRank
    record.enqueuedAt = copy.enqueuedAt
    if (!record.running && copy.eligible) this.makeReady(record, now)
  }

  /** Drops a queued item. A running item must be released first. */
  remove(groupId: string, workItemId: string): void {
    const group = this.group(groupId)
    const record = group.items.get(workItemId)
    if (record === undefined) return
    if (record.running) throw new Error(`${workItemId} is running: release it first`)
    group.ready.remove(record)
    group.items.delete(workItemId)
  }

  /**
   * Chooses the next item for a free slot and marks it running, or null when every slot is busy
   * or nothing eligible fits. `available`: the named resources free now (omitted: none), an item
   * starts only when all its resources are in it. Call it until it returns null: the Scheduler is
   * work-conserving, it returns null only when no ready item may start.
   */
  dispatch(now: number, available?: ReadonlySet<string>): QueuedItem | null {
    if (this.runningItems.length >= this.slots) return null
    let skipped: Set<GroupState> | undefined
    for (;;) {
      let best: GroupState | undefined
      let bestOverdue = false
      let minTag = Infinity
      // The hot loop of the module (one pass over the Groups per decision): overdue() inlined.
      const overdueBy = now - this.maxWaitMs
      for (const group of this.ordered) {
        if (group.ready.size === 0 || this.atQuota(group) || skipped?.has(group)) continue
        const tag = group.tag
        if (tag < minTag) minTag = tag
        const overdue = group.running === 0 && Math.max(group.readySince, group.idleSince) <= overdueBy
        if (
          overdue
            ? !bestOverdue || this.waitingSince(group) < this.waitingSince(best!)
            : !bestOverdue && (best === undefined || tag < best.tag)
        ) {
          best = group
          bestOverdue = overdue
        }
      }
      if (best === undefined) return null
      const record = this.takeFitting(best, available)
      if (record === undefined) {
        ;(skipped ??= new Set()).add(best)
        continue
      }
      if (minTag > this.virtualTime) this.virtualTime = minTag
      record.running = true
      record.chargedMs = this.estimate(record)
      record.startedAt = now
      record.preemptRequested = false
      best.tag += record.chargedMs / best.effectiveWeight
      best.running++
      this.runningItems.push(record)
      return record.item
    }
  }

  /** The slot time a dispatch of `record` is charged in advance. */
  private estimate(record: ItemRecord): number {
    return record.item.estimateMs ?? record.group.learnedMs ?? this.defaultEstimateMs
  }

  /**
   * The item gave its slot back after usedMs of slot time: its Group's charge is corrected from
   * the estimate to the time used. requeue: it goes back to its Group's queue (checkpointed,
   * preempted, blocked: upsert it with eligible false while blocked); else it leaves.
   */
  release(groupId: string, workItemId: string, usedMs: number, now: number, requeue: boolean): void {
    const group = this.group(groupId)
    const record = group.items.get(workItemId)
    if (record === undefined || !record.running) throw new Error(`${workItemId} is not running`)
    if (!finite(usedMs) || usedMs < 0) throw new RangeError('usedMs must be a finite number ≥ 0')
    group.tag += (usedMs - record.chargedMs) / group.effectiveWeight
    record.running = false
    record.chargedMs = 0
    record.preemptRequested = false
    this.runningItems.splice(this.runningItems.indexOf(record), 1)
    if (--group.running === 0) group.idleSince = now
    if (!requeue) {
      group.items.delete(workItemId)
      group.learnedMs = group.learnedMs === null ? usedMs : (group.learnedMs + usedMs) / 2
    } else if (record.item.eligible) this.makeReady(record, now)
  }

  /**
   * Which running item the runtime should ask to checkpoint (§11.3 cooperative preemption), or
   * null. Only when every slot is busy and a Group with ready work and nothing running is overdue
   * (or, with preemptLagMs, trails a running Group by more than that). The victim is a preemptible
   * item of the Group furthest over its share; a non-preemptible item is never chosen. A request
   * is returned once: while it is pending the same need asks for nothing more. `available`: as
   * for dispatch; a Group that could not start anything with it does not preempt.
   */
  preemption(now: number, available?: ReadonlySet<string>): PreemptionRequest | null {
    if (this.runningItems.length < this.slots) return null
    const pending = this.runningItems.filter((r) => r.preemptRequested).length
    // A Group whose ready items all lack their resources could not use a freed slot.
    const waiting = this.ordered.filter(
      (g) => g.ready.size > 0 && g.running === 0 && g.ready.all().some((r) => fits(r, available)),
    )
    const overdue = waiting.filter((g) => this.overdue(g, now))
    let needy: GroupState | undefined
    if (overdue.length > pending) needy = overdue[0]
    else if (this.preemptLagMs !== undefined && pending === 0 && waiting.length > 0)
      needy = waiting.reduce((a, b) => (b.tag < a.tag ? b : a))
    if (needy === undefined) return null
    let victim: ItemRecord | undefined
    for (const r of this.runningItems) {
      if (!r.item.preemptible || r.preemptRequested || r.group === needy) continue
      if (
        victim === undefined ||
        r.group.tag > victim.group.tag ||
        (r.group.tag === victim.group.tag &&
          (r.startedAt < victim.startedAt ||
            (r.startedAt === victim.startedAt &&
              (r.group.id < victim.group.id ||
                (r.group.id === victim.group.id && r.item.workItemId < victim.item.workItemId)))))
      )
        victim = r
    }
    if (victim === undefined) return null
    if (overdue.length <= pending && victim.group.tag - needy.tag <= this.preemptLagMs!) return null
    victim.preemptRequested = true
    return {groupId: victim.group.id, workItemId: victim.item.workItemId}
  }

  /**
   * The earliest time a Group with ready work and nothing running becomes overdue (maybe already
   * past), or null: a runtime with every slot busy sets its timer to this and then asks
   * preemption(now), since no release may come before the wait bound runs out.
   */
  nextOverdueAt(): number | null {
    let at = Infinity
    for (const g of this.ordered)
      if (g.ready.size > 0 && g.running === 0) at = Math.min(at, this.waitingSince(g) + this.maxWaitMs)
    return at === Infinity ? null : at
  }

  /** §11.2 schedule disclosure for one queued item (null if unknown or running). */
  disclosure(groupId: string, workItemId: string, now: number): Disclosure | null {
    const group = this.groups.get(groupId)
    const record = group?.items.get(workItemId)
    if (group === undefined || record === undefined || record.running) return null
    // Only this Group's own queue is read item by item; other Groups contribute aggregates only
    // (their summed weight, the busy-slot count, the time until the next slot frees).
    let aheadMs = 0
    let aheadCount = 0
    for (const other of group.ready.all())
      if (other !== record && byItemOrder(other, record)) {
        aheadMs += this.estimate(other)
        aheadCount++
      }
    let activeWeight = 0
    let totalWeight = 0
    for (const g of this.ordered) {
      totalWeight += g.effectiveWeight
      if (g !== group && (g.ready.size > 0 || g.running > 0)) activeWeight += g.effectiveWeight
    }
    let nextFreeMs = Infinity
    let longestRemainingMs = 0
    for (const r of this.runningItems) {
      const remaining = Math.max(0, r.startedAt + r.chargedMs - now)
      nextFreeMs = Math.min(nextFreeMs, remaining)
      longestRemainingMs = Math.max(longestRemainingMs, remaining)
    }
    const inputs: DisclosureInputs = {
      now,
      slots: this.slots,
      freeSlots: this.slots - this.runningItems.length,
      nextFreeMs: this.runningItems.length < this.slots ? 0 : nextFreeMs,
      longestRemainingMs,
      maxWaitMs: this.maxWaitMs,
      granularityMs: this.granularityMs,
      ownWeight: group.effectiveWeight,
      otherActiveWeight: activeWeight,
      allWeight: totalWeight,
      quota: group.policy.quota,
      ownRunning: group.running,
      aheadMs,
      aheadCount,
      estimateMs: this.estimate(record),
      eligible: record.item.eligible,
      needsResources: (record.item.resources?.length ?? 0) > 0,
    }
    return discloseSchedule(groupId, workItemId, inputs)
  }

  /** Running items in dispatch order (for the runtime's bookkeeping and tests). */
  running(): PreemptionRequest[] {
    return this.runningItems.map((r) => ({groupId: r.group.id, workItemId: r.item.workItemId}))
  }

  private group(groupId: string): GroupState {
    const group = this.groups.get(groupId)
    if (group === undefined) throw new Error(`unknown group ${groupId}: setGroup first`)
    return group
  }

  private makeReady(record: ItemRecord, now: number): void {
    const group = record.group
    if (group.ready.size === 0) {
      group.readySince = now
      // Re-entry at virtual time: an idle Group earns no credit for the time it had no work.
      if (group.running === 0 && group.tag < this.virtualTime) group.tag = this.virtualTime
    }
    group.ready.push(record)
  }

  private atQuota(group: GroupState): boolean {
    return group.policy.quota !== undefined && group.running >= group.policy.quota
  }

  /** Since when the Group has had ready work and nothing running (meaningful only while so). */
  private waitingSince(group: GroupState): number {
    return Math.max(group.readySince, group.idleSince)
  }

  private overdue(group: GroupState, now: number): boolean {
    return group.running === 0 && group.ready.size > 0 && now - this.waitingSince(group) >= this.maxWaitMs
  }

  /** Takes the Group's first ready item whose resources are all available, keeping the rest queued. */
  private takeFitting(group: GroupState, available: ReadonlySet<string> | undefined): ItemRecord | undefined {
    const top = group.ready.peek()
    if (top !== undefined && fits(top, available)) return group.ready.pop()
    const held: ItemRecord[] = []
    let found: ItemRecord | undefined
    while (group.ready.size > 0) {
      const next = group.ready.pop()!
      if (fits(next, available)) {
        found = next
        break
      }
      held.push(next)
    }
    for (const r of held) group.ready.push(r)
    return found
  }
}

function fits(record: ItemRecord, available: ReadonlySet<string> | undefined): boolean {
  const needs = record.item.resources
  if (needs === undefined || needs.length === 0) return true
  return available !== undefined && needs.every((r) => available.has(r))
}
