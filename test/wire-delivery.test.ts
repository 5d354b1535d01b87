// WebSocket binding, part 2 (spec §8, §16, §17; ACCEPTANCE I1-I5, J2, J4-J7): SUBSCRIBE replay
// and live delivery, attention filters, reconnect with duplicates dropped, durable ACK Cursors
// across a restart, per-Group BACKPRESSURE, CURSOR_TOO_OLD with a signed snapshot, the
// no-existence-oracle rule, and malformed or binary frames. Real TLS 1.3 on 127.0.0.1, SQLite.

import {randomBytes} from 'node:crypto'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import WebSocket from 'ws'
import {submit} from '../src/authority/ingress.js'
import {signEd25519} from '../src/crypto/ed25519.js'
import {encodeBase64url} from '../src/json/base64url.js'
import {DEFAULT_FRESHNESS, type Store, initStore, openStore} from '../src/store/index.js'
import {MemoryCursorStore, type SnapshotReference} from '../src/wire/client.js'
import {transcriptBytes} from '../src/wire/hello.js'
import {admissionKey, codeOf, createCommand, developer, newGroup, owner, post} from './authority-helpers.js'
import {type Running, collector, connect, next, serve, tls} from './wire-helpers.js'

let dir: string
let storeUrl: string
let store: Store
let running: Running

async function openTestStore(): Promise<Store> {
  return openStore(storeUrl, {admissionKey})
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-wire-'))
  storeUrl = `sqlite:${join(dir, 'authority.db')}`
  await initStore(storeUrl, {
    organizationId: 'urn:mwp:dev:org:example',
    admissionService: {principal: admissionKey.principal!, keyId: admissionKey.keyId, publicKey: admissionKey.publicKeyB64},
    freshness: DEFAULT_FRESHNESS,
  })
  store = await openTestStore()
  running = await serve(store, {sendWindow: 8})
}, 60_000)
afterAll(async () => {
  await running?.server.close()
  await store?.close()
  rmSync(dir, {recursive: true, force: true})
})

async function group(posts = 0): Promise<string> {
  const g = newGroup('wire-delivery')
  expect(codeOf(await submit(running.authority, createCommand(g)))).toBe('ok')
  for (let i = 0; i < posts; i++) expect(codeOf(await submit(running.authority, post(owner, g)))).toBe('ok')
  return g
}
const head = async (g: string) => (await store.head(g))!.sequence
const range = (from: number, to: number) => Array.from({length: to - from + 1}, (_, i) => from + i)

describe('SUBSCRIBE: replay, live delivery and attention (§16, §17.2)', () => {
  it('[+cmd:message.post] [+evt:message.posted] replays after afterSequence, then delivers live Events in order, verified', async () => {
    const g = await group(3)
    const c = await connect(running.server.url, owner, {reconnect: false})
    const got = collector()
    await c.subscribe(g, {afterSequence: 1}, got.onEvent)
    const h = await head(g)
    await got.until(() => got.events.length === h - 1)
    expect(got.sequences()).toEqual(range(2, h))
    const r = await c.submit(post(owner, g))
    if ('error' in r) throw new Error(r.error.code)
    await got.until(() => got.events.length === h)
    const last = got.events.at(-1)!
    expect(last.eventId).toBe(r.receipt.eventIds[0])
    expect(last.kind).toBe('message.posted')
    const message = (last.document.payload as {message: {author: unknown; content: {text: string}[]}}).message
    expect(message.author).toEqual(owner.principal)
    expect(message.content[0]!.text).toBe('Plan: draft, review, publish.')
    expect(r.receipt.firstSequence).toBe(h + 1)
    await c.close()
  })

  it('[-cmd:message.post] a refused Command is one ERROR with its frame and Action ID; the connection stays usable', async () => {
    const g = await group()
    const c = await connect(running.server.url, owner, {reconnect: false})
    const before = await head(g)
    const r = await c.submit(post(owner, g, {membershipEpoch: 7}))
    expect(codeOf(r)).toBe('MEMBERSHIP_REQUIRED')
    expect('error' in r && r.error.relatedActionId).toMatch(/^urn:uuid:/)
    expect(await head(g)).toBe(before)
    expect(codeOf(await c.submit(post(owner, g)))).toBe('ok')
    await c.close()
  })

  it('an attention filter changes live delivery only; the Cursor passes filtered sequences, never a gap', async () => {
    const g = await group(2)
    const c = await connect(running.server.url, owner, {reconnect: false})
    const got = collector()
    await c.subscribe(g, {afterSequence: 0, kinds: ['message.posted']}, got.onEvent)
    await got.until(() => got.events.length === 2)
    expect(new Set(got.events.map((e) => e.kind))).toEqual(new Set(['message.posted']))
    const h = await head(g)
    await c.ping() // frames are ordered: the server's "delivered through" ACK came before the echo
    expect(c.cursor(g)).toBe(h)
    await c.close()
  })
})

