// Session Epochs across reconnects, over the wire (spec §6.3, §15.1; issue #15): the unchanged
// retry of a Command accepted under an older session gets its original receipt on the new
// session, a never-accepted Command of the old epoch stays AUTH_STALE_SESSION, and a superseded
// session is fenced whole — its SUBSCRIBE, COMMAND and ACK are refused and its subscriptions
// deliver nothing once the new epoch is issued. Real TLS sockets on 127.0.0.1 over a throwaway
// SQLite store.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {submit} from '../../src/authority/ingress/command.js'
import type {CommandReceipt} from '../../src/authority/ingress/command.js'
import {currentSessionEpoch} from '../../src/authority/ingress/sessions.js'
import {type Store, openStore} from '../../src/store/index.js'
import {admissionKey, codeOf, coordinator, owner, post, receiptOf, sqliteStore} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {
  type RawFrame,
  type Running,
  collector,
  connect,
  frameId,
  nonce,
  rawSession,
  serve,
} from '../support/wire-helpers.js'

let store: Store
let cleanup: () => Promise<void>
let running: Running
let url: string

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  running = await serve(store)
  url = running.server.url
}, 60_000)
afterAll(async () => {
  await running?.server.close()
  await cleanup?.()
})

const group = () => missionGroup((bytes) => submit(running.authority, bytes), 'wire-fencing', {members: []})
const agentId = coordinator.principal!.id
const commandFrame = (bytes: Buffer, id = frameId()) =>
  `{"protocolVersion":"0.1","frameId":${JSON.stringify(id)},"frameType":"COMMAND","command":${bytes.toString('utf8')}}`
const actionIdOf = (bytes: Buffer) => (JSON.parse(bytes.toString('utf8')) as {actionId: string}).actionId

/** Resolves once `check` holds, re-checking every 20 ms (bounded by the test timeout). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20))
}

/** The Events of `g` caused by `actionId`, read from the store. */
async function eventsCausedBy(g: string, actionId: string): Promise<string[]> {
  const {events} = await store.read(g, 0, 1000)
  return events
    .filter((e) => (JSON.parse(Buffer.from(e.bytes).toString('utf8')) as {cause: {id: string}}).cause.id === actionId)
    .map((e) => e.eventId)
}

describe('receipts across sessions (§15.1, §6.3)', () => {
  it('[+cmd:message.post] a Command accepted under epoch n whose connection dropped before the receipt gets its original receipt when retried unchanged on session n + 1; exactly one Event', async () => {
    const g = await group()
    const old = await rawSession(url, coordinator)
    const n = await currentSessionEpoch(running.authority, agentId)
    const bytes = post(coordinator, g, {sessionEpoch: n})
    const actionId = actionIdOf(bytes)
    const headBefore = (await store.head(g))!.sequence
    // The COMMAND reaches the server, then the socket is gone before any answer can be read.
    await new Promise<void>((resolve, reject) => old.ws.send(commandFrame(bytes), (e) => (e ? reject(e) : resolve())))
    old.ws.terminate()
    await old.closed
    await eventually(async () => (await store.receipt(agentId, actionId)) !== null)
    const stored = JSON.parse((await store.receipt(agentId, actionId))!.document) as CommandReceipt

    const fresh = await connect(url, coordinator, {reconnect: false})
    try {
      expect(fresh.sessionEpoch).toBe(n + 1)
      const retried = receiptOf(await fresh.submit(bytes))
      expect(retried).toMatchObject({
        actionId,
        groupId: g,
        eventIds: stored.eventIds,
        firstSequence: stored.firstSequence,
        lastSequence: stored.lastSequence,
      })
      expect(stored.firstSequence).toBe(headBefore + 1)
      expect(await eventsCausedBy(g, actionId)).toEqual(stored.eventIds)
      expect(stored.eventIds).toHaveLength(1)
      expect((await store.head(g))!.sequence).toBe(headBefore + 1)
    } finally {
      await fresh.close()
    }
  })

  it('[-cmd:message.post] a Command signed at epoch n that was never accepted is AUTH_STALE_SESSION on session n + 1, and records nothing', async () => {
    const g = await group()
    const old = await connect(url, coordinator, {reconnect: false})
    const n = old.sessionEpoch!
    await old.close()
    const fresh = await connect(url, coordinator, {reconnect: false})
    try {
      expect(fresh.sessionEpoch).toBe(n + 1)
      const headBefore = (await store.head(g))!.sequence
      const never = post(coordinator, g, {sessionEpoch: n})
      expect(codeOf(await fresh.submit(never))).toBe('AUTH_STALE_SESSION')
      expect(await store.receipt(agentId, actionIdOf(never))).toBeNull()
      expect((await store.head(g))!.sequence).toBe(headBefore)
      // The positive control: the new session's own epoch is accepted on the same connection.
      expect(codeOf(await fresh.submit(post(coordinator, g, {sessionEpoch: n + 1})))).toBe('ok')
    } finally {
      await fresh.close()
    }
  })
})

