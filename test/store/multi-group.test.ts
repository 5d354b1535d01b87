// The multi-Group atomic append (store contract addition for spec §12/§14 ancestry updates), on
// both adapters: all Groups' Events, heads and the one receipt commit together or not at all; a
// moved head in any one Group leaves every Group unchanged; idempotent retry; concurrent
// multi-Group appends over overlapping Groups never deadlock (sorted lock order).

import {createHash, randomUUID} from 'node:crypto'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Receipt, StoredEvent} from '../../src/store/group-log.js'
import {initStore, openStore, type Store} from '../../src/store/index.js'
import type {GroupAppend} from '../../src/store/multi-append.js'
import {storeBackends} from '../support/store-backends.js'
import {storeConfig as config} from '../support/store-config.js'

const ACTOR = 'https://org.example/agents/coordinator'
const newGroup = () => `urn:missionweaveprotocol:group:${randomUUID()}`

function event(groupId: string, sequence: number, eventId = `urn:uuid:${randomUUID()}`): StoredEvent {
  const doc = {
    eventId,
    groupId,
    sequence,
    aggregateRevision: sequence,
    kind: 'work.blocked',
    payload: {note: `event ${sequence} of ${groupId}`},
  }
  return {
    eventId,
    kind: 'work.blocked',
    sequence,
    aggregateRevision: sequence,
    bytes: Buffer.from(JSON.stringify(doc, null, 1) + '\n'),
  }
}

/** `count` Events for `groupId` after `head`. */
const part = (groupId: string, head: number, count = 1): GroupAppend => ({
  groupId,
  expectedHead: head,
  events: Array.from({length: count}, (_, i) => event(groupId, head + 1 + i)),
})

function receiptFor(own: GroupAppend, actionId = `urn:uuid:${randomUUID()}`, content = actionId): Receipt {
  const firstSequence = own.expectedHead + 1
  const lastSequence = own.expectedHead + own.events.length
  return {
    actorId: ACTOR,
    actionId,
    contentHash: `sha256:${createHash('sha256').update(content).digest('hex')}`,
    groupId: own.groupId,
    firstSequence,
    lastSequence,
    document: JSON.stringify({actionId, groupId: own.groupId, firstSequence, lastSequence}),
  }
}

const backends = storeBackends('store multi-group append')

