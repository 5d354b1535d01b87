// The Worker's Scheduler (spec §11.1–§11.3, ACCEPTANCE F2, F3, F7) on virtual time: seeded
// fast-check workloads run through the discrete-event simulator (scheduler-sim.ts), which judges
// each decision from its own view of the queues. The forbidden schedulers of scheduler-mutants.ts
// run through the same properties, which must fail for them.

import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {
  type GroupPolicy,
  type QueuedItem,
  Scheduler,
  type SchedulerOptions,
  type Urgency,
} from '../../src/agent/scheduler.js'
import {mulberry32 as prng} from '../../src/poc/faults/prng.js'
import {DispatchCountFair, HighestPriorityFirst, UrgencyAcrossGroups} from './scheduler-mutants.js'
import {type SchedulerLike, type SimJob, type SimSetup, share, simulate} from './scheduler-sim.js'

fc.configureGlobal({seed: 20261202})

type Make = (options: SchedulerOptions) => SchedulerLike
const real: Make = (o) => new Scheduler(o)
const S = 1000
const MAX_CLASS = 3
const eff = (p: GroupPolicy) => p.weight * 2 ** p.priorityClass

const seed = fc.integer({min: 0, max: 2 ** 31 - 1})

// ---------------------------------------------------------------------------------------------
// Weighted fairness in slot time

/** Two saturated Groups, weights 3:1 at the same class; item lengths lenA/lenB seconds (± noise). */
/** `estimated: false`: no item carries an estimate (the Agent runtime has none); the Scheduler learns them. */
function shareProperty(make: Make, lengths: fc.Arbitrary<[number, number]>, estimated = true) {
  return fc.property(
    fc.record({
      slots: fc.integer({min: 1, max: 4}),
      seed,
      lengths,
      // Real duration = estimate × bias × (1 ± 20%): a Group whose estimates run low must still
      // be charged the slot time it really used.
      bias: fc.tuple(fc.constantFrom(0.5, 1, 2), fc.constantFrom(0.5, 1, 2)),
      cls: fc.integer({min: 0, max: MAX_CLASS}),
      heavyIsA: fc.boolean(),
    }),
    (w) => {
      const rnd = prng(w.seed)
      const [lenA, lenB] = w.lengths
      const job = (len: number, bias: number) => () => {
        const durationMs = len * S
        const estimateMs = Math.round((durationMs / bias) * (0.8 + 0.4 * rnd()))
        return estimated ? {estimateMs, durationMs} : {durationMs}
      }
      const heavy = w.heavyIsA ? 'A' : 'B'
      const result = simulate(make({slots: w.slots, maxWaitMs: 1e12, maxPriorityClass: MAX_CLASS}), {
        slots: w.slots,
        horizonMs: 150 * Math.max(lenA, lenB) * S,
        groups: [
          {id: 'A', policy: {weight: w.heavyIsA ? 3 : 1, priorityClass: w.cls}},
          {id: 'B', policy: {weight: w.heavyIsA ? 1 : 3, priorityClass: w.cls}},
        ],
        saturate: [
          {groupId: 'A', depth: w.slots + 2, next: job(lenA, w.bias[0])},
          {groupId: 'B', depth: w.slots + 2, next: job(lenB, w.bias[1])},
        ],
      })
      return result.violations.length === 0 && Math.abs(share(result, heavy) - 0.75) <= 0.05
    },
  )
}
const anyLengths = fc.tuple(fc.integer({min: 1, max: 10}), fc.integer({min: 1, max: 10}))
const shortVersusLong = fc.constantFrom<[number, number]>([1, 10], [10, 1])

/**
 * Two saturated Groups on one slot, item lengths up to maxA/maxB seconds, estimates exact. The
 * bound checked is start-time fair queueing's (Goyal, Vin, Cheng 1996), at every event time t
 * with both Groups backlogged since 0:
 *     |S_A(0,t)/φ_A − S_B(0,t)/φ_B|  ≤  L_A/φ_A + L_B/φ_B
 * with S the slot time actually used (partial runs included), φ the effective weight
 * (weight × 2^priorityClass) and L the longest non-preemptible run (the item length cap).
 * With N slots, N runs of each Group may be in flight at once, so the multi-slot check uses
 * N·(L_A/φ_A + L_B/φ_B).
 */
