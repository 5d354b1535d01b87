// Regression (§16 "an ACK frame reports one or more Cursors"): a client that makes each Event
// durable inside onEvent and ACKs it from there — the Agent runtime's way (autoAck off, its local
// store is the durable Cursor) — reports that Event's sequence. WireClient.ack used to clamp the
// Cursor to the one before the Event being handed over, so the runtime's ACKs lagged one Event
// behind and the last Event of a Group was never acknowledged (found over real processes by
// test/agent/agent-delivery.test.ts, whose ACK checks now also cover it).

import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {submit} from '../../src/authority/ingress/command.js'
import {DEFAULT_FRESHNESS, type Store, initStore, openStore} from '../../src/store/index.js'
import type {DeliveredEvent} from '../../src/wire/client.js'
import {admissionKey, codeOf, owner, post} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {type Running, connect, serve} from '../support/wire-helpers.js'

let dir: string
let store: Store
let running: Running

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-ack-in-handler-'))
  const storeUrl = `sqlite:${join(dir, 'authority.db')}`
  await initStore(storeUrl, {
    organizationId: 'urn:mwp:dev:org:example',
    admissionService: {
      principal: admissionKey.principal!,
      keyId: admissionKey.keyId,
      publicKey: admissionKey.publicKeyB64,
    },
    freshness: DEFAULT_FRESHNESS,
  })
  store = await openStore(storeUrl, {admissionKey})
  running = await serve(store)
}, 60_000)
afterAll(async () => {
  await running?.server.close()
  await store?.close()
  rmSync(dir, {recursive: true, force: true})
})

describe('WireClient.ack from inside onEvent (§16)', () => {
  it('covers the Event being handed over, never one beyond it: the server records the last Event applied', async () => {
    const g = await missionGroup((bytes) => submit(running.authority, bytes), 'ack-in-handler', {members: []})
    for (let i = 0; i < 3; i++) expect(codeOf(await submit(running.authority, post(owner, g)))).toBe('ok')
    const h = (await store.head(g))!.sequence
    const c = await connect(running.server.url, owner, {autoAck: false, reconnect: false})
    let applied = 0
    await c.subscribe(g, {afterSequence: 0}, async (e: DeliveredEvent) => {
      applied = e.sequence // "durable" here, then ACKed as the runtime does
      // Asking for more than was handed over is still clamped to it.
      await c.ack(g, e.sequence + 5)
    })
    for (let i = 0; i < 200 && applied < h; i++) await new Promise((r) => setTimeout(r, 20))
    await c.ping() // the server has handled every ACK sent before this PING
    expect(applied).toBe(h)
    expect(await store.cursors().get(owner.principal!.id, g)).toBe(h)
    expect(c.cursor(g)).toBe(h)
    await c.close()
  })
})
