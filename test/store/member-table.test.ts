// The membership index (src/store/member-table.ts), on both stores: it follows the Membership
// documents of the Events the Authority appends — mission.create (MissionOwner and Coordinator),
// a just-in-time offer (provisional rows for the candidates without a Membership only), the
// accepted offer (active), the Worker's last WorkItem accepted and membership.end (ended) — with
// store-wide positions that increase at every write; a rolled-back append writes no row; and an
// older store (table dropped) is backfilled at open with the same rows.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {submit} from '../../src/authority/ingress/command.js'
import type {StoredEvent} from '../../src/store/group-log.js'
import {openStore} from '../../src/store/index.js'
import type {MemberRecord} from '../../src/store/member-table.js'
import type {Store} from '../../src/store/types.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {
  admissionKey,
  authorityOn,
  coordinator,
  developer,
  devStoreAt,
  groupCommand,
  owner,
  receiptOf,
  reviewer,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {storeBackends} from '../support/store-backends.js'
import {workDriver} from '../support/work-driver.js'

const backends = storeBackends('membership index')
const everyone = [owner, coordinator, developer, reviewer]
const id = (k: SigningKey) => k.principal!.id

describe.each(backends.filter((b) => b.enabled))('the membership index: $name', (backend) => {
  let url: string
  let store: Store
  beforeAll(async () => {
    await backend.start()
    url = await backend.fresh()
    store = await devStoreAt(url)
  }, 120_000)
  afterAll(async () => {
    await store?.close()
    await backend.stop()
  })

  const rowsOf = (s: Store, k: SigningKey) => s.members().changedAfter(id(k), 0, 100)
  const rowIn = async (g: string, k: SigningKey) => (await rowsOf(store, k)).find((r) => r.groupId === g)

  it('follows mission.create, a just-in-time offer, its acceptance and the Memberships ending, at increasing positions', async () => {
    const authority = authorityOn(store)
    const run = (bytes: Buffer) => submit(authority, bytes)
    const driver = workDriver(() => authority, {contextPackageId: 'urn:mwp:test:context-package:index'})
    const g = await missionGroup(run, 'index', {members: [reviewer]})
    const positions: number[] = []
    const seen = async (k: SigningKey) => {
      const row = (await rowIn(g, k))!
      positions.push(row.position)
      return row
    }

    // mission.create: the MissionOwner and the Coordinator, active from the first sequence
    expect(await seen(owner)).toMatchObject({groupId: g, state: 'active', visibilityStart: 1})
    expect(await seen(coordinator)).toMatchObject({groupId: g, state: 'active', visibilityStart: 1})
    const joined = await seen(reviewer)
    expect(joined).toMatchObject({state: 'active'})
    expect(await rowIn(g, developer)).toBeUndefined()

    // the offer to a member (reviewer) and a non-member (developer): only developer gets a row
    const w = await driver.drive(g, 'open')
    const offerSequence = (await store.head(g))!.sequence + 1
    await driver.advance(g, w, 'open', 'offered', {candidates: [developer, reviewer]})
    expect(await seen(developer)).toMatchObject({state: 'provisional', visibilityStart: offerSequence})
    expect(await rowIn(g, reviewer)).toEqual(joined)
    expect(await store.members().live(id(developer), undefined, 10)).toEqual([await rowIn(g, developer)])

    // accepted: active, visibility unchanged
    await driver.advance(g, w, 'offered', 'queued')
    expect(await seen(developer)).toMatchObject({state: 'active', visibilityStart: offerSequence})

    // the last WorkItem's result accepted ends the just-in-time Membership (§8 step 4)
    await driver.advance(g, w, 'queued', 'verified')
    const ended = await seen(developer)
    expect(ended).toMatchObject({state: 'ended', visibilityStart: offerSequence})
    expect((await store.members().live(id(developer), undefined, 10)).map((r) => r.groupId)).not.toContain(g)
    expect(await store.members().changedAfter(id(developer), ended.position - 1, 10)).toEqual([ended])
    expect(await store.members().changedAfter(id(developer), ended.position, 10)).toEqual([])

    // membership.end
    receiptOf(await run(groupCommand(owner, 'membership.end', g, {member: reviewer.principal, reason: 'Done.'})))
    expect(await seen(reviewer)).toMatchObject({state: 'ended'})
    // the live rows of the others are untouched
    expect(await store.members().live(id(owner), undefined, 10)).toContainEqual(await rowIn(g, owner))

    for (let i = 1; i < positions.length; i++) expect(positions[i]).toBeGreaterThan(positions[i - 1]!)
  })

  it('pages: changedAfter and live return at most `limit` rows, in position order, from the position given', async () => {
    const authority = authorityOn(store)
    const run = (bytes: Buffer) => submit(authority, bytes)
    const groups = [
      await missionGroup(run, 'page', {members: []}),
      await missionGroup(run, 'page', {members: []}),
      await missionGroup(run, 'page', {members: []}),
    ]
    const all = (await rowsOf(store, owner)).filter((r) => groups.includes(r.groupId))
    expect(all.map((r) => r.groupId)).toEqual(groups)
    const first = await store.members().live(id(owner), all[0]!.position - 1, 2)
    expect(first).toEqual(all.slice(0, 2))
    expect(await store.members().live(id(owner), first[1]!.position, 2)).toEqual(all.slice(2))
    await expect(store.members().live(id(owner), 0, 0)).rejects.toThrow(/limit/)
  })

  it('a rolled-back append writes no row, an accepted one writes its rows', async () => {
    const g = `urn:mwp:test:group:members-rollback-${Date.now()}`
    const event = (members: StoredEvent['members']): StoredEvent => ({
      eventId: `urn:uuid:${crypto.randomUUID()}`,
      kind: 'membership.changed',
      sequence: 1,
      aggregateRevision: 1,
      bytes: Buffer.from('{}'),
      members,
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
    const principalId = `urn:mwp:test:agent:rollback-${Date.now()}`
    // The second row cannot be stored (a fractional sequence in an integer column): the whole
    // append — its Event, the Group head and the first row, written before it — is rolled back.
    const broken = event([
      {principalId, state: 'active', visibilityStart: 1},
      {principalId: `${principalId}-2`, state: 'active', visibilityStart: 1.5},
    ])
    expect((await store.append(g, 0, [broken], receipt())).status).not.toBe('appended')
    expect(await store.head(g)).toBeNull()
    expect(await store.members().changedAfter(principalId, 0, 10)).toEqual([])
    const good = event([{principalId, state: 'provisional', visibilityStart: 1}])
    expect((await store.append(g, 0, [good], receipt())).status).toBe('appended')
    expect(await store.members().changedAfter(principalId, 0, 10)).toMatchObject([
      {groupId: g, principalId, state: 'provisional', visibilityStart: 1},
    ])
  })

  it('an older store (no index) is backfilled from its log when opened, once, with the same rows', async () => {
    const withoutPositions = (rows: MemberRecord[]) =>
      rows.map(({position: _, ...r}) => r).sort((a, b) => a.groupId.localeCompare(b.groupId))
    const before = await Promise.all(everyone.map(async (k) => withoutPositions(await rowsOf(store, k))))
    expect(before.flat().length).toBeGreaterThan(8)
    await store.close()
    const raw = backend.raw(url)
    await raw.exec('DROP TABLE group_members')
    if (backend.name === 'postgres') await raw.exec('DROP SEQUENCE group_members_position')
    await raw.close()

    store = await openStore(url, {admissionKey})
    const after = await Promise.all(everyone.map(async (k) => rowsOf(store, k)))
    // Not the rollback test's hand-made row: its Event has no Membership document in its bytes.
    expect(after.map(withoutPositions)).toEqual(before)
    for (const rows of after)
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.position).toBeGreaterThan(rows[i - 1]!.position)
    const counted = backend.raw(url)
    const rows = await counted.count('group_members')
    await counted.close()
    // opened again: the table is there, nothing is filled twice
    await store.close()
    store = await openStore(url, {admissionKey})
    const again = backend.raw(url)
    expect(await again.count('group_members')).toBe(rows)
    await again.close()
    // and the index goes on from the backfilled positions
    const authority = authorityOn(store)
    const g = await missionGroup((bytes) => submit(authority, bytes), 'after-backfill', {members: []})
    const newest = (await rowsOf(store, owner)).at(-1)!
    expect(newest.groupId).toBe(g)
    expect(newest.position).toBeGreaterThan(Math.max(...after.flat().map((r) => r.position)))
  })
})