function lagProperty(make: Make, maxSlots: number) {
  return fc.property(
    fc.record({
      slots: fc.integer({min: 1, max: maxSlots}),
      seed,
      maxA: fc.integer({min: 1, max: 10}),
      maxB: fc.integer({min: 1, max: 10}),
      a: fc.record({weight: fc.integer({min: 1, max: 5}), priorityClass: fc.integer({min: 0, max: 2})}),
      b: fc.record({weight: fc.integer({min: 1, max: 5}), priorityClass: fc.integer({min: 0, max: 2})}),
    }),
    (w) => {
      const rnd = prng(w.seed)
      const job = (max: number) => () => {
        const ms = Math.max(100, Math.round(rnd() * max * 10) * 100)
        return {estimateMs: ms, durationMs: ms}
      }
      const result = simulate(
        make({slots: w.slots, maxWaitMs: 1e12, maxPriorityClass: MAX_CLASS}),
        {
          slots: w.slots,
          horizonMs: 100 * Math.max(w.maxA, w.maxB) * S,
          groups: [
            {id: 'A', policy: w.a},
            {id: 'B', policy: w.b},
          ],
          saturate: [
            {groupId: 'A', depth: w.slots + 2, next: job(w.maxA)},
            {groupId: 'B', depth: w.slots + 2, next: job(w.maxB)},
          ],
        },
        [eff(w.a), eff(w.b)],
      )
      const bound = w.slots * ((w.maxA * S) / eff(w.a) + (w.maxB * S) / eff(w.b))
      return result.violations.length === 0 && result.maxLag <= bound * (1 + 1e-9)
    },
  )
}

// ---------------------------------------------------------------------------------------------
// Anti-starvation at the largest class gap

/**
 * A saturated Group at the highest class policy allows (weight up to 10, so up to 80× the share)
 * against a saturated class-0 Group of weight 1: the low Group, whenever it has ready work and
 * nothing running, starts within maxWaitMs plus the longest non-preemptible stretch (the high
 * Group's item length cap, or the safe-point delay when its items are preemptible and the runtime
 * preempts).
 */
function maxWaitProperty(make: Make) {
  return fc.property(
    fc.record({
      slots: fc.integer({min: 1, max: 4}),
      seed,
      hiWeight: fc.integer({min: 1, max: 10}),
      maxWaitS: fc.integer({min: 5, max: 60}),
      maxLen: fc.integer({min: 1, max: 10}),
      preempt: fc.boolean(),
    }),
    (w) => {
      const rnd = prng(w.seed)
      const safePointMs = 500
      const job = (preemptible: boolean) => () => {
        const ms = Math.max(100, Math.round(rnd() * w.maxLen * 10) * 100)
        return {estimateMs: ms, durationMs: ms, preemptible}
      }
      const maxWaitMs = w.maxWaitS * S
      const result = simulate(make({slots: w.slots, maxWaitMs, maxPriorityClass: MAX_CLASS}), {
        slots: w.slots,
        horizonMs: 12 * maxWaitMs + 20 * w.maxLen * S,
        groups: [
          {id: 'high', policy: {weight: w.hiWeight, priorityClass: MAX_CLASS}},
          {id: 'low', policy: {weight: 1, priorityClass: 0}},
        ],
        saturate: [
          {groupId: 'high', depth: w.slots + 2, next: job(w.preempt)},
          {groupId: 'low', depth: 2, next: job(false)},
        ],
        preempt: w.preempt ? {safePointMs} : undefined,
      })
      const stretch = w.preempt ? safePointMs : w.maxLen * S
      return result.violations.length === 0 && result.longestWait.get('low')! <= maxWaitMs + stretch
    },
  )
}

// ---------------------------------------------------------------------------------------------
// Urgency stays inside its Group