describe('Reconnect and durable Cursors (§16, I1, I3, I4)', () => {
  it('reconnects after a server restart, replays from the durable Cursor and drops the duplicates; ACKed Cursors survive the restart', async () => {
    const g = await group(4)
    // A durable Cursor store that lags: it keeps only what was saved before `frozen` was set.
    const durable = new MemoryCursorStore()
    let frozen = false
    const lagging = {load: (id: string) => durable.load(id), save: (id: string, s: number) => (frozen ? undefined : durable.save(id, s))}
    const sessions: (number | undefined)[] = []
    const c = await connect(running.server.url, owner, {cursors: lagging, reconnect: {initialDelayMs: 20, maxDelayMs: 200}, onSession: (s) => sessions.push(s.sessionEpoch)})
    const got = collector()
    await c.subscribe(g, {afterSequence: 0}, got.onEvent)
    const h = await head(g)
    await got.until(() => got.events.length === h)
    await c.ping() // lets the last onEvent return, so the Cursor covers it
    expect(c.cursor(g)).toBe(h)
    await c.ack(g, h) // durable on the client and, via ACK, on the server
    await c.ping()
    expect(await store.cursors().get(owner.principal!.id, g)).toBe(h)
    frozen = true
    for (let i = 0; i < 2; i++) expect(codeOf(await submit(running.authority, post(owner, g)))).toBe('ok')
    await got.until(() => got.events.length === h + 2)

    // Restart: a new store handle on the same file, a new server on the same port.
    const port = running.server.port
    const reconnected = next<void>((resolve) => {
      const timer = setInterval(() => {
        if (sessions.length === 2) {
          clearInterval(timer)
          resolve()
        }
      }, 10)
    })
    await running.server.close()
    await store.close()
    store = await openTestStore()
    running = await serve(store, {sendWindow: 8, port})
    expect(await store.cursors().get(owner.principal!.id, g)).toBe(h)
    await reconnected
    expect(codeOf(await submit(running.authority, post(owner, g)))).toBe('ok')
    await got.until(() => got.events.length === h + 3)
    // The replay from the durable Cursor h re-sent h+1 and h+2: dropped, never handed on twice.
    await c.ping()
    expect(c.duplicatesDropped).toBeGreaterThanOrEqual(2)
    expect(got.sequences()).toEqual(range(1, h + 3))
    expect(new Set(got.events.map((e) => e.eventId)).size).toBe(h + 3)
    await c.close()
  })
})

describe('Flow control (§17.3, J6)', () => {
  it('a flooded Group is paused with BACKPRESSURE and retry guidance while another Group keeps flowing', async () => {
    const flooded = await group()
    const quiet = await group()
    const notices: {code: string; groupId?: string; detail?: unknown}[] = []
    let resume = false
    const c = await connect(running.server.url, owner, {
      reconnect: false,
      autoAck: false,
      onNotice: (n) => {
        notices.push(n)
        if (resume && n.code === 'BACKPRESSURE') void c.ack(flooded, c.cursor(flooded))
      },
    })
    const a = collector()
    const b = collector()
    await c.subscribe(flooded, {afterSequence: 0}, a.onEvent)
    await c.subscribe(quiet, {afterSequence: 0}, b.onEvent)
    const quietHead = await head(quiet)
    await b.until(() => b.events.length === quietHead)
    for (let i = 0; i < 20; i++) expect(codeOf(await submit(running.authority, post(owner, flooded)))).toBe('ok')
    const paused = () => notices.some((n) => n.code === 'BACKPRESSURE' && n.groupId === flooded)
    await a.until(() => a.events.length === 8)
    await new Promise<void>((resolve) => {
      const t = setInterval(() => paused() && (clearInterval(t), resolve()), 5)
    })
    const notice = notices.find((n) => n.code === 'BACKPRESSURE')!
    expect((notice.detail as {retryAfterMs: number}).retryAfterMs).toBeGreaterThan(0)
    // The other Group is not stalled: a new Event there arrives while the flooded one is paused.
    expect(codeOf(await submit(running.authority, post(owner, quiet)))).toBe('ok')
    await b.until(() => b.events.length === quietHead + 1)
    expect(a.events.length).toBe(8)
    // ACKing resumes the flooded Group from the store: everything arrives, once, in order.
    resume = true
    await c.ack(flooded, c.cursor(flooded))
    const total = await head(flooded)
    await a.until(() => a.events.length === total)
    expect(a.sequences()).toEqual(range(1, total))
    await c.close()
  })
})

