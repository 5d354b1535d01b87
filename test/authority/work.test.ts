// WorkItem core (spec §10.1 Work Contract, §10.2 state machine table, §10.3 offers and ownership,
// §11.3 Execution Leases) through the full ingress on SQLite: a positive and a negative case per
// implemented transition row, the first-acceptance-wins race, offer expiry (no Event), fencing of
// stale Ownership Epochs and Lease IDs, REVISION_CONFLICT, and replay to the live state.

import {describe, expect, it} from 'vitest'
import {openAuthority} from '../../src/authority/authority.js'
import {validWorkContract} from '../../src/authority/ingress/payloads.js'
import {canonicalHash} from '../../src/json/jcs.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import {verify} from '../../src/signing/verify.js'
import {
  authorityKey,
  authorityOn,
  codeOf,
  coordinator,
  developer,
  groupCommand,
  otherHuman,
  owner,
  receiptOf,
  registry,
  reviewer,
  sqliteSuite,
  uuid,
  contract,
  coord,
} from '../support/authority-helpers.js'
import {newestEvent} from '../support/events.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

const H1 = `sha256:${'c'.repeat(64)}`

/** The authority's trusted clock; tests move it forward to expire offers. */
let skewMs = 0
const touched: string[] = []

const suite = sqliteSuite((store) =>
  openAuthority({
    store,
    registry,
    authorityKey,
    policy: {rootMissionOwners: [owner.principal!.id]},
    clock: () => new Date(Date.now() + skewMs).toISOString(),
  }),
)

const {run, code} = suite
const head = async (g: string) => (await suite.store.head(g))?.sequence
const state = async (g: string) => (await suite.authority.current(g))!
const item = async (g: string, w: string) => (await state(g)).workItems[w]!
const lastEvent = (g: string) => newestEvent(suite.store, g)

const propose = (g: string, proposalId: string, c: Record<string, unknown> = contract(), signer: SigningKey = owner) =>
  groupCommand(signer, 'work.propose', g, {proposalId, contract: c})
const authorize = (
  g: string,
  workItemId: string,
  from: {proposalId?: string; contract?: Record<string, unknown>} = {contract: contract()},
  epoch = 1,
  signer: SigningKey = coordinator,
) => coord('work.authorize', g, {workItemId, ...from}, epoch, signer)
const inAMinute = () => new Date(Date.now() + skewMs + 60_000).toISOString()
const offer = (
  g: string,
  workItemId: string,
  candidates: SigningKey[] = [developer],
  expiresAt = inAMinute(),
  epoch = 1,
  signer: SigningKey = coordinator,
) => coord('work.offer', g, {workItemId, candidates: candidates.map((c) => c.principal!.id), expiresAt}, epoch, signer)
const acceptOffer = (
  g: string,
  workItemId: string,
  offerId: string,
  signer: SigningKey = developer,
  fields: Record<string, unknown> = {},
) => groupCommand(signer, 'work.accept_offer', g, {workItemId, offerId}, fields)
const start = (g: string, workItemId: string, ownershipEpoch = 1, signer: SigningKey = developer) =>
  groupCommand(signer, 'work.start', g, {workItemId, ownershipEpoch})
const submitWork = (
  g: string,
  workItemId: string,
  leaseId: string,
  ownershipEpoch = 1,
  signer: SigningKey = developer,
) => groupCommand(signer, 'work.submit', g, {workItemId, ownershipEpoch, leaseId, artifactHashes: [H1]})
const acceptResult = (g: string, workItemId: string, epoch = 1, signer: SigningKey = coordinator) =>
  coord('work.accept_result', g, {workItemId}, epoch, signer)
const cancel = (g: string, workItemId: string, signer: SigningKey = coordinator) =>
  signer.principal!.type === 'agent'
    ? coord('work.cancel', g, {workItemId, reason: 'Out of scope.'}, 1, signer)
    : groupCommand(signer, 'work.cancel', g, {workItemId, reason: 'Out of scope.'})

/** A Group with developer and reviewer as Worker members (Membership Epoch 1). */
const group = () => missionGroup(run, 'work', {touched})

