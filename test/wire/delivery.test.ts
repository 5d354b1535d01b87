// WebSocket binding, part 2 (spec §8, §16, §17; ACCEPTANCE I1-I5, J2, J4-J7): SUBSCRIBE replay
// and live delivery, attention filters, reconnect with duplicates dropped, durable ACK Cursors
// across a restart, per-Group BACKPRESSURE, CURSOR_TOO_OLD with a signed snapshot, the
// no-existence-oracle rule, and malformed or binary frames. Real TLS 1.3 on 127.0.0.1, SQLite.

import {randomUUID} from 'node:crypto'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {submit} from '../../src/authority/ingress/command.js'
import {Rejection, verify} from '../../src/signing/verify.js'
import {openSession} from '../../src/authority/ingress/sessions.js'
import {DEFAULT_FRESHNESS, type Store, initStore, openStore} from '../../src/store/index.js'
import {MemoryCursorStore, type SnapshotReference} from '../../src/wire/client.js'
import {
  admissionKey,
  registry,
  codeOf,
  contract,
  coord,
  coordinator,
  developer,
  groupCommand,
  owner,
  post,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {type Running, collector, connect, frameId, next, rawSession, serve} from '../support/wire-helpers.js'

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
    admissionService: {
      principal: admissionKey.principal!,
      keyId: admissionKey.keyId,
      publicKey: admissionKey.publicKeyB64,
    },
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
  const g = await missionGroup((bytes) => submit(running.authority, bytes), 'wire-delivery', {members: []})
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

describe('Membership visibility (§8, §17.2)', () => {
  it('a late-joining member receives only the history its Membership allows; its Cursor passes the earlier sequences', async () => {
    const g = await group(3)
    const joinedAt = (await head(g)) + 1
    const join = groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'})
    expect(codeOf(await submit(running.authority, join))).toBe('ok')
    expect(codeOf(await submit(running.authority, post(owner, g)))).toBe('ok')
    const c = await connect(running.server.url, developer, {reconnect: false})
    const got = collector()
    await c.subscribe(g, {afterSequence: 0}, got.onEvent)
    const h = await head(g)
    await got.until(() => got.events.length === h - joinedAt + 1)
    expect(got.sequences()).toEqual(range(joinedAt, h))
    expect(got.events[0]!.kind).toBe('membership.changed')
    await c.ping()
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
    const lagging = {
      load: (id: string) => durable.load(id),
      save: (id: string, s: number) => (frozen ? undefined : durable.save(id, s)),
    }
    const sessions: (number | undefined)[] = []
    // No automatic ACKs: the server's Cursor is exactly what this test ACKs. (With them, whether
    // the client's delayed ACK of h+1 reached the server before the restart was a race.)
    const c = await connect(running.server.url, owner, {
      cursors: lagging,
      autoAck: false,
      reconnect: {initialDelayMs: 20, maxDelayMs: 200},
      onSession: (s) => sessions.push(s.sessionEpoch),
    })
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
  it('a flooded Group is paused with BACKPRESSURE and retry guidance while another Group keeps flowing; an ACK resumes it', async () => {
    const flooded = await group()
    const quiet = await group()
    const h0 = await head(flooded)
    const quietHead = await head(quiet)
    const s = await rawSession(running.server.url, owner)
    s.send({
      protocolVersion: '0.1',
      frameId: frameId(),
      frameType: 'SUBSCRIBE',
      subscriptionId: frameId(),
      groups: [
        {groupId: flooded, afterSequence: h0},
        {groupId: quiet, afterSequence: 0},
      ],
    })
    for (let i = 1; i <= quietHead; i++) expect((await s.next()).event.sequence).toBe(i)
    for (let i = 0; i < 20; i++) expect(codeOf(await submit(running.authority, post(owner, flooded)))).toBe('ok')
    // The window is 8 un-ACKed Events: exactly 8 arrive, then BACKPRESSURE for that Group.
    for (let i = 1; i <= 8; i++) expect((await s.next()).event).toMatchObject({groupId: flooded, sequence: h0 + i})
    const paused = await s.next()
    expect(paused.error).toMatchObject({code: 'BACKPRESSURE', groupId: flooded, retryable: true})
    expect(paused.error.retryAfterMs).toBeGreaterThan(0)
    // The other Group is not stalled: its next Event is the very next frame.
    expect(codeOf(await submit(running.authority, post(owner, quiet)))).toBe('ok')
    expect((await s.next()).event).toMatchObject({groupId: quiet, sequence: quietHead + 1})
    // An ACK frees the window: the next 8 come from the store, in order, then the pause again.
    s.send({
      protocolVersion: '0.1',
      frameId: frameId(),
      frameType: 'ACK',
      acknowledgements: [{groupId: flooded, sequence: h0 + 8}],
      sentAt: new Date().toISOString(),
    })
    for (let i = 9; i <= 16; i++) expect((await s.next()).event).toMatchObject({groupId: flooded, sequence: h0 + i})
    expect((await s.next()).error).toMatchObject({code: 'BACKPRESSURE', groupId: flooded})
    s.ws.close()
  })

  it('the client answers BACKPRESSURE with its processed Cursor, so a consumer gets everything, once, in order', async () => {
    const flooded = await group(20)
    const cursors = new MemoryCursorStore()
    const notices: string[] = []
    const c = await connect(running.server.url, owner, {
      reconnect: false,
      autoAck: false,
      cursors,
      onNotice: (n) => notices.push(n.code),
    })
    const got = collector()
    await c.subscribe(flooded, {afterSequence: 0}, got.onEvent)
    const total = await head(flooded)
    await got.until(() => got.events.length === total)
    expect(got.sequences()).toEqual(range(1, total))
    expect(notices).toContain('BACKPRESSURE')
    // Without autoAck the durable Cursor store is the application's: the client wrote nothing.
    expect(cursors.load(flooded)).toBeNull()
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
      // The MissionOwner sees the whole Group, so the state comes along (hash-checked by the client).
      expect((snapshots[0]!.state as {sequence: number; groupId: string}).sequence).toBe(floor)
      expect(got.sequences()).toEqual(range(floor + 1, h))

      // Without a snapshot handler the subscription stops with the error.
      const errors: string[] = []
      const c2 = await connect(restricted.server.url, owner, {reconnect: false})
      const stopped = next<void>(
        (resolve) =>
          void c2.subscribe(g, {afterSequence: 0, onError: (e) => (errors.push(e.code), resolve())}, () => undefined),
      )
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

describe('Just-in-time Worker Membership on the wire (§8)', () => {
  it('a candidate holding a provisional Membership receives the Group from the offer on (its visibility start); before the offer it could not subscribe', async () => {
    const g = await group(2)
    const w = `urn:uuid:${randomUUID()}`
    const c = await connect(running.server.url, developer, {reconnect: false})
    const refused = await next<Record<string, unknown>>(
      (resolve) => void c.subscribe(g, {afterSequence: 0, onError: (e) => resolve(e)}, () => undefined),
    )
    expect(refused.code).toBe('GROUP_NOT_FOUND')
    // The Coordinator acts through its own session (the server requires Agent sessions).
    const session = {sessionEpoch: await openSession(running.authority, coordinator.principal!.id)}
    expect(
      codeOf(
        await submit(
          running.authority,
          coord('work.authorize', g, {workItemId: w, contract: contract()}, 1, coordinator, session),
        ),
      ),
    ).toBe('ok')
    const offerSequence = (await head(g)) + 1
    const offer = coord(
      'work.offer',
      g,
      {
        workItemId: w,
        candidates: [developer.principal!.id],
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
        contextPackageId: 'urn:mwp:test:context-package:jit',
      },
      1,
      coordinator,
      session,
    )
    expect(codeOf(await submit(running.authority, offer))).toBe('ok')
    const got = collector()
    await c.subscribe(g, {afterSequence: 0}, got.onEvent)
    await got.until(() => got.events.length >= 1)
    expect(got.events.map((e) => [e.sequence, e.kind])).toEqual([[offerSequence, 'work.offer.created']])
    await c.close()
  })
})

describe('No existence oracle (§17.2, J4)', () => {
  it('a Group the principal is not a member of gets exactly the answer a missing Group gets', async () => {
    const g = await group(1)
    const c = await connect(running.server.url, developer, {reconnect: false})
    const errors: Record<string, unknown>[] = []
    const answer = (groupId: string) =>
      next<void>(
        (resolve) =>
          void c.subscribe(groupId, {afterSequence: 0, onError: (e) => (errors.push(e), resolve())}, () => undefined),
      )
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

    const s = await rawSession(running.server.url, owner)
    s.ws.send(Buffer.from(JSON.stringify({frameType: 'PING'})), {binary: true})
    expect((await s.next()).error.code).toBe('PROTOCOL_VIOLATION')
    s.ws.send('{"protocolVersion":"0.1",')
    expect((await s.next()).error.code).toBe('PROTOCOL_VIOLATION')
    s.ws.send(
      `{"protocolVersion":"0.1","frameId":"${frameId()}","frameType":"PING","nonce":"AAAA","nonce":"BBBB","sentAt":"2026-01-01T00:00:00Z"}`,
    )
    expect((await s.next()).error.code).toBe('PROTOCOL_VIOLATION')
    // A client may not send EVENT frames or a second HELLO.
    s.ws.send(
      JSON.stringify({
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'HELLO',
        phase: 'client_init',
        agentId: owner.principal!.id,
        keyId: owner.keyId,
        clientNonce: 'AAAA',
        supportedVersions: ['0.1'],
      }),
    )
    expect((await s.next()).error.code).toBe('PROTOCOL_VIOLATION')

    // A Command with a number outside binary64 is verified as received (never re-serialized into
    // something else): the answer is the six-stage verifier's own code for those bytes, and
    // nothing is appended.
    const before = await head(g)
    const overflow = post(owner, g).toString('utf8').replace('"membershipEpoch":1', '"membershipEpoch":1e400')
    const verdict = verify('command', Buffer.from(overflow), registry)
    expect(verdict).toBeInstanceOf(Rejection)
    s.ws.send(`{"protocolVersion":"0.1","frameId":"${frameId()}","frameType":"COMMAND","command":${overflow}}`)
    expect((await s.next()).error.code).toBe((verdict as Rejection).code)
    expect(await head(g)).toBe(before)

    // The same connection still works: PING is echoed, SUBSCRIBE replays.
    s.ws.send(
      JSON.stringify({
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'PING',
        nonce: 'Q0FGRQ',
        sentAt: new Date().toISOString(),
      }),
    )
    const echo = await s.next()
    expect(echo.frameType).toBe('PING')
    expect(echo.replyToNonce).toBe('Q0FGRQ')
    s.ws.send(
      JSON.stringify({
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'SUBSCRIBE',
        subscriptionId: frameId(),
        groups: [{groupId: g, afterSequence: 0}],
      }),
    )
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
    const s = await rawSession(running.server.url, owner)
    const presence = {
      agentId: 'urn:mwp:dev:agent:someone-else',
      sessionEpoch: 1,
      status: 'online',
      capacity: {maxSlots: 1, activeSlots: 0, availableSlots: 1, queuedItems: 0},
      capabilityAvailability: [],
      lastHeartbeat: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    }
    s.ws.send(
      JSON.stringify({
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'PING',
        nonce: 'UFJFUw',
        sentAt: new Date().toISOString(),
        presence,
      }),
    )
    expect((await s.next()).error.code).toBe('PROTOCOL_VIOLATION')
    s.ws.close()
  })
})
