// The Agent's local store (spec §11.1, §16; ACCEPTANCE F1) on real SQLite files, fed real signed
// Events of an in-process Authority: rebuild by replay, a fault at every step of an apply,
// at-least-once delivery out of order, intents exactly once, and Group isolation.

import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {AgentStore, type Intent} from '../../src/agent/local-store.js'
import type {DeliveredEvent} from '../../src/wire/client.js'
import {sqliteSuite} from '../support/authority-helpers.js'
import {AGENT, deliveredEvents, workHistory} from '../support/agent-history.js'
import {mulberry32} from '../../src/poc/faults/prng.js'

const suite = sqliteSuite()
// The property and fault runs open hundreds of stores: on tmpfs when there is one, so fsync is
// cheap; still real files through the same WAL and synchronous=FULL.
const fastRoot = existsSync('/dev/shm') ? '/dev/shm' : tmpdir()
let dir: string
let fastDir: string
let files = 0
const dbPath = (fast = false) => join(fast ? fastDir : dir, `agent-${++files}.db`)

let gA: string
let gB: string
let eventsA: DeliveredEvent[]
let eventsB: DeliveredEvent[]

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-agent-store-'))
  fastDir = mkdtempSync(join(fastRoot, 'mwp-agent-store-'))
  gA = await workHistory(suite.run, () => suite.authority, 'agent-a')
  gB = await workHistory(suite.run, () => suite.authority, 'agent-b')
  eventsA = await deliveredEvents(suite.store, gA)
  eventsB = await deliveredEvents(suite.store, gB)
}, 120_000)
afterAll(() => {
  rmSync(dir, {recursive: true, force: true})
  rmSync(fastDir, {recursive: true, force: true})
})

const intentsOf = (s: AgentStore) => s.pendingIntents().map(({id: _id, ...rest}) => rest)

/** What a store shows after the Events: its queues, Cursors and open intents. */
function observe(s: AgentStore) {
  return {
    dump: s.dumpQueues(),
    cursors: s.groups().map((g) => [g.groupId, g.cursor]),
    inbox: s.groups().map((g) => s.buffered(g.groupId)),
    intents: intentsOf(s),
  }
}

function joined(path: string, hook?: (step: string) => void): AgentStore {
  const s = AgentStore.open(path, {agentId: AGENT, faultHook: hook})
  s.join(gA, 0)
  s.join(gB, 0)
  return s
}

/** A clean store fed `events` in order, once each. */
function oracle(events: DeliveredEvent[]) {
  const s = joined(dbPath(true))
  for (const e of events) s.apply(e)
  const seen = observe(s)
  s.close()
  return seen
}

const removeDb = (path: string) => {
  for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, {force: true})
}

