// GET /mwp/0.1/metrics (wire/metrics-routes.ts) on the binding's own TLS 1.3 listener: a real
// server over a throwaway SQLite store, a raw subscriber that does not ACK, and real sessions
// reading the metrics. Per Group the caller may read: its head and, per live subscriber, how far
// the server delivered, how far the subscriber ACKed, the Cursor lag, the Events in flight, and
// BACKPRESSURE (paused now, signals sent). A Group the caller may not read is not listed at all.

import {submit} from '../../src/authority/ingress/command.js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Store} from '../../src/store/index.js'
import {parseDeliveryMetrics} from '../../src/wire/metrics-routes.js'
import {codeOf, developer, owner, post, sqliteStore} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {type Running, connect, frameId, rawSession, serve} from '../support/wire-helpers.js'

let store: Store
let cleanup: () => Promise<void>
let running: Running

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  running = await serve(store, {sendWindow: 8})
}, 60_000)
afterAll(async () => {
  await running?.server.close()
  await cleanup?.()
})

const head = async (g: string) => (await store.head(g))!.sequence
const posts = async (g: string, n: number) => {
  for (let i = 0; i < n; i++) expect(codeOf(await submit(running.authority, post(owner, g)))).toBe('ok')
}

describe('GET /mwp/0.1/metrics', () => {
  it('shows a subscriber held back by BACKPRESSURE (lag, in flight, paused, signals), then caught up once it ACKs; a non-member sees nothing of the Group', async () => {
    // The MissionOwner's Group, without the developer; and one the developer is a member of.
    const mine = await missionGroup((bytes) => submit(running.authority, bytes), 'metrics', {members: []})
    const shared = await missionGroup((bytes) => submit(running.authority, bytes), 'metrics-shared', {
      members: [developer],
    })
    const h0 = await head(mine)
    const s = await rawSession(running.server.url, owner)
    const reader = await connect(running.server.url, owner, {reconnect: false})
    const dev = await connect(running.server.url, developer, {reconnect: false})
    try {
      s.send({
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'SUBSCRIBE',
        subscriptionId: frameId(),
        groups: [{groupId: mine, afterSequence: h0}],
      })
      await posts(mine, 20)
      // The window is 8 un-ACKed Events: 8 arrive, then BACKPRESSURE.
      for (let i = 1; i <= 8; i++) await s.next()
      expect((await s.next()).error).toMatchObject({code: 'BACKPRESSURE', groupId: mine})
      const h1 = await head(mine)
      const metrics = await reader.deliveryMetrics()
      expect(metrics.find((g) => g.groupId === mine)).toEqual({
        groupId: mine,
        head: h1,
        subscribers: [
          {
            principalId: owner.principal!.id,
            deliveredThrough: h0 + 8,
            acknowledgedThrough: h0,
            cursorLag: h1 - h0,
            unacknowledged: 8,
            paused: true,
            backpressureSignals: 1,
          },
        ],
      })
      // The developer is no member of `mine`: the Group is not listed, whoever subscribes to it.
      expect((await dev.deliveryMetrics()).map((g) => g.groupId)).not.toContain(mine)

      // The developer subscribes to the shared Group: listed for it (a member), with its own delivery.
      await dev.subscribe(shared, {afterSequence: 0}, () => undefined)
      const hs = await head(shared)
      await expect
        .poll(async () => (await dev.deliveryMetrics()).find((g) => g.groupId === shared)?.subscribers[0]?.cursorLag, {
          timeout: 5_000,
        })
        .toBe(0)
      const seen = (await dev.deliveryMetrics()).find((g) => g.groupId === shared)!
      expect(seen.head).toBe(hs)
      expect(seen.subscribers).toMatchObject([
        {principalId: developer.principal!.id, deliveredThrough: hs, acknowledgedThrough: hs, paused: false},
      ])

      // An ACK of everything delivered resumes the Group; the next 8 come, the lag is what is left.
      s.send({
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'ACK',
        acknowledgements: [{groupId: mine, sequence: h0 + 8}],
        sentAt: new Date().toISOString(),
      })
      for (let i = 1; i <= 8; i++) await s.next()
      await expect
        .poll(async () => (await reader.deliveryMetrics()).find((g) => g.groupId === mine)?.subscribers[0], {
          timeout: 5_000,
        })
        .toMatchObject({acknowledgedThrough: h0 + 8, cursorLag: h1 - h0 - 8, deliveredThrough: h0 + 16})
    } finally {
      s.ws.close()
      await reader.close()
      await dev.close()
    }
  })

  it('the reader refuses an answer that does not fit the route (a server it cannot trust with numbers)', () => {
    expect(() => parseDeliveryMetrics({groups: [{groupId: 'g', head: -1, subscribers: []}]})).toThrow(
      /lacks groupId, head or subscribers/,
    )
    expect(() =>
      parseDeliveryMetrics({
        groups: [{groupId: 'g', head: 3, subscribers: [{principalId: 'p', paused: 'no', cursorLag: 0}]}],
      }),
    ).toThrow(/subscriber of g is malformed/)
    expect(parseDeliveryMetrics({groups: []})).toEqual([])
  })
})
