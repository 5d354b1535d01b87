// ACCEPTANCE section E (spec §10: WorkItems and Work Contracts) and G7 (§12 cancellation), proven
// at the library level: Authority + ingress submit on a real SQLite store. The authority's
// trusted clock is a settable offset (or a fixed instant) so offer, start-by, lease and blocked
// boundaries can be crossed; the Commands themselves are signed now, so freshness is unaffected.
// Lines already proven elsewhere are cited in the audit report's traceability table.

import {describe, expect, it} from 'vitest'
import {openAuthority} from '../../src/authority/authority.js'
import {
  BLOCKED_LEASE_SECONDS,
  EXECUTION_LEASE_SECONDS,
  OWNERSHIP_LEASE_SECONDS,
} from '../../src/authority/model/work-leases.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {verify} from '../../src/signing/verify.js'
import {
  authorityKey,
  codeOf,
  contract,
  coord,
  coordinator,
  developer,
  groupCommand,
  owner,
  receiptOf,
  registry,
  reviewer,
  sqliteSuite,
  uuid,
  candidateBasis,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

const H1 = `sha256:${'1'.repeat(64)}`
const H2 = `sha256:${'2'.repeat(64)}`
const DEP_INSERT = 'ext.missionweaveprotocol.core.dependency_insert'
const RENEW = 'ext.missionweaveprotocol.core.lease_renew'
const policy = {rootMissionOwners: [owner.principal!.id]}

/** Offset of the authority's trusted clock from real time, or a fixed instant when set. */
let skewMs = 0
let fixedNow: string | null = null
const now = () => fixedNow ?? new Date(Date.now() + skewMs).toISOString()
const touched: string[] = []

const suite = sqliteSuite((store) => openAuthority({store, registry, authorityKey, policy, clock: now}))

const {run, code} = suite
const head = async (g: string) => (await suite.store.head(g))!.sequence
const state = async (g: string) => (await suite.authority.current(g))!
const item = async (g: string, w: string) => (await state(g)).workItems[w]!
async function events(g: string) {
  return (await suite.store.read(g, 0, 1000)).events.map((e) => {
    const v = verify('event', e.bytes, registry)
    if (!v.ok) throw new Error(`stored Event ${e.sequence} does not verify`)
    return v.document as unknown as {kind: string; payload: Record<string, unknown>}
  })
}
const lastEvent = async (g: string) => (await events(g)).at(-1)!

const later = (seconds: number) => new Date(Date.now() + skewMs + seconds * 1000).toISOString()
const authorize = (g: string, w: string, c: Record<string, unknown> = contract()) =>
  coord('work.authorize', g, {workItemId: w, contract: c})
const offer = (g: string, w: string, candidates: SigningKey[] = [developer, reviewer], expiresAt = later(60)) =>
  coord('work.offer', g, {workItemId: w, candidates: candidates.map((c) => c.principal!.id), expiresAt})
const acceptOffer = (g: string, w: string, offerId: string, signer: SigningKey = developer) =>
  groupCommand(signer, 'work.accept_offer', g, {workItemId: w, offerId})
const start = (g: string, w: string, epoch = 1, signer: SigningKey = developer) =>
  groupCommand(signer, 'work.start', g, {workItemId: w, ownershipEpoch: epoch})
const submitWork = (g: string, w: string, leaseId: string, epoch = 1, signer: SigningKey = developer) =>
  groupCommand(signer, 'work.submit', g, {workItemId: w, ownershipEpoch: epoch, leaseId, artifactHashes: [H1]})
const fail = (g: string, w: string) =>
  coord('work.fail', g, {workItemId: w, reason: 'Source repository unavailable.', evidenceHashes: [H2]})
const cancel = (g: string, w: string) => coord('work.cancel', g, {workItemId: w, reason: 'Out of scope.'})
const acceptResult = (g: string, w: string) => coord('work.accept_result', g, {workItemId: w})

/** A Group with developer and reviewer as Worker members. */
async function group(): Promise<string> {
  skewMs = 0
  fixedNow = null
  return missionGroup(run, 'acc-e', {touched})
}

const work = workDriver(() => suite.authority, {
  candidates: [developer, reviewer],
  offerExpiresAt: () => later(60),
  artifactHashes: [H1],
})
type Target = 'open' | 'offered' | 'queued' | 'active' | 'blocked' | 'submitted' | 'verified' | 'failed' | 'cancelled'
/** One WorkItem driven to `target` (developer owns it from queued on). */
async function at(target: Target): Promise<{g: string; w: string}> {
  const g = await group()
  if (target !== 'failed' && target !== 'cancelled') return {g, w: await work.drive(g, target)}
  const w = await work.drive(g, 'open')
  receiptOf(await run(target === 'failed' ? fail(g, w) : cancel(g, w)))
  return {g, w}
}

/** Refused with `expected`; the Group log did not move. */
async function refused(g: string, bytes: Buffer, expected: string) {
  const before = await head(g)
  expect(await code(bytes)).toBe(expected)
  expect(await head(g)).toBe(before)
}

describe('E1 Work Contract completeness (§10.1)', () => {
  const required = Object.keys(contract()).filter((k) => k !== 'contractVersion')
  it('E1 [-cmd:work.authorize] [-cmd:work.propose] [-evt:work.authorized] [-evt:work.proposed] a contract missing any required field is WORK_CONTRACT_INCOMPLETE, even when prose describes the field', async () => {
    const g = await group()
    for (const field of required) {
      const c = contract()
      const prose = `${String(c.goal)}. ${field}: see the description; the Worker will figure it out.`
      delete c[field]
      // Prose may supplement, never replace: the field described only in the goal text is still missing.
      if (field !== 'goal') c.goal = prose
      await refused(g, authorize(g, uuid(7), c), 'WORK_CONTRACT_INCOMPLETE')
      await refused(
        g,
        groupCommand(developer, 'work.propose', g, {proposalId: uuid(6), contract: c}),
        'WORK_CONTRACT_INCOMPLETE',
      )
    }
    // A mandatory list left empty is as missing as an absent one.
    for (const field of ['requiredDeliverables', 'acceptanceCriteria', 'requiredCapabilities']) {
      await refused(g, authorize(g, uuid(7), contract({[field]: []})), 'WORK_CONTRACT_INCOMPLETE')
    }
    expect(Object.keys((await state(g)).workItems)).toEqual([])
    expect(Object.keys((await state(g)).proposals)).toEqual([])
  })

  it('E1 [+cmd:work.authorize] [+evt:work.authorized] the complete contract is accepted and kept field for field', async () => {
    const g = await group()
    const w = uuid(7)
    receiptOf(await run(authorize(g, w)))
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.authorized',
      payload: {workItem: {workItemId: w, contract: contract()}},
    })
    expect((await item(g, w)).contract).toEqual(contract())
  })
})

