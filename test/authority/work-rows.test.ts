// WorkItem rows beyond the core path (spec §10.2 table, §11.3-§11.4, §12; ACCEPTANCE E4, F6, F8,
// G4) through the full ingress on SQLite: work.checkpoint, work.block, work.unblock, work.fail and
// approval.grant_execution, a positive and a negative case per row, and replay to the live state.

import {describe, expect, it} from 'vitest'
import {openAuthority} from '../../src/authority/authority.js'
import {canonicalHash} from '../../src/json/jcs.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {
  authorityKey,
  authorityOn,
  coordinator,
  developer,
  groupCommand,
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
const H2 = `sha256:${'d'.repeat(64)}`

const touched: string[] = []

const suite = sqliteSuite((store) =>
  openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}}),
)

const {run, code} = suite
const head = async (g: string) => (await suite.store.head(g))?.sequence
const state = async (g: string) => (await suite.authority.current(g))!
const item = async (g: string, w: string) => (await state(g)).workItems[w]!

const inAMinute = () => new Date(Date.now() + 60_000).toISOString()
const offer = (g: string, w: string) =>
  coord('work.offer', g, {
    workItemId: w,
    candidates: [developer.principal!.id, reviewer.principal!.id],
    expiresAt: inAMinute(),
  })
const acceptOffer = (g: string, w: string, offerId: string, signer: SigningKey = developer) =>
  groupCommand(signer, 'work.accept_offer', g, {workItemId: w, offerId})
const start = (g: string, w: string, ownershipEpoch = 1, signer: SigningKey = developer) =>
  groupCommand(signer, 'work.start', g, {workItemId: w, ownershipEpoch})
const checkpoint = (g: string, w: string, leaseId: string, ownershipEpoch = 1, signer: SigningKey = developer) =>
  groupCommand(signer, 'work.checkpoint', g, {
    workItemId: w,
    ownershipEpoch,
    leaseId,
    progress: 'Sections 1-3 drafted.',
    artifactHashes: [H1],
  })
const block = (
  g: string,
  w: string,
  leaseId: string,
  ownershipEpoch = 1,
  signer: SigningKey = developer,
  extra: Record<string, unknown> = {},
) =>
  groupCommand(signer, 'work.block', g, {
    workItemId: w,
    ownershipEpoch,
    leaseId,
    requiredResolution: 'Need the changelog export.',
    ...extra,
  })
const fail = (g: string, w: string, payload: Record<string, unknown> = {}) =>
  coord('work.fail', g, {workItemId: w, reason: 'Source repository unavailable.', evidenceHashes: [H2], ...payload})
const grant = (g: string, w: string, ownershipEpoch = 1, signer: SigningKey = owner) =>
  groupCommand(signer, 'approval.grant_execution', g, {workItemId: w, ownershipEpoch})
const leaseOf = async (g: string, w: string) => (await item(g, w)).lease!.leaseId
const lastEvent = (g: string) => newestEvent(suite.store, g)
const kindsIn = async (g: string) => (await suite.store.read(g, 0, 1000)).events.map((e) => e.kind)

const work = workDriver(() => suite.authority, {
  candidates: [developer, reviewer],
  offerExpiresAt: inAMinute,
  artifactHashes: [H1],
})
/** A Group with developer and reviewer as Worker members and one WorkItem in `target` state. */
async function at(
  target: 'open' | 'queued' | 'active' | 'blocked' | 'submitted',
  c: Record<string, unknown> = contract(),
): Promise<{g: string; w: string}> {
  const g = await missionGroup(run, 'rows', {touched})
  return {g, w: await work.drive(g, target, {contract: c})}
}