describe('CURSOR_TOO_OLD (§16, I5)', () => {
  it('answers a Cursor below the online log with a signed snapshot reference; the client verifies it and resumes after it', async () => {
    const g = await group(6)
    const floor = 5
    const restricted = await serve(store, {onlineLogFloor: (id) => (id === g ? floor : 0)})
    try {
      const c = await connect(restricted.server.url, owner, {reconnect: false})
      const got = collector()
      const snapshots: SnapshotReference[] = []
      await c.subscribe(g, {afterSequence: 2, onSnapshot: (s) => void snapshots.push(s)}, got.onEvent)
      const h = await head(g)
      await got.until(() => got.events.length === h - floor)
      expect(snapshots).toHaveLength(1)
      expect(snapshots[0]!.throughSequence).toBe(floor)
      expect(snapshots[0]!.groupId).toBe(g)
      expect(snapshots[0]!.snapshotHash).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect((snapshots[0]!.document.eventIds as string[]).length).toBe(floor)
      expect(got.sequences()).toEqual(range(floor + 1, h))

      // Without a snapshot handler the subscription stops with the error.
      const errors: string[] = []
      const c2 = await connect(restricted.server.url, owner, {reconnect: false})
      const stopped = next<void>((resolve) => void c2.subscribe(g, {afterSequence: 0, onError: (e) => (errors.push(e.code), resolve())}, () => undefined))
      await stopped
      expect(errors).toEqual(['CURSOR_TOO_OLD'])
      // At the floor the online log serves the replay.
      const fresh = collector()
      await c2.subscribe(g, {afterSequence: floor}, fresh.onEvent)
      await fresh.until(() => fresh.events.length === h - floor)
      await c.close()
      await c2.close()
    } finally {
      await restricted.server.close()
    }
  })
})

/** A raw authenticated socket (HELLO done by hand) for frames the client library never sends. */
async function rawSession(url: string) {
  const ws = new WebSocket(url, {ca: tls().ca, minVersion: 'TLSv1.3'})
  const frames: Record<string, any>[] = []
  const waiters: (() => void)[] = []
  ws.on('message', (d) => {
    frames.push(JSON.parse(d.toString()))
    waiters.splice(0).forEach((w) => w())
  })
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  let read = 0
  const nextFrame = async (accept: (f: Record<string, any>) => boolean = () => true) => {
    for (;;) {
      while (frames.length <= read) await new Promise<void>((r) => waiters.push(r))
      const f = frames[read++]!
      if (f.frameType !== 'PING' || f.replyToNonce !== undefined) if (accept(f)) return f
    }
  }
  const id = owner.principal!.id
  const fid = () => `urn:uuid:${crypto.randomUUID()}`
  const clientNonce = encodeBase64url(randomBytes(32))
  ws.send(JSON.stringify({protocolVersion: '0.1', frameId: fid(), frameType: 'HELLO', phase: 'client_init', agentId: id, keyId: owner.keyId, clientNonce, supportedVersions: ['0.1']}))
  const ch = await nextFrame()
  const sig = signEd25519(owner.seed, transcriptBytes({principalId: id, keyId: owner.keyId, clientNonce, serverNonce: ch.serverNonce, challenge: ch.challenge, selectedVersion: '0.1'}))
  ws.send(JSON.stringify({protocolVersion: '0.1', frameId: fid(), frameType: 'HELLO', phase: 'client_response', agentId: id, keyId: owner.keyId, clientNonce, serverNonce: ch.serverNonce, challengeSignature: encodeBase64url(sig)}))
  expect((await nextFrame()).phase).toBe('server_accept')
  return {ws, next: nextFrame, fid}
}

