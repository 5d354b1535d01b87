// Just-in-time Worker Membership (spec §8): the Coordinator offers work to an Agent that is not yet
// a member; the offer grants a provisional Membership scoped to that WorkItem, bound to a signed
// Context Package and seeing history only from the offer on; accepting the offer activates it.

import {describe, expect, it} from 'vitest'
import {openAuthority} from '../../src/authority/authority.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {
  authorityKey,
  codeOf,
  contract,
  coord,
  developer,
  groupCommand,
  owner,
  post,
  receiptOf,
  registry,
  sqliteSuite,
  uuid,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'

const suite = sqliteSuite()
const run = suite.run
const state = async (g: string) => (await suite.authority.current(g))!
const later = (ms: number) => new Date(Date.now() + ms).toISOString()
const agent = developer.principal!.id
const pkg = 'urn:mwp:test:context-package:release-notes'

/** A Group with one open WorkItem; developer is not a member. */
async function open(): Promise<{g: string; w: string}> {
  const g = await missionGroup(run, 'jit', {members: []})
  const w = uuid(7)
  receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
  return {g, w}
}

describe('just-in-time Worker Membership (§8)', () => {
  it('[+cmd:work.offer] [+cmd:work.accept_offer] an offer to a non-member grants a provisional Membership; accepting it activates that Membership and creates ownership', async () => {
    const {g, w} = await open()
    const offerSequence = (await state(g)).sequence + 1
    receiptOf(
      await run(
        coord('work.offer', g, {workItemId: w, candidates: [agent], expiresAt: later(60_000), contextPackageId: pkg}),
      ),
    )
    const provisional = (await state(g)).members[agent]!
    expect(provisional).toMatchObject({
      active: false,
      role: 'worker',
      membershipEpoch: 1,
      visibilityStartSequence: offerSequence,
      scopes: [`workitem:${w}`],
      provisional: {workItemId: w, contextPackageId: pkg},
    })
    // Provisional is not active: it can do nothing but accept its offer — and speak in that
    // WorkItem's Conversation (a question, or why it declines; §10.3), nowhere else.
    expect(codeOf(await run(post(developer, g)))).toBe('MEMBERSHIP_REQUIRED')
    const conversationId = (await state(g)).workItems[w]!.conversationId
    receiptOf(await run(post(developer, g, {payload: {conversationId, text: 'Declined: capacity'}})))

    receiptOf(
      await run(
        groupCommand(developer, 'work.accept_offer', g, {
          workItemId: w,
          offerId: (await state(g)).workItems[w]!.offer!.offerId,
        }),
      ),
    )
    const s = await state(g)
    expect(s.members[agent]).toMatchObject({active: true, membershipEpoch: 1, visibilityStartSequence: offerSequence})
    expect(s.members[agent]!.provisional).toBeUndefined()
    expect(s.workItems[w]!.owner).toMatchObject({agentId: agent, ownershipEpoch: 1})
    receiptOf(await run(post(developer, g)))
    // Replay reproduces the live state exactly.
    const replayed = await openAuthority({
      store: suite.store,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id]},
    }).current(g)
    expect(canonicalHash(replayed as never)).toBe(canonicalHash((await state(g)) as never))
  })

  it('[-cmd:work.offer] [-cmd:work.accept_offer] without a Context Package a non-member cannot be offered work; an expired, foreign-WorkItem or stale-epoch provisional acceptance is refused', async () => {
    const {g, w} = await open()
    const before = (await suite.store.head(g))!.sequence
    expect(
      codeOf(await run(coord('work.offer', g, {workItemId: w, candidates: [agent], expiresAt: later(60_000)}))),
    ).toBe('INVALID_COMMAND')
    expect((await suite.store.head(g))!.sequence).toBe(before)

    const w2 = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w2, contract: contract()})))
    receiptOf(
      await run(
        coord('work.offer', g, {workItemId: w, candidates: [agent], expiresAt: later(400), contextPackageId: pkg}),
      ),
    )
    const offerId = (await state(g)).workItems[w]!.offer!.offerId
    // The provisional Membership is scoped to w: it names no Membership for w2.
    receiptOf(
      await run(
        coord('work.offer', g, {workItemId: w2, candidates: [agent], expiresAt: later(60_000), contextPackageId: pkg}),
      ),
    )
    // The second offer re-provisioned the candidate (epoch 2, scoped to w2): epoch 1 is stale.
    expect(
      codeOf(
        await run(groupCommand(developer, 'work.accept_offer', g, {workItemId: w, offerId}, {membershipEpoch: 1})),
      ),
    ).toBe('MEMBERSHIP_STALE')
    expect(
      codeOf(
        await run(groupCommand(developer, 'work.accept_offer', g, {workItemId: w, offerId}, {membershipEpoch: 2})),
      ),
    ).toBe('MEMBERSHIP_REQUIRED')
    // After the provisional Membership expired with its offer, acceptance is WORK_OFFER_EXPIRED.
    const w3 = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w3, contract: contract()})))
    receiptOf(
      await run(
        coord('work.offer', g, {workItemId: w3, candidates: [agent], expiresAt: later(300), contextPackageId: pkg}),
      ),
    )
    await new Promise((r) => setTimeout(r, 400))
    const offer3 = (await state(g)).workItems[w3]!.offer!.offerId
    expect(
      codeOf(
        await run(
          groupCommand(developer, 'work.accept_offer', g, {workItemId: w3, offerId: offer3}, {membershipEpoch: 3}),
        ),
      ),
    ).toBe('WORK_OFFER_EXPIRED')
    expect((await state(g)).workItems[w3]!.owner).toBeNull()
  })
})