describe('a superseded session is fenced whole (§6.3)', () => {
  it('[-cmd:message.post] once epoch n + 1 is issued, the n session gets AUTH_STALE_SESSION, its SUBSCRIBE, COMMAND and ACK are refused, and its subscription delivers nothing more', async () => {
    const g = await group()
    const old = await rawSession(url, coordinator)
    const n = await currentSessionEpoch(running.authority, agentId)
    const frames: RawFrame[] = []
    old.ws.on('message', (d) => frames.push(JSON.parse(d.toString()) as RawFrame))
    const delivered = () =>
      frames.filter((f) => f.frameType === 'EVENT' && !String(f.frameId).includes('receipt')).map((f) => f.event)
    old.send({
      protocolVersion: '0.1',
      frameId: frameId(),
      frameType: 'SUBSCRIBE',
      subscriptionId: frameId(),
      groups: [{groupId: g, afterSequence: 0}],
    })
    const head = (await store.head(g))!.sequence
    await eventually(async () => delivered().length === head) // the old session is served until fenced

    // No automatic ACKs from the new session: the Cursor stays the old session's ACK's to move.
    const fresh = await connect(url, coordinator, {reconnect: false, autoAck: false})
    const seen = collector()
    try {
      expect(fresh.sessionEpoch).toBe(n + 1)
      // Told at once, unasked.
      await eventually(async () => frames.some((f) => f.frameType === 'ERROR' && f.error.relatedFrameId === undefined))
      expect(frames.find((f) => f.frameType === 'ERROR')!.error.code).toBe('AUTH_STALE_SESSION')
      const before = delivered().length

      // New Events after the new epoch: the new session receives them (the positive control), the old one none.
      await fresh.subscribe(g, {afterSequence: head}, seen.onEvent)
      const posted = [post(coordinator, g, {sessionEpoch: n + 1}), post(coordinator, g, {sessionEpoch: n + 1})]
      for (const bytes of posted) expect(codeOf(await submit(running.authority, bytes))).toBe('ok')
      await seen.until(() => seen.events.length === posted.length)
      expect(seen.sequences()).toEqual([head + 1, head + 2])

      // Every frame of the old session is refused, each answered with AUTH_STALE_SESSION.
      const subscribe = frameId()
      const command = frameId()
      const ack = frameId()
      const retry = post(coordinator, g, {sessionEpoch: n})
      old.send({
        protocolVersion: '0.1',
        frameId: subscribe,
        frameType: 'SUBSCRIBE',
        subscriptionId: frameId(),
        groups: [{groupId: g, afterSequence: 0}],
      })
      old.ws.send(commandFrame(retry, command))
      old.send({
        protocolVersion: '0.1',
        frameId: ack,
        frameType: 'ACK',
        acknowledgements: [{groupId: g, sequence: 1}],
        sentAt: new Date().toISOString(),
      })
      const answered = (id: string) => frames.find((f) => f.frameType === 'ERROR' && f.error.relatedFrameId === id)
      await eventually(async () => [subscribe, command, ack].every((id) => answered(id) !== undefined))
      for (const id of [subscribe, command, ack]) expect(answered(id)!.error.code).toBe('AUTH_STALE_SESSION')
      expect(answered(command)!.error.relatedActionId).toBe(actionIdOf(retry))
      // The refused SUBSCRIBE started nothing, the old subscription delivered nothing after the fence,
      // the refused COMMAND recorded nothing, and the refused ACK moved no Cursor.
      expect(delivered()).toHaveLength(before)
      expect(before).toBe(head)
      expect(await store.receipt(agentId, actionIdOf(retry))).toBeNull()
      expect(await store.cursors().get(agentId, g)).toBeNull()
    } finally {
      await fresh.close()
      old.ws.close()
    }
  })
})

