// A real TCP proxy on loopback between an Agent and the authority, for faults injected from
// outside the process under test: cut() resets every connection through it and refuses new
// ones until restore() — to the Agent the Group service is unreachable. TLS passes through
// untouched (the Agent still verifies the authority's certificate).

import {type Server, type Socket, connect, createServer} from 'node:net'

export interface TcpProxy {
  /** The Agent-side URL: the target's with the proxy's port. */
  url: string
  cut(): void
  restore(): void
  /** Connections accepted while restored. */
  readonly connections: number
  close(): Promise<void>
}

export async function tcpProxy(targetUrl: string): Promise<TcpProxy> {
  const target = new URL(targetUrl)
  const targetPort = Number(target.port)
  const pairs = new Set<[Socket, Socket]>()
  let cut = false
  let connections = 0
  const server: Server = createServer((client) => {
    if (cut) return client.destroy()
    connections++
    const upstream = connect(targetPort, '127.0.0.1')
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as {port: number}).port
  const proxy: TcpProxy = {
    url: `${target.protocol}//${target.hostname}:${port}`,
    cut() {
      cut = true
      // resetAndDestroy: the peer sees the connection reset, as when a network path drops.
      for (const [client, upstream] of pairs) {
        client.resetAndDestroy()
        upstream.resetAndDestroy()
      }
      pairs.clear()
    },
    restore() {
      cut = false
    },
    get connections() {
      return connections
    },
    async close() {
      proxy.cut()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  return proxy
}
