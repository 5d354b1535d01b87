// Just-in-time Worker Membership (spec §8): the Coordinator offers work to an Agent that is not yet
// a member; the offer grants a provisional Membership scoped to that WorkItem, bound to a signed
// Context Package and seeing history only from the offer on; accepting the offer activates it.

import {describe, expect, it} from 'vitest'
import {openAuthority} from '../src/authority/authority.js'
import {canonicalHash} from '../src/json/jcs.js'
import {authorityKey, codeOf, contract, coord, createCommand, developer, groupCommand, newGroup, owner, post, receiptOf, registry, sqliteSuite, uuid} from './authority-helpers.js'

const suite = sqliteSuite()
const run = suite.run
const state = async (g: string) => (await suite.authority.current(g))!
const later = (ms: number) => new Date(Date.now() + ms).toISOString()
const agent = developer.principal!.id
const pkg = 'urn:mwp:test:context-package:release-notes'

/** A Group with one open WorkItem; developer is not a member. */
async function open(): Promise<{g: string; w: string}> {
  const g = newGroup('jit')
  receiptOf(await run(createCommand(g)))
  const w = uuid(7)
  receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
  return {g, w}
}

describe('just-in-time Worker Membership (§8)', () => {
  it('[+cmd:work.offer] [+cmd:work.accept_offer] an offer to a non-member grants a provisional Membership; accepting it activates that Membership and creates ownership', async () => {
    const {g, w} = await open()
    const offerSequence = (await state(g)).sequence + 1
    receiptOf(await run(coord('work.offer', g, {workItemId: w, candidates: [agent], expiresAt: later(60_000), contextPackageId: pkg})))
    const provisional = (await state(g)).members[agent]!
    expect(provisional).toMatchObject({active: false, role: 'worker', membershipEpoch: 1, visibilityStartSequence: offerSequence, scopes: [`workitem:${w}`], provisional: {workItemId: w, contextPackageId: pkg}})
    // Provisional is not active: it can do nothing but accept its offer.
    expect(codeOf(await run(post(developer, g)))).toBe('MEMBERSHIP_REQUIRED')

    receiptOf(await run(groupCommand(developer, 'work.accept_offer', g, {workItemId: w, offerId: (await state(g)).workItems[w]!.offer!.offerId})))
    const s = await state(g)
    expect(s.members[agent]).toMatchObject({active: true, membershipEpoch: 1, visibilityStartSequence: offerSequence})
    expect(s.members[agent]!.provisional).toBeUndefined()
    expect(s.workItems[w]!.owner).toMatchObject({agentId: agent, ownershipEpoch: 1})
    receiptOf(await run(post(developer, g)))
    // Replay reproduces the live state exactly.
    const replayed = await openAuthority({store: suite.store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}}).current(g)
    expect(canonicalHash(replayed as never)).toBe(canonicalHash((await state(g)) as never))
  })

  it('[-cmd:work.offer] [-cmd:work.accept_offer] without a Context Package a non-member cannot be offered work; an expired, foreign-WorkItem or stale-epoch provisional acceptance is refused', async () => {
    const {g, w} = await open()
    const before = (await suite.store.head(g))!.sequence
    expect(codeOf(await run(coord('work.offer', g, {workItemId: w, candidates: [agent], expiresAt: later(60_000)})))).toBe('INVALID_COMMAND')
    expect((await suite.store.head(g))!.sequence).toBe(before)

    const w2 = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w2, contract: contract()})))
    receiptOf(await run(coord('work.offer', g, {workItemId: w, candidates: [agent], expiresAt: later(400), contextPackageId: pkg})))
    const offerId = (await state(g)).workItems[w]!.offer!.offerId
    // The provisional Membership is scoped to w: it names no Membership for w2.
    receiptOf(await run(coord('work.offer', g, {workItemId: w2, candidates: [agent], expiresAt: later(60_000), contextPackageId: pkg})))
    // The second offer re-provisioned the candidate (epoch 2, scoped to w2): epoch 1 is stale.
    expect(codeOf(await run(groupCommand(developer, 'work.accept_offer', g, {workItemId: w, offerId}, {membershipEpoch: 1})))).toBe('MEMBERSHIP_STALE')
    expect(codeOf(await run(groupCommand(developer, 'work.accept_offer', g, {workItemId: w, offerId}, {membershipEpoch: 2})))).toBe('MEMBERSHIP_REQUIRED')
    // After the provisional Membership expired with its offer, acceptance is WORK_OFFER_EXPIRED.
    const w3 = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w3, contract: contract()})))
    receiptOf(await run(coord('work.offer', g, {workItemId: w3, candidates: [agent], expiresAt: later(300), contextPackageId: pkg})))
    await new Promise((r) => setTimeout(r, 400))
    const offer3 = (await state(g)).workItems[w3]!.offer!.offerId
    expect(codeOf(await run(groupCommand(developer, 'work.accept_offer', g, {workItemId: w3, offerId: offer3}, {membershipEpoch: 3})))).toBe('WORK_OFFER_EXPIRED')
    expect((await state(g)).workItems[w3]!.owner).toBeNull()
  })
})