describe('work.checkpoint (active → queued)', () => {
  it('[+cmd:work.checkpoint] [+evt:work.checkpointed] [+row:t10.2:active->queued:work.checkpoint] the owner checkpoints under its Ownership Epoch and Lease ID; the lease is released, ownership kept (F6)', async () => {
    const {g, w} = await at('active')
    const leaseId = await leaseOf(g, w)
    const before = await state(g)
    const r = receiptOf(await run(checkpoint(g, w, leaseId)))
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.checkpointed',
      payload: {workItemId: w, leaseId, checkpoint: {progress: 'Sections 1-3 drafted.', artifactHashes: [H1]}},
    })
    expect(r.aggregateRevision).toBe(before.revision + 1)
    const after = await item(g, w)
    expect(after).toMatchObject({
      state: 'queued',
      revision: before.workItems[w]!.revision + 1,
      owner: {agentId: developer.principal!.id, ownershipEpoch: 1},
    })
    expect(after.lease).toMatchObject({leaseId, state: 'released'})
    expect(after.checkpoint).toEqual({progress: 'Sections 1-3 drafted.', leaseId, artifactHashes: [H1]})
    // The released lease no longer authorizes anything; a restart issues a new one.
    expect(
      await code(
        groupCommand(developer, 'work.submit', g, {workItemId: w, ownershipEpoch: 1, leaseId, artifactHashes: [H1]}),
      ),
    ).toBe('WORK_LEASE_EXPIRED')
    receiptOf(await run(start(g, w)))
    expect(await leaseOf(g, w)).not.toBe(leaseId)
  })

  it('[-cmd:work.checkpoint] [-evt:work.checkpointed] [-row:t10.2:active->queued:work.checkpoint] a stale lease, a stale epoch, a non-owner, a non-active WorkItem and a bad payload are refused', async () => {
    const {g, w} = await at('active')
    const leaseId = await leaseOf(g, w)
    const h = await head(g)
    expect(await code(checkpoint(g, w, uuid(9)))).toBe('WORK_LEASE_EXPIRED')
    expect(await code(checkpoint(g, w, leaseId, 2))).toBe('AUTH_FORBIDDEN')
    expect(await code(checkpoint(g, w, leaseId, 1, reviewer))).toBe('AUTH_FORBIDDEN')
    expect(
      await code(groupCommand(owner, 'work.checkpoint', g, {workItemId: w, ownershipEpoch: 1, leaseId, progress: 'x'})),
    ).toBe('AUTH_FORBIDDEN')
    expect(await code(groupCommand(developer, 'work.checkpoint', g, {workItemId: w, ownershipEpoch: 1, leaseId}))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    )
    expect(await head(g)).toBe(h)
    const q = await at('queued')
    expect(await code(checkpoint(q.g, q.w, uuid(9)))).toBe('WORK_LEASE_EXPIRED')
    expect([...(await kindsIn(g)), ...(await kindsIn(q.g))]).not.toContain('work.checkpointed')
  })
})

