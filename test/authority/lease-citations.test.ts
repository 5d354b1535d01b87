// Worker Commands cite the current Execution Lease ID (spec §11.3: "Every renewal, checkpoint,
// block, Artifact publication, submission, and Worker-reported failure MUST reference the current
// Lease ID"; ACCEPTANCE F5-F6) — here the Worker-reported work.fail — and lease lengths are
// Organization policy (AuthorityPolicy.leases), through the full ingress on SQLite. The trusted
// clock is moved forward to pass lease boundaries; Commands are signed now, so freshness holds.

import {describe, expect, it} from 'vitest'
import {type AuthorityPolicy, openAuthority} from '../../src/authority/authority.js'
import {
  BLOCKED_LEASE_SECONDS,
  EXECUTION_LEASE_SECONDS,
  OWNERSHIP_LEASE_SECONDS,
} from '../../src/authority/model/work-leases.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {
  authorityKey,
  authorityOn,
  coord,
  developer,
  groupCommand,
  owner,
  receiptOf,
  registry,
  reviewer,
  sqliteSuite,
  uuid,
} from '../support/authority-helpers.js'
import {newestEvent} from '../support/events.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

const H1 = `sha256:${'d'.repeat(64)}`
const H2 = `sha256:${'e'.repeat(64)}`
const RENEW = 'ext.missionweaveprotocol.core.lease_renew'
const LEASES = {ownershipSeconds: 120, executionSeconds: 60, blockedSeconds: 300}

/** One SQLite store and Authority per policy; `skewMs` moves the authority's trusted clock. */
function leaseSuite(policy: Partial<AuthorityPolicy>) {
  const clock = {skewMs: 0}
  const suite = sqliteSuite((store) =>
    openAuthority({
      store,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id], ...policy},
      clock: () => new Date(Date.now() + clock.skewMs).toISOString(),
    }),
  )
  const touched: string[] = []
  const state = async (g: string) => (await suite.authority.current(g))!
  const item = async (g: string, w: string) => (await state(g)).workItems[w]!
  const head = async (g: string) => (await suite.store.head(g))!.sequence
  const lastEvent = (g: string) => newestEvent(suite.store, g)
  const offer = (g: string, w: string, candidate: SigningKey) =>
    coord('work.offer', g, {
      workItemId: w,
      candidates: [candidate.principal!.id],
      expiresAt: new Date(Date.now() + clock.skewMs + 60_000).toISOString(),
    })
  const accept = async (g: string, w: string, signer: SigningKey) =>
    receiptOf(
      await suite.run(
        groupCommand(signer, 'work.accept_offer', g, {workItemId: w, offerId: (await item(g, w)).offer!.offerId}),
      ),
    )
  const start = (g: string, w: string, epoch = 1, signer: SigningKey = developer) =>
    groupCommand(signer, 'work.start', g, {workItemId: w, ownershipEpoch: epoch})
  /** The owner's Worker-reported failure; `leaseId` undefined leaves the member out. */
  const ownerFail = (g: string, w: string, leaseId: string | undefined, epoch = 1, signer: SigningKey = developer) =>
    groupCommand(signer, 'work.fail', g, {
      workItemId: w,
      ownershipEpoch: epoch,
      ...(leaseId !== undefined ? {leaseId} : {}),
      reason: 'The source repository is gone.',
      evidenceHashes: [H1],
    })
  const coordFail = (g: string, w: string, extra: Record<string, unknown> = {}) =>
    coord('work.fail', g, {workItemId: w, reason: 'Replanned.', evidenceHashes: [H2], ...extra})

  const work = workDriver(() => suite.authority, {
    offerExpiresAt: () => new Date(Date.now() + clock.skewMs + 60_000).toISOString(),
  })
  /** A Group with developer and reviewer as Workers and one WorkItem owned by developer, in `target`. */
  async function at(target: 'queued' | 'active'): Promise<{g: string; w: string}> {
    clock.skewMs = 0
    const g = await missionGroup(suite.run, 'lease-cite', {touched})
    return {g, w: await work.drive(g, target)}
  }

  /** Replay = live: a fresh authority with the default policy folds the stored log to the same state. */
  async function expectReplayEqualsLive() {
    const fresh = authorityOn(suite.store, {rootMissionOwners: []})
    for (const g of touched) expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash(await state(g)))
  }

  return {
    suite,
    clock,
    state,
    item,
    head,
    lastEvent,
    offer,
    accept,
    start,
    ownerFail,
    coordFail,
    at,
    expectReplayEqualsLive,
  }
}

