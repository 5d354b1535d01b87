// A small discrete-event simulator on virtual time for the Scheduler tests: N slots, dispatch on
// every free slot at every event, release after each item's real duration (which may differ from
// its estimate), optional cooperative preemption at a safe point, and its own bookkeeping of what
// is queued, so it can judge the Scheduler independently (idle slots, quotas, gates, waits,
// slot time per Group, lag).

import type {GroupPolicy, PreemptionRequest, QueuedItem, Urgency} from '../../src/agent/scheduler.js'

/** What a scheduler under test offers the simulator (the real one and the test's mutants). */
export interface SchedulerLike {
  setGroup(groupId: string, policy: GroupPolicy): void
  upsert(item: QueuedItem, now: number): void
  dispatch(now: number, available?: ReadonlySet<string>): QueuedItem | null
  release(groupId: string, workItemId: string, usedMs: number, now: number, requeue: boolean): void
  preemption(now: number, available?: ReadonlySet<string>): PreemptionRequest | null
  nextOverdueAt?(): number | null
}

export interface SimJob {
  item: QueuedItem
  /** Real slot time it needs. */
  durationMs: number
  /** When an ineligible item's gate lifts (none: never). */
  gateLiftAt?: number
}

export interface NextJob {
  /** None: the Scheduler charges what the Group's finished runs used. */
  estimateMs?: number
  durationMs: number
  urgency?: Urgency
  deadline?: number
  preemptible?: boolean
}

export interface SimSetup {
  slots: number
  horizonMs: number
  groups: {id: string; policy: GroupPolicy}[]
  /** Arrivals at item.enqueuedAt. */
  jobs?: SimJob[]
  /** Groups kept saturated: refilled to `depth` queued items at every event. */
  saturate?: {groupId: string; depth: number; next: (n: number) => NextJob}[]
  /** Resource availability from `at` on (sorted by at). */
  resources?: {at: number; available: string[]}[]
  /** Policy changes applied at `at`. */
  policyChanges?: {at: number; groupId: string; policy: GroupPolicy}[]
  /** Ask preemption(now) after every dispatch round; the victim checkpoints after safePointMs. */
  preempt?: {safePointMs: number}
}

export interface SimResult {
  /** `time group/item` per dispatch, in order. */
  trace: string[]
  slotTime: Map<string, number>
  /** Per Group: the longest time it had ready work and nothing running before it started one. */
  longestWait: Map<string, number>
  /** Largest |S_a/w_a − S_b/w_b| over event times, for the first two Groups (effective weights given). */
  maxLag: number
  /** Broken invariants the simulator saw (idle slot with ready work, quota, gate, preemption). */
  violations: string[]
  preemptions: PreemptionRequest[]
  maxRunning: Map<string, number>
  decisions: number
}

interface Running {
  job: SimJob
  start: number
  end: number
  preempting: boolean
}