/** Group A's items all at the top urgency, then all at the bottom: the shares do not move. */
function urgencyProperty(make: Make) {
  return fc.property(
    fc.record({
      slots: fc.integer({min: 1, max: 3}),
      seed,
      wa: fc.integer({min: 1, max: 5}),
      wb: fc.integer({min: 1, max: 5}),
    }),
    (w) => {
      const run = (urgency: Urgency) => {
        const rnd = prng(w.seed)
        const job = (u: Urgency) => () => {
          const ms = Math.max(100, Math.round(rnd() * 80) * 100)
          return {estimateMs: ms, durationMs: ms, urgency: u}
        }
        const result = simulate(make({slots: w.slots, maxWaitMs: 1e12, maxPriorityClass: MAX_CLASS}), {
          slots: w.slots,
          horizonMs: 1200 * S,
          groups: [
            {id: 'A', policy: {weight: w.wa, priorityClass: 0}},
            {id: 'B', policy: {weight: w.wb, priorityClass: 0}},
          ],
          saturate: [
            {groupId: 'A', depth: w.slots + 2, next: job(urgency)},
            {groupId: 'B', depth: w.slots + 2, next: job('normal')},
          ],
        })
        return share(result, 'A')
      }
      const top = run('critical')
      const bottom = run('routine')
      const weighted = w.wa / (w.wa + w.wb)
      return Math.abs(top - bottom) <= 0.03 && Math.abs(top - weighted) <= 0.05
    },
  )
}

// ---------------------------------------------------------------------------------------------
// Random mixed workloads: quotas, gates, resources, arrivals over time, optional preemption

interface Mixed {
  setup: SimSetup
  neverLifted: Set<string>
}

const mixedWorkload = fc
  .record({
    slots: fc.integer({min: 1, max: 4}),
    seed,
    groups: fc.array(
      fc.record({
        weight: fc.integer({min: 1, max: 5}),
        priorityClass: fc.integer({min: 0, max: MAX_CLASS}),
        quota: fc.option(fc.integer({min: 1, max: 3}), {nil: undefined}),
      }),
      {minLength: 1, maxLength: 4},
    ),
    jobs: fc.integer({min: 5, max: 40}),
    preempt: fc.boolean(),
  })
  .map((w): Mixed => {
    const rnd = prng(w.seed)
    const groups = w.groups.map((policy, i) => ({
      id: `g${i}`,
      policy: policy.quota === undefined ? {weight: policy.weight, priorityClass: policy.priorityClass} : policy,
    }))
    const neverLifted = new Set<string>()
    const urgencies: Urgency[] = ['routine', 'normal', 'high', 'critical']
    const jobs: SimJob[] = Array.from({length: w.jobs}, (_, n) => {
      const groupId = groups[Math.floor(rnd() * groups.length)].id
      const durationMs = Math.max(100, Math.round(rnd() * 100) * 100)
      const gated = rnd() < 0.3
      const lifts = gated && rnd() < 0.5
      const item: QueuedItem = {
        groupId,
        workItemId: `i${n}`,
        estimateMs: Math.round(durationMs * (0.5 + rnd())),
        enqueuedAt: Math.round(rnd() * 60) * S,
        deadline: rnd() < 0.3 ? Math.round(rnd() * 120) * S : undefined,
        urgency: urgencies[Math.floor(rnd() * 4)],
        eligible: !gated,
        resources: rnd() < 0.2 ? ['gpu'] : undefined,
        preemptible: rnd() < 0.5,
      }
      if (gated && !lifts) neverLifted.add(`${groupId}/${item.workItemId}`)
      return {item, durationMs, gateLiftAt: lifts ? item.enqueuedAt + Math.round(rnd() * 30) * S : undefined}
    })
    const resources: {at: number; available: string[]}[] = []
    for (let at = 0, on = rnd() < 0.5; at < 200 * S; at += Math.round(5 + rnd() * 15) * S, on = !on)
      resources.push({at, available: on ? ['gpu'] : []})
    return {
      setup: {
        slots: w.slots,
        horizonMs: 400 * S,
        groups,
        jobs,
        resources,
        preempt: w.preempt ? {safePointMs: 300} : undefined,
      },
      neverLifted,
    }
  })

const optionsFor = (setup: SimSetup): SchedulerOptions => ({
  slots: setup.slots,
  maxWaitMs: 20 * S,
  maxPriorityClass: MAX_CLASS,
  preemptLagMs: 30 * S,
})