describe('AgentStore (§11.1 per-Group inbox, Cursor and queue; §16 delivery)', () => {
  it('F1: deleting the SQLite, WAL and SHM files and re-applying the same Events rebuilds byte-identical queues', async () => {
    const path = dbPath()
    const first = joined(path)
    for (const e of [...eventsA, ...eventsB])
      expect(first.apply(e)).toEqual({applied: 1, buffered: false, duplicate: false})
    const dump = first.dumpQueues()
    const intents = intentsOf(first)
    expect(existsSync(`${path}-wal`) && existsSync(`${path}-shm`)).toBe(true)
    first.close()
    removeDb(path)

    const rebuilt = joined(path)
    for (const e of [...eventsA, ...eventsB]) rebuilt.apply(e)
    expect(rebuilt.dumpQueues()).toBe(dump)
    expect(intentsOf(rebuilt)).toEqual(intents)
    // The dump says what the history did: the states each WorkItem reached, for this Agent.
    const states = rebuilt.queue(gA).map((e) => [e.state, e.mine])
    expect(states.sort()).toEqual(
      [
        ['verified', true],
        ['queued', true],
        ['blocked', true],
        ['offered', false],
        ['queued', false],
        ['cancelled', true],
        ['cancelled', false],
      ].sort(),
    )
    const checkpointed = rebuilt.queue(gA).find((e) => e.state === 'queued' && e.mine)!
    expect(checkpointed.checkpoint).toMatchObject({progress: 'Drafted the first half.'})
    expect(checkpointed.checkpoint!.hash).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(checkpointed.contract?.deadline).toBe('2027-01-15T00:00:00Z')
    expect(rebuilt.cursor(gA)).toBe(eventsA.length)
    // The projection agrees with the Authority's own fold on what both hold.
    const authoritative = (await suite.authority.current(gA))!.workItems
    for (const e of rebuilt.queue(gA)) {
      const w = authoritative[e.workItemId]!
      expect([e.state, e.revision, e.ownershipEpoch, e.lease?.leaseId ?? null, e.owner?.agentId ?? null]).toEqual([
        w.state,
        w.revision,
        w.ownershipEpoch,
        w.lease?.state === 'active' ? w.lease.leaseId : null,
        w.owner?.agentId ?? null,
      ])
    }
    rebuilt.close()
  })

  it('a Group never shows another Group’s WorkItems', () => {
    const s = joined(dbPath(true))
    for (const e of [...eventsA, ...eventsB]) s.apply(e)
    const a = s.queue(gA)
    const b = s.queue(gB)
    expect(a.length).toBe(7)
    expect(b.length).toBe(7)
    expect(a.every((e) => e.groupId === gA)).toBe(true)
    expect(b.every((e) => e.groupId === gB)).toBe(true)
    const inB = new Set(b.map((e) => e.workItemId))
    expect(a.some((e) => inB.has(e.workItemId))).toBe(false)
    for (const e of a) expect(s.entry(gB, e.workItemId)).toBeNull()
    // A priority class is per Group.
    s.setPriorityClass(gB, 3)
    expect(s.queue(gA).every((e) => e.priorityClass === 0)).toBe(true)
    expect(s.queue(gB).every((e) => e.priorityClass === 3)).toBe(true)
    // An Event of a Group applied to nothing else: B's Cursor did not move while A's Events applied.
    const t = joined(dbPath(true))
    for (const e of eventsA) t.apply(e)
    expect(t.cursor(gB)).toBe(0)
    expect(t.queue(gB)).toEqual([])
    s.close()
    t.close()
  })

  it('a delivered-through marker lets the Cursor pass sequences that were not for this Agent, never a buffered Event or beyond the marker', () => {
    const path = dbPath()
    const s = joined(path)
    const [e1, e2, e3, e4, , e6, , , e9] = eventsA
    for (const e of [e1!, e2!, e3!]) s.apply(e)
    expect(s.apply(e6!)).toEqual({applied: 0, buffered: true, duplicate: false})
    expect(s.apply(e4!).applied).toBe(1)
    expect(s.cursor(gA)).toBe(4)
    // Sequence 5 never comes: the server says it delivered through 8 (5, 7 and 8 filtered).
    expect(s.deliveredThrough(gA, 8)).toBe(1)
    expect(s.cursor(gA)).toBe(8)
    expect(s.buffered(gA)).toEqual([])
    // A marker is durable, and a filtered Event arriving later is a duplicate, not a rewind.
    s.close()
    const again = joined(path)
    expect(again.groups().find((g) => g.groupId === gA)!.deliveredThrough).toBe(8)
    expect(again.apply(eventsA[4]!)).toEqual({applied: 0, buffered: false, duplicate: true})
    // A marker below the Cursor changes nothing; the next Event applies in order.
    expect(again.deliveredThrough(gA, 3)).toBe(0)
    expect(again.apply(e9!)).toEqual({applied: 1, buffered: false, duplicate: false})
    expect(again.cursor(gA)).toBe(9)
    // A marker ahead with nothing buffered moves the Cursor exactly to it.
    expect(again.deliveredThrough(gA, 11)).toBe(0)
    expect(again.cursor(gA)).toBe(11)
    again.close()
  })

  it('intents: an offer naming this Agent gives one evaluate-offer, exactly once with duplicates, after a crash and after a rebuild', () => {
    const path = dbPath()
    const s = joined(path)
    for (const e of eventsA) {
      s.apply(e)
      s.apply(e)
    }
    const byKind = (k: string) => s.pendingIntents().filter((i) => i.groupId === gA && i.kind === k)
    const offered = s.queue(gA).find((e) => e.state === 'offered')!
    expect(byKind('evaluate-offer').map((i) => i.workItemId)).toEqual([offered.workItemId])
    // The other offers were taken (accepted) or withdrawn (cancelled): their evaluate-offer closed.
    const withdrawn = byKind('offer-withdrawn')
    expect(withdrawn.length).toBe(1)
    // This Agent owns a queued (checkpointed) item: one schedule; its revoked lease: one stop.
    expect(byKind('schedule').map((i) => i.workItemId)).toEqual([
      s.queue(gA).find((e) => e.state === 'queued' && e.mine)!.workItemId,
    ])
    const stops = byKind('stop')
    expect(stops.length).toBe(1)
    expect(stops[0]).toMatchObject({payload: {cause: 'work.cancelled', leaseId: expect.stringMatching(/./)}})

    // Resolved intents stay resolved across a re-open (the outbox is durable) …
    const evaluate = byKind('evaluate-offer')[0]!
    s.resolveIntent(evaluate.id)
    s.close()
    const reopened = joined(path)
    for (const e of eventsA) reopened.apply(e)
    expect(reopened.pendingIntents().some((i: Intent) => i.kind === 'evaluate-offer')).toBe(false)
    reopened.close()
    // … and a rebuild re-derives the still-open ones only: the same set a clean run records.
    removeDb(path)
    const rebuilt = joined(path)
    for (const e of eventsA) rebuilt.apply(e)
    expect(intentsOf(rebuilt)).toEqual(oracle(eventsA).intents)
    expect(rebuilt.pendingIntents().filter((i) => i.kind === 'evaluate-offer').length).toBe(1)
    rebuilt.close()
  })

  it('a fault at every step of an apply (and of the drain after it), then re-open and re-delivery, equals a clean run', () => {
    const all = [...eventsA, ...eventsB]
    const want = oracle(all)
    // Scenarios: a contiguous Event, a buffered one (delivered ahead of a gap), and the one closing
    // that gap (its apply and the drain of the buffered Event after it), at several positions.
    const scenarios: {prefix: number; deliver: number[]}[] = []
    for (const at of [0, 12, Math.floor(eventsA.length / 2), eventsA.length - 1]) {
      scenarios.push({prefix: at, deliver: [at]})
      scenarios.push({prefix: at, deliver: [at + 1, at]})
    }
    let faults = 0
    for (const {prefix, deliver} of scenarios) {
      // Count the hook calls of the clean delivery, then throw at each in turn.
      let calls = 0
      const counted = joined(dbPath(true), () => void calls++)
      for (const e of all.slice(0, prefix)) counted.apply(e)
      calls = 0
      for (const i of deliver) counted.apply(all[i]!)
      counted.close()
      const total = calls
      expect(total).toBeGreaterThanOrEqual(8)
      for (let k = 1; k <= total; k++) {
        const path = dbPath(true)
        let armed = false
        let n = 0
        const s = joined(path, (step) => {
          if (armed && ++n === k) throw new Error(`fault at ${step}`)
        })
        for (const e of all.slice(0, prefix)) s.apply(e)
        armed = true
        expect(() => {
          for (const i of deliver) s.apply(all[i]!)
        }).toThrow(/^fault at /)
        s.close()
        faults++
        const again = joined(path)
        for (const e of all.slice(prefix)) again.apply(e)
        expect(observe(again)).toEqual(want)
        again.close()
      }
    }
    expect(faults).toBeGreaterThan(80)
  })

  it('every Event delivered 2–3 times and reordered within a window (200 seeds): same projection; the Cursor never passes a withheld sequence', () => {
    const events = eventsA
    const want = oracle(events)
    for (let seed = 1; seed <= 200; seed++) {
      const rnd = mulberry32(seed)
      const copies = events.flatMap((e, i) =>
        Array.from({length: 2 + Math.floor(rnd() * 2)}, () => ({e, key: i + rnd() * 6})),
      )
      copies.sort((x, y) => x.key - y.key)
      const s = AgentStore.open(dbPath(true), {agentId: AGENT})
      s.join(gA, 0)
      s.join(gB, 0)
      const arrived = new Set<number>()
      for (const {e} of copies) {
        const before = s.cursor(gA)!
        const r = s.apply(e)
        arrived.add(e.sequence)
        let contiguous = 0
        while (arrived.has(contiguous + 1)) contiguous++
        expect(s.cursor(gA)).toBe(contiguous)
        if (e.sequence <= before) expect(r).toEqual({applied: 0, buffered: false, duplicate: true})
        else if (e.sequence > before + 1) expect(r).toEqual({applied: 0, buffered: true, duplicate: false})
        else expect(r).toEqual({applied: contiguous - before, buffered: false, duplicate: false})
        // The inbox holds exactly the arrived sequences beyond the gap.
        expect(s.buffered(gA)).toEqual([...arrived].filter((q) => q > contiguous).sort((x, y) => x - y))
      }
      expect(observe(s)).toEqual(want)
      s.close()
    }
  })
})
