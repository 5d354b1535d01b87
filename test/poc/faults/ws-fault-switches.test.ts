// The WebSocket fault proxy's run-time switches and counters (src/poc/faults/ws-fault-proxy.ts), as
// `mwp poc run` uses them: faults off, every delivery EVENT frame arrives exactly once and in
// order; on again, duplicates and reordering come back; each switch alone does only its own fault;
// switching off first releases what is held. Against a scripted upstream over real wss sockets on
// loopback. The hold time is far beyond any wait here, so only a full window, a server ACK or a
// switch releases held frames: what arrives depends on the seed and the frames, not on timing.

import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {connect as tcpConnect} from 'node:net'
import {createServer} from 'node:https'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import WebSocket, {WebSocketServer} from 'ws'
import {FaultProxyError} from '../../../src/poc/faults/loopback.js'
import {type WsFaultProxy, wsFaultProxy} from '../../../src/poc/faults/ws-fault-proxy.js'
import {tls} from '../../support/wire-helpers.js'

const G = 'urn:mwp:dev:org:example:group:g'
const delivery = (sequence: number) =>
  JSON.stringify({
    protocolVersion: '0.1',
    frameId: `urn:mwp:delivery:urn:uuid:e-${sequence}`,
    frameType: 'EVENT',
    event: {groupId: G, sequence, eventId: `urn:uuid:e-${sequence}`},
  })
const receipt = (i: number, n: number) =>
  JSON.stringify({
    protocolVersion: '0.1',
    frameId: `urn:mwp:receipt:${i}-of-${n}:r`,
    frameType: 'EVENT',
    event: {groupId: G, sequence: 100 + i, eventId: `urn:uuid:r-${i}`},
  })
const serverAck = (sequence: number) =>
  JSON.stringify({
    protocolVersion: '0.1',
    frameId: `urn:uuid:ack-${sequence}`,
    frameType: 'ACK',
    acknowledgements: [{groupId: G, sequence}],
  })

const range = (from: number, to: number) => Array.from({length: to - from + 1}, (_, i) => from + i)
const e = (s: number) => `e${s}`

let dir: string
let server: ReturnType<typeof createServer>
let targetUrl: string
let upstream: WebSocket | null = null
let proxy: WsFaultProxy

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-ws-fault-switches-'))
  server = createServer({cert: tls().cert, key: tls().key, minVersion: 'TLSv1.3'})
  const wss = new WebSocketServer({server})
  wss.on('connection', (ws) => (upstream = ws))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  targetUrl = `wss://127.0.0.1:${address.port}`
  proxy = await wsFaultProxy(targetUrl, {targetCa: tls().ca, tlsDir: join(dir, 'tls'), seed: 11, holdMs: 600_000})
})
afterAll(async () => {
  await proxy?.close()
  server?.closeAllConnections()
  await new Promise<void>((resolve) => server?.close(() => resolve()))
  rmSync(dir, {recursive: true, force: true})
})

/** Polls `ok` until it holds (at most ~10 s), then returns; fails naming `what` otherwise. */
async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (ok()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const label = (f: {frameType?: unknown; frameId?: unknown; event?: {sequence: number}; acknowledgements?: unknown}) =>
  f.frameType === 'EVENT'
    ? `${String(f.frameId).startsWith('urn:mwp:receipt:') ? 'r' : 'e'}${f.event!.sequence}`
    : f.frameType === 'ACK'
      ? `ack${(f.acknowledgements as {sequence: number}[])[0]!.sequence}`
      : String(f.frameType)

type Client = Awaited<ReturnType<typeof client>>
/** Clients not hung up yet: a failed test's are hung up after it, so the next test starts clean. */
const open = new Set<Client>()
afterEach(async () => {
  for (const c of open) await hangUp(c)
})

/** A client through `via`, recording the label of every frame it receives, and the upstream end of it. */
async function client(via: WsFaultProxy = proxy) {
  upstream = null
  const ws = new WebSocket(via.url, {ca: readFileSync(via.caFile), minVersion: 'TLSv1.3'})
  const got: string[] = []
  ws.on('message', (d) => got.push(label(JSON.parse(d.toString()))))
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  await until(() => upstream !== null, 'the upstream connection')
  const c = {ws, got, up: upstream!}
  open.add(c)
  return c
}

/**
 * Sends delivery frames `from`..`to`, then a server ACK through `to` twice, and returns what the
 * client got up to the second. The first ACK releases the held window; the second releases the
 * late duplicates the first release deferred, so every copy is out by then.
 */
async function deliver(c: Client, from: number, to: number): Promise<string[]> {
  const start = c.got.length
  for (const s of range(from, to)) c.up.send(delivery(s))
  c.up.send(serverAck(to))
  c.up.send(serverAck(to))
  await until(() => c.got.slice(start).filter((l) => l === `ack${to}`).length === 2, `ack${to} twice`)
  return c.got.slice(start)
}

/** The check the PoC's fault-free claim rests on: each Event exactly once, in sequence order, then the ACKs. */
const onceInOrder = (labels: string[], from: number, to: number) =>
  JSON.stringify(labels) === JSON.stringify([...range(from, to).map(e), `ack${to}`, `ack${to}`])

/** Closes a client and waits until both ends of its connection are closed. */
async function hangUp(c: Client): Promise<void> {
  open.delete(c)
  const closed = (ws: WebSocket) =>
    ws.readyState === WebSocket.CLOSED ? Promise.resolve() : new Promise((r) => ws.once('close', r))
  const both = Promise.all([closed(c.ws), closed(c.up)])
  c.ws.close()
  await both
}

/** Live TCP handles of this process (servers and sockets, TLS ones included). */
const tcpHandles = () => process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).length

