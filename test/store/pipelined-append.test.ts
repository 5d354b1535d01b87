// GroupLog.append with `expectedHeadEventId` (pipelined appends, src/authority/ingress/append-pipeline.ts)
// on both stores: an append decided on the Events of an earlier append still in flight commits
// only on exactly those Events — in the same group-commit batch as the earlier append, in a later
// one, or never when the earlier append was refused, even if other Events end at the same sequence.

import {createHash, randomUUID} from 'node:crypto'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Receipt, StoredEvent} from '../../src/store/group-log.js'
import {initStore, openStore, type Store} from '../../src/store/index.js'
import {storeBackends} from '../support/store-backends.js'
import {storeConfig as config} from '../support/store-config.js'

const ACTOR = 'https://org.example/people/alice'
const newGroup = () => `urn:missionweaveprotocol:group:${randomUUID()}`

interface Append {
  events: StoredEvent[]
  receipt: Receipt
}

/** One Command's append of `count` Events after `head`. */
function append(groupId: string, head: number, count = 1, actionId = `urn:uuid:${randomUUID()}`): Append {
  const events = Array.from({length: count}, (_, i) => {
    const eventId = `urn:uuid:${randomUUID()}`
    const sequence = head + 1 + i
    return {
      eventId,
      kind: 'message.posted',
      sequence,
      aggregateRevision: sequence,
      bytes: Buffer.from(JSON.stringify({eventId, groupId, sequence})),
    }
  })
  const receipt: Receipt = {
    actorId: ACTOR,
    actionId,
    contentHash: `sha256:${createHash('sha256').update(actionId).digest('hex')}`,
    groupId,
    firstSequence: head + 1,
    lastSequence: head + count,
    document: JSON.stringify({actionId, firstSequence: head + 1, lastSequence: head + count}),
  }
  return {events, receipt}
}
const lastId = (a: Append) => a.events[a.events.length - 1]!.eventId

const backends = storeBackends('store pipelined append')

describe.each(backends.filter((b) => b.enabled))('pipelined append: $name', (backend) => {
  let store: Store
  beforeAll(async () => {
    await backend.start()
    const url = await backend.fresh()
    await initStore(url, config)
    store = await openStore(url)
  }, 120_000)
  afterAll(async () => {
    await store?.close()
    await backend.stop()
  }, 60_000)

  const ids = async (g: string) => (await store.read(g, 0, 100)).events.map((e) => e.eventId)

  it('appends handed over together, each on the one before, commit in order', async () => {
    const g = newGroup()
    const a = append(g, 0, 2)
    const b = append(g, 2)
    const c = append(g, 3, 3)
    // Not awaited one by one: the three reach the store's group commit together.
    const outcomes = await Promise.all([
      store.append(g, 0, a.events, a.receipt),
      store.append(g, 2, b.events, b.receipt, lastId(a)),
      store.append(g, 3, c.events, c.receipt, lastId(b)),
    ])
    expect(outcomes).toEqual([
      {status: 'appended', firstSequence: 1, lastSequence: 2},
      {status: 'appended', firstSequence: 3, lastSequence: 3},
      {status: 'appended', firstSequence: 4, lastSequence: 6},
    ])
    expect(await ids(g)).toEqual([...a.events, ...b.events, ...c.events].map((e) => e.eventId))
    expect(await store.head(g)).toEqual({sequence: 6, revision: 6})
  })

  it('an append on a committed head names that head: the right Event ID commits, another is head-moved', async () => {
    const g = newGroup()
    const a = append(g, 0)
    expect((await store.append(g, 0, a.events, a.receipt)).status).toBe('appended')
    const wrong = append(g, 1)
    expect(await store.append(g, 1, wrong.events, wrong.receipt, `urn:uuid:${randomUUID()}`)).toEqual({
      status: 'head-moved',
      head: 1,
    })
    expect(await store.receipt(ACTOR, wrong.receipt.actionId)).toBeNull()
    const right = append(g, 1)
    expect(await store.append(g, 1, right.events, right.receipt, lastId(a))).toEqual({
      status: 'appended',
      firstSequence: 2,
      lastSequence: 2,
    })
    expect(await ids(g)).toEqual([lastId(a), lastId(right)])
  })

  it('a refused append takes every append decided on it down, even when other Events end at the same sequence', async () => {
    const g = newGroup()
    // Another writer's Event is at sequence 1.
    const other = append(g, 0)
    expect((await store.append(g, 0, other.events, other.receipt)).status).toBe('appended')
    // This writer decided A on the empty Group, and B on A: A is refused, so B must be too —
    // B's expected head (1) is the head, but sequence 1 is not A's Event.
    const a = append(g, 0)
    const b = append(g, 1)
    const [ra, rb] = await Promise.all([
      store.append(g, 0, a.events, a.receipt),
      store.append(g, 1, b.events, b.receipt, lastId(a)),
    ])
    expect(ra).toEqual({status: 'head-moved', head: 1})
    expect(rb).toEqual({status: 'head-moved', head: 1})
    expect(await ids(g)).toEqual([lastId(other)])
    expect(await store.receipt(ACTOR, b.receipt.actionId)).toBeNull()
    expect(await store.head(g)).toEqual({sequence: 1, revision: 1})
  })

  it('a duplicate in the chain (the retry of an accepted Command) takes the appends decided on it down', async () => {
    const g = newGroup()
    const first = append(g, 0, 1, 'urn:uuid:00000000-0000-4000-8000-00000000d001')
    expect((await store.append(g, 0, first.events, first.receipt)).status).toBe('appended')
    // A retry decided as if new (same Action ID and content, new Events), and B decided on it.
    const retry = append(g, 1, 1, first.receipt.actionId)
    const b = append(g, 2)
    const [rr, rb] = await Promise.all([
      store.append(g, 1, retry.events, retry.receipt, lastId(first)),
      store.append(g, 2, b.events, b.receipt, lastId(retry)),
    ])
    expect(rr).toEqual({status: 'duplicate', receipt: first.receipt})
    expect(rb).toEqual({status: 'head-moved', head: 1})
    expect(await ids(g)).toEqual([lastId(first)])
  })

  it('expectedHeadEventId needs a head to name: on an empty Group it is invalid', async () => {
    const g = newGroup()
    const a = append(g, 0)
    expect((await store.append(g, 0, a.events, a.receipt, `urn:uuid:${randomUUID()}`)).status).toBe('invalid')
    expect(await store.head(g)).toBeNull()
  })
})
