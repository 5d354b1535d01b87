// The Message index left the Group state (issue #15): committed Messages live in the store's
// Message table (src/store/message-table.ts), written in the Group append, and ingress looks a
// follow-up's target up there or in the in-flight appends it is decided on
// (ingress/message-lookup.ts). On both stores: the state does not hold the Messages (its canonical
// size does not grow with them), and message.correct / retract / redact still find their target
// after a restart and while the post's append has not committed yet.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {submit} from '../../src/authority/ingress/command.js'
import {canonicalize} from '../../src/json/jcs.js'
import type {AppendOutcome, StoredEvent} from '../../src/store/group-log.js'
import {openStore} from '../../src/store/index.js'
import type {Store} from '../../src/store/types.js'
import {
  admissionKey,
  authorityOn,
  codeOf,
  developer,
  devStoreAt,
  groupCommand,
  owner,
  post,
  receiptOf,
  storeWith,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {storeBackends} from '../support/store-backends.js'

const backends = storeBackends('message table')

const correct = (g: string, messageId: string) =>
  groupCommand(developer, 'message.correct', g, {messageId, text: 'Plan, corrected.', reason: 'Forgot a step.'})
const retract = (g: string, messageId: string) =>
  groupCommand(developer, 'message.retract', g, {messageId, reason: 'Wrong Group.'})
const redact = (g: string, messageId: string) =>
  groupCommand(owner, 'message.redact', g, {messageId, policy: 'pii-removal', reason: 'Contains an e-mail address.'})

describe.each(backends.filter((b) => b.enabled))('Messages in the store, not in the state: $name', (backend) => {
  let url: string
  let store: Store
  beforeAll(async () => {
    await backend.start()
    url = await backend.fresh()
    store = await devStoreAt(url)
  }, 120_000)
  afterAll(async () => {
    await store?.close()
    await backend.stop()
  })

  /** The Message IDs of the Group's message.posted Events, in order. */
  async function postedIds(g: string): Promise<string[]> {
    const page = await store.read(g, 0, 10_000)
    return page.events
      .filter((e) => e.kind === 'message.posted')
      .map((e) => JSON.parse(Buffer.from(e.bytes).toString('utf8')) as {payload: {message: {messageId: string}}})
      .map((d) => d.payload.message.messageId)
  }

  it('the Message rows ride on the append: a refused append writes none, an accepted one writes them', async () => {
    const g = `urn:mwp:test:group:rows-${Date.now()}`
    const messageId = `urn:uuid:${crypto.randomUUID()}`
    const event = (sequence: number): StoredEvent => ({
      eventId: `urn:uuid:${crypto.randomUUID()}`,
      kind: 'message.posted',
      sequence,
      aggregateRevision: 1,
      bytes: Buffer.from('{}'),
      message: {messageId, posted: {author: developer.principal!, conversationId: 'urn:uuid:c'}},
    })
    const receipt = (n: number) => ({
      actorId: developer.principal!.id,
      actionId: `urn:uuid:${crypto.randomUUID()}`,
      contentHash: `sha256:${String(n).padStart(64, '0')}`,
      groupId: g,
      firstSequence: 1,
      lastSequence: 1,
      document: '{}',
    })
    expect((await store.append(g, 3, [event(4)], {...receipt(1), firstSequence: 4, lastSequence: 4})).status).toBe(
      'head-moved',
    )
    expect(await store.messages().get(g, messageId)).toBeNull()
    expect((await store.append(g, 0, [event(1)], receipt(2))).status).toBe('appended')
    expect(await store.messages().get(g, messageId)).toMatchObject({status: 'posted', redacted: false})
  })

  it('the canonical state does not grow with the number of Messages and names none of them', async () => {
    const authority = authorityOn(store)
    const run = (bytes: Buffer) => submit(authority, bytes)
    const g = await missionGroup(run, 'msg-size', {members: [developer]})
    for (let i = 0; i < 5; i++) receiptOf(await run(post(developer, g)))
    const few = canonicalize(await authority.current(g)).length
    for (let i = 0; i < 120; i++) receiptOf(await run(post(developer, g)))
    const state = canonicalize(await authority.current(g))
    // 120 more Messages: only counters gain digits (sequence, revision, the rate bucket's count)
    expect(state.length - few).toBeLessThan(64)
    const ids = await postedIds(g)
    expect(ids).toHaveLength(125)
    for (const id of ids) expect(state).not.toContain(id)
    expect(await store.messages().get(g, ids[124]!)).toEqual({
      author: developer.principal,
      conversationId: (await authority.current(g))!.conversationId,
      status: 'posted',
      redacted: false,
    })
  })

  it('after a restart, correct / retract / redact find their target in the store', async () => {
    const before = authorityOn(store)
    const g = await missionGroup((bytes) => submit(before, bytes), 'msg-restart', {members: [developer]})
    receiptOf(await submit(before, post(developer, g)))
    receiptOf(await submit(before, post(developer, g)))
    const [first, second] = await postedIds(g)
    await store.close()
    store = await openStore(url, {admissionKey})

    const after = authorityOn(store)
    expect(codeOf(await submit(after, correct(g, first!)))).toBe('ok')
    expect(codeOf(await submit(after, retract(g, first!)))).toBe('ok')
    // the stored status is what the decider judged by: a retracted Message is not retracted twice
    expect(codeOf(await submit(after, retract(g, first!)))).toBe('INVALID_STATE_TRANSITION')
    expect(codeOf(await submit(after, redact(g, second!)))).toBe('ok')
    expect(codeOf(await submit(after, redact(g, second!)))).toBe('INVALID_STATE_TRANSITION')
    expect(codeOf(await submit(after, correct(g, 'urn:uuid:00000000-0000-4000-8000-000000000000')))).toBe(
      'INVALID_COMMAND',
    )
    expect(await store.messages().get(g, first!)).toMatchObject({status: 'retracted', redacted: false})
    expect(await store.messages().get(g, second!)).toMatchObject({status: 'posted', redacted: true})
  })

  it('a correction decided while the post is still in flight finds the Message in that append', async () => {
    const setup = authorityOn(store)
    const g = await missionGroup((bytes) => submit(setup, bytes), 'msg-flight', {members: [developer]})
    // Appends are held until released: the post's append stays in flight while the correction is decided.
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const held: StoredEvent[][] = []
    let heldChanged = () => {}
    const holding = storeWith(store, {
      append: async (...args): Promise<AppendOutcome> => {
        held.push(args[2])
        heldChanged()
        await gate
        return store.append(...args)
      },
    })
    const untilHeld = (n: number) =>
      new Promise<void>((resolve) => {
        heldChanged = () => held.length >= n && resolve()
        heldChanged()
      })
    const authority = authorityOn(holding)
    await authority.current(g)
    const posting = submit(authority, post(developer, g))
    await untilHeld(1)
    const row = held[0]![0]!.message
    if (row === undefined || !('posted' in row)) throw new Error('the post carries no Message row')
    const correcting = submit(authority, correct(g, row.messageId))
    // decided (on the in-flight tip) and handed to the store — or answered without an append
    await Promise.race([untilHeld(2), correcting])
    expect(await store.messages().get(g, row.messageId)).toBeNull() // nothing committed yet
    expect(held[1]?.[0]?.kind).toBe('message.corrected')
    release()
    expect(codeOf(await posting)).toBe('ok')
    expect(codeOf(await correcting)).toBe('ok')
    expect(await store.messages().get(g, row.messageId)).toMatchObject({status: 'corrected'})
  })
})
