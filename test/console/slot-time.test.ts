// SlotTime (src/console/slot-time.ts): an Execution Lease occupies its holder's slot from its issue
// until the Event that ends it or its expiry, counted over a rolling window on an injected clock.

import {describe, expect, it} from 'vitest'
import type {ExecutionLeaseView} from '../../src/authority/model/state.js'
import {SlotTime} from '../../src/console/slot-time.js'

const T0 = Date.parse('2026-12-04T12:00:00Z')
const at = (s: number) => new Date(T0 + s * 1000).toISOString()
const lease = (id: string, agent: string, issuedS: number, expiresS?: number): ExecutionLeaseView => ({
  leaseId: id,
  holderAgentId: agent,
  sessionEpoch: 1,
  ownershipEpoch: 1,
  issuedAt: at(issuedS),
  state: 'active',
  ...(expiresS !== undefined ? {expiresAt: at(expiresS)} : {}),
})
const released = (l: ExecutionLeaseView): ExecutionLeaseView => ({...l, state: 'released'})

function clock(startS: number) {
  let now = T0 + startS * 1000
  return {now: () => now, set: (s: number) => (now = T0 + s * 1000)}
}

describe('SlotTime', () => {
  it('counts each lease from its issue to the Event that ends it, per Agent and Group, and an open one until now', () => {
    const c = clock(0)
    const t = new SlotTime({now: c.now, windowMs: 600_000})
    const a = lease('l1', 'w1', 0)
    t.note('g1', 'i1', a, at(0), 'work.started')
    t.note('g1', 'i1', released(a), at(30), 'work.submitted')
    const b = lease('l2', 'w1', 10)
    t.note('g2', 'i2', b, at(10), 'work.started')
    c.set(40)
    const w1 = t.byAgent().get('w1')!
    expect(w1.groups.get('g1')).toEqual({ms: 30_000, checkpointed: 0, expired: 0})
    expect(w1.groups.get('g2')).toEqual({ms: 30_000, checkpointed: 0, expired: 0}) // open: 10 s … now
    expect(w1.totalMs).toBe(60_000)
  })

  it('clips to the window: a span that ended before it is gone, one that reaches into it counts its part', () => {
    const c = clock(0)
    const t = new SlotTime({now: c.now, windowMs: 60_000})
    const a = lease('l1', 'w1', 0)
    t.note('g1', 'i1', a, at(0), 'work.started')
    t.note('g1', 'i1', released(a), at(100), 'work.submitted')
    const b = lease('l2', 'w1', 110)
    t.note('g1', 'i2', b, at(110), 'work.started')
    t.note('g1', 'i2', released(b), at(120), 'work.submitted')
    c.set(150) // window: 90 … 150
    expect(t.byAgent().get('w1')!.groups.get('g1')!.ms).toBe(10_000 + 10_000)
    c.set(300)
    expect(t.byAgent().size).toBe(0)
  })

  it('counts a run that gave its slot back at a checkpoint, and a lease that expired (ended past its expiry, or past it now)', () => {
    const c = clock(0)
    const t = new SlotTime({now: c.now})
    const a = lease('l1', 'w1', 0, 60)
    t.note('g1', 'i1', a, at(0), 'work.started')
    t.note('g1', 'i1', released(a), at(20), 'work.checkpointed')
    // The same WorkItem resumes under a new lease, which expires at 80 s; the Event that says so comes at 95 s.
    const b = lease('l2', 'w1', 30, 80)
    t.note('g1', 'i1', b, at(30), 'work.started')
    t.note('g1', 'i1', null, at(95), 'work.offered')
    // Another lease, past its expiry now, with no Event yet.
    const d = lease('l3', 'w2', 40, 70)
    t.note('g1', 'i2', d, at(40), 'work.started')
    c.set(100)
    const agents = t.byAgent()
    expect(agents.get('w1')!.groups.get('g1')).toEqual({ms: 20_000 + 50_000, checkpointed: 1, expired: 1})
    expect(agents.get('w2')!.groups.get('g1')).toEqual({ms: 30_000, checkpointed: 0, expired: 1})
  })

  it('a renewal moves the expiry of the open span; an Event that keeps the lease does not end it', () => {
    const c = clock(0)
    const t = new SlotTime({now: c.now})
    const a = lease('l1', 'w1', 0, 30)
    t.note('g1', 'i1', a, at(0), 'work.started')
    t.note('g1', 'i1', {...a, expiresAt: at(90), renewalCount: 1}, at(25), 'ext.missionweaveprotocol.core.lease_renew')
    t.note('g1', 'i1', {...a, expiresAt: at(90)}, at(40), 'work.progress')
    c.set(60)
    expect(t.byAgent().get('w1')!.groups.get('g1')).toEqual({ms: 60_000, checkpointed: 0, expired: 0})
  })

  it('keeps no span that left the window, however many come while nobody reads the view', () => {
    const c = clock(0)
    const t = new SlotTime({now: c.now, windowMs: 1_000})
    for (let i = 0; i < 10_000; i++) {
      c.set(i * 10)
      const l = lease(`l${i}`, 'w1', i * 10)
      t.note('g1', `i${i}`, l, at(i * 10), 'work.started')
      t.note('g1', `i${i}`, released(l), at(i * 10 + 1), 'work.submitted')
    }
    expect(t.retained).toBeLessThanOrEqual(128)
  })
})
