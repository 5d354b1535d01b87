// Forbidden schedulers with the Scheduler's API, for the mutation checks in scheduler.test.ts: the
// properties that prove §11.1 must FAIL for each of them, or they would not prove anything.
//   HighestPriorityFirst  pure unbounded highest-class-first, FIFO within a class (§11.1: non-conforming)
//   DispatchCountFair     weighted fairness over the number of dispatches, not slot time
//   UrgencyAcrossGroups   lets the Coordinator's urgency pick the Group (F2 forbids it)

import {type GroupPolicy, type PreemptionRequest, type QueuedItem, URGENCIES} from '../../src/agent/scheduler.js'
import type {SchedulerLike} from './scheduler-sim.js'

interface Entry {
  item: QueuedItem
  seq: number
}

abstract class MutantBase implements SchedulerLike {
  protected readonly policies = new Map<string, GroupPolicy>()
  protected readonly queued = new Map<string, Entry>()
  protected readonly running = new Map<string, QueuedItem>()
  protected readonly dispatches = new Map<string, number>()
  protected readonly used = new Map<string, number>()
  private seq = 0

  constructor(private readonly slots: number) {}

  setGroup(groupId: string, policy: GroupPolicy): void {
    this.policies.set(groupId, policy)
  }

  upsert(item: QueuedItem, _now: number): void {
    const k = `${item.groupId}/${item.workItemId}`
    if (this.running.has(k)) return
    this.queued.set(k, {item, seq: this.queued.get(k)?.seq ?? this.seq++})
  }

  dispatch(_now: number, available?: ReadonlySet<string>): QueuedItem | null {
    if (this.running.size >= this.slots) return null
    const ready = [...this.queued.values()].filter((e) => {
      const quota = this.policies.get(e.item.groupId)!.quota
      const inGroup = [...this.running.values()].filter((r) => r.groupId === e.item.groupId).length
      return (
        e.item.eligible &&
        (quota === undefined || inGroup < quota) &&
        (e.item.resources ?? []).every((r) => available?.has(r))
      )
    })
    if (ready.length === 0) return null
    const chosen = ready.reduce((a, b) => (this.before(b, a) ? b : a))
    const k = `${chosen.item.groupId}/${chosen.item.workItemId}`
    this.queued.delete(k)
    this.running.set(k, chosen.item)
    this.dispatches.set(chosen.item.groupId, (this.dispatches.get(chosen.item.groupId) ?? 0) + 1)
    return chosen.item
  }

  release(groupId: string, workItemId: string, usedMs: number, _now: number, requeue: boolean): void {
    const k = `${groupId}/${workItemId}`
    const item = this.running.get(k)!
    this.running.delete(k)
    this.used.set(groupId, (this.used.get(groupId) ?? 0) + usedMs)
    if (requeue) this.queued.set(k, {item, seq: this.seq++})
  }

  preemption(_now: number): PreemptionRequest | null {
    return null
  }

  protected weight(groupId: string): number {
    const p = this.policies.get(groupId)!
    return p.weight * 2 ** p.priorityClass
  }

  /** a goes before b. */
  protected abstract before(a: Entry, b: Entry): boolean
}

export class HighestPriorityFirst extends MutantBase {
  protected before(a: Entry, b: Entry): boolean {
    const pa = this.policies.get(a.item.groupId)!.priorityClass
    const pb = this.policies.get(b.item.groupId)!.priorityClass
    return pa !== pb ? pa > pb : a.seq < b.seq
  }
}

export class DispatchCountFair extends MutantBase {
  protected before(a: Entry, b: Entry): boolean {
    const na = (this.dispatches.get(a.item.groupId) ?? 0) / this.weight(a.item.groupId)
    const nb = (this.dispatches.get(b.item.groupId) ?? 0) / this.weight(b.item.groupId)
    if (na !== nb) return na < nb
    return a.item.groupId !== b.item.groupId ? a.item.groupId < b.item.groupId : a.seq < b.seq
  }
}

export class UrgencyAcrossGroups extends MutantBase {
  protected before(a: Entry, b: Entry): boolean {
    const ua = URGENCIES.indexOf(a.item.urgency ?? 'normal')
    const ub = URGENCIES.indexOf(b.item.urgency ?? 'normal')
    if (ua !== ub) return ua > ub
    const sa = (this.used.get(a.item.groupId) ?? 0) / this.weight(a.item.groupId)
    const sb = (this.used.get(b.item.groupId) ?? 0) / this.weight(b.item.groupId)
    if (sa !== sb) return sa < sb
    return a.item.groupId !== b.item.groupId ? a.item.groupId < b.item.groupId : a.seq < b.seq
  }
}
