// The per-Group event log, one contract suite for both store adapters (ARCHITECTURE.md principles
// 2, 3, 6, 7; spec §15.1 idempotency, §15.2 Group order, §16 replay): atomic append with the
// idempotency receipt, typed outcomes, paged reads, durability, and races between OS processes.
// Events are signed-looking JSON carrying their declared sequence; signing is not the store's job.

import {createHash, randomBytes, randomUUID} from 'node:crypto'
import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import postgres from '#postgres' // the patched copy in vendor/postgres (PATCHES.md)
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {AppendOutcome, Receipt, StoredEvent} from '../../src/store/group-log.js'
import {StoreError, initStore, openStore, type Store} from '../../src/store/index.js'
import {startBarrierWorker, storeBackends} from '../support/store-backends.js'
import {storeConfig as config} from '../support/store-config.js'

const WORKER = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'fixtures-group-append-worker.mjs')

const ACTOR = 'https://org.example/people/alice'

const newGroup = () => `urn:missionweaveprotocol:group:${randomUUID()}`

/** A signed-looking Event whose bytes declare its sequence and revision. */
function event(
  groupId: string,
  sequence: number,
  over: {revision?: number; eventId?: string; text?: string} = {},
): StoredEvent {
  const eventId = over.eventId ?? `urn:uuid:${randomUUID()}`
  const aggregateRevision = over.revision ?? sequence
  const document = {
    protocolVersion: '0.1',
    eventId,
    groupId,
    sequence,
    aggregateRevision,
    kind: 'message.posted',
    actor: {type: 'human', id: ACTOR},
    payload: {text: over.text ?? `message ${sequence}: Résumé 東京 🚀`},
    signature: {
      algorithm: 'Ed25519',
      keyId: 'https://org.example/keys/authority-1',
      value: randomBytes(64).toString('base64url'),
    },
  }
  // Two-space JSON with a CRLF tail: bytes a re-serialization would not reproduce.
  return {
    eventId,
    kind: 'message.posted',
    sequence,
    aggregateRevision,
    bytes: Buffer.from(JSON.stringify(document, null, 2) + '\r\n'),
  }
}

interface Command {
  events: StoredEvent[]
  receipt: Receipt
}

/** One Command's append: `count` events after `expectedHead`, and its receipt. */
function command(
  groupId: string,
  expectedHead: number,
  count = 1,
  over: {actionId?: string; content?: string} = {},
): Command {
  const actionId = over.actionId ?? `urn:uuid:${randomUUID()}`
  const events = Array.from({length: count}, (_, i) => event(groupId, expectedHead + 1 + i))
  const firstSequence = expectedHead + 1
  const lastSequence = expectedHead + count
  const receipt: Receipt = {
    actorId: ACTOR,
    actionId,
    contentHash: `sha256:${createHash('sha256')
      .update(over.content ?? actionId)
      .digest('hex')}`,
    groupId,
    firstSequence,
    lastSequence,
    document: JSON.stringify({status: 'accepted', actionId, groupId, firstSequence, lastSequence}),
  }
  return {events, receipt}
}

const append = (store: Store, groupId: string, expectedHead: number, c: Command) =>
  store.append(groupId, expectedHead, c.events, c.receipt)

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b))

/** Every event of a Group, paging with the last sequence read. */
async function readAll(store: Store, groupId: string, pageSize: number) {
  const events = []
  let after = 0
  let pages = 0
  for (;;) {
    const page = await store.read(groupId, after, pageSize)
    expect(page.events.length).toBeLessThanOrEqual(pageSize)
    events.push(...page.events)
    if (page.events.length > 0) after = page.events[page.events.length - 1]!.sequence
    pages++
    if (after >= page.head) return {events, head: page.head, pages}
    expect(page.events.length, 'a page short of the head is never empty').toBeGreaterThan(0)
  }
}

const backends = storeBackends('store group log')