export function simulate(scheduler: SchedulerLike, setup: SimSetup, lagWeights?: [number, number]): SimResult {
  const violations: string[] = []
  const trace: string[] = []
  const preemptions: PreemptionRequest[] = []
  const slotTime = new Map<string, number>()
  const longestWait = new Map<string, number>()
  const waitingSince = new Map<string, number>()
  const maxRunning = new Map<string, number>()
  const policies = new Map<string, GroupPolicy>()
  for (const {id, policy} of setup.groups) {
    scheduler.setGroup(id, policy)
    policies.set(id, policy)
    slotTime.set(id, 0)
    longestWait.set(id, 0)
    maxRunning.set(id, 0)
  }
  const key = (j: SimJob) => `${j.item.groupId}/${j.item.workItemId}`
  /** Queued (not running) jobs the scheduler knows, by key, with their current eligibility. */
  const queued = new Map<string, SimJob>()
  const slots: (Running | undefined)[] = Array.from({length: setup.slots}, () => undefined)
  const arrivals = [...(setup.jobs ?? [])].sort(
    (a, b) => a.item.enqueuedAt - b.item.enqueuedAt || (key(a) < key(b) ? -1 : 1),
  )
  const gates = arrivals.filter((j) => j.gateLiftAt !== undefined).sort((a, b) => a.gateLiftAt! - b.gateLiftAt!)
  const changes = [...(setup.policyChanges ?? [])]
  const resources = setup.resources ?? []
  let available = new Set<string>()
  let arrivalAt = 0
  let gateAt = 0
  let resourceAt = 0
  let changeAt = 0
  const counters = new Map<string, number>()
  const [g0, g1] = setup.groups.map((g) => g.id)
  let maxLag = 0
  let decisions = 0

  const runningIn = (groupId: string) => slots.filter((s) => s?.job.item.groupId === groupId).length
  const fits = (j: SimJob) => (j.item.resources ?? []).every((r) => available.has(r))
  const readyIn = (groupId: string) => [...queued.values()].some((j) => j.item.groupId === groupId && j.item.eligible)

  let t = 0
  for (;;) {
    // Releases due now, slot by slot.
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i]
      if (s === undefined || s.end > t) continue
      const used = t - s.start
      const left = s.job.durationMs - used
      slots[i] = undefined
      if (left > 1e-9) {
        scheduler.release(s.job.item.groupId, s.job.item.workItemId, used, t, true)
        const resumed: SimJob = {...s.job, durationMs: left, item: {...s.job.item, estimateMs: left}}
        scheduler.upsert(resumed.item, t)
        queued.set(key(resumed), resumed)
      } else scheduler.release(s.job.item.groupId, s.job.item.workItemId, used, t, false)
    }
    while (changeAt < changes.length && changes[changeAt].at <= t) {
      const c = changes[changeAt++]
      scheduler.setGroup(c.groupId, c.policy)
      policies.set(c.groupId, c.policy)
    }
    while (resourceAt < resources.length && resources[resourceAt].at <= t)
      available = new Set(resources[resourceAt++].available)
    while (arrivalAt < arrivals.length && arrivals[arrivalAt].item.enqueuedAt <= t) {
      const j = arrivals[arrivalAt++]
      scheduler.upsert(j.item, t)
      queued.set(key(j), j)
    }
    while (gateAt < gates.length && gates[gateAt].gateLiftAt! <= t) {
      const j = gates[gateAt++]
      const q = queued.get(key(j))
      if (q === undefined) continue
      const lifted: SimJob = {...q, item: {...q.item, eligible: true}}
      scheduler.upsert(lifted.item, t)
      queued.set(key(lifted), lifted)
    }
    for (const sat of setup.saturate ?? []) {
      let have = [...queued.values()].filter((j) => j.item.groupId === sat.groupId).length
      while (have < sat.depth) {
        const n = counters.get(sat.groupId) ?? 0
        counters.set(sat.groupId, n + 1)
        const next = sat.next(n)
        const j: SimJob = {
          durationMs: next.durationMs,
          item: {
            groupId: sat.groupId,
            workItemId: `w${String(n).padStart(6, '0')}`,
            ...(next.estimateMs !== undefined ? {estimateMs: next.estimateMs} : {}),
            enqueuedAt: t,
            deadline: next.deadline,
            urgency: next.urgency,
            eligible: true,
            preemptible: next.preemptible ?? false,
          },
        }
        scheduler.upsert(j.item, t)
        queued.set(key(j), j)
        have++
      }
    }
    for (const {id} of setup.groups)
      if (!waitingSince.has(id) && readyIn(id) && runningIn(id) === 0) waitingSince.set(id, t)

    // Dispatch while a slot is free.
    for (let i = 0; i < slots.length; i++) {
      if (slots[i] !== undefined) continue
      const item = scheduler.dispatch(t, available)
      if (item === null) break
      decisions++
      const k = `${item.groupId}/${item.workItemId}`
      const job = queued.get(k)
      if (job === undefined) {
        violations.push(`${t}: dispatched unknown or running ${k}`)
        continue
      }
      if (!job.item.eligible) violations.push(`${t}: dispatched gated ${k}`)
      if (!fits(job)) violations.push(`${t}: dispatched ${k} without its resources`)
      queued.delete(k)
      slots[i] = {job, start: t, end: t + job.durationMs, preempting: false}
      trace.push(`${t} ${k}`)
      const running = runningIn(item.groupId)
      maxRunning.set(item.groupId, Math.max(maxRunning.get(item.groupId)!, running))
      const quota = policies.get(item.groupId)!.quota
      if (quota !== undefined && running > quota)
        violations.push(`${t}: ${item.groupId} runs ${running} > quota ${quota}`)
      const since = waitingSince.get(item.groupId)
      if (since !== undefined) {
        longestWait.set(item.groupId, Math.max(longestWait.get(item.groupId)!, t - since))
        waitingSince.delete(item.groupId)
      }
    }
    // Work conservation, judged by the simulator's own view.
    if (slots.some((s) => s === undefined)) {
      const startable = [...queued.values()].find((j) => {
        const q = policies.get(j.item.groupId)!.quota
        return j.item.eligible && fits(j) && (q === undefined || runningIn(j.item.groupId) < q)
      })
      if (startable !== undefined) violations.push(`${t}: a slot idles while ${key(startable)} could start`)
    }
    for (const {id} of setup.groups)
      if (!waitingSince.has(id) && readyIn(id) && runningIn(id) === 0) waitingSince.set(id, t)

    if (setup.preempt !== undefined) {
      const req = scheduler.preemption(t, available)
      if (req !== null) {
        preemptions.push(req)
        const s = slots.find((r) => r?.job.item.groupId === req.groupId && r.job.item.workItemId === req.workItemId)
        if (s === undefined)
          violations.push(`${t}: preemption of ${req.groupId}/${req.workItemId}, which is not running`)
        else if (!s.job.item.preemptible) violations.push(`${t}: preemption of non-preemptible ${req.workItemId}`)
        else if (!s.preempting) {
          s.preempting = true
          s.end = Math.min(s.end, t + setup.preempt.safePointMs)
        }
      }
    }

    // Next event.
    let next = Infinity
    for (const s of slots) if (s !== undefined) next = Math.min(next, s.end)
    if (arrivalAt < arrivals.length) next = Math.min(next, arrivals[arrivalAt].item.enqueuedAt)
    if (gateAt < gates.length) next = Math.min(next, gates[gateAt].gateLiftAt!)
    if (resourceAt < resources.length) next = Math.min(next, resources[resourceAt].at)
    if (changeAt < changes.length) next = Math.min(next, changes[changeAt].at)
    // A runtime with preemption keeps a timer for the next overdue wait (no release may come first).
    const overdueAt = setup.preempt !== undefined ? scheduler.nextOverdueAt?.() : null
    if (overdueAt != null && overdueAt > t) next = Math.min(next, overdueAt)
    if (next === Infinity || next > setup.horizonMs) next = Math.min(next, setup.horizonMs)
    for (const s of slots)
      if (s !== undefined)
        slotTime.set(s.job.item.groupId, slotTime.get(s.job.item.groupId)! + (next - Math.max(t, s.start)))
    if (lagWeights !== undefined && g1 !== undefined) {
      const lag = Math.abs(slotTime.get(g0)! / lagWeights[0] - slotTime.get(g1)! / lagWeights[1])
      maxLag = Math.max(maxLag, lag)
    }
    if (next >= setup.horizonMs || next === t) {
      if (next === t) violations.push(`${t}: the simulation made no progress`)
      break
    }
    t = next
  }
  // A Group still waiting at the end has waited at least until the horizon.
  for (const [id, since] of waitingSince) longestWait.set(id, Math.max(longestWait.get(id)!, setup.horizonMs - since))
  return {trace, slotTime, longestWait, maxLag, violations, preemptions, maxRunning, decisions}
}

/** A Group's fraction of all slot time. */
export function share(result: SimResult, groupId: string): number {
  let total = 0
  for (const v of result.slotTime.values()) total += v
  return total === 0 ? 0 : result.slotTime.get(groupId)! / total
}
