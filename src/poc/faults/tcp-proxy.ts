// A real TCP proxy on loopback between an Agent and the authority, for faults injected from
// outside the process under test: cut() resets every connection through it and refuses new
// ones until restore() — to the Agent the Group service is unreachable (a temporary Group
// disconnection). TLS passes through untouched (the Agent still verifies the authority's
// certificate, so the proxy's URL keeps the target's host name). It lives in src/ because
// `mwp poc run` cuts it at run time, as the offline tests do.

import {type Server, type Socket, connect, createServer} from 'node:net'
import {listenOn, loopbackTarget} from './loopback.js'

export interface TcpProxyStats {
  /** Connections accepted and forwarded (while restored). */
  accepted: number
  /** Connections refused (closed at once) while cut. */
  refused: number
  /** Cuts: cut() calls that took the proxy from restored to cut. */
  cuts: number
  /** Live connections the cuts reset. */
  dropped: number
}

export interface TcpProxy {
  /** The Agent-side URL: the target's with the proxy's port. */
  url: string
  /** Resets every live connection and refuses new ones until restore(). */
  cut(): void
  restore(): void
  readonly isCut: boolean
  readonly stats: Readonly<TcpProxyStats>
  /** Stops listening and ends every connection. */
  close(): Promise<void>
}

export async function tcpProxy(targetUrl: string): Promise<TcpProxy> {
  const target = loopbackTarget(targetUrl)
  const pairs = new Set<[Socket, Socket]>()
  const stats: TcpProxyStats = {accepted: 0, refused: 0, cuts: 0, dropped: 0}
  let isCut = false
  let closing = false

  const server: Server = createServer((client) => {
    if (isCut || closing) {
      if (!closing) stats.refused++
      return void client.destroy()
    }
    stats.accepted++
    const upstream = connect(target.port, target.host)
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
    client.pipe(upstream)
    upstream.pipe(client)
  })

  /** Resets both sides of every live connection; returns how many there were. */
  const dropAll = (): number => {
    const n = pairs.size
    // resetAndDestroy: the peer sees the connection reset, as when a network path drops. A socket
    // still connecting would only be reset once connected, so it is destroyed at once instead.
    for (const pair of pairs)
      for (const s of pair) {
        if (s.connecting) s.destroy()
        else s.resetAndDestroy()
      }
    pairs.clear()
    return n
  }

  // Listen where the URL's host resolves: the target's loopback address ('localhost' as IPv4).
  const port = await listenOn(server, target.host === 'localhost' ? '127.0.0.1' : target.host)
  return {
    url: `${target.url.protocol}//${target.url.hostname}:${port}`,
    cut() {
      if (!isCut) stats.cuts++
      isCut = true
      stats.dropped += dropAll()
    },
    restore() {
      isCut = false
    },
    get isCut() {
      return isCut
    },
    stats,
    async close() {
      closing = true
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      dropAll()
      await closed
    },
  }
}