describe('Scheduler: weighted fairness in slot time (F2)', () => {
  it('weights 3:1, both queues saturated: 75/25 ± 5 points of slot time (300 workloads, estimates off by ×0.5–×2)', () => {
    fc.assert(shareProperty(real, anyLengths), {numRuns: 300})
  })

  it('weights 3:1 with 1 s items in one Group and 10 s items in the other: still 75/25 ± 5 (150 workloads)', () => {
    fc.assert(shareProperty(real, shortVersusLong), {numRuns: 150})
  })

  it('weights 3:1, 1 s versus 10 s items, no estimates at all (learned from finished runs): 75/25 ± 5 (150 workloads)', () => {
    fc.assert(shareProperty(real, shortVersusLong, false), {numRuns: 150})
  })

  it('the lag of two backlogged Groups on one slot stays within the SFQ bound L_A/φ_A + L_B/φ_B (150 workloads)', () => {
    fc.assert(lagProperty(real, 1), {numRuns: 150})
  })

  it('on up to 4 slots the lag stays within N·(L_A/φ_A + L_B/φ_B) (100 workloads)', () => {
    fc.assert(lagProperty(real, 4), {numRuns: 100})
  })

  it("maximum urgency on all of a Coordinator's items does not move its Group's share (100 workloads × 2 runs)", () => {
    fc.assert(urgencyProperty(real), {numRuns: 100})
  })
})

describe('Scheduler: anti-starvation (F2)', () => {
  it('a backlogged class-0 Group starts within maxWait (+ the longest non-preemptible stretch) at the largest class gap (150 workloads)', () => {
    fc.assert(maxWaitProperty(real), {numRuns: 150})
  })
})

describe('Scheduler: quotas, risk gates, resources, work conservation (random workloads)', () => {
  it('never exceeds a quota, never dispatches a gated item or one without its resources, never idles a slot while work could start (200 workloads)', () => {
    fc.assert(
      fc.property(mixedWorkload, ({setup, neverLifted}) => {
        const result = simulate(real(optionsFor(setup)), setup)
        for (const line of result.trace) if (neverLifted.has(line.split(' ')[1])) return false
        for (const {id, policy} of setup.groups)
          if (policy.quota !== undefined && result.maxRunning.get(id)! > policy.quota) return false
        return result.violations.length === 0
      }),
      {numRuns: 200},
    )
  })

  it('is deterministic: the same workload twice, and with the Groups registered in reverse order, gives the same decisions (60 workloads)', () => {
    fc.assert(
      fc.property(mixedWorkload, ({setup}) => {
        const first = simulate(real(optionsFor(setup)), setup).trace
        const again = simulate(real(optionsFor(setup)), setup).trace
        const reversed = simulate(real(optionsFor(setup)), {...setup, groups: [...setup.groups].reverse()}).trace
        expect(again).toEqual(first)
        expect(reversed).toEqual(first)
      }),
      {numRuns: 60},
    )
  })
})