describe('work.block (active → blocked) and work.unblock (blocked → queued)', () => {
  it('[+cmd:work.block] [+evt:work.blocked] [+row:t10.2:active->blocked:work.block] [+cmd:work.unblock] [+evt:work.unblocked] [+row:t10.2:blocked->queued_or_open:work.unblock] the owner blocks with a required resolution, releasing the lease (F8); the Coordinator or owner unblocks', async () => {
    const {g, w} = await at('active')
    const leaseId = await leaseOf(g, w)
    const rev = (await state(g)).revision
    expect(receiptOf(await run(block(g, w, leaseId))).aggregateRevision).toBe(rev + 1)
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.blocked',
      payload: {workItemId: w, leaseId, requiredResolution: 'Need the changelog export.'},
    })
    const blocked = await item(g, w)
    expect(blocked).toMatchObject({
      state: 'blocked',
      blocker: {requiredResolution: 'Need the changelog export.'},
      owner: {agentId: developer.principal!.id},
    })
    expect(blocked.lease).toMatchObject({leaseId, state: 'released'})
    expect(
      receiptOf(await run(coord('work.unblock', g, {workItemId: w, resolution: 'Export attached.'}))).aggregateRevision,
    ).toBe(rev + 2)
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.unblocked',
      payload: {workItemId: w, to: 'queued', resolution: 'Export attached.'},
    })
    expect(await item(g, w)).toMatchObject({state: 'queued', blocker: null, revision: blocked.revision + 1})
    // Blocked again, then unblocked by the owner itself.
    receiptOf(await run(start(g, w)))
    receiptOf(await run(block(g, w, await leaseOf(g, w))))
    receiptOf(await run(groupCommand(developer, 'work.unblock', g, {workItemId: w, ownershipEpoch: 1})))
    expect((await item(g, w)).state).toBe('queued')
  })

  it('[-cmd:work.block] [-evt:work.blocked] [-row:t10.2:active->blocked:work.block] [-cmd:work.unblock] [-evt:work.unblocked] [-row:t10.2:blocked->queued_or_open:work.unblock] a block without resolution, on a non-active WorkItem or a stale lease is refused; unblock needs blocked and authority', async () => {
    const {g, w} = await at('active')
    const leaseId = await leaseOf(g, w)
    const h = await head(g)
    expect(await code(groupCommand(developer, 'work.block', g, {workItemId: w, ownershipEpoch: 1, leaseId}))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    )
    expect(await code(block(g, w, leaseId, 1, developer, {requiredResolution: ''}))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await code(block(g, w, uuid(9)))).toBe('WORK_LEASE_EXPIRED')
    expect(await code(block(g, w, leaseId, 1, reviewer))).toBe('AUTH_FORBIDDEN')
    expect(await code(coord('work.unblock', g, {workItemId: w}))).toBe('INVALID_STATE_TRANSITION')
    expect(await head(g)).toBe(h)
    const b = await at('blocked')
    const hb = await head(b.g)
    expect(await code(groupCommand(reviewer, 'work.unblock', b.g, {workItemId: b.w}))).toBe('AUTH_FORBIDDEN')
    expect(await code(groupCommand(reviewer, 'work.unblock', b.g, {workItemId: b.w, ownershipEpoch: 1}))).toBe(
      'AUTH_FORBIDDEN',
    )
    expect(await code(groupCommand(owner, 'work.unblock', b.g, {workItemId: b.w}))).toBe('AUTH_FORBIDDEN')
    expect(await code(coord('work.unblock', b.g, {workItemId: b.w}, 1, coordinator, {expectedRevision: 1}))).toBe(
      'REVISION_CONFLICT',
    )
    expect(await head(b.g)).toBe(hb)
    expect(await kindsIn(g)).not.toContain('work.blocked')
    expect(await kindsIn(b.g)).not.toContain('work.unblocked')
  })
})

