// The active-lease index (src/store/lease-table.ts), on both stores (ACCEPTANCE B9): it follows
// the Execution Leases of the Events the Authority appends — work.started opens a row, a
// checkpoint, a submission, a session replacement's revocation and a Mission's end close it —
// and answers, per Agent, the leases issued under a Session Epoch below a given one, in pages; a
// rolled-back append writes no row; an older store (table dropped) is backfilled at open with the
// same rows.

import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import type {Authority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {openSession} from '../../src/authority/ingress/sessions.js'
import {leaseRowsOf} from '../../src/store/lease-table.js'
import type {StoredEvent} from '../../src/store/group-log.js'
import {openStore} from '../../src/store/index.js'
import type {Store} from '../../src/store/types.js'
import {
  admissionKey,
  authorityOn,
  developer,
  devStoreAt,
  groupCommand,
  owner,
  receiptOf,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {storeBackends} from '../support/store-backends.js'
import {workDriver} from '../support/work-driver.js'

const backends = storeBackends('lease index')
const dev = developer.principal!.id

describe.each(backends.filter((b) => b.enabled))('the lease index: $name', (backend) => {
  let url: string
  let store: Store
  let authority: Authority
  const run = (bytes: Buffer) => submit(authority, bytes)
  const work = workDriver(() => authority)
  const older = (below: number, limit = 100) => store.leases().olderThan(dev, below, undefined, limit)
  const leaseOf = async (g: string, w: string) => (await authority.current(g))!.workItems[w]!.lease!

  beforeAll(() => backend.start(), 120_000)
  afterAll(() => backend.stop())
  // A fresh store per test: each opens the developer's sessions from 1.
  beforeEach(async () => {
    url = await backend.fresh()
    store = await devStoreAt(url)
    authority = authorityOn(store)
    // The driver signs the developer's Commands at Session Epoch 1.
    expect(await openSession(authority, dev)).toBe(1)
  }, 120_000)
  afterEach(async () => store?.close())

  it('B9: work.started opens a row; checkpoint, submission and a Mission end close it; session replacement revokes and the new start reopens it', async () => {
    const g = await missionGroup(run, 'lease-index')
    const [a, b, c] = [await work.drive(g, 'active'), await work.drive(g, 'active'), await work.drive(g, 'active')]
    const rows = await older(2)
    expect(rows.map((r) => r.workItemId).sort()).toEqual([a, b, c].sort())
    expect(rows.find((r) => r.workItemId === a)).toEqual({
      groupId: g,
      workItemId: a,
      agentId: dev,
      leaseId: (await leaseOf(g, a)).leaseId,
      sessionEpoch: 1,
      ownershipEpoch: 1,
    })
    // Only leases below the epoch asked for; never another Agent's.
    expect(await older(1)).toEqual([])
    expect(await store.leases().olderThan(owner.principal!.id, 10, undefined, 10)).toEqual([])

    // A checkpoint releases a's lease, a submission b's.
    const checkpoint = {workItemId: a, ownershipEpoch: 1, leaseId: (await leaseOf(g, a)).leaseId, progress: 'half'}
    receiptOf(await run(groupCommand(developer, 'work.checkpoint', g, {...checkpoint, artifactHashes: []})))
    await work.advance(g, b, 'active', 'submitted')
    expect((await older(2)).map((r) => r.workItemId)).toEqual([c])

    // Session 2 revokes c's lease (the row goes); its start under session 2 opens a new row.
    expect(await openSession(authority, dev)).toBe(2)
    expect(await older(3)).toEqual([])
    receiptOf(
      await run(groupCommand(developer, 'work.start', g, {workItemId: c, ownershipEpoch: 1}, {sessionEpoch: 2})),
    )
    const restarted = await leaseOf(g, c)
    expect(await older(3)).toMatchObject([{workItemId: c, leaseId: restarted.leaseId, sessionEpoch: 2}])
    expect(await older(2)).toEqual([])

    // mission.cancel revokes every active lease of the Group.
    receiptOf(await run(groupCommand(owner, 'mission.cancel', g, {reason: 'Stop.'})))
    expect(await older(3)).toEqual([])
  })

  it('pages in (groupId, workItemId) order after the cursor given, at most `limit` rows', async () => {
    const g1 = await missionGroup(run, 'lease-page')
    const g2 = await missionGroup(run, 'lease-page')
    for (const g of [g1, g2, g1]) await work.drive(g, 'active')
    const all = await older(2)
    expect(all).toHaveLength(3)
    const key = (r: {groupId: string; workItemId: string}) => `${r.groupId}\u0000${r.workItemId}`
    expect(all.map(key)).toEqual(all.map(key).sort())
    const first = await store.leases().olderThan(dev, 2, undefined, 2)
    expect(first).toEqual(all.slice(0, 2))
    expect(await store.leases().olderThan(dev, 2, first[1], 2)).toEqual(all.slice(2))
    await expect(store.leases().olderThan(dev, 2, undefined, 0)).rejects.toThrow(/limit/)
  })

  it('a rolled-back append writes no row, an accepted one writes its rows', async () => {
    const g = `urn:mwp:test:group:leases-rollback-${Date.now()}`
    const lease = (n: number) => ({
      agentId: dev,
      leaseId: `urn:uuid:${crypto.randomUUID()}`,
      sessionEpoch: n,
      ownershipEpoch: 1,
    })
    const event = (leases: StoredEvent['leases']): StoredEvent => ({
      eventId: `urn:uuid:${crypto.randomUUID()}`,
      kind: 'work.started',
      sequence: 1,
      aggregateRevision: 1,
      bytes: Buffer.from('{}'),
      leases,
    })
    const receipt = () => ({
      actorId: owner.principal!.id,
      actionId: `urn:uuid:${crypto.randomUUID()}`,
      contentHash: `sha256:${'0'.repeat(64)}`,
      groupId: g,
      firstSequence: 1,
      lastSequence: 1,
      document: '{}',
    })
    // The second row cannot be stored (a fractional epoch in an integer column): the whole append
    // — its Event, the Group head and the first row, written before it — is rolled back.
    const broken = event([
      {workItemId: 'urn:mwp:test:w1', lease: lease(1)},
      {workItemId: 'urn:mwp:test:w2', lease: lease(1.5)},
    ])
    expect((await store.append(g, 0, [broken], receipt())).status).not.toBe('appended')
    expect(await store.head(g)).toBeNull()
    expect((await older(10)).filter((r) => r.groupId === g)).toEqual([])
    const good = event([{workItemId: 'urn:mwp:test:w1', lease: lease(1)}])
    expect((await store.append(g, 0, [good], receipt())).status).toBe('appended')
    expect((await older(10)).filter((r) => r.groupId === g)).toMatchObject([{workItemId: 'urn:mwp:test:w1'}])
  })

  it('an older store (no index) is backfilled from its log when opened, once, with the same rows', async () => {
    const g = await missionGroup(run, 'lease-backfill')
    const ws = [await work.drive(g, 'active'), await work.drive(g, 'active'), await work.drive(g, 'active')]
    await work.advance(g, ws[0]!, 'active', 'submitted')
    const before = await older(2)
    expect(before).toHaveLength(2)
    await store.close()
    const raw = backend.raw(url)
    await raw.exec('DROP TABLE group_leases')
    await raw.close()

    store = await openStore(url, {admissionKey})
    authority = authorityOn(store)
    expect(await older(2)).toEqual(before)
    // opened again: the table is there, nothing is filled twice; and the index goes on
    await store.close()
    store = await openStore(url, {admissionKey})
    authority = authorityOn(store)
    const counted = backend.raw(url)
    expect(await counted.count('group_leases')).toBe(2)
    await counted.close()
    expect(await openSession(authority, dev)).toBe(2)
    expect(await older(2)).toEqual([])
  })
})

describe('the rows an Event writes (leaseRowsOf)', () => {
  it('work.started opens, the closing kinds close, a dependency revision closes only when it revoked, a Mission end (cancelled, failed, approved) closes the Group', () => {
    const lease = {holderAgentId: dev, leaseId: 'urn:mwp:test:lease', sessionEpoch: 3, ownershipEpoch: 2}
    expect(leaseRowsOf('work.started', {workItemId: 'w', lease})).toEqual([
      {workItemId: 'w', lease: {agentId: dev, leaseId: 'urn:mwp:test:lease', sessionEpoch: 3, ownershipEpoch: 2}},
    ])
    for (const kind of [
      'work.checkpointed',
      'work.blocked',
      'work.submitted',
      'work.failed',
      'work.cancelled',
      'work.offer.created',
      'mission.child.created',
      'ext.missionweaveprotocol.core.lease_revoked',
    ])
      expect(leaseRowsOf(kind, {workItemId: 'w'})).toEqual([{workItemId: 'w', lease: null}])
    expect(leaseRowsOf('work.contract.revised', {workItemId: 'w'})).toEqual([])
    expect(leaseRowsOf('work.contract.revised', {workItemId: 'w', revokedLeaseId: 'l'})).toEqual([
      {workItemId: 'w', lease: null},
    ])
    for (const kind of ['mission.terminated', 'mission.cancelled', 'mission.approved'])
      expect(leaseRowsOf(kind, {reason: 'x'})).toEqual([{workItemId: null, lease: null}])
    for (const kind of ['work.progressed', 'message.posted', 'work.offer.accepted', 'approval.execution.granted'])
      expect(leaseRowsOf(kind, {workItemId: 'w'})).toEqual([])
  })
})