describe('a session superseded through another server sharing the store (§6.3)', () => {
  it('[-cmd:message.post] the old session on server A is fenced when server B issues the next epoch: at its next frame, and by its liveness tick with no frame at all', async () => {
    // Server B: its own store connection, Authority and session registry over the same SQLite file,
    // as a second process would have. Server A (the suite's) checks the stored epoch each frame and
    // each liveness tick; its tick is made short here so the subscription is fenced without a frame.
    const otherStore = await openStore(store.url, {admissionKey})
    const b = await serve(otherStore)
    const a = await serve(store, {pingIntervalMs: 300})
    try {
      const g = await group()
      const old = await rawSession(a.server.url, coordinator)
      const n = await currentSessionEpoch(a.authority, agentId)
      const frames: RawFrame[] = []
      old.ws.on('message', (d) => {
        const f = JSON.parse(d.toString()) as RawFrame
        frames.push(f)
        // A live peer answers the server's liveness PINGs (a silent one is dropped after 3 intervals).
        if (f.frameType === 'PING' && f.replyToNonce === undefined)
          old.send({
            protocolVersion: '0.1',
            frameId: frameId(),
            frameType: 'PING',
            nonce: nonce(),
            replyToNonce: f.nonce as string,
            sentAt: new Date().toISOString(),
          })
      })
      const delivered = () => frames.filter((f) => f.frameType === 'EVENT').length
      old.send({
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'SUBSCRIBE',
        subscriptionId: frameId(),
        groups: [{groupId: g, afterSequence: 0}],
      })
      const head = (await store.head(g))!.sequence
      await eventually(async () => delivered() === head)

      const fresh = await connect(b.server.url, coordinator, {reconnect: false, autoAck: false})
      try {
        expect(fresh.sessionEpoch).toBe(n + 1)
        // No frame from the old session: its liveness tick reads the new epoch and fences it.
        await eventually(async () =>
          frames.some((f) => f.frameType === 'ERROR' && f.error.code === 'AUTH_STALE_SESSION'),
        )
        // The positive control on server A itself: a subscriber there gets the Event B appends.
        const watcher = await connect(a.server.url, owner, {reconnect: false, autoAck: false})
        const seen = collector()
        await watcher.subscribe(g, {afterSequence: head}, seen.onEvent)
        expect(codeOf(await submit(b.authority, post(coordinator, g, {sessionEpoch: n + 1})))).toBe('ok')
        await seen.until(() => seen.events.length === 1)
        await watcher.close()
        // Its next frame is refused too.
        const subscribe = frameId()
        old.send({
          protocolVersion: '0.1',
          frameId: subscribe,
          frameType: 'SUBSCRIBE',
          subscriptionId: frameId(),
          groups: [{groupId: g, afterSequence: 0}],
        })
        await eventually(async () =>
          frames.some((f) => f.frameType === 'ERROR' && f.error.relatedFrameId === subscribe),
        )
        expect(frames.find((f) => f.error?.relatedFrameId === subscribe)!.error.code).toBe('AUTH_STALE_SESSION')
        expect(delivered()).toBe(head)
      } finally {
        await fresh.close()
        old.ws.close()
      }
    } finally {
      await a.server.close()
      await b.server.close()
      await otherStore.close()
    }
  })
})