/** Runs one append per request, each in its own OS process, released together at a file barrier. */
async function race(
  url: string,
  requests: {groupId: string; expectedHead: number; command: Command}[],
): Promise<AppendOutcome[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-group-race-'))
  try {
    const workers = requests.map((r, i) =>
      startBarrierWorker(WORKER, url, dir, i, {
        MWP_GROUP_APPEND: JSON.stringify({
          groupId: r.groupId,
          expectedHead: r.expectedHead,
          events: r.command.events.map((e) => ({...e, bytes: Buffer.from(e.bytes).toString('base64')})),
          receipt: r.command.receipt,
        }),
      }),
    )
    let exited = false
    for (const w of workers) void w.done.then(() => (exited ||= !existsSync(join(dir, 'go'))))
    const deadline = Date.now() + 45_000
    while (!exited && !workers.every((w) => existsSync(w.readyFile))) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the workers to be ready')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    writeFileSync(join(dir, 'go'), '')
    const runs = await Promise.all(workers.map((w) => w.done))
    for (const r of runs) expect(r.code, r.stderr).toBe(0)
    return runs.map((r) => JSON.parse(r.stdout) as AppendOutcome)
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

describe.each(backends.filter((b) => b.enabled))('Group log: $name', (backend) => {
  const open: Store[] = []
  async function fresh(): Promise<{url: string; store: Store}> {
    const url = await backend.fresh()
    await initStore(url, config)
    const store = await openStore(url)
    open.push(store)
    return {url, store}
  }
  async function counts(url: string) {
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

  beforeAll(() => backend.start(), 120_000)
  afterAll(async () => {
    for (const s of open) await s.close()
    await backend.stop()
  }, 60_000)

  it('a new Group starts from 0: head, events, receipt written together', async () => {
    const {store} = await fresh()
    const g = newGroup()
    expect(await store.head(g)).toBeNull()
    expect(await store.read(g, 0, 10)).toEqual({events: [], head: 0})
    const c = command(g, 0, 3)
    expect(await append(store, g, 0, c)).toEqual({status: 'appended', firstSequence: 1, lastSequence: 3})
    expect(await store.head(g)).toEqual({sequence: 3, revision: 3})
    expect(await store.receipt(ACTOR, c.receipt.actionId)).toEqual(c.receipt)
    expect(await store.receipt(ACTOR, 'urn:uuid:unknown')).toBeNull()
    const {events, head} = await store.read(g, 0, 10)
    expect(head).toBe(3)
    expect(events.map(({sequence, eventId, kind}) => ({sequence, eventId, kind}))).toEqual(
      c.events.map(({sequence, eventId, kind}) => ({sequence, eventId, kind})),
    )
  })

  it('sequences run 1..n, strictly increasing, across appends; the revision follows the last event', async () => {
    const {store} = await fresh()
    const g = newGroup()
    let head = 0
    for (const size of [1, 4, 2, 7, 1]) {
      const c = command(g, head, size)
      expect(await append(store, g, head, c)).toEqual({
        status: 'appended',
        firstSequence: head + 1,
        lastSequence: head + size,
      })
      head += size
    }
    const {events} = await store.read(g, 0, 100)
    expect(events.map((e) => e.sequence)).toEqual(Array.from({length: 15}, (_, i) => i + 1))
    // A revision that stays put (ordinary Messages) is fine; the head records the last one.
    const flat = command(g, 15, 2)
    flat.events.forEach((e) => (e.aggregateRevision = 15))
    expect((await append(store, g, 15, flat)).status).toBe('appended')
    expect(await store.head(g)).toEqual({sequence: 17, revision: 15})
  })

  it('head-moved when expectedHead is not the head: nothing written', async () => {
    const {url, store} = await fresh()
    const g = newGroup()
    expect((await append(store, g, 0, command(g, 0, 2))).status).toBe('appended')
    const before = await counts(url)
    expect(await append(store, g, 0, command(g, 0))).toEqual({status: 'head-moved', head: 2})
    expect(await append(store, g, 1, command(g, 1))).toEqual({status: 'head-moved', head: 2})
    expect(await append(store, g, 5, command(g, 5))).toEqual({status: 'head-moved', head: 2})
    const unknown = newGroup()
    expect(await append(store, unknown, 3, command(unknown, 3))).toEqual({status: 'head-moved', head: 0})
    expect(await counts(url)).toEqual(before)
    expect(await store.head(unknown)).toBeNull()
    expect(await store.head(g)).toEqual({sequence: 2, revision: 2})
  })

  it('duplicate: the same (actor, action) and content returns the original receipt and appends nothing', async () => {
    const {url, store} = await fresh()
    const g = newGroup()
    const original = command(g, 0, 2, {actionId: 'urn:uuid:a', content: 'post hello'})
    expect((await append(store, g, 0, original)).status).toBe('appended')
    const before = await counts(url)
    // A retry decided against the current head, and one decided against the old head.
    for (const expectedHead of [2, 0]) {
      const retry = command(g, expectedHead, 1, {actionId: 'urn:uuid:a', content: 'post hello'})
      expect(await append(store, g, expectedHead, retry)).toEqual({status: 'duplicate', receipt: original.receipt})
    }
    expect(await counts(url)).toEqual(before)
    expect(await store.head(g)).toEqual({sequence: 2, revision: 2})
  })

  it('action-id-collision: the same (actor, action) with other content; nothing written', async () => {
    const {url, store} = await fresh()
    const g = newGroup()
    expect((await append(store, g, 0, command(g, 0, 1, {actionId: 'urn:uuid:a', content: 'one'}))).status).toBe(
      'appended',
    )
    const before = await counts(url)
    expect(await append(store, g, 1, command(g, 1, 1, {actionId: 'urn:uuid:a', content: 'two'}))).toEqual({
      status: 'action-id-collision',
    })
    // Also from another Group: (actor, action) is unique across Groups.
    const other = newGroup()
    expect(await append(store, other, 0, command(other, 0, 1, {actionId: 'urn:uuid:a', content: 'three'}))).toEqual({
      status: 'action-id-collision',
    })
    expect(await counts(url)).toEqual(before)
    expect(await store.head(other)).toBeNull()
    // Another actor may use the same Action ID.
    const bob = command(g, 1, 1, {actionId: 'urn:uuid:a', content: 'two'})
    bob.receipt.actorId = 'https://org.example/people/bob'
    expect((await append(store, g, 1, bob)).status).toBe('appended')
  })

  it('sequence-mismatch: a declared sequence or receipt range the store would not assign; nothing written', async () => {
    const {url, store} = await fresh()
    const g = newGroup()
    expect((await append(store, g, 0, command(g, 0, 2))).status).toBe('appended')
    const before = await counts(url)
    const offByOne = command(g, 3, 2) // declares 4, 5 after head 2
    expect((await append(store, g, 2, offByOne)).status).toBe('sequence-mismatch')
    const gap = command(g, 2, 3)
    gap.events[2] = event(g, 6)
    expect((await append(store, g, 2, gap)).status).toBe('sequence-mismatch')
    const badReceipt = command(g, 2, 2)
    badReceipt.receipt.lastSequence = 5
    expect((await append(store, g, 2, badReceipt)).status).toBe('sequence-mismatch')
    const fresh0 = newGroup()
    expect((await append(store, fresh0, 0, command(fresh0, 1))).status).toBe('sequence-mismatch')
    expect(await counts(url)).toEqual(before)
    expect(await store.head(fresh0)).toBeNull()
  })

  it('duplicate eventId (in the batch, or already stored in any Group) is refused; nothing written', async () => {
    const {url, store} = await fresh()
    const g = newGroup()
    const first = command(g, 0, 2)
    expect((await append(store, g, 0, first)).status).toBe('appended')
    const before = await counts(url)
    const reused = command(g, 2, 2)
    reused.events[1] = event(g, 4, {eventId: first.events[0]!.eventId})
    expect(await append(store, g, 2, reused)).toEqual({status: 'duplicate-event-id', eventId: first.events[0]!.eventId})
    const other = newGroup()
    const elsewhere = command(other, 0, 1)
    elsewhere.events[0] = event(other, 1, {eventId: first.events[1]!.eventId})
    expect(await append(store, other, 0, elsewhere)).toEqual({
      status: 'duplicate-event-id',
      eventId: first.events[1]!.eventId,
    })
    const twice = command(g, 2, 2)
    twice.events[1] = event(g, 4, {eventId: twice.events[0]!.eventId})
    expect((await append(store, g, 2, twice)).status).toBe('duplicate-event-id')
    expect(await counts(url)).toEqual(before)
    expect(await store.head(other)).toBeNull()
    expect(await store.receipt(ACTOR, reused.receipt.actionId)).toBeNull()
  })

  it('refuses malformed appends as invalid: no events, a receipt for another Group, a revision going back', async () => {
    const {url, store} = await fresh()
    const g = newGroup()
    expect((await append(store, g, 0, command(g, 0, 2))).status).toBe('appended')
    const before = await counts(url)
    const none = command(g, 2)
    expect((await store.append(g, 2, [], none.receipt)).status).toBe('invalid')
    const elsewhere = command(g, 2)
    elsewhere.receipt.groupId = newGroup()
    expect((await append(store, g, 2, elsewhere)).status).toBe('invalid')
    const backwards = command(g, 2)
    backwards.events[0]!.aggregateRevision = 1
    expect((await append(store, g, 2, backwards)).status).toBe('invalid')
    expect((await append(store, g, -1, command(g, -1))).status).toBe('invalid')
    expect(await counts(url)).toEqual(before)
  })

  it('read pages in order and is never truncated: 1,000 events in pages of 100', async () => {
    const {store} = await fresh()
    const g = newGroup()
    const written: StoredEvent[] = []
    let head = 0
    for (const size of [1, 999]) {
      const c = command(g, head, size)
      expect((await append(store, g, head, c)).status).toBe('appended')
      written.push(...c.events)
      head += size
    }
    const all = await readAll(store, g, 100)
    expect(all.head).toBe(1000)
    expect(all.pages).toBe(10)
    expect(all.events.map((e) => e.sequence)).toEqual(Array.from({length: 1000}, (_, i) => i + 1))
    expect(all.events.every((e, i) => e.eventId === written[i]!.eventId && same(e.bytes, written[i]!.bytes))).toBe(true)

    const tail = await store.read(g, 950, 100)
    expect(tail.events.map((e) => e.sequence)).toEqual(Array.from({length: 50}, (_, i) => 951 + i))
    expect(await store.read(g, 1000, 100)).toEqual({events: [], head: 1000})
    expect(await store.read(g, 5000, 100)).toEqual({events: [], head: 1000})
    expect((await store.read(g, 10, 1)).events.map((e) => e.sequence)).toEqual([11])
    expect(await store.read(newGroup(), 0, 100)).toEqual({events: [], head: 0})
    for (const [after, limit] of [
      [-1, 10],
      [0, 0],
      [0, 1.5],
    ] as const) {
      const error = await store.read(g, after, limit).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(StoreError)
      expect((error as StoreError).code).toBe('invalid-argument')
    }
  })

  it('returns the stored bytes byte for byte', async () => {
    const {store} = await fresh()
    const g = newGroup()
    const c = command(g, 0, 2)
    // Any bytes at all: every byte value, an invalid UTF-8 sequence, a BOM.
    const odd = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      c.events[1]!.bytes,
      Buffer.from(Array.from({length: 256}, (_, i) => i)),
      Buffer.from([0xc3]),
    ])
    c.events[1] = {...c.events[1]!, bytes: new Uint8Array(odd)}
    expect((await append(store, g, 0, c)).status).toBe('appended')
    const {events} = await store.read(g, 0, 10)
    expect(events.map((e) => Buffer.from(e.bytes).toString('hex'))).toEqual(
      c.events.map((e) => Buffer.from(e.bytes).toString('hex')),
    )
    expect(events[0]!.bytes).toBeInstanceOf(Uint8Array)
  })

  it('group_events and receipts are append-only in the database itself', async () => {
    const {url, store} = await fresh()
    const g = newGroup()
    expect((await append(store, g, 0, command(g, 0, 2))).status).toBe('appended')
    const raw = backend.raw(url)
    try {
      await expect(raw.exec(`UPDATE group_events SET kind = 'x'`)).rejects.toThrow(/append-only/)
      await expect(raw.exec(`DELETE FROM group_events`)).rejects.toThrow(/append-only/)
      await expect(raw.exec(`UPDATE receipts SET content_hash = 'x'`)).rejects.toThrow(/append-only/)
      await expect(raw.exec(`DELETE FROM receipts`)).rejects.toThrow(/append-only/)
    } finally {
      await raw.close()
    }
    expect((await store.read(g, 0, 10)).events.length).toBe(2)
  })

  it('everything appended survives close and reopen, and appending continues from the head', async () => {
    const {url, store} = await fresh()
    const g = newGroup()
    const c = command(g, 0, 3)
    expect((await append(store, g, 0, c)).status).toBe('appended')
    await store.close()
    const again = await openStore(url)
    open.push(again)
    expect(await again.head(g)).toEqual({sequence: 3, revision: 3})
    expect(await again.receipt(ACTOR, c.receipt.actionId)).toEqual(c.receipt)
    const {events} = await again.read(g, 0, 10)
    expect(events.every((e, i) => same(e.bytes, c.events[i]!.bytes))).toBe(true)
    expect(await append(again, g, 3, command(g, 3))).toEqual({status: 'appended', firstSequence: 4, lastSequence: 4})
  })

  it('a closed store answers unavailable: append as an outcome, reads as StoreError', async () => {
    const {store} = await fresh()
    const g = newGroup()
    await store.close()
    expect((await append(store, g, 0, command(g, 0))).status).toBe('unavailable')
    for (const read of [() => store.head(g), () => store.read(g, 0, 1), () => store.receipt(ACTOR, 'urn:uuid:a')]) {
      const error = await read().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(StoreError)
      expect((error as StoreError).code).toBe('unavailable')
    }
  })

  if (backend.name === 'postgres') {
    it('no global lock: while one Group is locked, another appends; the locked one waits, then appends', async () => {
      const {url, store} = await fresh()
      const [a, b] = [newGroup(), newGroup()]
      expect((await append(store, a, 0, command(a, 0))).status).toBe('appended')
      expect((await append(store, b, 0, command(b, 0))).status).toBe('appended')
      const holder = postgres(url, {max: 1, onnotice: () => {}})
      let release = () => {}
      const released = new Promise<void>((resolve) => (release = resolve))
      let locked = () => {}
      const isLocked = new Promise<void>((resolve) => (locked = resolve))
      const holding = holder.begin(async (tx) => {
        await tx`SELECT 1 FROM groups WHERE group_id = ${a} FOR UPDATE`
        locked()
        await released
      })
      try {
        await isLocked
        let aDone = false
        const aAppend = append(store, a, 1, command(a, 1)).then((o) => ((aDone = true), o))
        expect(await append(store, b, 1, command(b, 1))).toEqual({
          status: 'appended',
          firstSequence: 2,
          lastSequence: 2,
        })
        await new Promise((resolve) => setTimeout(resolve, 300))
        expect(aDone).toBe(false)
        release()
        await holding
        expect(await aAppend).toEqual({status: 'appended', firstSequence: 2, lastSequence: 2})
      } finally {
        release()
        await holding.catch(() => {})
        await holder.end({timeout: 5})
      }
    })
  }

  describe('races between OS processes', () => {
    it('5 processes append to one Group with the same expectedHead: one appended, four head-moved', async () => {
      const {url, store} = await fresh()
      const g = newGroup()
      for (const expectedHead of [0, 2]) {
        // Different actions and Event IDs, the same expected head; the new Group first, then an existing one.
        const commands = Array.from({length: 5}, () => command(g, expectedHead, 2))
        const outcomes = await race(
          url,
          commands.map((c) => ({groupId: g, expectedHead, command: c})),
        )
        const statuses = outcomes.map((o) => o.status).sort()
        expect(statuses).toEqual(['appended', 'head-moved', 'head-moved', 'head-moved', 'head-moved'])
        for (const o of outcomes) if (o.status === 'head-moved') expect(o.head).toBe(expectedHead + 2)
        const winner = commands[outcomes.findIndex((o) => o.status === 'appended')]!
        const {events, head} = await store.read(g, expectedHead, 10)
        expect(head).toBe(expectedHead + 2)
        expect(events.map((e) => e.eventId)).toEqual(winner.events.map((e) => e.eventId))
        for (const [i, c] of commands.entries()) {
          expect(await store.receipt(ACTOR, c.receipt.actionId)).toEqual(c === winner ? c.receipt : null)
          if (c !== winner) expect(outcomes[i]!.status).toBe('head-moved')
        }
      }
    }, 120_000)

    it('2 processes appending to two different Groups both succeed', async () => {
      const {url, store} = await fresh()
      const groups = [newGroup(), newGroup()]
      for (const expectedHead of [0, 3]) {
        const outcomes = await race(
          url,
          groups.map((g) => ({groupId: g, expectedHead, command: command(g, expectedHead, 3)})),
        )
        expect(outcomes).toEqual(
          groups.map(() => ({status: 'appended', firstSequence: expectedHead + 1, lastSequence: expectedHead + 3})),
        )
      }
      for (const g of groups) expect(await store.head(g)).toEqual({sequence: 6, revision: 6})
    }, 120_000)

    it('the same action sent to two Groups at once is accepted once: appended and duplicate', async () => {
      const {url, store} = await fresh()
      const groups = [newGroup(), newGroup()]
      const commands = groups.map((g) => command(g, 0, 1, {actionId: 'urn:uuid:twice', content: 'same'}))
      const outcomes = await race(
        url,
        groups.map((g, i) => ({groupId: g, expectedHead: 0, command: commands[i]!})),
      )
      expect(outcomes.map((o) => o.status).sort()).toEqual(['appended', 'duplicate'])
      const winner = commands[outcomes.findIndex((o) => o.status === 'appended')]!
      expect(outcomes.find((o) => o.status === 'duplicate')).toEqual({status: 'duplicate', receipt: winner.receipt})
      const heads = await Promise.all(groups.map((g) => store.head(g)))
      expect(heads.filter((h) => h === null).length).toBe(1)
    }, 120_000)
  })
})
