// Stores initialized before a table was added to schema version 1 (the Policy Log, the
// Organization log and delivery Cursors came after the first release of the store): opening one
// adds the missing tables, on both backends, and keeps everything already stored; opening a
// current store changes nothing.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {devStoreAt} from '../support/authority-helpers.js'
import {openStore} from '../../src/store/index.js'
import {storeBackends} from '../support/store-backends.js'

const backends = storeBackends('store upgrade')

describe.each(backends.filter((b) => b.enabled))('store opened from an earlier build: $name', (backend) => {
  beforeAll(() => backend.start(), 120_000)
  afterAll(() => backend.stop())

  it('gets the Policy Log, Organization log and Cursor tables it lacks when opened; what it held is still there', async () => {
    const url = await backend.fresh()
    const store = await devStoreAt(url)
    await store.audit({at: '2026-11-30T00:00:00Z', stage: 'test', reason: 'kept'})
    await store.close()
    const raw = backend.raw(url)
    // as a store initialized before these tables existed
    for (const table of ['policy_log', 'org_receipts', 'org_events', 'delivery_cursors'])
      await raw.exec(`DROP TABLE IF EXISTS ${table}`)
    await raw.close()

    const reopened = await openStore(url)
    expect(await reopened.policyLog('urn:mwp:test:group:none')).toEqual([])
    expect((await reopened.listAudit()).map((a) => a.reason)).toEqual(['kept'])
    expect(await reopened.organizationLog().currentVersion('session', 'urn:mwp:test:agent:none')).toBe(0)
    expect(await reopened.cursors().get('urn:mwp:test:human:reader', 'urn:mwp:test:group:none')).toBeNull()
    expect(await reopened.cursors().advance('urn:mwp:test:human:reader', 'urn:mwp:test:group:none', 3)).toBe(3)
    await reopened.close()
    const again = backend.raw(url)
    expect(await again.count('policy_log')).toBe(0)
    await again.close()
  })

  it('opening a current store twice leaves its Policy Log as it was', async () => {
    const url = await backend.fresh()
    await (await devStoreAt(url)).close()
    const a = await openStore(url)
    const b = await openStore(url)
    expect(await a.policyLog('urn:mwp:test:group:none')).toEqual([])
    expect(await b.policyLog('urn:mwp:test:group:none')).toEqual([])
    await a.close()
    await b.close()
  })
})