describe('just-in-time Membership ends with the last WorkItem (§8 step 4)', () => {
  /** developer joins just in time for w (offer → accept → start); its Membership epoch is `epoch`. */
  async function owning(g: string, w: string, epoch = 1) {
    receiptOf(
      await run(
        coord('work.offer', g, {workItemId: w, candidates: [agent], expiresAt: later(60_000), contextPackageId: pkg}),
      ),
    )
    receiptOf(
      await run(
        groupCommand(
          developer,
          'work.accept_offer',
          g,
          {workItemId: w, offerId: (await state(g)).workItems[w]!.offer!.offerId},
          {membershipEpoch: epoch},
        ),
      ),
    )
    receiptOf(
      await run(groupCommand(developer, 'work.start', g, {workItemId: w, ownershipEpoch: 1}, {membershipEpoch: epoch})),
    )
  }
  const submit = async (g: string, w: string, epoch = 1) =>
    receiptOf(
      await run(
        groupCommand(
          developer,
          'work.submit',
          g,
          {
            workItemId: w,
            ownershipEpoch: 1,
            leaseId: (await state(g)).workItems[w]!.lease!.leaseId,
            artifactHashes: [`sha256:${'c'.repeat(64)}`],
          },
          {membershipEpoch: epoch},
        ),
      ),
    )
  const kinds = async (g: string, from: number) => (await suite.store.read(g, from, 50)).events.map((e) => e.kind)

  it("[+evt:membership.ended] the accepted result ends the Worker's Membership in the same append; an offer later provisions it again", async () => {
    const {g, w} = await open()
    await owning(g, w)
    await submit(g, w)
    const before = (await suite.store.head(g))!.sequence
    receiptOf(await run(coord('work.accept_result', g, {workItemId: w})))
    expect(await kinds(g, before)).toEqual(['work.result.accepted', 'membership.ended'])
    expect((await state(g)).members[agent]).toMatchObject({active: false, membershipEpoch: 1})
    expect(codeOf(await run(post(developer, g)))).toBe('MEMBERSHIP_REQUIRED')
    // The next offer provisions the Worker again (epoch 2), and it works on.
    const w2 = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w2, contract: contract()})))
    await owning(g, w2, 2)
    expect((await state(g)).members[agent]).toMatchObject({active: true, membershipEpoch: 2, justInTime: true})
    // A failure of its last WorkItem ends it too (the Coordinator's work.fail).
    receiptOf(
      await run(
        coord('work.fail', g, {workItemId: w2, reason: 'Dropped.', evidenceHashes: [`sha256:${'d'.repeat(64)}`]}),
      ),
    )
    expect((await state(g)).members[agent]).toMatchObject({active: false, membershipEpoch: 2})
    const replayed = await openAuthority({
      store: suite.store,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id]},
    }).current(g)
    expect(canonicalHash(replayed as never)).toBe(canonicalHash((await state(g)) as never))
  })

  it('[-evt:membership.ended] a Worker with another WorkItem, or one added by membership.change, keeps its Membership', async () => {
    const {g, w} = await open()
    await owning(g, w)
    const w2 = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w2, contract: contract()})))
    receiptOf(await run(coord('work.offer', g, {workItemId: w2, candidates: [agent], expiresAt: later(60_000)})))
    receiptOf(await run(coord('work.cancel', g, {workItemId: w, reason: 'Not needed.'})))
    // Still offered w2: the Membership stays.
    expect((await state(g)).members[agent]).toMatchObject({active: true, justInTime: true})
    receiptOf(
      await run(
        groupCommand(developer, 'work.accept_offer', g, {
          workItemId: w2,
          offerId: (await state(g)).workItems[w2]!.offer!.offerId,
        }),
      ),
    )
    receiptOf(await run(coord('work.cancel', g, {workItemId: w2, reason: 'Not needed either.'})))
    expect((await state(g)).members[agent]!.active).toBe(false)

    // A Membership the Coordinator granted outright is not just in time: it stays until membership.end.
    const other = await open()
    receiptOf(
      await run(
        coord('membership.change', other.g, {
          member: {type: 'agent', id: agent},
          role: 'worker',
          scopes: ['group.read'],
        }),
      ),
    )
    receiptOf(
      await run(coord('work.offer', other.g, {workItemId: other.w, candidates: [agent], expiresAt: later(60_000)})),
    )
    receiptOf(
      await run(
        groupCommand(developer, 'work.accept_offer', other.g, {
          workItemId: other.w,
          offerId: (await state(other.g)).workItems[other.w]!.offer!.offerId,
        }),
      ),
    )
    receiptOf(await run(coord('work.cancel', other.g, {workItemId: other.w, reason: 'Not needed.'})))
    expect((await state(other.g)).members[agent]).toMatchObject({active: true})
    expect((await state(other.g)).members[agent]!.justInTime).toBeUndefined()
  })
})
