// What the fault proxies share: they listen on loopback and forward to a loopback target only.
// They sit between the processes of one PoC run (or one test) on one machine; a proxy that
// forwarded elsewhere would be a relay, and the TCP proxy would pass a TLS stream to a host its
// URL does not name.

import {isIPv4} from 'node:net'
import type {Server} from 'node:net'
import {MwpError} from '../../errors.js'

/** A fault proxy asked to forward somewhere it must not (not loopback, no port), or unable to listen. */
export class FaultProxyError extends MwpError<'usage' | 'environment'> {}

export interface LoopbackTarget {
  url: URL
  /** The host as connect() and listen() take it (an IPv6 literal without its brackets). */
  host: string
  port: number
}

const DEFAULT_PORTS: Record<string, number> = {'wss:': 443, 'https:': 443, 'ws:': 80, 'http:': 80}

/** The target URL's loopback host and port; throws a FaultProxyError for any other host. */
export function loopbackTarget(targetUrl: string): LoopbackTarget {
  let url: URL
  try {
    url = new URL(targetUrl)
  } catch (e) {
    throw new FaultProxyError('usage', `not a URL: ${targetUrl}`, {cause: e})
  }
  const host = url.hostname === '[::1]' ? '::1' : url.hostname
  const loopback = host === 'localhost' || host === '::1' || (isIPv4(host) && host.startsWith('127.'))
  if (!loopback) throw new FaultProxyError('usage', `a fault proxy forwards to loopback only, not to ${url.host}`)
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port)
  if (port === undefined) throw new FaultProxyError('usage', `no port in ${targetUrl}`)
  return {url, host, port}
}

/** Listens on `host` at a free port and returns the port. */
export async function listenOn(server: Server, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    const failed = (e: Error) => reject(new FaultProxyError('environment', `cannot listen on ${host}`, {cause: e}))
    server.once('error', failed)
    server.listen(0, host, () => {
      server.off('error', failed)
      resolve()
    })
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new FaultProxyError('environment', 'no TCP port')
  return address.port
}