describe('a Worker-reported work.fail cites the current Execution Lease ID (§11.3)', () => {
  const t = leaseSuite({})
  const {suite, clock, item, head, lastEvent, offer, accept, start, ownerFail, coordFail, at} = t
  const {run, code} = suite

  it('[+cmd:work.fail] [+evt:work.failed] [+row:t10.2:unfinished->failed:work.fail] the owner fails its active WorkItem citing the current Lease ID; the failure revokes the lease', async () => {
    const {g, w} = await at('active')
    const leaseId = (await item(g, w)).lease!.leaseId
    const rev = (await item(g, w)).revision
    receiptOf(await run(ownerFail(g, w, leaseId)))
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.failed',
      payload: {
        workItemId: w,
        revision: rev + 1,
        reason: 'The source repository is gone.',
        evidenceHashes: [H1],
        revokedLeaseId: leaseId,
      },
    })
    expect(Object.keys((await lastEvent(g)).payload).sort()).toEqual([
      'evidenceHashes',
      'reason',
      'revision',
      'revokedLeaseId',
      'workItemId',
    ])
    const failed = await item(g, w)
    expect(failed).toMatchObject({
      state: 'failed',
      owner: null,
      failure: {reason: 'The source repository is gone.', evidenceHashes: [H1]},
    })
    // The lease does not outlive the failed WorkItem: a Command citing it is fenced.
    expect(failed.lease).toMatchObject({leaseId, state: 'revoked'})
    expect(
      await code(
        groupCommand(developer, RENEW, g, {workItemId: w, ownershipEpoch: 1, leaseId, progress: {phase: 'drafting'}}),
      ),
    ).toBe('WORK_STALE_OWNERSHIP')
  })

  it('[+cmd:work.fail] a renewal keeps the Lease ID current: the owner fails citing it after renewing', async () => {
    const {g, w} = await at('active')
    const leaseId = (await item(g, w)).lease!.leaseId
    receiptOf(
      await run(
        groupCommand(developer, RENEW, g, {workItemId: w, ownershipEpoch: 1, leaseId, progress: {phase: 'drafting'}}),
      ),
    )
    expect((await item(g, w)).lease).toMatchObject({leaseId, state: 'active', renewalCount: 1})
    receiptOf(await run(ownerFail(g, w, leaseId)))
    expect(await lastEvent(g)).toMatchObject({kind: 'work.failed', payload: {revokedLeaseId: leaseId}})
  })

  it('[-cmd:work.fail] [-evt:work.failed] [-row:t10.2:unfinished->failed:work.fail] the owner failing an active WorkItem without a Lease ID is WORK_LEASE_EXPIRED and appends nothing', async () => {
    const {g, w} = await at('active')
    const h = await head(g)
    expect(await code(ownerFail(g, w, undefined))).toBe('WORK_LEASE_EXPIRED')
    expect(await head(g)).toBe(h)
    expect(await item(g, w)).toMatchObject({state: 'active', lease: {state: 'active'}})
  })

  it('[-cmd:work.fail] [-evt:work.failed] [F5] an older Lease ID under the same Ownership Epoch (checkpoint, then a new start) is WORK_LEASE_EXPIRED', async () => {
    const {g, w} = await at('active')
    const first = (await item(g, w)).lease!.leaseId
    receiptOf(
      await run(
        groupCommand(developer, 'work.checkpoint', g, {
          workItemId: w,
          ownershipEpoch: 1,
          leaseId: first,
          progress: 'half done',
        }),
      ),
    )
    receiptOf(await run(start(g, w)))
    const second = (await item(g, w)).lease!.leaseId
    expect(second).not.toBe(first)
    expect((await item(g, w)).ownershipEpoch).toBe(1)
    const h = await head(g)
    expect(await code(ownerFail(g, w, first))).toBe('WORK_LEASE_EXPIRED')
    expect(await code(ownerFail(g, w, uuid(9)))).toBe('WORK_LEASE_EXPIRED')
    expect(await head(g)).toBe(h)
    receiptOf(await run(ownerFail(g, w, second)))
    expect(await lastEvent(g)).toMatchObject({kind: 'work.failed', payload: {revokedLeaseId: second}})
  })

  it("[-cmd:work.fail] [-evt:work.failed] after a reassignment the new owner citing the previous owner's Lease ID is WORK_LEASE_EXPIRED; the old owner is WORK_STALE_OWNERSHIP", async () => {
    const {g, w} = await at('active')
    const old = (await item(g, w)).lease!.leaseId
    // The old owner stops renewing; after expiry the Coordinator re-offers (fencing it) to reviewer.
    clock.skewMs = (EXECUTION_LEASE_SECONDS + 5) * 1000
    receiptOf(await run(offer(g, w, reviewer)))
    await accept(g, w, reviewer)
    receiptOf(await run(start(g, w, 2, reviewer)))
    const current = (await item(g, w)).lease!.leaseId
    const h = await head(g)
    expect(await code(ownerFail(g, w, old, 2, reviewer))).toBe('WORK_LEASE_EXPIRED')
    expect(await code(ownerFail(g, w, current, 1, developer))).toBe('WORK_STALE_OWNERSHIP')
    expect(await head(g)).toBe(h)
    receiptOf(await run(ownerFail(g, w, current, 2, reviewer)))
    expect(await lastEvent(g)).toMatchObject({kind: 'work.failed', payload: {revokedLeaseId: current}})
  })

  it('[-cmd:work.fail] [-evt:work.failed] the current Lease ID past its expiry is WORK_LEASE_EXPIRED', async () => {
    const {g, w} = await at('active')
    const leaseId = (await item(g, w)).lease!.leaseId
    clock.skewMs = EXECUTION_LEASE_SECONDS * 1000 // the boundary is exclusive
    const h = await head(g)
    expect(await code(ownerFail(g, w, leaseId))).toBe('WORK_LEASE_EXPIRED')
    expect(await head(g)).toBe(h)
  })

  it('[+cmd:work.fail] [+evt:work.failed] without an active lease (queued, blocked) the owner fails with no Lease ID', async () => {
    const queued = await at('queued')
    receiptOf(await run(ownerFail(queued.g, queued.w, undefined)))
    expect(await lastEvent(queued.g)).toMatchObject({
      kind: 'work.failed',
      payload: {
        workItemId: queued.w,
        revision: (await item(queued.g, queued.w)).revision,
        reason: 'The source repository is gone.',
        evidenceHashes: [H1],
      },
    })
    expect((await lastEvent(queued.g)).payload.revokedLeaseId).toBeUndefined()
    const blocked = await at('active')
    const leaseId = (await item(blocked.g, blocked.w)).lease!.leaseId
    receiptOf(
      await run(
        groupCommand(developer, 'work.block', blocked.g, {
          workItemId: blocked.w,
          ownershipEpoch: 1,
          leaseId,
          requiredResolution: 'Need credentials.',
        }),
      ),
    )
    receiptOf(await run(ownerFail(blocked.g, blocked.w, undefined)))
    expect(await item(blocked.g, blocked.w)).toMatchObject({state: 'failed', owner: null})
    expect((await lastEvent(blocked.g)).payload.revokedLeaseId).toBeUndefined()
  })

  it('[+cmd:work.fail] [+evt:work.failed] the Coordinator fails an active WorkItem without a Lease ID; a Lease ID without an Ownership Epoch is not a payload', async () => {
    const {g, w} = await at('active')
    const leaseId = (await item(g, w)).lease!.leaseId
    const h = await head(g)
    expect(await code(coordFail(g, w, {leaseId}))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await head(g)).toBe(h)
    receiptOf(await run(coordFail(g, w)))
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.failed',
      payload: {workItemId: w, reason: 'Replanned.', evidenceHashes: [H2], revokedLeaseId: leaseId},
    })
    expect((await item(g, w)).lease).toMatchObject({leaseId, state: 'revoked'})
  })

  it('replay reproduces the live state', async () => {
    await t.expectReplayEqualsLive()
  })
})