describe('E2 a materially revised contract (§10.1)', () => {
  it('E2 [+cmd:ext.missionweaveprotocol.core.dependency_insert] [+evt:work.contract.revised] [-row:t10.2:offered->queued:work.accept_offer] a revision bumps the contract revision; an offer made under the old contract can no longer be accepted — a new offer is needed', async () => {
    const g = await group()
    const dep = uuid(7)
    receiptOf(await run(authorize(g, dep)))
    const w = uuid(7)
    receiptOf(await run(authorize(g, w)))
    receiptOf(await run(offer(g, w)))
    const oldOffer = (await item(g, w)).offer!.offerId
    const before = await item(g, w)
    receiptOf(
      await run(coord(DEP_INSERT, g, {workItemId: w, dependencyWorkItemIds: [dep], reason: 'Needs the export first.'})),
    )
    expect((await lastEvent(g)).payload).toMatchObject({
      workItemId: w,
      withdrawnOfferId: oldOffer,
      addedDependencyWorkItemIds: [dep],
    })
    const revised = await item(g, w)
    expect(revised.contract.contractVersion).toBe((before.contract.contractVersion as number) + 1)
    expect(revised.revision).toBe(before.revision + 1)
    // Acceptance of the offer made under contract version 1 would be acceptance of the wrong contract.
    await refused(g, acceptOffer(g, w, oldOffer), 'WORK_OFFER_EXPIRED')
    expect(await item(g, w)).toMatchObject({state: 'offered', offer: null, owner: null, ownershipEpoch: 0})
    // Once the dependency is verified the Coordinator offers the revised contract, and that offer is accepted.
    receiptOf(await run(offer(g, dep)))
    receiptOf(await run(acceptOffer(g, dep, (await item(g, dep)).offer!.offerId)))
    receiptOf(await run(start(g, dep)))
    receiptOf(await run(submitWork(g, dep, (await item(g, dep)).lease!.leaseId)))
    receiptOf(await run(acceptResult(g, dep)))
    receiptOf(await run(offer(g, w)))
    receiptOf(await run(acceptOffer(g, w, (await item(g, w)).offer!.offerId)))
    expect((await item(g, w)).owner).toMatchObject({agentId: developer.principal!.id, ownershipEpoch: 1})
    // The fold of the stored Events reproduces the withdrawal exactly.
    const fresh = openAuthority({store: suite.store, registry, authorityKey, policy, clock: now})
    expect(canonicalHash((await fresh.current(g)) as never)).toBe(canonicalHash((await state(g)) as never))
  })
})

