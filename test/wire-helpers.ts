// Shared fixtures for the WebSocket binding tests: a real TLS 1.3 server on 127.0.0.1 over a
// throwaway SQLite store (generated development CA), and client helpers.

import type {Authority} from '../src/authority/authority.js'
import type {SigningKey} from '../src/crypto/keyfile.js'
import type {Store} from '../src/store/index.js'
import {type ConnectOptions, type DeliveredEvent, WireClient} from '../src/wire/client.js'
import {type DevTls, generateDevTls} from '../src/wire/dev-tls.js'
import {type RunningServer, type ServerOptions, startServer} from '../src/wire/server.js'
import {authorityOn, registry} from './authority-helpers.js'

let devTls: DevTls | undefined
export const tls = (): DevTls => (devTls ??= generateDevTls())

export interface Running {
  server: RunningServer
  authority: Authority
  logs: Record<string, unknown>[]
}

export async function serve(store: Store, options: Partial<ServerOptions> = {}): Promise<Running> {
  const authority = authorityOn(store)
  const logs: Record<string, unknown>[] = []
  const server = await startServer({
    authority,
    host: '127.0.0.1',
    port: 0,
    tls: {cert: tls().cert, key: tls().key},
    log: (e) => logs.push(e),
    pollMs: 100,
    ...options,
  })
  return {server, authority, logs}
}

export function connect(url: string, key: SigningKey, extra: Partial<ConnectOptions> = {}): Promise<WireClient> {
  return WireClient.connect({url, key, registry, ca: tls().ca, ...extra})
}

/** Resolves once `predicate` holds, checking after every delivered Event (bounded by the test timeout). */
export function collector() {
  const events: DeliveredEvent[] = []
  const waiters: {predicate: () => boolean; resolve: () => void}[] = []
  const check = () => {
    for (const w of [...waiters]) {
      if (w.predicate()) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
    }
  }
  return {
    events,
    onEvent: (e: DeliveredEvent) => {
      events.push(e)
      check()
    },
    until: (predicate: () => boolean) =>
      new Promise<void>((resolve) => {
        waiters.push({predicate, resolve})
        check()
      }),
    sequences: () => events.map((e) => e.sequence),
  }
}

/** The next value `register` hands to its callback. */
export function next<T>(register: (callback: (value: T) => void) => void): Promise<T> {
  return new Promise((resolve) => register(resolve))
}
