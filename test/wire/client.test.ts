// The client's delivery rules against a scripted server (spec §16, §17.2; ACCEPTANCE I1, I2, I5):
// a real TLS 1.3 WebSocket server on 127.0.0.1 that completes HELLO honestly and then sends EVENT
// frames in an order our own server never produces — out of order, duplicated, with a gap, with a
// forged signature — so the client's buffering, deduplication and gap rule are what is tested.

import {randomBytes, randomUUID} from 'node:crypto'
import {createServer} from 'node:https'
import type {AddressInfo} from 'node:net'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type WebSocket, WebSocketServer} from 'ws'
import {encodeBase64url} from '../../src/json/base64url.js'
import {sign} from '../../src/signing/sign.js'
import {type DeliveredEvent, MemoryCursorStore} from '../../src/wire/client.js'
import {eventFrame, frame} from '../../src/wire/frames.js'
import {authorityKey, owner} from '../support/authority-helpers.js'
import {connect, tls} from '../support/wire-helpers.js'

const GROUP = 'urn:mwp:test:group:scripted'
let url: string
let http: ReturnType<typeof createServer>
let wss: WebSocketServer

/** The Event at `sequence`, signed by the Group Authority (as a real server would store it). */
function signedEvent(sequence: number, over: Record<string, unknown> = {}): string {
  const doc = sign(
    'event',
    {
      protocolVersion: '0.1',
      eventId: `urn:uuid:${randomUUID()}`,
      kind: 'message.posted',
      groupId: GROUP,
      sequence,
      aggregateRevision: 1,
      actor: owner.principal,
      cause: {type: 'command', id: `urn:uuid:${randomUUID()}`},
      correlationId: `urn:uuid:${randomUUID()}`,
      occurredAt: new Date().toISOString(),
      payload: {n: sequence},
      acceptedBy: authorityKey.principal,
      commandHash: `sha256:${'a'.repeat(64)}`,
      ...over,
    },
    authorityKey,
  ).document
  return JSON.stringify(doc)
}

beforeAll(async () => {
  http = createServer({cert: tls().cert, key: tls().key, minVersion: 'TLSv1.3'})
  wss = new WebSocketServer({server: http})
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  url = `wss://127.0.0.1:${(http.address() as AddressInfo).port}`
})
afterAll(async () => {
  wss.close()
  await new Promise((r) => http.close(r))
})

/** The scripted server's side of one connection, recording every frame the client sends after HELLO. */
interface Peer {
  ws: WebSocket
  frames: Record<string, any>[]
  /** Resolves once `predicate` holds over the recorded frames (checked on every frame). */
  until(predicate: (frames: Record<string, any>[]) => boolean): Promise<void>
}

/**
 * Accepts the next connection: answers HELLO (without checking: the client is under test) and
 * records from then on, so no frame is missed however late the test looks for it.
 */
function acceptNext(): Promise<Peer> {
  return new Promise((resolve) => {
    wss.once('connection', (ws) => {
      const frames: Record<string, any>[] = []
      const waiters = new Set<() => void>()
      const until = (predicate: (f: Record<string, any>[]) => boolean) =>
        new Promise<void>((done) => {
          const check = () => predicate(frames) && (waiters.delete(check), done())
          waiters.add(check)
          check()
        })
      let step = 0
      ws.on('message', (d) => {
        const f = JSON.parse(d.toString())
        if (step === 0) {
          step = 1
          ws.send(
            frame('HELLO', {
              phase: 'server_challenge',
              selectedVersion: '0.1',
              clientNonce: f.clientNonce,
              serverNonce: encodeBase64url(randomBytes(16)),
              challenge: encodeBase64url(randomBytes(16)),
            }),
          )
        } else if (step === 1) {
          step = 2
          ws.send(
            frame('HELLO', {
              phase: 'server_accept',
              selectedVersion: '0.1',
              sessionToken: encodeBase64url(randomBytes(24)),
              sessionEpoch: 1,
              expiresAt: '2030-01-01T00:00:00Z',
            }),
          )
          resolve({ws, frames, until})
        } else {
          frames.push(f)
          for (const w of [...waiters]) w()
        }
      })
    })
  })
}

/** Polls `predicate` (for state the client exposes without an event). */
const until = (predicate: () => boolean) =>
  new Promise<void>((resolve) => {
    const t = setInterval(() => predicate() && (clearInterval(t), resolve()), 5)
  })

/** The sequences the client has ACKed for GROUP, in the order its ACK frames arrived. */
const ackedSequences = (frames: Record<string, any>[]): number[] =>
  frames
    .filter((f) => f.frameType === 'ACK')
    .flatMap((f) => f.acknowledgements as {groupId: string; sequence: number}[])
    .filter((a) => a.groupId === GROUP)
    .map((a) => a.sequence)