describe.each(backends.filter((b) => b.enabled))('multi-Group append: $name', (backend) => {
  const open: Store[] = []
  let url: string
  let store: Store
  beforeAll(async () => {
    await backend.start()
    url = await backend.fresh()
    await initStore(url, config)
    store = await openStore(url)
    open.push(store)
  }, 120_000)
  afterAll(async () => {
    for (const s of open) await s.close()
    await backend.stop()
  })

  async function counts() {
    const raw = backend.raw(url)
    try {
      return {
        events: await raw.count('group_events'),
        receipts: await raw.count('receipts'),
        groups: await raw.count('groups'),
      }
    } finally {
      await raw.close()
    }
  }

  /** A Group with `n` Events already appended through the single-Group path. */
  async function seeded(n: number): Promise<string> {
    const g = newGroup()
    const p = part(g, 0, n)
    expect((await store.append(g, 0, p.events, receiptFor(p))).status).toBe('appended')
    return g
  }

  it('appends to a new Group and two existing Groups atomically with one receipt', async () => {
    const [parent, grand] = [await seeded(2), await seeded(5)]
    const child = newGroup()
    const own = part(parent, 2, 2)
    const appends = [own, part(child, 0, 2), part(grand, 5)]
    const receipt = receiptFor(own)
    const outcome = await store.appendGroups(appends, receipt)
    expect(outcome).toEqual({status: 'appended', firstSequence: 3, lastSequence: 4})
    expect(await store.head(parent)).toEqual({sequence: 4, revision: 4})
    expect(await store.head(child)).toEqual({sequence: 2, revision: 2})
    expect(await store.head(grand)).toEqual({sequence: 6, revision: 6})
    for (const a of appends) {
      const page = await store.read(a.groupId, a.expectedHead, 10)
      expect(page.events.map((e) => Buffer.from(e.bytes).toString())).toEqual(
        a.events.map((e) => Buffer.from(e.bytes).toString()),
      )
    }
    expect(await store.receipt(ACTOR, receipt.actionId)).toEqual(receipt)
  })

  it('a retry returns the original receipt; the same Action ID with other content collides; nothing is appended twice', async () => {
    const [a, b] = [await seeded(1), await seeded(1)]
    const own = part(a, 1)
    const receipt = receiptFor(own, `urn:uuid:${randomUUID()}`, 'content-1')
    expect((await store.appendGroups([own, part(b, 1)], receipt)).status).toBe('appended')
    const before = await counts()
    // The retry is sequenced after the heads it saw before: the receipt answers first.
    expect(await store.appendGroups([own, part(b, 1)], receipt)).toEqual({status: 'duplicate', receipt})
    expect(
      await store.appendGroups([part(a, 2), part(b, 2)], {...receiptFor(part(a, 2), receipt.actionId, 'content-2')}),
    ).toEqual({status: 'action-id-collision'})
    expect(await counts()).toEqual(before)
  })

  it('a moved head in one Group leaves every Group unchanged (head-moved names that Group)', async () => {
    const [a, b, c] = [await seeded(1), await seeded(3), await seeded(2)]
    const fresh = newGroup()
    const before = await counts()
    const own = part(a, 1)
    // b's head is 3, not 2.
    const outcome = await store.appendGroups([own, part(b, 2), part(c, 2), part(fresh, 0)], receiptFor(own))
    expect(outcome).toEqual({status: 'head-moved', head: 3, groupId: b})
    expect(await counts()).toEqual(before)
    expect(await store.head(a)).toEqual({sequence: 1, revision: 1})
    expect(await store.head(c)).toEqual({sequence: 2, revision: 2})
    expect(await store.head(fresh)).toBeNull()
  })

  it('Policy Log rows of the Events ride in the same transaction (and not at all when refused)', async () => {
    const [a, b] = [await seeded(1), await seeded(1)]
    const grantId = `urn:uuid:${randomUUID()}`
    const consumed = {
      ...event(b, 2),
      policyRecord: {grantId, action: 'consumed' as const, record: JSON.stringify({grantId})},
    }
    const own = part(a, 1)
    // Refused (a's head is 1, not 0): no Policy Log row either.
    expect(
      (
        await store.appendGroups(
          [
            {...own, expectedHead: 0, events: [{...own.events[0]!, sequence: 1}]},
            {groupId: b, expectedHead: 1, events: [consumed]},
          ],
          {...receiptFor(own), firstSequence: 1, lastSequence: 1},
        )
      ).status,
    ).toBe('head-moved')
    expect(await store.policyLog(b)).toEqual([])
    expect(
      (await store.appendGroups([own, {groupId: b, expectedHead: 1, events: [consumed]}], receiptFor(own))).status,
    ).toBe('appended')
    expect(await store.policyLog(b)).toEqual([
      {
        groupId: b,
        sequence: 2,
        eventId: consumed.eventId,
        grantId,
        action: 'consumed',
        record: JSON.stringify({grantId}),
      },
    ])
  })

  it('an Event ID already in the log (in any Group) refuses the whole append', async () => {
    const a = await seeded(1)
    const taken = (await store.read(a, 0, 1)).events[0]!.eventId
    const b = await seeded(1)
    const own = part(b, 1)
    const before = await counts()
    const outcome = await store.appendGroups(
      [own, {groupId: a, expectedHead: 1, events: [event(a, 2, taken)]}],
      receiptFor(own),
    )
    expect(outcome).toEqual({status: 'duplicate-event-id', eventId: taken})
    expect(await counts()).toEqual(before)
  })

  it('malformed requests are refused before any write', async () => {
    const [a, b] = [await seeded(1), await seeded(1)]
    const before = await counts()
    const own = part(a, 1)
    expect((await store.appendGroups([], receiptFor(own))).status).toBe('invalid')
    expect((await store.appendGroups([part(b, 1)], receiptFor(own))).status).toBe('invalid') // receipt's Group untouched
    expect((await store.appendGroups([own, part(a, 1)], receiptFor(own))).status).toBe('invalid') // a Group twice
    const skewed: GroupAppend = {groupId: b, expectedHead: 1, events: [event(b, 3)]}
    expect((await store.appendGroups([own, skewed], receiptFor(own))).status).toBe('sequence-mismatch')
    const shared = event(b, 2)
    const dup: GroupAppend = {groupId: a, expectedHead: 1, events: [{...shared, sequence: 2}]}
    expect(
      (await store.appendGroups([dup, {groupId: b, expectedHead: 1, events: [shared]}], receiptFor(dup))).status,
    ).toBe('duplicate-event-id')
    expect(await counts()).toEqual(before)
  })

  it('concurrent multi-Group appends over overlapping Groups (in both orders) and single appends all land, without deadlock', async () => {
    const groups = [await seeded(1), await seeded(1), await seeded(1)]
    // Each writer appends one Event to its Groups, re-reading heads after a head-moved refusal.
    const writer = async (ids: string[]) => {
      for (let attempt = 0; attempt < 50; attempt++) {
        const appends = await Promise.all(ids.map(async (g) => part(g, (await store.head(g))!.sequence)))
        const outcome =
          ids.length === 1
            ? await store.append(ids[0]!, appends[0]!.expectedHead, appends[0]!.events, receiptFor(appends[0]!))
            : await store.appendGroups(appends, receiptFor(appends[0]!))
        if (outcome.status === 'appended') return 'appended'
        if (outcome.status !== 'head-moved') return outcome.status
      }
      return 'gave-up'
    }
    const [x, y, z] = groups as [string, string, string]
    const plan = [[x, y], [y, x], [z, y, x], [x], [y, z], [z, x], [y], [x, z, y]]
    const results = await Promise.all(plan.map(writer))
    expect(results).toEqual(plan.map(() => 'appended'))
    // Every Group's head counts exactly the writers that touched it (each appended one Event).
    for (const g of groups) {
      const touched = plan.filter((p) => p.includes(g)).length
      expect((await store.head(g))!.sequence).toBe(1 + touched)
      const page = await store.read(g, 0, 100)
      expect(page.events.map((e) => e.sequence)).toEqual(Array.from({length: 1 + touched}, (_, i) => i + 1))
    }
  }, 30_000)
})
