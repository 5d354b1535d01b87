// The wire's store tables on both backends (spec §6.3, §15.2, §16): the Organization-scoped log
// (versioned per subject, atomic with its receipt, idempotent, fenced against a moved version)
// and durable delivery Cursors (monotonic, durable across reopening the store).

import {randomUUID} from 'node:crypto'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {initStore, openStore} from '../../src/store/index.js'
import type {OrgEntry, OrgReceipt} from '../../src/store/org-log.js'
import {submit} from '../../src/authority/ingress/command.js'
import {
  admissionKey,
  codeOf,
  coordinator,
  createCommand,
  devStoreAt,
  newGroup,
  post,
} from '../support/authority-helpers.js'
import {storeBackends} from '../support/store-backends.js'
import {collector, connect, serve} from '../support/wire-helpers.js'
import {SERVICE, storeConfig as config} from '../support/store-config.js'

const KIND = 'ext.missionweaveprotocol.identity.session_opened'

const entry = (subjectId: string, version: number): OrgEntry => ({
  eventId: `urn:uuid:${randomUUID()}`,
  kind: KIND,
  subjectId,
  version,
  bytes: Buffer.from(JSON.stringify({payload: {agentId: subjectId, sessionEpoch: version}}, null, 2) + '\r\n'),
})
const receipt = (content = 'sha256:aa', actionId = `urn:uuid:${randomUUID()}`): OrgReceipt => ({
  actorId: SERVICE.id,
  actionId,
  contentHash: content,
  document: `{"actionId":"${actionId}"}`,
})

const backends = storeBackends('wire store tables')

describe.each(backends.filter((b) => b.enabled))('Organization log and Cursors: $name', (backend) => {
  beforeAll(() => backend.start(), 120_000)
  afterAll(() => backend.stop(), 60_000)

  it('versions per subject, appends Event and receipt together, answers a retry with the receipt and refuses a moved version', async () => {
    const url = await backend.fresh()
    await initStore(url, config)
    const store = await openStore(url)
    try {
      const log = store.organizationLog()
      const agent = `urn:mwp:test:agent:${randomUUID()}`
      expect(await log.currentVersion(KIND, agent)).toBe(0)
      const first = entry(agent, 1)
      const r1 = receipt()
      expect(await log.append(first, 0, r1)).toEqual({status: 'appended'})
      expect(await log.currentVersion(KIND, agent)).toBe(1)
      // The exact bytes come back.
      expect(Buffer.from((await log.event(first.eventId))!).equals(Buffer.from(first.bytes))).toBe(true)
      // Same receipt key and content: the original receipt, nothing new.
      expect(await log.append(entry(agent, 2), 1, r1)).toEqual({status: 'duplicate', receipt: r1})
      // Same key, other content: a collision.
      expect(await log.append(entry(agent, 2), 1, {...r1, contentHash: 'sha256:bb'})).toEqual({
        status: 'action-id-collision',
      })
      // A decision made on an old version is refused (another process issued epoch 2 first).
      expect(await log.append(entry(agent, 2), 1, receipt())).toEqual({status: 'appended'})
      expect(await log.append(entry(agent, 2), 1, receipt())).toEqual({status: 'version-moved', current: 2})
      expect(await log.currentVersion(KIND, agent)).toBe(2)
      expect(await log.receipt(SERVICE.id, r1.actionId)).toEqual(r1)
      // Other subjects are independent.
      expect(await log.currentVersion(KIND, `${agent}-other`)).toBe(0)
    } finally {
      await store.close()
    }
  })

  it('the Organization log is append-only in the database itself: updating or deleting an Event or a receipt fails', async () => {
    const url = await backend.fresh()
    await initStore(url, config)
    const store = await openStore(url)
    const raw = backend.raw(url)
    try {
      expect(
        await store.organizationLog().append(entry(`urn:mwp:test:agent:${randomUUID()}`, 1), 0, receipt()),
      ).toEqual({status: 'appended'})
      for (const statement of [
        `UPDATE org_events SET kind = 'x'`,
        'DELETE FROM org_events',
        `UPDATE org_receipts SET document = 'x'`,
        'DELETE FROM org_receipts',
      ]) {
        await expect(raw.exec(statement), statement).rejects.toThrow(/append-only/)
      }
      expect(await raw.count('org_events')).toBe(1)
      expect(await raw.count('org_receipts')).toBe(1)
    } finally {
      await raw.close()
      await store.close()
    }
  })

  it('Cursors only move forward and survive reopening the store', async () => {
    const url = await backend.fresh()
    await initStore(url, config)
    const principal = 'urn:mwp:test:human:reader'
    const group = `urn:mwp:test:group:${randomUUID()}`
    const store = await openStore(url)
    try {
      const cursors = store.cursors()
      expect(await cursors.get(principal, group)).toBeNull()
      expect(await cursors.advance(principal, group, 5)).toBe(5)
      expect(await cursors.advance(principal, group, 3)).toBe(5)
      expect(await cursors.advance(principal, group, 9)).toBe(9)
      expect(await cursors.get('urn:mwp:test:human:other', group)).toBeNull()
    } finally {
      await store.close()
    }
    const reopened = await openStore(url)
    try {
      expect(await reopened.cursors().get(principal, group)).toBe(9)
    } finally {
      await reopened.close()
    }
  })

  it('a Cursor write on a closed store is refused as unavailable, saying so once', async () => {
    const url = await backend.fresh()
    await initStore(url, config)
    const store = await openStore(url)
    const cursors = store.cursors()
    await cursors.advance('urn:mwp:test:human:reader', 'urn:mwp:test:group:closed', 1) // the table exists
    await store.close()
    const refused = await cursors.advance('urn:mwp:test:human:reader', 'urn:mwp:test:group:closed', 2).then(
      () => null,
      (e: Error & {code?: string}) => e,
    )
    expect(refused?.code).toBe('unavailable')
    expect(refused?.message).not.toMatch(/unavailable: /) // not the writer's error wrapped again
  })

  it('serves the WebSocket binding over this store: a session, a Command, its Event delivered; epochs survive a restart', async () => {
    const url = await backend.fresh()
    const store = await devStoreAt(url)
    const running = await serve(store)
    try {
      const g = newGroup('wire-store')
      expect(codeOf(await submit(running.authority, createCommand(g)))).toBe('ok')
      const agent = await connect(running.server.url, coordinator, {reconnect: false})
      expect(agent.sessionEpoch).toBe(1)
      const got = collector()
      await agent.subscribe(g, {afterSequence: 0}, got.onEvent)
      const r = await agent.submit(post(coordinator, g, {sessionEpoch: agent.sessionEpoch}))
      if ('error' in r) throw new Error(r.error.code)
      await got.until(() => got.events.some((e) => e.eventId === r.receipt.eventIds[0]))
      expect(got.sequences()).toEqual(Array.from({length: r.receipt.lastSequence}, (_, i) => i + 1))
      await agent.close()
    } finally {
      await running.server.close()
      await store.close()
    }
    // The Session Epoch is durable: after reopening the store the next session is strictly higher.
    const reopened = await openStore(url, {admissionKey})
    const again = await serve(reopened)
    try {
      const agent = await connect(again.server.url, coordinator, {reconnect: false})
      expect(agent.sessionEpoch).toBe(2)
      await agent.close()
    } finally {
      await again.server.close()
      await reopened.close()
    }
  })
})