describe('Scheduler: the properties fail for forbidden schedulers (mutation check)', () => {
  const hpf: Make = (o) => new HighestPriorityFirst(o.slots)
  const countFair: Make = (o) => new DispatchCountFair(o.slots)
  const urgencyLeak: Make = (o) => new UrgencyAcrossGroups(o.slots)

  it('highest-priority-first starves the low Group past maxWait and misses the 3:1 share', () => {
    expect(fc.check(maxWaitProperty(hpf), {numRuns: 30}).failed).toBe(true)
    expect(fc.check(shareProperty(hpf, anyLengths), {numRuns: 30}).failed).toBe(true)
  })

  it('dispatch-count fairness misses the 3:1 slot-time share with 1 s versus 10 s items', () => {
    expect(fc.check(shareProperty(countFair, shortVersusLong), {numRuns: 30}).failed).toBe(true)
  })

  it("letting urgency pick the Group moves the Coordinator's share", () => {
    expect(fc.check(urgencyProperty(urgencyLeak), {numRuns: 30}).failed).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------
// Decisions, step by step

const item = (groupId: string, workItemId: string, extra: Partial<QueuedItem> = {}): QueuedItem => ({
  groupId,
  workItemId,
  estimateMs: 1000,
  enqueuedAt: 0,
  eligible: true,
  preemptible: false,
  ...extra,
})

function drain(s: Scheduler, now: number): string[] {
  const order: string[] = []
  for (let d = s.dispatch(now); d !== null; d = s.dispatch(now)) {
    order.push(d.workItemId)
    s.release(d.groupId, d.workItemId, d.estimateMs!, now, false)
  }
  return order
}

describe('Scheduler: order within a Group', () => {
  it('orders by deadline, then requested urgency, then FIFO, then WorkItem ID', () => {
    const s = new Scheduler({slots: 1, maxWaitMs: 1e9})
    s.setGroup('g', {weight: 1, priorityClass: 0})
    s.upsert(item('g', 'late-critical', {deadline: 9000, urgency: 'critical'}), 0)
    s.upsert(item('g', 'fifo-2', {enqueuedAt: 2}), 0)
    s.upsert(item('g', 'early', {deadline: 5000, urgency: 'routine'}), 0)
    s.upsert(item('g', 'fifo-1b', {enqueuedAt: 1}), 0)
    s.upsert(item('g', 'fifo-1a', {enqueuedAt: 1}), 0)
    s.upsert(item('g', 'high', {enqueuedAt: 3, urgency: 'high'}), 0)
    s.upsert(item('g', 'routine', {urgency: 'routine'}), 0)
    expect(drain(s, 0)).toEqual(['early', 'late-critical', 'high', 'fifo-1a', 'fifo-1b', 'fifo-2', 'routine'])
  })

  it('an updated deadline reorders the queued item; remove takes it out', () => {
    const s = new Scheduler({slots: 1, maxWaitMs: 1e9})
    s.setGroup('g', {weight: 1, priorityClass: 0})
    s.upsert(item('g', 'a'), 0)
    s.upsert(item('g', 'b', {enqueuedAt: 1}), 0)
    s.upsert(item('g', 'c', {enqueuedAt: 2}), 0)
    s.upsert(item('g', 'c', {enqueuedAt: 2, deadline: 10}), 0)
    s.remove('g', 'a')
    expect(drain(s, 0)).toEqual(['c', 'b'])
  })
})

describe('Scheduler: an idle Group earns no credit', () => {
  it('a Group that was idle re-enters at virtual time and alternates with the busy one, instead of taking every slot', () => {
    const s = new Scheduler({slots: 1, maxWaitMs: 1e9})
    s.setGroup('A', {weight: 1, priorityClass: 0})
    s.setGroup('B', {weight: 1, priorityClass: 0})
    let t = 0
    for (let n = 0; n < 100; n++, t += 1000) {
      s.upsert(item('A', `a${String(n).padStart(3, '0')}`, {enqueuedAt: t}), t)
      const d = s.dispatch(t)!
      s.release(d.groupId, d.workItemId, 1000, t + 1000, false)
    }
    for (let n = 0; n < 4; n++) {
      s.upsert(item('A', `late-a${n}`, {enqueuedAt: t}), t)
      s.upsert(item('B', `b${n}`, {enqueuedAt: t}), t)
    }
    const groups: string[] = []
    for (let n = 0; n < 6; n++, t += 1000) {
      const d = s.dispatch(t)!
      groups.push(d.groupId)
      s.release(d.groupId, d.workItemId, 1000, t + 1000, false)
    }
    expect(groups).toEqual(['B', 'A', 'B', 'A', 'B', 'A'])
  })
})

describe('Scheduler: policy changes', () => {
  /** Two Groups served one item each; A would go next on the Group-ID tie. */
  function servedOnce(): Scheduler {
    const s = new Scheduler({slots: 1, maxWaitMs: 1e9})
    s.setGroup('A', {weight: 1, priorityClass: 0})
    s.setGroup('B', {weight: 1, priorityClass: 0})
    for (const g of ['A', 'B']) for (const n of [1, 2]) s.upsert(item(g, `${g}${n}`), 0)
    for (const t of [0, 1000]) {
      const d = s.dispatch(t)!
      s.release(d.groupId, d.workItemId, 1000, t + 1000, false)
    }
    return s
  }

  it('a priority-class change reorders queued work at the next decision', () => {
    expect(servedOnce().dispatch(2000)?.groupId).toBe('A')
    const raised = servedOnce()
    raised.setGroup('B', {weight: 1, priorityClass: 3})
    expect(raised.dispatch(2000)?.groupId).toBe('B')
  })

  it('a weight change reorders at the next decision too', () => {
    const raised = servedOnce()
    raised.setGroup('B', {weight: 4, priorityClass: 0})
    expect(raised.dispatch(2000)?.groupId).toBe('B')
  })

  it('rejects a class above the policy maximum, a zero weight and a fractional quota', () => {
    const s = new Scheduler({slots: 1, maxWaitMs: 1, maxPriorityClass: 2})
    expect(() => s.setGroup('g', {weight: 1, priorityClass: 3})).toThrow(RangeError)
    expect(() => s.setGroup('g', {weight: 0, priorityClass: 0})).toThrow(RangeError)
    expect(() => s.setGroup('g', {weight: 1, priorityClass: 0, quota: 1.5})).toThrow(RangeError)
    expect(() => s.upsert(item('unknown', 'x'), 0)).toThrow(/unknown group/)
    s.setGroup('g', {weight: 1, priorityClass: 2})
    // Not a requestedUrgency of work-contract.schema.json (and an Object.prototype key).
    expect(() => s.upsert(item('g', 'x', {urgency: 'constructor' as Urgency}), 0)).toThrow(/unknown urgency/)
  })
})

describe('Scheduler: cooperative preemption (F7)', () => {
  function busy(preemptible: boolean): Scheduler {
    const s = new Scheduler({slots: 1, maxWaitMs: 5000})
    s.setGroup('A', {weight: 1, priorityClass: 3})
    s.setGroup('B', {weight: 1, priorityClass: 0})
    s.upsert(item('A', 'long', {estimateMs: 100_000, preemptible}), 0)
    expect(s.dispatch(0)?.workItemId).toBe('long')
    s.upsert(item('B', 'urgent', {enqueuedAt: 1000}), 1000)
    return s
  }

  it('asks the preemptible running item to checkpoint once the waiting Group is overdue; the overdue item takes the freed slot', () => {
    const s = busy(true)
    expect(s.preemption(1000)).toBeNull()
    expect(s.nextOverdueAt()).toBe(6000)
    expect(s.preemption(5999)).toBeNull()
    expect(s.preemption(6000)).toEqual({groupId: 'A', workItemId: 'long'})
    expect(s.preemption(6100)).toBeNull() // pending: asked once
    expect(s.dispatch(6100)).toBeNull() // the slot is still held until the checkpoint
    s.release('A', 'long', 6500, 6500, true) // safe checkpoint, then requeue
    expect(s.dispatch(6500)?.workItemId).toBe('urgent')
    expect(s.dispatch(6500)).toBeNull()
    s.release('B', 'urgent', 1000, 7500, false)
    expect(s.dispatch(7500)?.workItemId).toBe('long') // the paused item resumes
  })

  it('never chooses a non-preemptible item', () => {
    const s = busy(false)
    expect(s.preemption(6000)).toBeNull()
    expect(s.preemption(60_000)).toBeNull()
  })

  it('does not preempt for an overdue Group that could not start anything without its resources', () => {
    const s = new Scheduler({slots: 1, maxWaitMs: 5000})
    s.setGroup('A', {weight: 1, priorityClass: 3})
    s.setGroup('B', {weight: 1, priorityClass: 0})
    s.upsert(item('A', 'long', {estimateMs: 100_000, preemptible: true}), 0)
    s.dispatch(0)
    s.upsert(item('B', 'needs-gpu', {resources: ['gpu']}), 0)
    expect(s.preemption(10_000, new Set())).toBeNull()
    expect(s.preemption(10_000, new Set(['gpu']))).toEqual({groupId: 'A', workItemId: 'long'})
  })

  it('with preemptLagMs, a Group far under its share gets a slot from the one far over it', () => {
    const s = new Scheduler({slots: 1, maxWaitMs: 1e9, preemptLagMs: 10_000})
    s.setGroup('A', {weight: 1, priorityClass: 0})
    s.setGroup('B', {weight: 1, priorityClass: 0})
    s.upsert(item('A', 'big', {estimateMs: 60_000, preemptible: true}), 0)
    s.dispatch(0)
    s.upsert(item('B', 'small'), 0)
    expect(s.preemption(1)).toEqual({groupId: 'A', workItemId: 'big'})
  })
})

describe('Scheduler: schedule disclosure (F3)', () => {
  function loaded(otherPrefix: string): Scheduler {
    const s = new Scheduler({slots: 2, maxWaitMs: 60_000})
    s.setGroup('own', {weight: 1, priorityClass: 0})
    for (const n of [1, 2, 3]) s.setGroup(`${otherPrefix}-group-${n}`, {weight: n, priorityClass: 1})
    for (const n of [1, 2, 3])
      for (const k of [1, 2, 3, 4])
        s.upsert(item(`${otherPrefix}-group-${n}`, `${otherPrefix}-item-${n}-${k}`, {estimateMs: 4000 * k}), 0)
    for (const k of [1, 2, 3]) s.upsert(item('own', `mine-${k}`, {estimateMs: 2000, enqueuedAt: k}), 0)
    s.dispatch(0)
    s.dispatch(0)
    return s
  }

  it("carries only the item's own figures: a canary in every other Group's IDs never appears", () => {
    const s = loaded('CANARY')
    const d = s.disclosure('own', 'mine-3', 500)!
    expect(Object.keys(d).sort()).toEqual(
      [
        'calculatedAt',
        'capacityStatus',
        'confidence',
        'estimatedCompletion',
        'estimatedStart',
        'groupId',
        'startWindow',
        'workItemId',
      ].sort(),
    )
    expect(JSON.stringify(d)).not.toMatch(/canary/i)
    expect(d.groupId).toBe('own')
    expect(d.workItemId).toBe('mine-3')
    expect(d.calculatedAt).toBe(500)
    expect(d.startWindow.earliest).toBeLessThanOrEqual(d.estimatedStart)
    expect(d.estimatedStart).toBeLessThanOrEqual(d.startWindow.latest)
    expect(d.estimatedCompletion).toBeGreaterThan(d.estimatedStart)
    expect(d.confidence).toBeGreaterThanOrEqual(0)
    expect(d.confidence).toBeLessThanOrEqual(1)
    // The figures do not depend on who the other Groups are, only on aggregate load.
    expect(loaded('other').disclosure('own', 'mine-3', 500)).toEqual(d)
  })

  it('the disclosed start window holds the real start when estimates are exact and the load stays (200 workloads)', () => {
    fc.assert(
      fc.property(
        fc.record({
          slots: fc.integer({min: 1, max: 4}),
          own: fc.integer({min: 1, max: 4}),
          other: fc.integer({min: 1, max: 4}),
          lenS: fc.integer({min: 1, max: 5}),
          mine: fc.integer({min: 1, max: 6}),
          pick: fc.integer({min: 0, max: 5}),
          started: fc.boolean(),
        }),
        (w) => {
          const s = new Scheduler({slots: w.slots, maxWaitMs: 1e9})
          s.setGroup('own', {weight: w.own, priorityClass: 0})
          s.setGroup('x', {weight: w.other, priorityClass: 0})
          const len = w.lenS * S
          for (let n = 0; n < 100; n++) s.upsert(item('x', `x${String(n).padStart(3, '0')}`, {estimateMs: len}), 0)
          for (let n = 0; n < w.mine; n++) s.upsert(item('own', `m${n}`, {estimateMs: len, enqueuedAt: n}), 0)
          const target = `m${Math.min(w.pick, w.mine - 1)}`
          const running: {groupId: string; workItemId: string; end: number}[] = []
          let start: number | undefined
          const fill = (t: number) => {
            for (let d = s.dispatch(t); d !== null; d = s.dispatch(t)) {
              running.push({groupId: d.groupId, workItemId: d.workItemId, end: t + d.estimateMs!})
              if (d.workItemId === target) start = t
            }
          }
          // Disclosed before anything runs, or after the first round of dispatches.
          if (w.started) fill(0)
          if (start !== undefined) return true
          const d = s.disclosure('own', target, 0)!
          for (let t = 0; start === undefined; t = Math.min(...running.map((r) => r.end))) {
            for (const r of running.filter((r) => r.end <= t)) {
              s.release(r.groupId, r.workItemId, len, t, false)
              running.splice(running.indexOf(r), 1)
            }
            fill(t)
          }
          return d.startWindow.earliest <= start && start <= d.startWindow.latest
        },
      ),
      {numRuns: 200},
    )
  })

  it('reports a free slot as available, queued work as queued and a gated item as blocked', () => {
    const s = new Scheduler({slots: 2, maxWaitMs: 60_000})
    s.setGroup('g', {weight: 1, priorityClass: 0})
    s.upsert(item('g', 'first', {estimateMs: 3000}), 0)
    s.upsert(item('g', 'second', {estimateMs: 3000, enqueuedAt: 1}), 0)
    s.upsert(item('g', 'gated', {eligible: false, enqueuedAt: 2}), 0)
    const first = s.disclosure('g', 'first', 0)!
    expect(first.capacityStatus).toBe('available')
    expect(first.estimatedStart).toBe(0)
    expect(first.estimatedCompletion).toBe(3000)
    expect(s.disclosure('g', 'second', 0)!.capacityStatus).toBe('queued')
    expect(s.disclosure('g', 'gated', 0)!.capacityStatus).toBe('blocked')
    expect(s.disclosure('g', 'nope', 0)).toBeNull()
  })
})
