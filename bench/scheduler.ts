// The Agent runtime's Scheduler (src/agent/scheduler.ts) in steady state: 10,000 queued
// WorkItems across 100 Groups (mixed weights, priority classes, quotas, deadlines and urgencies)
// on 8 slots. One op = release the oldest running item, enqueue a fresh item in its Group (the
// queue stays at 10,000) and dispatch one: one scheduling decision. MWP_BENCH_ONLY=scheduler.
//
// Baseline, measured in the same run: one push + one pop on a binary min-heap of 10,000 numbers.
// It is the least any scheduler that keeps 10,000 items ordered without sorting per decision has
// to pay for one decision; the Scheduler's decision does a scan of the 100 Groups plus heap
// operations on its Group's (smaller) queue, on records rather than numbers.

import {type QueuedItem, Scheduler, URGENCIES} from '../src/agent/scheduler.js'
import {type Figure, fmt, measure} from './measure.js'

const GROUPS = 100
const PER_GROUP = 100
const SLOTS = 8

/** Deterministic pseudo-random sequence (the bench needs varied, repeatable input, not entropy). */
function lcg(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 4294967296
  }
}

function schedulerOp(): () => void {
  const rnd = lcg(7)
  const scheduler = new Scheduler({slots: SLOTS, maxWaitMs: 60_000, maxPriorityClass: 3, preemptLagMs: 120_000})
  const groupIds = Array.from({length: GROUPS}, (_, g) => `group-${String(g).padStart(3, '0')}`)
  for (const [g, id] of groupIds.entries())
    scheduler.setGroup(id, {weight: 1 + (g % 5), priorityClass: g % 4, quota: g % 7 === 0 ? 2 : undefined})
  let now = 0
  let serial = 0
  const fresh = (groupId: string): QueuedItem => ({
    groupId,
    workItemId: `wi-${serial++}`,
    estimateMs: 500 + Math.floor(rnd() * 20_000),
    enqueuedAt: now,
    deadline: rnd() < 0.3 ? now + Math.floor(rnd() * 600_000) : undefined,
    urgency: URGENCIES[Math.floor(rnd() * URGENCIES.length)],
    eligible: true,
    preemptible: rnd() < 0.5,
  })
  for (const id of groupIds) for (let k = 0; k < PER_GROUP; k++) scheduler.upsert(fresh(id), now)
  const running: QueuedItem[] = []
  for (let d = scheduler.dispatch(now); d !== null; d = scheduler.dispatch(now)) running.push(d)
  return () => {
    const done = running.shift()!
    now += 1 + Math.floor(rnd() * 2000)
    scheduler.release(done.groupId, done.workItemId, done.estimateMs! * (0.5 + rnd()), now, false)
    scheduler.upsert(fresh(done.groupId), now)
    const next = scheduler.dispatch(now)
    if (next === null) throw new Error('the bench workload left a slot idle')
    running.push(next)
  }
}

function heapOp(): () => void {
  const rnd = lcg(11)
  const heap: number[] = []
  const push = (v: number) => {
    let i = heap.push(v) - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (heap[p] <= heap[i]) break
      ;[heap[p], heap[i]] = [heap[i], heap[p]]
      i = p
    }
  }
  const pop = () => {
    const top = heap[0]
    const last = heap.pop()!
    if (heap.length > 0) {
      heap[0] = last
      for (let i = 0; ;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < heap.length && heap[l] < heap[m]) m = l
        if (r < heap.length && heap[r] < heap[m]) m = r
        if (m === i) break
        ;[heap[m], heap[i]] = [heap[i], heap[m]]
        i = m
      }
    }
    return top
  }
  for (let k = 0; k < GROUPS * PER_GROUP; k++) push(rnd())
  let floor = 0
  return () => {
    floor = pop()
    push(floor + rnd())
  }
}

export function runSchedulerBench(): {ours: Figure; base: Figure} {
  const ours = measure(`scheduler decision, ${fmt(GROUPS * PER_GROUP)} queued / ${GROUPS} Groups`, schedulerOp())
  const base = measure(`binary-heap push+pop, ${fmt(GROUPS * PER_GROUP)} numbers`, heapOp())
  console.log(`mwp bench: Agent Scheduler, ${SLOTS} slots, node ${process.version}, one core\n`)
  for (const f of [ours, base])
    console.log(
      `${f.name.padEnd(52)} ${fmt(f.opsPerSec).padStart(10)} /s   p50 ${f.p50us.toFixed(2).padStart(7)} µs   p99 ${f.p99us.toFixed(2).padStart(7)} µs`,
    )
  const ratio = ours.opsPerSec / base.opsPerSec
  console.log(
    `\ntarget: well over 50,000 decisions/s → ${fmt(ours.opsPerSec)}/s (${(ratio * 100).toFixed(0)}% of the heap primitive): ${ours.opsPerSec >= 50_000 ? 'met' : 'NOT met'}`,
  )
  console.log(JSON.stringify({bench: 'scheduler', results: [{id: 'decision', ours, baseline: base, ratio}]}))
  return {ours, base}
}
