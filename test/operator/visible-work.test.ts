// The projection a member with late visibility folds (operator/visible-work.ts) agrees with the
// authority's own fold: from a real SQLite log, the Events a just-in-time Worker sees (from its
// offer on) give its WorkItem as apply() holds it — but for who created and authorized it and the
// ownership history before the offer, which lie outside that visibility — and its Membership and
// the Group's revision exactly; so do the Events a member granted by membership.change sees.

import {describe, expect, it} from 'vitest'
import type {WorkItemView} from '../../src/authority/model/state.js'
import {verify} from '../../src/signing/verify.js'
import type {EventDoc} from '../../src/operator/transport.js'
import {visibleWork} from '../../src/operator/visible-work.js'
import {
  contract,
  coord,
  developer,
  groupCommand,
  owner,
  post,
  receiptOf,
  registry,
  reviewer,
  sqliteSuite,
  uuid,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

const suite = sqliteSuite()
const {run} = suite
const agent = developer.principal!.id
const work = workDriver(() => suite.authority)
const INSERT = 'ext.missionweaveprotocol.core.dependency_insert'

/** The verified Events of `g` from sequence `from` on, as a reader receives them. */
async function eventsFrom(g: string, from: number): Promise<EventDoc[]> {
  const page = await suite.store.read(g, from - 1, 1000)
  return page.events.map((e) => {
    const v = verify('event', e.bytes, registry)
    if (!v.ok) throw new Error(`Event ${e.sequence} does not verify`)
    return v.document as unknown as EventDoc
  })
}

const core = ({createdBy: _c, authorizedBy: _a, createdAt: _t, ...rest}: WorkItemView) => rest

describe('visibleWork (§8 late visibility)', () => {
  it("folds a just-in-time Worker's WorkItem from its offer exactly as the authority does, and nothing it cannot see", async () => {
    const g = await missionGroup(run, 'visible-work', {members: []})
    const before = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: before, contract: contract()})))
    const w = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
    const offerSequence = (await suite.store.head(g))!.sequence + 1
    receiptOf(
      await run(
        coord('work.offer', g, {
          workItemId: w,
          candidates: [agent],
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
          contextPackageId: 'urn:mwp:test:context-package:visible',
        }),
      ),
    )
    const offered = (await suite.authority.current(g))!
    // The provisional Membership the offer grants: the candidate's epoch before it accepts.
    expect(visibleWork(await eventsFrom(g, offerSequence))!.members).toEqual({[agent]: offered.members[agent]})
    expect(offered.members[agent]!.provisional).toBeDefined()
    const offerId = offered.workItems[w]!.offer!.offerId
    receiptOf(await run(groupCommand(developer, 'work.accept_offer', g, {workItemId: w, offerId})))
    await work.advance(g, w, 'queued', 'active')
    // A WorkItem authorized after the Worker joined is seen whole; a revision of it too.
    const after = await work.drive(g, 'open')
    receiptOf(await run(coord(INSERT, g, {workItemId: after, dependencyWorkItemIds: [w]})))

    const state = (await suite.authority.current(g))!
    const view = visibleWork(await eventsFrom(g, offerSequence))!
    expect(view).toMatchObject({groupId: g, visibleFrom: offerSequence, sequence: state.sequence})
    expect(Object.keys(view.workItems).sort()).toEqual([w, after].sort())
    expect(view.workItems[w]).toEqual(core(state.workItems[w]!))
    expect(view.workItems[after]).toEqual(state.workItems[after])
    // Its own Membership (provisional at the offer, then activated) as apply() holds it, and the
    // Group's revision: what signing a Command needs (OperatorContext.signing).
    expect(view.members).toEqual({[agent]: state.members[agent]})
    expect(view.revision).toBe(state.revision)

    // From the whole history, the projection is the authority's fold of every WorkItem and Membership.
    const whole = visibleWork(await eventsFrom(g, 1))!
    expect(whole.workItems).toEqual(state.workItems)
    expect(whole.members).toEqual(state.members)
  })

  it('follows a Membership granted, raised and ended by membership.change / membership.end from its grant on, as the authority does', async () => {
    const g = await missionGroup(run, 'visible-members', {members: []})
    receiptOf(await run(post(owner, g)))
    const grantSequence = (await suite.store.head(g))!.sequence + 1
    const member = reviewer.principal!
    receiptOf(await run(groupCommand(owner, 'membership.change', g, {member, role: 'observer'})))
    const granted = (await suite.authority.current(g))!
    expect(granted.members[member.id]!.visibilityStartSequence).toBe(grantSequence)
    const raised = {member, role: 'reviewer', scopes: ['group.read', 'review.submit']}
    receiptOf(await run(groupCommand(owner, 'membership.change', g, raised)))
    let state = (await suite.authority.current(g))!
    let view = visibleWork(await eventsFrom(g, grantSequence))!
    expect(view).toMatchObject({visibleFrom: grantSequence, sequence: state.sequence, revision: state.revision})
    expect(view.members).toEqual({[member.id]: state.members[member.id]})
    expect(view.members[member.id]).toMatchObject({membershipEpoch: 2, role: 'reviewer', active: true})

    receiptOf(await run(groupCommand(owner, 'membership.end', g, {member})))
    state = (await suite.authority.current(g))!
    view = visibleWork(await eventsFrom(g, grantSequence))!
    expect(view.members[member.id]).toEqual(state.members[member.id])
    expect(view.members[member.id]!.active).toBe(false)
    expect(visibleWork(await eventsFrom(g, 1))!.members).toEqual(state.members)
  })
})
