// Shared fixtures for the WebSocket binding tests: a real TLS 1.3 server on 127.0.0.1 over a
// throwaway SQLite store (generated development CA), and client helpers.

import {randomBytes, randomUUID} from 'node:crypto'
import WebSocket from 'ws'
import type {Authority} from '../../src/authority/authority.js'
import {signEd25519} from '../../src/crypto/ed25519.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {encodeBase64url} from '../../src/json/base64url.js'
import type {Store} from '../../src/store/index.js'
import {type ConnectOptions, type DeliveredEvent, WireClient} from '../../src/wire/client.js'
import {type DevTls, generateDevTls} from '../../src/wire/dev-tls.js'
import {transcriptBytes} from '../../src/wire/hello.js'
import {type RunningServer, type ServerOptions, startServer} from '../../src/wire/server.js'
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
  // The Authority the server fronts (Agent sessions required), for Commands submitted beside the wire.
  return {server, authority: server.authority, logs}
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

export type RawFrame = Record<string, any>

/**
 * A raw WebSocket that records every frame, for exchanges the client library never produces.
 * `next()` returns the next frame, skipping the server's own liveness PINGs (echoes are kept).
 */
export async function rawSocket(url: string) {
  const ws = new WebSocket(url, {ca: tls().ca, minVersion: 'TLSv1.3'})
  const frames: RawFrame[] = []
  const waiters: (() => void)[] = []
  ws.on('message', (d) => {
    frames.push(JSON.parse(d.toString()) as RawFrame)
    waiters.splice(0).forEach((w) => w())
  })
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)))
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  let read = 0
  return {
    ws,
    closed,
    send: (f: unknown) => ws.send(typeof f === 'string' ? f : JSON.stringify(f)),
    async next(): Promise<RawFrame> {
      for (;;) {
        while (frames.length <= read) await new Promise<void>((r) => waiters.push(r))
        const f = frames[read++]!
        if (f.frameType !== 'PING' || f.replyToNonce !== undefined) return f
      }
    },
  }
}

export const frameId = () => `urn:uuid:${randomUUID()}`
export const hello = (phase: string, members: Record<string, unknown>) => ({
  protocolVersion: '0.1',
  frameId: frameId(),
  frameType: 'HELLO',
  phase,
  ...members,
})
export const nonce = () => encodeBase64url(randomBytes(32))

/** The client_response a correct client sends for `challenge`, signed with `seed`. */
export function helloResponse(
  principalId: string,
  keyId: string,
  clientNonce: string,
  challenge: RawFrame,
  seed: Uint8Array,
) {
  const sig = signEd25519(
    seed,
    transcriptBytes({
      principalId,
      keyId,
      clientNonce,
      serverNonce: challenge.serverNonce,
      challenge: challenge.challenge,
      selectedVersion: '0.1',
    }),
  )
  return hello('client_response', {
    agentId: principalId,
    keyId,
    clientNonce,
    serverNonce: challenge.serverNonce,
    challengeSignature: encodeBase64url(sig),
  })
}

/** A raw socket after an honest HELLO as `key`'s principal. */
export async function rawSession(url: string, key: SigningKey) {
  const r = await rawSocket(url)
  const id = key.principal!.id
  const clientNonce = nonce()
  r.send(hello('client_init', {agentId: id, keyId: key.keyId, clientNonce, supportedVersions: ['0.1']}))
  r.send(helloResponse(id, key.keyId, clientNonce, await r.next(), key.seed))
  const accept = await r.next()
  if (accept.phase !== 'server_accept') throw new Error(`HELLO refused: ${JSON.stringify(accept)}`)
  return r
}
