// The fault-injecting WebSocket proxy's own contract (src/poc/faults/ws-fault-proxy.ts), against a
// scripted upstream: what it faults (delivery EVENT frames: 2–3 copies, shuffled, some late), what it
// keeps in order (command answers, in place), and what must not overtake what (a server ACK
// "delivered through" never overtakes a held delivery it covers; one covering the withheld sequence
// waits for its release). agent-delivery.test.ts relies on these to fault only what §16 allows.

import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {createServer} from 'node:https'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import WebSocket, {WebSocketServer} from 'ws'
import {type WsFaultProxy, wsFaultProxy} from '../../src/poc/faults/ws-fault-proxy.js'
import {tls} from '../support/wire-helpers.js'

const G = 'urn:mwp:dev:org:example:group:g'
const delivery = (sequence: number, groupId = G) =>
  JSON.stringify({
    protocolVersion: '0.1',
    frameId: `urn:mwp:delivery:urn:uuid:e-${groupId}-${sequence}`,
    frameType: 'EVENT',
    event: {groupId, sequence, eventId: `urn:uuid:e-${groupId}-${sequence}`},
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
const ping = JSON.stringify({protocolVersion: '0.1', frameId: 'urn:uuid:ping', frameType: 'PING', nonce: 'n'})

let dir: string
let proxy: WsFaultProxy
let upstream: WebSocket | null = null
const fromClient: string[] = []
let server: ReturnType<typeof createServer>

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-ws-fault-proxy-'))
  server = createServer({cert: tls().cert, key: tls().key, minVersion: 'TLSv1.3'})
  const wss = new WebSocketServer({server})
  wss.on('connection', (ws) => {
    upstream = ws
    ws.on('message', (d) => fromClient.push(d.toString()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as {port: number}).port
  proxy = await wsFaultProxy(`wss://127.0.0.1:${port}`, {targetCa: tls().ca, tlsDir: join(dir, 'tls'), seed: 7})
})
afterAll(async () => {
  await proxy?.close()
  server?.closeAllConnections()
  await new Promise<void>((resolve) => server?.close(() => resolve()))
  rmSync(dir, {recursive: true, force: true})
})

/** A client through the proxy, recording every frame it receives. */
async function client() {
  upstream = null
  const ws = new WebSocket(proxy.url, {ca: readFileSync(proxy.caFile), minVersion: 'TLSv1.3'})
  const got: Record<string, unknown>[] = []
  ws.on('message', (d) => got.push(JSON.parse(d.toString()) as Record<string, unknown>))
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  for (let i = 0; i < 100 && upstream === null; i++) await new Promise((r) => setTimeout(r, 10))
  return {ws, got, up: upstream!}
}
const settle = () => new Promise((r) => setTimeout(r, 200))
const label = (f: Record<string, unknown>) =>
  f.frameType === 'EVENT'
    ? `${String(f.frameId).startsWith('urn:mwp:receipt:') ? 'r' : 'e'}${(f.event as {sequence: number}).sequence}`
    : f.frameType === 'ACK'
      ? `ack${(f.acknowledgements as {sequence: number}[])[0]!.sequence}`
      : String(f.frameType)

describe('wsFaultProxy', () => {
  it('delivers every delivery EVENT two or three times, shuffled, and never lets a server ACK overtake one it covers; client frames pass unchanged', async () => {
    const c = await client()
    // 11: the window of 4 still holds three when the ACK comes.
    for (let s = 1; s <= 11; s++) c.up.send(delivery(s))
    c.up.send(serverAck(11))
    await settle()
    const labels = c.got.map(label)
    for (let s = 1; s <= 11; s++) {
      const n = labels.filter((l) => l === `e${s}`).length
      expect(n).toBeGreaterThanOrEqual(2)
      expect(n).toBeLessThanOrEqual(3)
    }
    const ackAt = labels.indexOf('ack11')
    for (let s = 1; s <= 11; s++) expect(labels.indexOf(`e${s}`)).toBeLessThan(ackAt)
    const firsts = [...new Set(labels.filter((l) => l.startsWith('e')))]
    expect(firsts).not.toEqual(Array.from({length: 11}, (_, i) => `e${i + 1}`))
    expect(proxy.stats.barriers).toBe(1)
    expect(proxy.stats.reordered).toBeGreaterThan(0)
    expect(proxy.stats.duplicated).toBe(proxy.stats.deliveryOut - proxy.stats.deliveryIn)

    const ack = JSON.stringify({frameType: 'ACK', acknowledgements: [{groupId: G, sequence: 12}], x: ' kept '})
    c.ws.send(ack)
    await settle()
    expect(fromClient.at(-1)).toBe(ack)
    expect(proxy.acks.at(-1)).toMatchObject({groupId: G, sequence: 12})
    c.ws.close()
  })

  it('duplicates a command answer in place, its i-of-n order kept, without holding it', async () => {
    const c = await client()
    c.up.send(receipt(1, 2))
    c.up.send(receipt(2, 2))
    await new Promise((r) => setTimeout(r, 20)) // less than the hold time of a delivery window
    const labels = c.got.map(label)
    expect(labels.length).toBeGreaterThanOrEqual(4)
    expect(labels.lastIndexOf('r101')).toBeLessThan(labels.indexOf('r102'))
    c.ws.close()
  })

  it('withholds one sequence, and a server ACK covering it, until release; the rest goes on', async () => {
    const c = await client()
    proxy.withhold(G, 21)
    for (const s of [20, 21, 22]) c.up.send(delivery(s))
    c.up.send(serverAck(22))
    c.up.send(delivery(1, `${G}-other`))
    c.up.send(ping)
    await settle()
    let labels = c.got.map(label)
    expect(labels).toContain('e20')
    expect(labels).toContain('e22')
    expect(labels).toContain('PING')
    expect(labels).not.toContain('e21')
    expect(labels).not.toContain('ack22')
    expect(proxy.stats.withheld).toBe(1)
    proxy.release()
    await settle()
    labels = c.got.map(label)
    expect(labels.filter((l) => l === 'e21').length).toBeGreaterThanOrEqual(2)
    expect(labels.indexOf('e21')).toBeLessThan(labels.indexOf('ack22'))
    c.ws.close()
  })
})