describe('No existence oracle (§17.2, J4)', () => {
  it('a Group the principal is not a member of gets exactly the answer a missing Group gets', async () => {
    const g = await group(1)
    const c = await connect(running.server.url, developer, {reconnect: false})
    const errors: Record<string, unknown>[] = []
    const answer = (groupId: string) => next<void>((resolve) => void c.subscribe(groupId, {afterSequence: 0, onError: (e) => (errors.push(e), resolve())}, () => undefined))
    await answer(g)
    await answer('urn:mwp:test:group:never-created')
    const shape = (e: Record<string, unknown>) => {
      const {occurredAt: _t, groupId: _g, relatedFrameId: _f, ...rest} = e
      return rest
    }
    expect(errors.map((e) => e.code)).toEqual(['GROUP_NOT_FOUND', 'GROUP_NOT_FOUND'])
    expect(shape(errors[0]!)).toEqual(shape(errors[1]!))
    expect(Object.keys(errors[0]!).sort()).toEqual(Object.keys(errors[1]!).sort())
    await c.close()
  })
})

describe('Framing (§17.1, J2, J5, J7)', () => {
  it('a binary frame, malformed JSON or a duplicate member is answered with PROTOCOL_VIOLATION and nothing else is disturbed', async () => {
    const g = await group(1)
    const other = await connect(running.server.url, owner, {reconnect: false})
    const watching = collector()
    await other.subscribe(g, {afterSequence: 0}, watching.onEvent)
    const h = await head(g)
    await watching.until(() => watching.events.length === h)

    const s = await rawSession(running.server.url)
    s.ws.send(Buffer.from(JSON.stringify({frameType: 'PING'})), {binary: true})
    expect((await s.next()).error.code).toBe('PROTOCOL_VIOLATION')
    s.ws.send('{"protocolVersion":"0.1",')
    expect((await s.next()).error.code).toBe('PROTOCOL_VIOLATION')
    s.ws.send(`{"protocolVersion":"0.1","frameId":"${s.fid()}","frameType":"PING","nonce":"AAAA","nonce":"BBBB","sentAt":"2026-01-01T00:00:00Z"}`)
    expect((await s.next()).error.code).toBe('PROTOCOL_VIOLATION')
    // A client may not send EVENT frames or a second HELLO.
    s.ws.send(JSON.stringify({protocolVersion: '0.1', frameId: s.fid(), frameType: 'HELLO', phase: 'client_init', agentId: owner.principal!.id, keyId: owner.keyId, clientNonce: 'AAAA', supportedVersions: ['0.1']}))
    expect((await s.next()).error.code).toBe('PROTOCOL_VIOLATION')

    // The same connection still works: PING is echoed, SUBSCRIBE replays.
    s.ws.send(JSON.stringify({protocolVersion: '0.1', frameId: s.fid(), frameType: 'PING', nonce: 'Q0FGRQ', sentAt: new Date().toISOString()}))
    const echo = await s.next()
    expect(echo.frameType).toBe('PING')
    expect(echo.replyToNonce).toBe('Q0FGRQ')
    s.ws.send(JSON.stringify({protocolVersion: '0.1', frameId: s.fid(), frameType: 'SUBSCRIBE', subscriptionId: s.fid(), groups: [{groupId: g, afterSequence: 0}]}))
    const first = await s.next()
    expect(first.frameType).toBe('EVENT')
    expect(first.event.sequence).toBe(1)
    s.ws.close()

    // The other connection kept its subscription.
    expect(codeOf(await submit(running.authority, post(owner, g)))).toBe('ok')
    await watching.until(() => watching.events.length === h + 1)
    await other.close()
  })

  it('PING carries Presence for the session own Agent only; it is echoed and never disclosed elsewhere', async () => {
    const s = await rawSession(running.server.url)
    const presence = {agentId: 'urn:mwp:dev:agent:someone-else', sessionEpoch: 1, status: 'online', capacity: {maxSlots: 1, activeSlots: 0, availableSlots: 1, queuedItems: 0}, capabilityAvailability: [], lastHeartbeat: new Date().toISOString(), expiresAt: new Date(Date.now() + 60_000).toISOString()}
    s.ws.send(JSON.stringify({protocolVersion: '0.1', frameId: s.fid(), frameType: 'PING', nonce: 'UFJFUw', sentAt: new Date().toISOString(), presence}))
    expect((await s.next()).error.code).toBe('PROTOCOL_VIOLATION')
    s.ws.close()
  })
})