describe('work.fail (open … submitted → failed; only work.offer leaves failed, E4)', () => {
  it('[+cmd:work.fail] [+evt:work.failed] [+row:t10.2:unfinished->failed:work.fail] the Coordinator fails with Failure Evidence; ownership ends, the lease is revoked; a new work.offer re-enters', async () => {
    const {g, w} = await at('active')
    const leaseId = await leaseOf(g, w)
    const rev = (await state(g)).revision
    expect(receiptOf(await run(fail(g, w))).aggregateRevision).toBe(rev + 1)
    expect(await lastEvent(g)).toMatchObject({
      kind: 'work.failed',
      payload: {workItemId: w, reason: 'Source repository unavailable.', evidenceHashes: [H2], revokedLeaseId: leaseId},
    })
    const failed = await item(g, w)
    expect(failed).toMatchObject({
      state: 'failed',
      owner: null,
      failure: {reason: 'Source repository unavailable.', evidenceHashes: [H2]},
    })
    expect(failed.lease).toMatchObject({leaseId, state: 'revoked'})
    // E4: nothing but a new work.offer leaves failed; the ended ownership epoch is fenced (§11.3).
    expect(await code(start(g, w))).toBe('WORK_STALE_OWNERSHIP')
    expect(await code(coord('work.unblock', g, {workItemId: w}))).toBe('INVALID_STATE_TRANSITION')
    expect(await code(fail(g, w))).toBe('INVALID_STATE_TRANSITION')
    expect(await code(coord('work.accept_result', g, {workItemId: w}))).toBe('INVALID_STATE_TRANSITION')
    expect(await code(coord('work.cancel', g, {workItemId: w, reason: 'x'}))).toBe('INVALID_STATE_TRANSITION')
    receiptOf(await run(offer(g, w)))
    receiptOf(await run(acceptOffer(g, w, (await item(g, w)).offer!.offerId, reviewer)))
    expect(await item(g, w)).toMatchObject({
      state: 'queued',
      owner: {agentId: reviewer.principal!.id, ownershipEpoch: 2},
    })
    // The owner fails its own WorkItem with its Ownership Epoch; the old owner's epoch is fenced.
    expect(
      await code(
        groupCommand(developer, 'work.fail', g, {
          workItemId: w,
          ownershipEpoch: 1,
          reason: 'late',
          evidenceHashes: [H2],
        }),
      ),
    ).toBe('WORK_STALE_OWNERSHIP')
    receiptOf(
      await run(
        groupCommand(reviewer, 'work.fail', g, {
          workItemId: w,
          ownershipEpoch: 2,
          reason: 'Cannot reach source.',
          evidenceHashes: [H1],
        }),
      ),
    )
    expect((await item(g, w)).state).toBe('failed')
    // From open and submitted too.
    for (const target of ['open', 'submitted'] as const) {
      const o = await at(target)
      receiptOf(await run(fail(o.g, o.w)))
      expect((await item(o.g, o.w)).state).toBe('failed')
    }
  })

  it('[-cmd:work.fail] [-evt:work.failed] [-row:t10.2:unfinished->failed:work.fail] without Failure Evidence, from a terminal state, or by a non-owner non-Coordinator it is refused', async () => {
    const {g, w} = await at('queued')
    const h = await head(g)
    expect(await code(fail(g, w, {evidenceHashes: []}))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await code(coord('work.fail', g, {workItemId: w, evidenceHashes: [H2]}))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await code(groupCommand(reviewer, 'work.fail', g, {workItemId: w, reason: 'x', evidenceHashes: [H2]}))).toBe(
      'AUTH_FORBIDDEN',
    )
    expect(
      await code(
        groupCommand(reviewer, 'work.fail', g, {workItemId: w, ownershipEpoch: 1, reason: 'x', evidenceHashes: [H2]}),
      ),
    ).toBe('AUTH_FORBIDDEN')
    expect(await code(groupCommand(owner, 'work.fail', g, {workItemId: w, reason: 'x', evidenceHashes: [H2]}))).toBe(
      'AUTH_FORBIDDEN',
    )
    expect(await head(g)).toBe(h)
    receiptOf(await run(coord('work.cancel', g, {workItemId: w, reason: 'Out of scope.'})))
    expect(await code(fail(g, w))).toBe('INVALID_STATE_TRANSITION')
    expect(await kindsIn(g)).not.toContain('work.failed')
  })
})

