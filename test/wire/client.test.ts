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
import {connect, next, tls} from '../support/wire-helpers.js'

const GROUP = 'urn:mwp:test:group:scripted'
let url: string
let peer: Promise<WebSocket>
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

/** Accepts the next connection: answers HELLO (without checking: the client is under test). */
function acceptNext(): Promise<WebSocket> {
  return new Promise((resolve) => {
    wss.once('connection', (ws) => {
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
          resolve(ws)
        }
      })
    })
  })
}

describe('client delivery rules (§16)', () => {
  it('buffers out-of-order Events, drops duplicates and forgeries, and never advances the Cursor over a gap', async () => {
    peer = acceptNext()
    const cursors = new MemoryCursorStore()
    const notices: string[] = []
    const c = await connect(url, owner, {reconnect: false, cursors, onNotice: (n) => notices.push(n.code)})
    const server = await peer
    const subscribed = next<Record<string, any>>((resolve) =>
      server.once('message', (d) => resolve(JSON.parse(d.toString()))),
    )
    const got: DeliveredEvent[] = []
    await c.subscribe(GROUP, {afterSequence: 0}, (e) => void got.push(e))
    expect((await subscribed).groups).toEqual([{groupId: GROUP, afterSequence: 0}])

    const e1 = signedEvent(1)
    const e2 = signedEvent(2)
    const e3 = signedEvent(3)
    const e5 = signedEvent(5)
    // 3 and 1 arrive before 2; 1 arrives twice; 5 arrives with 4 missing.
    for (const e of [e3, e1, e1, e2, e5]) server.send(eventFrame(e))
    // A forged Event 4 (payload changed after signing) is dropped.
    const forged = JSON.parse(signedEvent(4)) as Record<string, unknown>
    server.send(eventFrame(JSON.stringify({...forged, payload: {n: 'changed'}})))
    await new Promise<void>((resolve) => {
      const t = setInterval(
        () => got.length >= 3 && notices.includes('AUTH_INVALID_SIGNATURE') && (clearInterval(t), resolve()),
        5,
      )
    })
    expect(got.map((e) => e.sequence)).toEqual([1, 2, 3])
    expect(c.cursor(GROUP)).toBe(3)
    expect(c.duplicatesDropped).toBe(1)
    expect(notices).toContain('AUTH_INVALID_SIGNATURE')

    // The real Event 4 closes the gap: 4 and the buffered 5 follow, in order.
    server.send(eventFrame(signedEvent(4)))
    await new Promise<void>((resolve) => {
      const t = setInterval(() => got.length >= 5 && (clearInterval(t), resolve()), 5)
    })
    expect(got.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5])
    expect(c.cursor(GROUP)).toBe(5)

    // A server "delivered through" ACK covers filtered sequences 6-7; 8 follows contiguously.
    server.send(frame('ACK', {acknowledgements: [{groupId: GROUP, sequence: 7}], sentAt: new Date().toISOString()}))
    server.send(eventFrame(signedEvent(8)))
    await new Promise<void>((resolve) => {
      const t = setInterval(() => got.length >= 6 && (clearInterval(t), resolve()), 5)
    })
    expect(got.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 8])
    expect(c.cursor(GROUP)).toBe(8)

    // The client ACKs only contiguous progress, and persists it.
    const acked = next<Record<string, any>>((resolve) => {
      const on = (d: Buffer) => {
        const f = JSON.parse(d.toString())
        if (f.frameType === 'ACK') {
          server.off('message', on)
          resolve(f)
        }
      }
      server.on('message', on)
    })
    expect((await acked).acknowledgements.at(-1)).toEqual({groupId: GROUP, sequence: 8})
    expect(cursors.load(GROUP)).toBe(8)
    await c.close()
  })

  it("Events are routed by Group first: another Group's Event never reaches this subscription", async () => {
    peer = acceptNext()
    const c = await connect(url, owner, {reconnect: false})
    const server = await peer
    const got: DeliveredEvent[] = []
    await c.subscribe(GROUP, {afterSequence: 0}, (e) => void got.push(e))
    server.send(eventFrame(signedEvent(1, {groupId: 'urn:mwp:test:group:other'})))
    server.send(eventFrame(signedEvent(1)))
    await new Promise<void>((resolve) => {
      const t = setInterval(() => got.length >= 1 && (clearInterval(t), resolve()), 5)
    })
    expect(got.map((e) => e.groupId)).toEqual([GROUP])
    await c.close()
  })

  it('with acceptedBy configured, an Event accepted by any other principal is dropped though its signature verifies (H9)', async () => {
    peer = acceptNext()
    const notices: string[] = []
    const c = await connect(url, owner, {
      reconnect: false,
      acceptedBy: ['urn:mwp:dev:service:some-other-authority'],
      onNotice: (n) => notices.push(n.code),
    })
    const server = await peer
    const got: DeliveredEvent[] = []
    await c.subscribe(GROUP, {afterSequence: 0}, (e) => void got.push(e))
    server.send(eventFrame(signedEvent(1)))
    await new Promise<void>((resolve) => {
      const t = setInterval(() => notices.length > 0 && (clearInterval(t), resolve()), 5)
    })
    expect(notices).toEqual(['AUTH_INVALID_SIGNATURE'])
    expect(got).toEqual([])
    expect(c.cursor(GROUP)).toBe(0)
    await c.close()
  })
})
