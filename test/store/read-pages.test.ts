// Replay pages bounded by bytes as well as count (GroupLog.read's `maxBytes`; issue #15: a replay
// must never hold a large page of large Events), on both store adapters.

import {createHash, randomUUID} from 'node:crypto'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {StoredEvent} from '../../src/store/group-log.js'
import {StoreError, initStore, openStore, type Store} from '../../src/store/index.js'
import {storeBackends} from '../support/store-backends.js'
import {storeConfig as config} from '../support/store-config.js'

const ACTOR = 'https://org.example/people/alice'

/** An Event of exactly `size` bytes declaring its sequence. */
function event(groupId: string, sequence: number, size: number): StoredEvent {
  const eventId = `urn:uuid:${randomUUID()}`
  const head = JSON.stringify({eventId, groupId, sequence, aggregateRevision: sequence, pad: ''})
  const bytes = Buffer.from(head.slice(0, -2) + 'x'.repeat(size - head.length) + '"}')
  expect(bytes.byteLength).toBe(size)
  return {eventId, kind: 'message.posted', sequence, aggregateRevision: sequence, bytes}
}

const backends = storeBackends('store read pages')

describe.each(backends.filter((b) => b.enabled))('Group log pages bounded by bytes: $name', (backend) => {
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

  it('a page stops before the Event that would pass maxBytes, holds one larger Event alone, and pages through everything', async () => {
    const g = `urn:missionweaveprotocol:group:${randomUUID()}`
    // Sizes 1000, 2000, …, cycling, and one Event of 50,000 bytes at sequence 7.
    const sizes = Array.from({length: 40}, (_, i) => (i === 6 ? 50_000 : 1000 * ((i % 4) + 1)))
    const events = sizes.map((size, i) => event(g, i + 1, size))
    const actionId = `urn:uuid:${randomUUID()}`
    const outcome = await store.append(g, 0, events, {
      actorId: ACTOR,
      actionId,
      contentHash: `sha256:${createHash('sha256').update(actionId).digest('hex')}`,
      groupId: g,
      firstSequence: 1,
      lastSequence: 40,
      document: '{}',
    })
    expect(outcome.status).toBe('appended')

    // 1000 + 2000 + 3000 = 6000 fits 6500; the fourth (4000) would pass it.
    expect((await store.read(g, 0, 100, 6500)).events.map((e) => e.sequence)).toEqual([1, 2, 3])
    // The count bound still applies under a generous byte bound.
    expect((await store.read(g, 0, 2, 1_000_000)).events.map((e) => e.sequence)).toEqual([1, 2])
    // Sequence 7 (50,000 bytes) alone when it comes first; it ends the page before it otherwise.
    expect((await store.read(g, 6, 100, 6500)).events.map((e) => e.sequence)).toEqual([7])
    expect((await store.read(g, 4, 100, 6500)).events.map((e) => e.sequence)).toEqual([5, 6])

    let after = 0
    const seen: number[] = []
    for (;;) {
      const page = await store.read(g, after, 100, 6500)
      expect(page.head).toBe(40)
      if (page.events.length === 0) break
      const bytes = page.events.reduce((n, e) => n + e.bytes.byteLength, 0)
      expect(bytes <= 6500 || page.events.length === 1).toBe(true)
      for (const e of page.events) {
        expect(Buffer.from(e.bytes).equals(Buffer.from(events[e.sequence - 1]!.bytes))).toBe(true)
        seen.push(e.sequence)
      }
      after = page.events[page.events.length - 1]!.sequence
    }
    expect(seen).toEqual(Array.from({length: 40}, (_, i) => i + 1))

    for (const maxBytes of [0, -1, 1.5]) {
      const error = await store.read(g, 0, 10, maxBytes).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(StoreError)
      expect((error as StoreError).code).toBe('invalid-argument')
    }
  })
})