describe('E3 E4 the §10.2 table and terminal states', () => {
  it('E3 transitions outside the §10.2 table are INVALID_STATE_TRANSITION and change nothing', async () => {
    const o = await at('open')
    await refused(o.g, acceptResult(o.g, o.w), 'INVALID_STATE_TRANSITION') // open → verified
    await refused(o.g, coord('work.unblock', o.g, {workItemId: o.w}), 'INVALID_STATE_TRANSITION') // open → queued
    const q = await at('queued')
    await refused(q.g, acceptResult(q.g, q.w), 'INVALID_STATE_TRANSITION') // queued → verified
    await refused(
      q.g,
      acceptOffer(q.g, q.w, (await item(q.g, q.w)).offer?.offerId ?? uuid(8), reviewer),
      'WORK_ALREADY_OWNED',
    )
    const s = await at('submitted')
    await refused(s.g, coord('work.unblock', s.g, {workItemId: s.w}), 'INVALID_STATE_TRANSITION') // submitted → queued
    await refused(s.g, start(s.g, s.w), 'INVALID_STATE_TRANSITION') // submitted → active
    expect((await item(s.g, s.w)).state).toBe('submitted')
  })

  it('E3 a stale aggregate revision is REVISION_CONFLICT for a WorkItem transition that would otherwise be valid', async () => {
    const {g, w} = await at('open')
    const revision = (await state(g)).revision
    await refused(
      g,
      coord(
        'work.offer',
        g,
        {workItemId: w, candidates: [developer.principal!.id], expiresAt: later(60)},
        1,
        coordinator,
        {expectedRevision: revision - 1},
      ),
      'REVISION_CONFLICT',
    )
    expect((await item(g, w)).state).toBe('open')
    receiptOf(
      await run(
        coord(
          'work.offer',
          g,
          {workItemId: w, candidates: [developer.principal!.id], expiresAt: later(60)},
          1,
          coordinator,
          {expectedRevision: revision},
        ),
      ),
    )
  })

  it('E4 verified and cancelled are terminal: no WorkItem Command leaves them', async () => {
    for (const terminal of ['verified', 'cancelled'] as const) {
      const {g, w} = await at(terminal)
      const hash = canonicalHash((await item(g, w)) as never)
      for (const bytes of [
        offer(g, w),
        cancel(g, w),
        fail(g, w),
        acceptResult(g, w),
        coord('work.unblock', g, {workItemId: w}),
        start(g, w),
      ]) {
        const before = await head(g)
        expect(['INVALID_STATE_TRANSITION', 'AUTH_FORBIDDEN']).toContain(await code(bytes))
        expect(await head(g)).toBe(before)
      }
      await refused(g, offer(g, w), 'INVALID_STATE_TRANSITION')
      await refused(g, cancel(g, w), 'INVALID_STATE_TRANSITION')
      expect(canonicalHash((await item(g, w)) as never)).toBe(hash)
    }
  })

  it('E4 [+cmd:work.offer] failed leaves only through a new work.offer', async () => {
    const {g, w} = await at('failed')
    await refused(g, cancel(g, w), 'INVALID_STATE_TRANSITION')
    await refused(g, fail(g, w), 'INVALID_STATE_TRANSITION')
    await refused(g, acceptResult(g, w), 'INVALID_STATE_TRANSITION')
    await refused(g, coord('work.unblock', g, {workItemId: w}), 'INVALID_STATE_TRANSITION')
    expect((await item(g, w)).state).toBe('failed')
    receiptOf(await run(offer(g, w)))
    expect((await item(g, w)).state).toBe('offered')
  })
})

