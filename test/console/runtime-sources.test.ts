// The runtime view's sources without a server: the local transport (an in-process authority over
// a store) keeps no Presence and serves no delivery metrics, and the view says they need a server
// instead of showing none as if every Agent had gone quiet. Real parts: a dev Organization, its
// SQLite store, the local transport.

import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createDevOrganization} from '../../src/config/dev-org.js'
import {loadOrgConfig} from '../../src/config/org-config.js'
import {LiveGroups} from '../../src/console/live.js'
import {agentPresence, readPresence, readRuntime} from '../../src/console/runtime-sources.js'
import {type Transport, openLocalTransport} from '../../src/operator/transport.js'

let dir: string
let local: Transport

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-console-presence-'))
  const org = await createDevOrganization(join(dir, 'org'), {organization: 'urn:mwp:test:org:presence', workers: 1})
  local = await openLocalTransport(loadOrgConfig(org.config))
}, 60_000)
afterAll(async () => {
  await local?.close()
  if (dir) rmSync(dir, {recursive: true, force: true})
})

describe('readPresence', () => {
  it('on a local --store: not served, and why (Presence needs a server)', async () => {
    expect(local.presence).toBeUndefined()
    const view = await readPresence(local)
    expect(view).toEqual({served: false, why: expect.stringContaining('No Presence here: that needs a server')})
  })

  it('readRuntime on a local --store: neither Presence nor delivery metrics, no slot time yet, no policy', async () => {
    const live = new LiveGroups(local, 'urn:mwp:test:org:presence:human:owner')
    const sources = await readRuntime(local, live, undefined)
    expect(sources.presence.served).toBe(false)
    expect(sources.delivery).toEqual({served: false, why: expect.stringContaining('No delivery metrics here')})
    expect(sources.slotTime.size).toBe(0)
    expect(sources.policy).toBeUndefined()
    await live.close()
  })
})

describe('agentPresence', () => {
  it('keeps the shown fields of a record and drops one without its capacity', () => {
    const r = {
      agentId: 'urn:mwp:test:agent:a',
      sessionEpoch: 1,
      status: 'online',
      capacity: {maxSlots: 2, activeSlots: 1, availableSlots: 1, queuedItems: 0},
      capabilityAvailability: [{capability: {id: 'x', version: '1.0.0'}, status: 'available'}],
      lastHeartbeat: '2026-12-03T12:00:00Z',
      expiresAt: '2026-12-03T12:01:00Z',
    }
    expect(agentPresence(r)).toEqual({
      agentId: 'urn:mwp:test:agent:a',
      status: 'online',
      maxSlots: 2,
      activeSlots: 1,
      availableSlots: 1,
      queuedItems: 0,
      lastHeartbeat: '2026-12-03T12:00:00Z',
      expiresAt: '2026-12-03T12:01:00Z',
      capabilities: [{id: 'x', version: '1.0.0', status: 'available'}],
    })
    const {capacity: _dropped, ...noCapacity} = r
    expect(agentPresence(noCapacity)).toBeNull()
  })
})