const work = workDriver(() => suite.authority, {
  candidates: [developer, reviewer],
  offerExpiresAt: inAMinute,
  artifactHashes: [H1],
})
/** A Group with one WorkItem in `target` state (developer owns it from queued on). */
async function at(
  target: 'open' | 'offered' | 'queued' | 'active' | 'submitted' | 'verified',
): Promise<{g: string; w: string}> {
  const g = await group()
  return {g, w: await work.drive(g, target)}
}

describe('work.propose (none → open Work Proposal)', () => {
  it('[+cmd:work.propose] [+evt:work.proposed] [+row:t10.2:none->proposal:work.propose] any Group member proposes; the proposal is recorded and no WorkItem exists', async () => {
    const g = await group()
    const p = uuid(6)
    const before = (await state(g)).revision
    const r = receiptOf(await run(propose(g, p, contract(), developer)))
    expect(r.aggregateRevision).toBe(before + 1)
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.proposed',
      payload: {proposal: {proposalId: p, proposedBy: developer.principal, contract: contract()}},
    })
    const s = await state(g)
    expect(s.proposals[p]!.proposedBy).toEqual(developer.principal)
    expect(s.workItems).toEqual({})
  })

  it('[-cmd:work.propose] [-evt:work.proposed] [-row:t10.2:none->proposal:work.propose] a contract missing a required field is WORK_CONTRACT_INCOMPLETE; a never-member is GROUP_NOT_FOUND (§17.2)', async () => {
    const g = await group()
    const h = await head(g)
    const {acceptanceCriteria: _dropped, ...partial} = contract()
    expect(await code(propose(g, uuid(6), partial))).toBe('WORK_CONTRACT_INCOMPLETE')
    expect(await code(propose(g, uuid(6), contract({requiredCapabilities: []})))).toBe('WORK_CONTRACT_INCOMPLETE')
    expect(await code(propose(g, uuid(6), contract({requestedUrgency: 'yesterday'})))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await code(propose(g, uuid(6), contract(), otherHuman))).toBe('GROUP_NOT_FOUND')
    expect(await code(groupCommand(owner, 'work.propose', g, {proposalId: uuid(6)}))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await head(g)).toBe(h)
  })
})

describe('work.authorize (none or open Work Proposal → open)', () => {
  it('[+cmd:work.authorize] [+evt:work.authorized] [+row:t10.2:none_or_proposal->open:work.authorize] the Coordinator authorizes a proposal or a direct contract; the WorkItem is open', async () => {
    const g = await group()
    const p = uuid(6)
    receiptOf(await run(propose(g, p, contract(), developer)))
    const w = uuid(7)
    receiptOf(await run(authorize(g, w, {proposalId: p})))
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.authorized',
      payload: {proposalId: p, workItem: {workItemId: w, state: 'open'}},
    })
    const s = await state(g)
    expect(s.proposals[p]).toBeUndefined()
    expect(s.workItems[w]).toMatchObject({
      state: 'open',
      revision: 1,
      createdBy: developer.principal,
      authorizedBy: coordinator.principal,
      owner: null,
    })
    const w2 = uuid(7)
    receiptOf(await run(authorize(g, w2)))
    expect((await item(g, w2)).state).toBe('open')
    // The Event carries a schema-valid WorkItem.
    const events = (await suite.store.read(g, 0, 100)).events.filter((e) => e.kind === 'work.authorized')
    for (const e of events) {
      const v = verify('event', e.bytes, registry)
      if (!v.ok) throw new Error('stored Event does not verify')
      expect(
        JSON.stringify(schemaCatalog().validate('work-item', (v.document.payload as {workItem: unknown}).workItem)),
      ).toBe(JSON.stringify({valid: true}))
    }
  })

  it('[-cmd:work.authorize] [-evt:work.authorized] [-row:t10.2:none_or_proposal->open:work.authorize] a non-Coordinator, a stale Coordinator epoch, an existing WorkItem or a consumed proposal are refused', async () => {
    const {g, w} = await at('open')
    const h = await head(g)
    expect(await code(groupCommand(owner, 'work.authorize', g, {workItemId: uuid(7), contract: contract()}))).toBe(
      'AUTH_FORBIDDEN',
    )
    expect(await code(authorize(g, uuid(7), {contract: contract()}, 1, developer))).toBe('AUTH_FORBIDDEN')
    expect(await code(authorize(g, w))).toBe('INVALID_STATE_TRANSITION')
    expect(await code(authorize(g, uuid(7), {proposalId: uuid(6)}))).toBe('INVALID_STATE_TRANSITION')
    const {goal: _goal, ...noGoal} = contract()
    expect(await code(authorize(g, uuid(7), {contract: noGoal}))).toBe('WORK_CONTRACT_INCOMPLETE')
    expect(await code(authorize(g, uuid(7), {}))).toBe('WORK_CONTRACT_INCOMPLETE')
    expect(await head(g)).toBe(h)
  })
})