describe('E5 work.offer needs no live owner; an expired owner is fenced first (§10.2)', () => {
  it('E5 [+cmd:work.offer] [+evt:work.offer.created] [+row:t10.2:no_live_owner->offered:work.offer] accepted from open, offered and failed, and from queued, active and blocked once the owner lapsed (fenced in the same Event)', async () => {
    for (const [from, lapse] of [
      ['open', 0],
      ['offered', 0],
      ['failed', 0],
      ['queued', OWNERSHIP_LEASE_SECONDS + 5],
      ['active', EXECUTION_LEASE_SECONDS + 5],
      ['blocked', BLOCKED_LEASE_SECONDS + 5],
    ] as const) {
      const {g, w} = await at(from)
      const epoch = (await item(g, w)).ownershipEpoch
      skewMs = lapse * 1000
      receiptOf(await run(offer(g, w, [reviewer])))
      const e = await lastEvent(g)
      expect(e.kind).toBe('work.offer.created')
      if (lapse > 0)
        expect(e.payload.fencedOwnership).toMatchObject({agentId: developer.principal!.id, ownershipEpoch: epoch})
      else expect(e.payload.fencedOwnership).toBeUndefined()
      expect(await item(g, w)).toMatchObject({state: 'offered', owner: null})
      // The fenced owner can no longer act; the new candidate wins a higher Ownership Epoch.
      if (lapse > 0) expect(await code(start(g, w, epoch))).toBe('WORK_STALE_OWNERSHIP')
      receiptOf(await run(acceptOffer(g, w, (await item(g, w)).offer!.offerId, reviewer)))
      expect((await item(g, w)).ownershipEpoch).toBe(epoch + 1)
    }
  })

  it('E5 [-cmd:work.offer] [-evt:work.offer.created] [-row:t10.2:no_live_owner->offered:work.offer] refused while the owner of a queued, active or blocked WorkItem is live, and from submitted, verified or cancelled', async () => {
    for (const from of ['queued', 'active', 'blocked', 'submitted', 'verified', 'cancelled'] as const) {
      const {g, w} = await at(from)
      skewMs = 5_000 // time passes, but no boundary is reached
      await refused(g, offer(g, w, [reviewer]), 'INVALID_STATE_TRANSITION')
      expect((await item(g, w)).state).toBe(from)
    }
  })
})

