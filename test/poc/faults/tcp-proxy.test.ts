// The TCP proxy the PoC and the offline Agent tests cut from outside (src/poc/faults/tcp-proxy.ts):
// a live connection through it is reset on cut(), new ones are refused while it is cut, a new one
// goes through after restore(), the counters say so, and close() leaves no socket behind. Real
// sockets on loopback against an echo server.

import {type Server, type Socket, connect, createServer} from 'node:net'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {FaultProxyError} from '../../../src/poc/faults/loopback.js'
import {type TcpProxy, tcpProxy} from '../../../src/poc/faults/tcp-proxy.js'

let echo: Server
let targetUrl: string
const serverSide = new Set<Socket>()

beforeAll(async () => {
  echo = createServer((s) => {
    serverSide.add(s)
    s.on('close', () => serverSide.delete(s)).on('error', () => undefined)
    s.pipe(s)
  })
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve))
  const address = echo.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  targetUrl = `wss://127.0.0.1:${address.port}`
})
afterAll(async () => {
  for (const s of serverSide) s.destroy()
  await new Promise<void>((resolve) => echo?.close(() => resolve()))
})

/** A client connection through the proxy, with everything it received and how it ended. */
interface Line {
  socket: Socket
  received(): string
  /** Resolves when the connection is closed: with the error code that ended it, or 'closed'. */
  ended: Promise<string>
}

function dial(proxy: TcpProxy): Promise<Line> {
  const port = Number(new URL(proxy.url).port)
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    let code = 'closed'
    socket.on('data', (d: Buffer) => (text += d.toString()))
    socket.on('error', (e: NodeJS.ErrnoException) => (code = e.code ?? 'error'))
    const ended = new Promise<string>((r) => socket.once('close', () => r(code)))
    socket.once('connect', () => resolve({socket, received: () => text, ended}))
    socket.once('error', reject)
  })
}

/** Writes `text` and waits for its echo; fails if the connection ends first. */
async function roundTrip(line: Line, text: string): Promise<void> {
  const start = line.received().length
  line.socket.write(text)
  const echoed = new Promise<void>((resolve) => {
    const check = () => {
      if (line.received().slice(start) !== text) return
      line.socket.off('data', check)
      resolve()
    }
    line.socket.on('data', check)
  })
  const why = await Promise.race([echoed.then(() => null), line.ended])
  if (why !== null) throw new Error(`the connection ended (${why}) before the echo of ${text}`)
}

const tcpHandles = () => process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).length

async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (ok()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('tcpProxy', () => {
  it('cut() resets a live connection and refuses new ones; after restore() a new one goes through; the counters count', async () => {
    const proxy = await tcpProxy(targetUrl)
    try {
      expect(new URL(proxy.url).hostname).toBe('127.0.0.1') // the target's host, for TLS passing through
      const first = await dial(proxy)
      await roundTrip(first, 'before the cut')
      expect(proxy.stats).toEqual({accepted: 1, refused: 0, cuts: 0, dropped: 0})

      proxy.cut()
      expect(proxy.isCut).toBe(true)
      expect(await first.ended).toBe('ECONNRESET')
      expect(proxy.stats).toEqual({accepted: 1, refused: 0, cuts: 1, dropped: 1})

      // While cut: the connection is accepted by the kernel but closed at once, nothing echoed.
      const refused = await dial(proxy)
      refused.socket.write('while cut')
      await refused.ended
      expect(refused.received()).toBe('')
      await expect(roundTrip(await dial(proxy), 'still cut')).rejects.toThrow(/ended/)
      proxy.cut() // already cut: not a second cut
      expect(proxy.stats).toEqual({accepted: 1, refused: 2, cuts: 1, dropped: 1})

      proxy.restore()
      expect(proxy.isCut).toBe(false)
      const after = await dial(proxy)
      await roundTrip(after, 'after the restore')
      expect(proxy.stats).toEqual({accepted: 2, refused: 2, cuts: 1, dropped: 1})
      after.socket.end()
      await after.ended
    } finally {
      await proxy.close()
    }
  })

  it('close() ends every connection, stops listening and leaves no TCP handle behind', async () => {
    // The earlier tests' sockets finish closing: then the echo server's listener is the one TCP handle left.
    const baseline = 1
    await until(() => serverSide.size === 0 && tcpHandles() === baseline, 'the echo server alone')
    const proxy = await tcpProxy(targetUrl)
    const line = await dial(proxy)
    await roundTrip(line, 'live')
    expect(tcpHandles()).toBeGreaterThan(baseline)
    await proxy.close()
    expect(await line.ended).toBe('ECONNRESET')
    const port = Number(new URL(proxy.url).port)
    const refused = await new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1')
      s.once('connect', () => (s.destroy(), resolve('connected')))
      s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'))
    })
    expect(refused).toBe('ECONNREFUSED')
    // The proxy's upstream socket is gone too: the echo server sees its connection end.
    await until(() => serverSide.size === 0, 'the upstream connection closed')
    await until(() => tcpHandles() === baseline, `the TCP handles back to ${baseline}`)
    expect(proxy.stats.cuts).toBe(0) // closing is not a cut
  })

  it('forwards to loopback only, and needs a port', async () => {
    await expect(tcpProxy('wss://192.0.2.1:443')).rejects.toBeInstanceOf(FaultProxyError)
    await expect(tcpProxy('wss://example.org:443')).rejects.toMatchObject({code: 'usage'})
    await expect(tcpProxy('tcp://127.0.0.1')).rejects.toMatchObject({code: 'usage'})
    const local = await tcpProxy('wss://localhost:1')
    expect(new URL(local.url).hostname).toBe('localhost')
    await local.close()
  })
})