describe('work.offer (open/offered/queued/active/blocked/failed with no live owner → offered)', () => {
  it('[+cmd:work.offer] [+evt:work.offer.created] [+row:t10.2:no_live_owner->offered:work.offer] the Coordinator offers to candidates with an expiry, and may replace the offer', async () => {
    const {g, w} = await at('open')
    receiptOf(await run(offer(g, w, [developer])))
    const first = await item(g, w)
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.offer.created',
      payload: {
        workItemId: w,
        revision: 2,
        offer: {offerId: first.offer!.offerId, candidates: [developer.principal!.id]},
      },
    })
    expect(first).toMatchObject({
      state: 'offered',
      revision: 2,
      owner: null,
      offer: {candidates: [developer.principal!.id]},
    })
    receiptOf(await run(offer(g, w, [developer, reviewer])))
    const second = await item(g, w)
    expect(second.offer!.offerId).not.toBe(first.offer!.offerId)
    // The replaced offer is no longer valid.
    expect(await code(acceptOffer(g, w, first.offer!.offerId))).toBe('WORK_OFFER_EXPIRED')
  })

  it('[-cmd:work.offer] [-evt:work.offer.created] [-row:t10.2:no_live_owner->offered:work.offer] with a live owner, from a terminal state, by a non-Coordinator or to a non-member it is refused', async () => {
    const {g, w} = await at('queued')
    const h = await head(g)
    expect(await code(offer(g, w))).toBe('INVALID_STATE_TRANSITION')
    expect(await code(offer(g, w, [developer], inAMinute(), 1, developer))).toBe('AUTH_FORBIDDEN')
    const v = await at('verified')
    expect(await code(offer(v.g, v.w))).toBe('INVALID_STATE_TRANSITION')
    const o = await at('open')
    expect(
      await code(
        coord('work.offer', o.g, {workItemId: o.w, candidates: ['urn:mwp:dev:agent:stranger'], expiresAt: inAMinute()}),
      ),
    ).toBe('INVALID_COMMAND')
    expect(await code(offer(o.g, o.w, [developer], new Date(Date.now() - 1000).toISOString()))).toBe('INVALID_COMMAND')
    expect(await head(g)).toBe(h)
  })
})