describe('E6 E7 E8 offers and first acceptance (§10.3)', () => {
  it('E6 [+cmd:work.accept_offer] [-row:t10.2:offered->offered:offer_expiry] offer expiry is compared at full fractional precision: one microsecond before expiry the offer is still acceptable', async () => {
    const g = await group()
    const w = uuid(7)
    receiptOf(await run(authorize(g, w)))
    const base = new Date(Date.now() + 60_000).toISOString().slice(0, 23) // millisecond precision, no Z
    receiptOf(await run(offer(g, w, [developer], `${base}001Z`)))
    const offerId = (await item(g, w)).offer!.offerId
    fixedNow = `${base}Z` // 1 µs before the expiry instant
    const before = await head(g)
    receiptOf(await run(acceptOffer(g, w, offerId)))
    expect(await head(g)).toBe(before + 1)
    expect((await item(g, w)).state).toBe('queued')
  })

  it('E6 [-cmd:work.accept_offer] [-evt:work.offer.accepted] [+row:t10.2:offered->offered:offer_expiry] at the expiry instant acceptance is WORK_OFFER_EXPIRED and expiry appended nothing', async () => {
    const g = await group()
    const w = uuid(7)
    receiptOf(await run(authorize(g, w)))
    const expiresAt = later(60)
    receiptOf(await run(offer(g, w, [developer], expiresAt)))
    const offerId = (await item(g, w)).offer!.offerId
    const before = await head(g)
    fixedNow = expiresAt
    expect(await suite.authority.current(g)).toMatchObject({sequence: before}) // expiry itself: no Event
    await refused(g, acceptOffer(g, w, offerId), 'WORK_OFFER_EXPIRED')
    expect((await item(g, w)).state).toBe('offered')
  })

  it('E7 an offer reserves no ownership: no owner or epoch before acceptance, a candidate cannot start, and the Coordinator may replace the offer', async () => {
    const {g, w} = await at('offered')
    const offered = await item(g, w)
    expect(offered).toMatchObject({state: 'offered', owner: null, ownershipEpoch: 0, lease: null})
    await refused(g, start(g, w, 1), 'AUTH_FORBIDDEN')
    // Replacing the offer (e.g. to other candidates) needs no release from anybody.
    const first = offered.offer!.offerId
    receiptOf(await run(offer(g, w, [reviewer])))
    const second = (await item(g, w)).offer!
    expect(second.offerId).not.toBe(first)
    expect(second.candidates).toEqual([reviewer.principal!.id])
    await refused(g, acceptOffer(g, w, second.offerId, developer), 'AUTH_FORBIDDEN')
    await refused(g, acceptOffer(g, w, first, reviewer), 'WORK_OFFER_EXPIRED')
    receiptOf(await run(acceptOffer(g, w, second.offerId, reviewer)))
  })

  it('E8 [+cmd:work.accept_offer] [+evt:work.offer.accepted] [-cmd:work.accept_offer] [+row:t10.2:offered->queued:work.accept_offer] the first valid acceptance wins a new Ownership Epoch; the losing candidate is WORK_ALREADY_OWNED and cannot execute', async () => {
    const {g, w} = await at('offered')
    const offerId = (await item(g, w)).offer!.offerId
    const [a, b] = await Promise.all([
      run(acceptOffer(g, w, offerId, developer)),
      run(acceptOffer(g, w, offerId, reviewer)),
    ])
    const codes = [codeOf(a), codeOf(b)]
    expect(codes.sort()).toEqual(['WORK_ALREADY_OWNED', 'ok'])
    const winner = codeOf(a) === 'ok' ? developer : reviewer
    const loser = winner === developer ? reviewer : developer
    const e = await lastEvent(g)
    expect(e).toMatchObject({
      kind: 'work.offer.accepted',
      payload: {offerId, owner: {agentId: winner.principal!.id, ownershipEpoch: 1}},
    })
    expect((await events(g)).filter((x) => x.kind === 'work.offer.accepted')).toHaveLength(1)
    // Withdrawn before the loser may execute: it cannot start under any epoch, nor accept again.
    await refused(g, start(g, w, 1, loser), 'AUTH_FORBIDDEN')
    await refused(g, acceptOffer(g, w, offerId, loser), 'WORK_ALREADY_OWNED')
    receiptOf(await run(start(g, w, 1, winner)))
  })
})