describe('approval.grant_execution (queued → queued) and the work.start gate (G4)', () => {
  it('[+cmd:approval.grant_execution] [+evt:approval.execution.granted] [+row:t10.2:queued->queued:approval.grant_execution] a policy-gated WorkItem starts only after the MissionOwner grants execution approval', async () => {
    const {g, w} = await at('queued', contract({executionApproval: 'human_required', sideEffectRisk: 'external'}))
    const h = await head(g)
    expect(await code(start(g, w))).toBe('APPROVAL_REQUIRED')
    expect(await head(g)).toBe(h)
    const rev = (await state(g)).revision
    expect(receiptOf(await run(grant(g, w))).aggregateRevision).toBe(rev + 1)
    expect(await lastEvent(g)).toMatchObject({
      kind: 'approval.execution.granted',
      payload: {workItemId: w, approval: {approvedBy: owner.principal, ownershipEpoch: 1}},
    })
    expect(await item(g, w)).toMatchObject({
      state: 'queued',
      executionApproval: {approvedBy: owner.principal, ownershipEpoch: 1},
    })
    receiptOf(await run(start(g, w)))
    expect((await item(g, w)).state).toBe('active')
    // A checkpoint keeps the approval for the same Ownership Epoch.
    receiptOf(await run(checkpoint(g, w, await leaseOf(g, w))))
    receiptOf(await run(start(g, w)))
  })

  it('[-cmd:approval.grant_execution] [-evt:approval.execution.granted] [-row:t10.2:queued->queued:approval.grant_execution] a non-MissionOwner, an ungated WorkItem, a stale epoch, a non-queued WorkItem or a repeat grant are refused', async () => {
    const {g, w} = await at('queued', contract({executionApproval: 'policy_required'}))
    const h = await head(g)
    expect(await code(grant(g, w, 1, developer))).toBe('AUTH_FORBIDDEN')
    expect(await code(grant(g, w, 1, coordinator))).toBe('AUTH_FORBIDDEN')
    expect(await code(grant(g, w, 2))).toBe('WORK_STALE_OWNERSHIP')
    expect(await code(groupCommand(owner, 'approval.grant_execution', g, {workItemId: w}))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    )
    expect(await head(g)).toBe(h)
    receiptOf(await run(grant(g, w)))
    expect(await code(grant(g, w))).toBe('INVALID_STATE_TRANSITION')
    const u = await at('queued')
    expect(await code(grant(u.g, u.w))).toBe('INVALID_STATE_TRANSITION')
    const o = await at('open', contract({executionApproval: 'policy_required'}))
    expect(await code(grant(o.g, o.w))).toBe('INVALID_STATE_TRANSITION')
    expect((await kindsIn(g)).filter((k) => k === 'approval.execution.granted')).toHaveLength(1)
    expect([...(await kindsIn(u.g)), ...(await kindsIn(o.g))]).not.toContain('approval.execution.granted')
  })
})

describe('dependencies (§10.4, E10)', () => {
  it('a WorkItem depending on another is authorized but ineligible for offer until the dependency is verified', async () => {
    const {g, w: a} = await at('submitted')
    const b = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: b, contract: contract({dependencyWorkItemIds: [a]})})))
    const h = await head(g)
    expect(await code(offer(g, b))).toBe('INVALID_STATE_TRANSITION')
    expect(await head(g)).toBe(h)
    receiptOf(await run(coord('work.accept_result', g, {workItemId: a})))
    receiptOf(await run(offer(g, b)))
    expect((await item(g, b)).state).toBe('offered')
  })

  it('a dependency cycle (here through the new WorkItem itself) or an unknown dependency is INVALID_COMMAND', async () => {
    const {g, w: a} = await at('open')
    const h = await head(g)
    const c = uuid(7)
    expect(
      await code(coord('work.authorize', g, {workItemId: c, contract: contract({dependencyWorkItemIds: [a, c]})})),
    ).toBe('INVALID_COMMAND')
    expect(
      await code(coord('work.authorize', g, {workItemId: c, contract: contract({dependencyWorkItemIds: [uuid(7)]})})),
    ).toBe('INVALID_COMMAND')
    expect(await head(g)).toBe(h)
  })
})

describe('replay', () => {
  it('a full sequence of every row advances the revision once per transition and replays to the live state', async () => {
    const {g, w} = await at('queued', contract({executionApproval: 'policy_required'}))
    const steps: Array<() => Promise<Buffer>> = [
      async () => grant(g, w),
      async () => start(g, w),
      async () => checkpoint(g, w, await leaseOf(g, w)),
      async () => start(g, w),
      async () => block(g, w, await leaseOf(g, w)),
      async () => coord('work.unblock', g, {workItemId: w}),
      async () => start(g, w),
      async () => fail(g, w),
      async () => offer(g, w),
    ]
    for (const step of steps) {
      const before = await state(g)
      const r = receiptOf(await run(await step()))
      expect(r.aggregateRevision).toBe(before.revision + 1)
      expect((await item(g, w)).revision).toBe(before.workItems[w]!.revision + 1)
    }
    const fresh = authorityOn(suite.store, {rootMissionOwners: []})
    expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash(await state(g)))
  })

  it('every Group touched here replays to the live state', async () => {
    const fresh = authorityOn(suite.store, {rootMissionOwners: []})
    for (const group of touched) {
      expect(canonicalHash((await fresh.current(group))!)).toBe(canonicalHash((await suite.authority.current(group))!))
    }
  })
})