describe('work.accept_offer (offered → queued) and offer expiry (offered → offered, no Event)', () => {
  it('[+cmd:work.accept_offer] [+evt:work.offer.accepted] [+row:t10.2:offered->queued:work.accept_offer] a candidate accepts: queued with Ownership Epoch 1, the offer withdrawn', async () => {
    const {g, w} = await at('offered')
    const before = (await state(g)).revision
    const offerId = (await item(g, w)).offer!.offerId
    receiptOf(await run(acceptOffer(g, w, offerId, reviewer)))
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.offer.accepted',
      payload: {workItemId: w, offerId, owner: {agentId: reviewer.principal!.id, ownershipEpoch: 1}},
    })
    const s = await state(g)
    expect(s.revision).toBe(before + 1)
    expect(s.workItems[w]).toMatchObject({
      state: 'queued',
      offer: null,
      ownershipEpoch: 1,
      owner: {agentId: reviewer.principal!.id, ownershipEpoch: 1, sessionEpoch: 1},
    })
  })

  it('[-cmd:work.accept_offer] [-evt:work.offer.accepted] two candidates race: exactly one wins, the other gets WORK_ALREADY_OWNED', async () => {
    const {g, w} = await at('offered')
    const offerId = (await item(g, w)).offer!.offerId
    const [a, b] = await Promise.all([
      run(acceptOffer(g, w, offerId, developer)),
      run(acceptOffer(g, w, offerId, reviewer)),
    ])
    expect([codeOf(a), codeOf(b)].sort()).toEqual(['WORK_ALREADY_OWNED', 'ok'])
    const winner = codeOf(a) === 'ok' ? developer : reviewer
    expect((await item(g, w)).owner!.agentId).toBe(winner.principal!.id)
    expect((await suite.store.read(g, 0, 100)).events.filter((e) => e.kind === 'work.offer.accepted')).toHaveLength(1)
  })

  it('[+row:t10.2:offered->offered:offer_expiry] after the offer expiry (by the suite.authority clock) acceptance is WORK_OFFER_EXPIRED and appends nothing', async () => {
    const {g, w} = await at('offered')
    const before = await item(g, w)
    const h = await head(g)
    skewMs = 120_000
    try {
      expect(await code(acceptOffer(g, w, before.offer!.offerId))).toBe('WORK_OFFER_EXPIRED')
    } finally {
      skewMs = 0
    }
    expect(await head(g)).toBe(h)
    expect(await item(g, w)).toEqual(before)
  })

  it('[-row:t10.2:offered->queued:work.accept_offer] a non-candidate, a non-Agent, or acceptance from open are refused', async () => {
    const g = await group()
    const w = uuid(7)
    receiptOf(await run(authorize(g, w)))
    expect(await code(acceptOffer(g, w, uuid(8)))).toBe('INVALID_STATE_TRANSITION')
    receiptOf(await run(offer(g, w, [developer])))
    const offerId = (await item(g, w)).offer!.offerId
    expect(await code(acceptOffer(g, w, offerId, reviewer))).toBe('AUTH_FORBIDDEN')
    expect(await code(acceptOffer(g, w, offerId, owner))).toBe('AUTH_FORBIDDEN')
    expect(await code(acceptOffer(g, w, offerId, developer, {expectedRevision: 1}))).toBe('REVISION_CONFLICT')
    expect((await item(g, w)).state).toBe('offered')
  })
})

describe('work.start (queued → active)', () => {
  it('[+cmd:work.start] [+evt:work.started] [+row:t10.2:queued->active:work.start] the owner with its Ownership Epoch starts; an Execution Lease with a stable ID is issued', async () => {
    const {g, w} = await at('queued')
    receiptOf(await run(start(g, w)))
    const it1 = await item(g, w)
    expect(it1.state).toBe('active')
    expect(it1.lease).toMatchObject({
      holderAgentId: developer.principal!.id,
      ownershipEpoch: 1,
      sessionEpoch: 1,
      state: 'active',
    })
    const e = (await suite.store.read(g, 0, 100)).events.find((x) => x.kind === 'work.started')!
    const v = verify('event', e.bytes, registry)
    if (!v.ok) throw new Error('stored Event does not verify')
    const lease = (v.document.payload as {lease: Record<string, unknown>}).lease
    expect(lease.leaseId).toBe(it1.lease!.leaseId)
    expect(schemaCatalog().validate('lease', {...lease, expiresAt: '2027-01-15T00:00:00Z'})).toEqual({valid: true})
  })

  it('[-cmd:work.start] [-evt:work.started] [-row:t10.2:queued->active:work.start] a non-owner, a stale Ownership Epoch, or a start from active are refused', async () => {
    const {g, w} = await at('queued')
    const h = await head(g)
    expect(await code(start(g, w, 1, reviewer))).toBe('AUTH_FORBIDDEN')
    expect(await code(start(g, w, 2))).toBe('AUTH_FORBIDDEN')
    expect(await head(g)).toBe(h)
    receiptOf(await run(start(g, w)))
    expect(await code(start(g, w))).toBe('INVALID_STATE_TRANSITION')
    expect((await suite.store.read(g, 0, 100)).events.filter((e) => e.kind === 'work.started')).toHaveLength(1)
  })
})