describe('E9 every assignment records a structured selection basis (§10.3)', () => {
  it("E9 [+cmd:work.offer] [+evt:work.offer.accepted] the winner's basis — the contract's required capabilities plus the Coordinator's structured statement — is recorded with the assignment and replays", async () => {
    const g = await group()
    const w = uuid(7)
    receiptOf(await run(authorize(g, w)))
    const [d, r] = [developer.principal!.id, reviewer.principal!.id]
    const bases = {
      [d]: candidateBasis({expectedCost: 3, reliabilityEvidence: [uuid(80)]}),
      [r]: candidateBasis({expectedCost: 9, policyRulesApplied: ['org.assignment.fallback']}),
    }
    receiptOf(
      await run(
        coord('work.offer', g, {workItemId: w, candidates: [d, r], expiresAt: later(60), selectionBasis: bases}),
      ),
    )
    receiptOf(await run(acceptOffer(g, w, (await item(g, w)).offer!.offerId, reviewer)))
    const recorded = {requiredCapabilities: contract().requiredCapabilities, ...bases[r]}
    expect((await lastEvent(g)).payload.selectionBasis).toEqual(recorded)
    expect((await item(g, w)).selectionBasis).toEqual(recorded)
    // The WorkItem with its owner and basis satisfies work-item.schema.json's "queued needs selectionBasis".
    expect(Object.keys(recorded).sort()).toEqual([
      'authorizationEligible',
      'availabilityEstimate',
      'expectedCost',
      'policyRulesApplied',
      'reliabilityEvidence',
      'requiredCapabilities',
      'verifiedMatches',
    ])
  })

  it('E9 [-cmd:work.offer] [-evt:work.offer.created] an offer without a basis, with a basis for a non-candidate or missing a candidate, with free-text reasoning, or naming an ineligible Agent is refused and appends nothing', async () => {
    const g = await group()
    const w = uuid(7)
    receiptOf(await run(authorize(g, w)))
    const d = developer.principal!.id
    const make = (selectionBasis: unknown) =>
      coord('work.offer', g, {workItemId: w, candidates: [d], expiresAt: later(60), selectionBasis})
    await refused(g, make(null), 'SCHEMA_VALIDATION_FAILED')
    await refused(g, make({[reviewer.principal!.id]: candidateBasis()}), 'INVALID_COMMAND')
    await refused(
      g,
      coord('work.offer', g, {
        workItemId: w,
        candidates: [d, reviewer.principal!.id],
        expiresAt: later(60),
        selectionBasis: {[d]: candidateBasis()},
      }),
      'INVALID_COMMAND',
    )
    await refused(
      g,
      make({[d]: candidateBasis({reasoning: 'I thought about it step by step'})}),
      'SCHEMA_VALIDATION_FAILED',
    )
    await refused(g, make({[d]: candidateBasis({authorizationEligible: false})}), 'INVALID_COMMAND')
    expect((await item(g, w)).state).toBe('open')
  })
})

describe('G7 cancellation and termination (§12)', () => {
  /** Ends the Mission with `end` and checks the lease is revoked and nothing new is assigned. */
  async function endsEverything(kind: 'mission.cancel' | 'mission.terminate', to: 'cancelled' | 'failed') {
    const {g, w} = await at('active')
    const spare = uuid(7)
    receiptOf(await run(authorize(g, spare)))
    const leaseId = (await item(g, w)).lease!.leaseId
    receiptOf(
      await run(
        kind === 'mission.cancel'
          ? groupCommand(owner, kind, g, {reason: 'Priorities changed.'})
          : coord(kind, g, {reason: 'Cannot finish.'}),
      ),
    )
    expect(await item(g, w)).toMatchObject({state: to, lease: {leaseId, state: 'revoked'}})
    expect((await item(g, spare)).state).toBe(to)
    // Nothing new is assigned, started, submitted or renewed.
    await refused(g, authorize(g, uuid(7)), 'INVALID_STATE_TRANSITION')
    await refused(g, offer(g, spare), 'INVALID_STATE_TRANSITION')
    await refused(g, start(g, w), 'INVALID_STATE_TRANSITION')
    await refused(g, submitWork(g, w, leaseId), 'INVALID_STATE_TRANSITION')
    await refused(
      g,
      groupCommand(developer, RENEW, g, {
        workItemId: w,
        ownershipEpoch: 1,
        leaseId,
        progress: {phase: 'drafting', completedMilestones: [], nextCheckpoint: 'x'},
      }),
      'INVALID_STATE_TRANSITION',
    )
  }

  it('G7 [+cmd:mission.cancel] [+evt:mission.cancelled] [+row:t7.1:non_terminal->cancelled:mission.cancel] [+row:t10.2:unfinished->failed_or_cancelled:parent_mission_terminal] mission.cancel revokes the active Execution Lease and stops every new assignment', async () => {
    await endsEverything('mission.cancel', 'cancelled')
  })

  it('G7 [+cmd:mission.terminate] [+evt:mission.terminated] [+row:t7.1:non_terminal->failed:mission.terminate] [+row:t10.2:unfinished->failed_or_cancelled:parent_mission_terminal] mission.terminate revokes the active Execution Lease and stops every new assignment', async () => {
    await endsEverything('mission.terminate', 'failed')
  })
})