const snapshot = () => ({...proxy.stats})

describe('wsFaultProxy: faults switched at run time', () => {
  it('faults off: each delivery EVENT frame arrives exactly once, in order, and the counters show no fault; on again: duplicates and reordering reappear', async () => {
    const c = await client()
    proxy.setFaults({duplicate: false, reorder: false})
    expect(proxy.faults).toEqual({duplicate: false, reorder: false})
    const before = snapshot()
    const clean = await deliver(c, 1, 11)
    expect(clean).toEqual([...range(1, 11).map(e), 'ack11', 'ack11'])
    expect(onceInOrder(clean, 1, 11)).toBe(true)
    const off = snapshot()
    expect(off.deliveryIn - before.deliveryIn).toBe(11)
    expect(off.deliveryOut - before.deliveryOut).toBe(11)
    expect(off.duplicated).toBe(before.duplicated)
    expect(off.lateDuplicates).toBe(before.lateDuplicates)
    expect(off.reordered).toBe(before.reordered)
    expect(off.barriers).toBe(before.barriers) // nothing was held when the ACK came

    proxy.setFaults({duplicate: true, reorder: true})
    // Thirty frames: enough windows that some first copies come out of order (for this seed, so always).
    const faulted = await deliver(c, 12, 41)
    // The same check fails on the faulted stream: it can tell faults from none.
    expect(onceInOrder(faulted, 12, 41)).toBe(false)
    for (const s of range(12, 41)) {
      const n = faulted.filter((l) => l === e(s)).length
      expect(n).toBeGreaterThanOrEqual(2)
      expect(n).toBeLessThanOrEqual(3)
    }
    const firsts = [...new Set(faulted.filter((l) => l.startsWith('e')))]
    expect(firsts).not.toEqual(range(12, 41).map(e))
    // No first copy overtakes the ACK that covers it.
    for (const s of range(12, 41)) expect(faulted.indexOf(e(s))).toBeLessThan(faulted.indexOf('ack41'))
    const events = faulted.filter((l) => l.startsWith('e'))
    const on = snapshot()
    expect(on.deliveryIn - off.deliveryIn).toBe(30)
    expect(on.deliveryOut - off.deliveryOut).toBe(events.length)
    expect(on.duplicated - off.duplicated).toBe(events.length - 30)
    expect(on.reordered).toBeGreaterThan(off.reordered)
    await hangUp(c)
  })

  it('duplicate alone: every frame two or three times, copies adjacent, in order, never held', async () => {
    proxy.setFaults({duplicate: true, reorder: false})
    const c = await client()
    const before = snapshot()
    // Not held: a single frame goes out at once, though the window (4) is not full and no ACK follows.
    c.up.send(delivery(1))
    await until(() => c.got.includes('e1'), 'e1 alone')
    const labels = [...c.got, ...(await deliver(c, 2, 9))]
    const events = labels.filter((l) => l.startsWith('e'))
    // Adjacent copies, in order: collapsing runs gives the sequence once each.
    expect(events.filter((l, i) => l !== events[i - 1])).toEqual(range(1, 9).map(e))
    for (const s of range(1, 9)) expect([2, 3]).toContain(events.filter((l) => l === e(s)).length)
    const after = snapshot()
    expect(after.duplicated - before.duplicated).toBe(events.length - 9)
    expect(after.reordered).toBe(before.reordered)
    expect(after.lateDuplicates).toBe(before.lateDuplicates)
    c.up.send(receipt(1, 1))
    await until(() => c.got.filter((l) => l === 'r101').length >= 2, 'a duplicated command answer')
    await hangUp(c)
  })

  it('reorder alone: every frame exactly once, shuffled; a command answer once', async () => {
    proxy.setFaults({duplicate: false, reorder: true})
    const c = await client()
    const before = snapshot()
    const labels = await deliver(c, 1, 12)
    const events = labels.filter((l) => l.startsWith('e'))
    expect([...events].sort()).toEqual(range(1, 12).map(e).sort())
    expect(events).not.toEqual(range(1, 12).map(e))
    expect(labels.slice(-2)).toEqual(['ack12', 'ack12'])
    const after = snapshot()
    expect(after.duplicated).toBe(before.duplicated)
    expect(after.reordered).toBeGreaterThan(before.reordered)
    const receipts = snapshot().receiptOut
    c.up.send(receipt(1, 1))
    c.up.send(serverAck(12)) // a marker behind the answer
    await until(() => c.got.filter((l) => l === 'ack12').length === 3, 'the marker')
    expect(c.got.filter((l) => l === 'r101')).toHaveLength(1)
    expect(proxy.stats.receiptOut - receipts).toBe(1)
    await hangUp(c)
  })

  it('switching the faults off releases what is held at once, in order, before anything taken in after the switch', async () => {
    proxy.setFaults({duplicate: true, reorder: true})
    const c = await client()
    const before = snapshot()
    for (const s of range(1, 3)) c.up.send(delivery(s))
    await until(() => proxy.stats.deliveryIn === before.deliveryIn + 3, 'the proxy taking in e1..e3')
    expect(c.got).toEqual([]) // held: the window of 4 is not full, and the hold time is long
    proxy.setFaults({duplicate: false, reorder: false})
    // Out with nothing behind them to push them: the switch itself released them, once each, in order.
    await until(() => c.got.length === 3, 'e1..e3 after the switch')
    expect(c.got).toEqual(['e1', 'e2', 'e3'])
    await deliver(c, 4, 5)
    expect(c.got).toEqual([...range(1, 5).map(e), 'ack5', 'ack5'])
    await hangUp(c)
  })

  it('close() ends the client and upstream connections, stops listening and leaves no handle behind', async () => {
    // The earlier tests' connections finish closing: then the scripted upstream's and the shared
    // proxy's listeners are the TCP handles left.
    const baseline = 2
    await until(() => tcpHandles() === baseline, 'the two listeners alone')
    const other = await wsFaultProxy(targetUrl, {
      targetCa: tls().ca,
      tlsDir: join(dir, 'tls-2'),
      seed: 3,
      holdMs: 600_000,
    })
    const c = await client(other)
    c.up.send(delivery(1)) // held in the window when the proxy closes
    await until(() => other.stats.deliveryIn === 1, 'the proxy taking in e1')
    expect(tcpHandles()).toBeGreaterThan(baseline)
    const clientClosed = new Promise<void>((resolve) => c.ws.once('close', () => resolve()))
    const upstreamClosed = new Promise<void>((resolve) => c.up.once('close', () => resolve()))
    await other.close()
    await clientClosed
    await upstreamClosed
    const port = Number(new URL(other.url).port)
    const refused = await new Promise<string>((resolve) => {
      const s = tcpConnect(port, '127.0.0.1')
      s.once('connect', () => (s.destroy(), resolve('connected')))
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'))
    })
    expect(refused).toBe('ECONNREFUSED')
    await until(() => tcpHandles() === baseline, `the TCP handles back to ${baseline}`)
  })

  it('forwards to loopback only', async () => {
    const options = {targetCa: tls().ca, tlsDir: join(dir, 'tls-3'), seed: 1}
    await expect(wsFaultProxy('wss://192.0.2.1:443', options)).rejects.toBeInstanceOf(FaultProxyError)
    await expect(wsFaultProxy('wss://example.org', options)).rejects.toMatchObject({code: 'usage'})
  })
})