describe('work.submit (active → submitted)', () => {
  it('[+cmd:work.submit] [+evt:work.submitted] [+row:t10.2:active->submitted:work.submit] the owner submits with its Ownership Epoch and current Lease ID; the lease is released', async () => {
    const {g, w} = await at('active')
    const leaseId = (await item(g, w)).lease!.leaseId
    receiptOf(await run(submitWork(g, w, leaseId)))
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.submitted',
      payload: {workItemId: w, leaseId, artifactHashes: [H1]},
    })
    expect(await item(g, w)).toMatchObject({
      state: 'submitted',
      submission: {artifactHashes: [H1]},
      lease: {leaseId, state: 'released'},
    })
  })

  it('[-cmd:work.submit] [-evt:work.submitted] [-row:t10.2:active->submitted:work.submit] an old Lease ID is WORK_LEASE_EXPIRED, a submit from queued or a second submit INVALID_STATE_TRANSITION / WORK_LEASE_EXPIRED', async () => {
    const {g, w} = await at('active')
    const h = await head(g)
    expect(await code(submitWork(g, w, uuid(9)))).toBe('WORK_LEASE_EXPIRED')
    expect(await code(submitWork(g, w, (await item(g, w)).lease!.leaseId, 1, reviewer))).toBe('AUTH_FORBIDDEN')
    expect(await head(g)).toBe(h)
    const leaseId = (await item(g, w)).lease!.leaseId
    receiptOf(await run(submitWork(g, w, leaseId)))
    // The released lease no longer authorizes anything.
    expect(await code(submitWork(g, w, leaseId))).toBe('WORK_LEASE_EXPIRED')
    const q = await at('queued')
    expect(await code(submitWork(q.g, q.w, uuid(9)))).toBe('WORK_LEASE_EXPIRED')
    expect((await suite.store.read(g, 0, 100)).events.filter((e) => e.kind === 'work.submitted')).toHaveLength(1)
  })

  it('a stale Ownership Epoch is WORK_STALE_OWNERSHIP (fenced in the pure decider)', async () => {
    const {g, w} = await at('active')
    const s = await state(g)
    // Simulate a later ownership: the same WorkItem at Ownership Epoch 2 held by reviewer.
    const fenced = {
      ...s,
      workItems: {
        ...s.workItems,
        [w]: {
          ...s.workItems[w]!,
          ownershipEpoch: 2,
          owner: {agentId: reviewer.principal!.id, ownershipEpoch: 2, sessionEpoch: 1},
        },
      },
    }
    const {decide} = await import('../../src/authority/decide/index.js')
    const decision = decide(
      fenced,
      {
        actionId: uuid(1),
        actor: developer.principal!,
        kind: 'work.submit',
        groupId: g,
        membershipEpoch: 1,
        sessionEpoch: 1,
        payload: {workItemId: w, ownershipEpoch: 1, leaseId: s.workItems[w]!.lease!.leaseId, artifactHashes: [H1]},
      },
      {acceptedAt: new Date().toISOString(), newId: () => uuid(3), validWorkContract},
    )
    expect('error' in decision && decision.error).toBe('WORK_STALE_OWNERSHIP')
  })
})

describe('work.accept_result (submitted → verified)', () => {
  it('[+cmd:work.accept_result] [+evt:work.result.accepted] [+row:t10.2:submitted->verified:work.accept_result] the Coordinator accepts the result; verified is terminal', async () => {
    const {g, w} = await at('submitted')
    receiptOf(await run(acceptResult(g, w)))
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.result.accepted',
      payload: {workItemId: w, artifactHashes: [H1]},
    })
    expect((await item(g, w)).state).toBe('verified')
    expect(await code(cancel(g, w))).toBe('INVALID_STATE_TRANSITION')
    expect(await code(acceptResult(g, w))).toBe('INVALID_STATE_TRANSITION')
  })

  it('[-cmd:work.accept_result] [-evt:work.result.accepted] [-row:t10.2:submitted->verified:work.accept_result] from active, by the owner, or with a stale Coordinator epoch it is refused', async () => {
    const {g, w} = await at('active')
    const h = await head(g)
    expect(await code(acceptResult(g, w))).toBe('INVALID_STATE_TRANSITION')
    expect(await head(g)).toBe(h)
    const s = await at('submitted')
    expect(await code(acceptResult(s.g, s.w, 1, developer))).toBe('AUTH_FORBIDDEN')
    expect((await item(s.g, s.w)).state).toBe('submitted')
    // A replaced Coordinator is fenced by its old epoch (§7.2).
    receiptOf(await run(groupCommand(owner, 'mission.assign_coordinator', s.g, {agentId: reviewer.principal!.id})))
    expect(await code(acceptResult(s.g, s.w))).toBe('AUTH_STALE_COORDINATOR')
    receiptOf(await run(coord('work.accept_result', s.g, {workItemId: s.w}, 2, reviewer, {membershipEpoch: 2})))
    expect((await item(s.g, s.w)).state).toBe('verified')
  })
})