describe('client delivery rules (§16)', () => {
  it('buffers out-of-order Events, drops duplicates and forgeries, and never advances the Cursor over a gap', async () => {
    const peer = acceptNext()
    const cursors = new MemoryCursorStore()
    const notices: string[] = []
    const c = await connect(url, owner, {reconnect: false, cursors, onNotice: (n) => notices.push(n.code)})
    const server = await peer
    const got: DeliveredEvent[] = []
    await c.subscribe(GROUP, {afterSequence: 0}, (e) => void got.push(e))
    await server.until((f) => f.some((x) => x.frameType === 'SUBSCRIBE'))
    expect(server.frames.find((x) => x.frameType === 'SUBSCRIBE')!.groups).toEqual([{groupId: GROUP, afterSequence: 0}])

    const e1 = signedEvent(1)
    const e2 = signedEvent(2)
    const e3 = signedEvent(3)
    const e5 = signedEvent(5)
    // 3 and 1 arrive before 2; 1 arrives twice; 5 arrives with 4 missing.
    for (const e of [e3, e1, e1, e2, e5]) server.ws.send(eventFrame(e))
    // A forged Event 4 (payload changed after signing) is dropped.
    const forged = JSON.parse(signedEvent(4)) as Record<string, unknown>
    server.ws.send(eventFrame(JSON.stringify({...forged, payload: {n: 'changed'}})))
    await until(() => got.length >= 3 && notices.includes('AUTH_INVALID_SIGNATURE'))
    expect(got.map((e) => e.sequence)).toEqual([1, 2, 3])
    expect(c.cursor(GROUP)).toBe(3)
    expect(c.duplicatesDropped).toBe(1)
    expect(notices).toContain('AUTH_INVALID_SIGNATURE')
    // Whatever the client ACKed while 4 was missing stops at 3.
    const beforeGap = ackedSequences(server.frames)
    expect(beforeGap.every((s) => s <= 3)).toBe(true)

    // The real Event 4 closes the gap: 4 and the buffered 5 follow, in order.
    server.ws.send(eventFrame(signedEvent(4)))
    await until(() => got.length >= 5)
    expect(got.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5])
    expect(c.cursor(GROUP)).toBe(5)

    // A server "delivered through" ACK covers filtered sequences 6-7; 8 follows contiguously.
    server.ws.send(frame('ACK', {acknowledgements: [{groupId: GROUP, sequence: 7}], sentAt: new Date().toISOString()}))
    server.ws.send(eventFrame(signedEvent(8)))
    await until(() => got.length >= 6)
    expect(got.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 8])
    expect(c.cursor(GROUP)).toBe(8)

    // The client ACKs only contiguous progress, in order, and persists it. The frames are recorded
    // from the start, so an ACK sent before this line is not missed.
    await server.until((f) => ackedSequences(f).includes(8))
    const acked = ackedSequences(server.frames)
    expect(acked).toEqual([...acked].sort((a, b) => a - b))
    expect(acked.at(-1)).toBe(8)
    expect(cursors.load(GROUP)).toBe(8)
    await c.close()
  })

  it("Events are routed by Group first: another Group's Event never reaches this subscription", async () => {
    const peer = acceptNext()
    const c = await connect(url, owner, {reconnect: false})
    const server = await peer
    const got: DeliveredEvent[] = []
    await c.subscribe(GROUP, {afterSequence: 0}, (e) => void got.push(e))
    server.ws.send(eventFrame(signedEvent(1, {groupId: 'urn:mwp:test:group:other'})))
    server.ws.send(eventFrame(signedEvent(1)))
    await until(() => got.length >= 1)
    expect(got.map((e) => e.groupId)).toEqual([GROUP])
    await c.close()
  })

  it('with acceptedBy configured, an Event accepted by any other principal is dropped though its signature verifies (H9)', async () => {
    const peer = acceptNext()
    const notices: string[] = []
    const c = await connect(url, owner, {
      reconnect: false,
      acceptedBy: ['urn:mwp:dev:service:some-other-authority'],
      onNotice: (n) => notices.push(n.code),
    })
    const server = await peer
    const got: DeliveredEvent[] = []
    await c.subscribe(GROUP, {afterSequence: 0}, (e) => void got.push(e))
    server.ws.send(eventFrame(signedEvent(1)))
    await until(() => notices.length > 0)
    expect(notices).toEqual(['AUTH_INVALID_SIGNATURE'])
    expect(got).toEqual([])
    expect(c.cursor(GROUP)).toBe(0)
    await c.close()
  })
})