describe('lease lengths are Organization policy (AuthorityPolicy.leases)', () => {
  const t = leaseSuite({leases: LEASES})
  const {suite, clock, item, lastEvent, start, at} = t
  const {run, code} = suite
  const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000

  it('[+cmd:work.start] [+evt:work.started] executionSeconds: 60 gives an Execution Lease that expires 60 s after its start, and it then fences the owner', async () => {
    const {g, w} = await at('queued')
    receiptOf(await run(start(g, w)))
    const {kind, payload} = await lastEvent(g)
    expect(kind).toBe('work.started')
    const lease = payload.lease as {leaseId: string; startsAt: string; issuedAt: string; expiresAt: string}
    expect(seconds(lease.startsAt, lease.expiresAt)).toBe(60)
    expect(seconds(lease.issuedAt, lease.expiresAt)).toBe(60)
    clock.skewMs = 60_000
    expect(
      await code(
        groupCommand(developer, 'work.submit', g, {
          workItemId: w,
          ownershipEpoch: 1,
          leaseId: lease.leaseId,
          artifactHashes: [H1],
        }),
      ),
    ).toBe('WORK_LEASE_EXPIRED')
  })

  it('[+evt:work.offer.accepted] [+evt:work.progressed] [+evt:work.blocked] [+evt:work.checkpointed] ownership, renewal, blocked and checkpoint boundaries follow the policy', async () => {
    const {g, w} = await at('queued')
    const accepted = (await lastEvent(g)).payload.owner as {grantedAt: string; startBy: string}
    expect(seconds(accepted.grantedAt, accepted.startBy)).toBe(LEASES.ownershipSeconds)
    receiptOf(await run(start(g, w)))
    const leaseId = (await item(g, w)).lease!.leaseId
    receiptOf(
      await run(
        groupCommand(developer, RENEW, g, {workItemId: w, ownershipEpoch: 1, leaseId, progress: {phase: 'drafting'}}),
      ),
    )
    const renewed = (await lastEvent(g)).payload.lease as {lastRenewedAt: string; expiresAt: string}
    expect(seconds(renewed.lastRenewedAt, renewed.expiresAt)).toBe(LEASES.executionSeconds)
    receiptOf(
      await run(
        groupCommand(developer, 'work.checkpoint', g, {
          workItemId: w,
          ownershipEpoch: 1,
          leaseId,
          progress: 'half done',
        }),
      ),
    )
    const checkpointed = await lastEvent(g)
    expect(checkpointed.kind).toBe('work.checkpointed')
    expect(seconds(checkpointed.occurredAt, checkpointed.payload.ownershipLeaseExpiresAt as string)).toBe(
      LEASES.ownershipSeconds,
    )
    receiptOf(await run(start(g, w)))
    const second = (await item(g, w)).lease!.leaseId
    receiptOf(
      await run(
        groupCommand(developer, 'work.block', g, {
          workItemId: w,
          ownershipEpoch: 1,
          leaseId: second,
          requiredResolution: 'Need credentials.',
        }),
      ),
    )
    const blocked = await lastEvent(g)
    expect(blocked.kind).toBe('work.blocked')
    expect(seconds(blocked.occurredAt, blocked.payload.blockedLeaseExpiresAt as string)).toBe(LEASES.blockedSeconds)
  })

  it('an invalid lease length is refused when the authority opens', () => {
    for (const leases of [
      {executionSeconds: 0},
      {ownershipSeconds: -60},
      {blockedSeconds: 1.5},
      {executionSeconds: '60'},
      {executionSeconds: Number.NaN},
      {leaseSeconds: 60},
      [60],
    ]) {
      expect(
        () =>
          openAuthority({
            store: suite.store,
            registry,
            authorityKey,
            policy: {rootMissionOwners: [], leases: leases as never},
          }),
        JSON.stringify(leases),
      ).toThrow(/leases/)
    }
    expect(() =>
      openAuthority({
        store: suite.store,
        registry,
        authorityKey,
        policy: {rootMissionOwners: [], leases: {ownershipSeconds: 1, executionSeconds: 30, blockedSeconds: 86_400}},
      }),
    ).not.toThrow()
  })

  it('replay reproduces the live state without the policy (each Event carries its lease boundary)', async () => {
    await t.expectReplayEqualsLive()
  })
})