describe('work.cancel (open/offered/queued/active/blocked/submitted → cancelled)', () => {
  it('[+cmd:work.cancel] [+evt:work.cancelled] [+row:t10.2:unfinished->cancelled:work.cancel] the Coordinator or the MissionOwner cancels; an active Execution Lease is revoked', async () => {
    const a = await at('active')
    const leaseId = (await item(a.g, a.w)).lease!.leaseId
    receiptOf(await run(cancel(a.g, a.w, owner)))
    expect(await lastEvent(a.g)).toMatchObject({
      kind: 'work.cancelled',
      payload: {workItemId: a.w, reason: 'Out of scope.', revokedLeaseId: leaseId},
    })
    expect(await item(a.g, a.w)).toMatchObject({state: 'cancelled', lease: {state: 'revoked'}})
    const o = await at('offered')
    receiptOf(await run(cancel(o.g, o.w)))
    expect((await item(o.g, o.w)).state).toBe('cancelled')
  })

  it('[-cmd:work.cancel] [-evt:work.cancelled] [-row:t10.2:unfinished->cancelled:work.cancel] a Worker cannot cancel; cancelled is terminal', async () => {
    const {g, w} = await at('queued')
    expect(await code(cancel(g, w, developer))).toBe('AUTH_FORBIDDEN')
    expect((await item(g, w)).state).toBe('queued')
    receiptOf(await run(cancel(g, w)))
    expect(await code(cancel(g, w))).toBe('INVALID_STATE_TRANSITION')
    expect(await code(offer(g, w))).toBe('INVALID_STATE_TRANSITION')
    expect(await code(start(g, w))).toBe('INVALID_STATE_TRANSITION')
  })
})

describe('revision and replay', () => {
  it('every work kind is fenced by expectedRevision', async () => {
    const {g, w} = await at('open')
    const stale = {expectedRevision: 1}
    expect(await code(groupCommand(owner, 'work.propose', g, {proposalId: uuid(6), contract: contract()}, stale))).toBe(
      'REVISION_CONFLICT',
    )
    expect(
      await code(coord('work.authorize', g, {workItemId: uuid(7), contract: contract()}, 1, coordinator, stale)),
    ).toBe('REVISION_CONFLICT')
    expect(
      await code(
        coord(
          'work.offer',
          g,
          {workItemId: w, candidates: [developer.principal!.id], expiresAt: inAMinute()},
          1,
          coordinator,
          stale,
        ),
      ),
    ).toBe('REVISION_CONFLICT')
    expect(await code(coord('work.cancel', g, {workItemId: w, reason: 'x'}, 1, coordinator, stale))).toBe(
      'REVISION_CONFLICT',
    )
    const current = (await state(g)).revision
    receiptOf(
      await run(coord('work.cancel', g, {workItemId: w, reason: 'x'}, 1, coordinator, {expectedRevision: current})),
    )
  })

  it('a full sequence replays to the live state', async () => {
    const {g, w} = await at('verified')
    receiptOf(await run(propose(g, uuid(6), contract(), reviewer)))
    const live = await state(g)
    expect(live.workItems[w]!.revision).toBe(6)
    const fresh = authorityOn(suite.store, {rootMissionOwners: []})
    for (const group of touched) {
      expect(canonicalHash((await fresh.current(group))!)).toBe(canonicalHash((await suite.authority.current(group))!))
    }
  })
})
