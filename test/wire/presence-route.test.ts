// GET /mwp/0.1/presence (wire/presence-routes.ts, spec §6.2) on the binding's own TLS 1.3
// listener: a real server over a throwaway SQLite store and real WebSocket sessions. A record is
// what an Agent's live session last sent on a PING; it is served to any authenticated session
// while unexpired, one per Agent (its newest session's), and gone once that session closes.

import {request} from 'node:https'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {openAuthority} from '../../src/authority/authority.js'
import type {JsonObject} from '../../src/json/parse.js'
import type {Store} from '../../src/store/index.js'
import type {WireClient} from '../../src/wire/client.js'
import {PRESENCE_PATH, currentPresence} from '../../src/wire/presence-routes.js'
import {
  authorityKey,
  coordinator,
  developer,
  owner,
  registry,
  reviewer,
  sqliteStore,
} from '../support/authority-helpers.js'
import {type Running, connect, serve, tls} from '../support/wire-helpers.js'

let store: Store
let cleanup: () => Promise<void>
let running: Running
let url: string

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  const authority = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}})
  running = await serve(store, {authority})
  url = running.server.url
}, 60_000)
afterAll(async () => {
  await running?.server.close()
  await cleanup?.()
})

/** A schema-valid Presence Record of `client`'s own Agent and session, expiring `inMs` from now. */
function record(client: WireClient, agentId: string, availableSlots: number, inMs: number): JsonObject {
  const now = Date.now()
  return {
    agentId,
    sessionEpoch: client.sessionEpoch!,
    status: availableSlots > 0 ? 'online' : 'busy',
    capacity: {maxSlots: 2, activeSlots: 2 - availableSlots, availableSlots, queuedItems: 1},
    capabilityAvailability: [{capability: {id: 'code.write', version: '1.0.0'}, status: 'available'}],
    lastHeartbeat: new Date(now).toISOString().replace(/\.\d+Z$/, 'Z'),
    expiresAt: new Date(now + inMs).toISOString().replace(/\.\d+Z$/, 'Z'),
  }
}

function unauthenticated(): Promise<{status: number; body: string}> {
  const {port} = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {hostname: '127.0.0.1', port, path: PRESENCE_PATH, ca: tls().ca, minVersion: 'TLSv1.3', agent: false},
      (res) => {
        let body = ''
        res.on('data', (c: Buffer) => (body += c.toString()))
        res.on('end', () => resolve({status: res.statusCode!, body}))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

describe('GET /mwp/0.1/presence', () => {
  it("serves each live session's unexpired record to another session, and drops it when the session closes", async () => {
    const dev = await connect(url, developer, {reconnect: false})
    const rev = await connect(url, reviewer, {reconnect: false})
    const coord = await connect(url, coordinator, {reconnect: false})
    try {
      const fresh = record(dev, developer.principal!.id, 1, 60_000)
      await dev.ping(fresh)
      // Already expired when read: a stale record is no evidence (§6.2).
      await rev.ping(record(rev, reviewer.principal!.id, 2, -1_000))
      const seen = await coord.presence()
      expect(seen).toEqual([fresh])
      await dev.close()
      await expect.poll(() => coord.presence(), {timeout: 5_000}).toEqual([])
    } finally {
      for (const c of [dev, rev, coord]) await c.close()
    }
  })

  it('needs the bearer token of a live session: 401 AUTH_REQUIRED without', async () => {
    const r = await unauthenticated()
    expect(r.status).toBe(401)
    expect(JSON.parse(r.body)).toMatchObject({code: 'AUTH_REQUIRED'})
  })
})

describe('currentPresence', () => {
  const at = (agentId: string, sessionEpoch: number, expiresAt: string): JsonObject => ({
    agentId,
    sessionEpoch,
    expiresAt,
  })
  it("keeps one record per Agent, its newest session's, only while unexpired, in Agent ID order", () => {
    const now = Date.parse('2026-12-03T12:00:00Z')
    const records = [
      at('b', 1, '2026-12-03T12:00:30Z'),
      at('b', 2, '2026-12-03T12:00:20Z'),
      at('a', 3, '2026-12-03T12:00:10Z'),
      at('c', 1, '2026-12-03T12:00:00Z'), // expires now: stale
      null,
    ]
    expect(currentPresence(records, now)).toEqual([records[2], records[1]])
  })
})