describe('a partial lease policy keeps the defaults for the lengths it leaves unset', () => {
  const t = leaseSuite({leases: {executionSeconds: 90}})
  const {suite, item, lastEvent, start, at} = t
  const {run} = suite
  const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000

  it('[+evt:work.started] [+evt:work.blocked] executionSeconds: 90 with the default ownership and blocked lengths', async () => {
    const {g, w} = await at('queued')
    const owner1 = (await lastEvent(g)).payload.owner as {grantedAt: string; startBy: string}
    expect(seconds(owner1.grantedAt, owner1.startBy)).toBe(OWNERSHIP_LEASE_SECONDS)
    receiptOf(await run(start(g, w)))
    const lease = (await lastEvent(g)).payload.lease as {leaseId: string; startsAt: string; expiresAt: string}
    expect(seconds(lease.startsAt, lease.expiresAt)).toBe(90)
    receiptOf(
      await run(
        groupCommand(developer, 'work.block', g, {
          workItemId: w,
          ownershipEpoch: 1,
          leaseId: (await item(g, w)).lease!.leaseId,
          requiredResolution: 'Need credentials.',
        }),
      ),
    )
    const blocked = await lastEvent(g)
    expect(seconds(blocked.occurredAt, blocked.payload.blockedLeaseExpiresAt as string)).toBe(BLOCKED_LEASE_SECONDS)
    await t.expectReplayEqualsLive()
  })
})
