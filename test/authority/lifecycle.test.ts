// Mission lifecycle (spec §7.1 table), Coordinator lease (§7.2) and Membership epochs (§8)
// through the full ingress on SQLite: one positive and at least one negative case per transition
// row, terminal states, REVISION_CONFLICT for every structured kind, and replay.

import {describe, expect, it} from 'vitest'
import {decide} from '../../src/authority/decide/index.js'
import {submit} from '../../src/authority/ingress/command.js'
import {validWorkContract} from '../../src/authority/ingress/payloads.js'
import {canonicalHash} from '../../src/json/jcs.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import {verify} from '../../src/signing/verify.js'
import {
  approval,
  authorityOn,
  codeOf,
  coordinator,
  developer,
  groupCommand,
  orgService,
  otherHuman,
  owner,
  post,
  receiptOf,
  registry,
  reviewer,
  sqliteSuite,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'

const H1 = `sha256:${'a'.repeat(64)}`
const H2 = `sha256:${'b'.repeat(64)}`

const touched: string[] = []

const suite = sqliteSuite((store) => authorityOn(store, {terminators: [orgService.principal!.id]}))

const {run, code} = suite
const head = async (g: string) => (await suite.store.head(g))?.sequence
const state = async (g: string) => (await suite.authority.current(g))!
/** The kinds and verified payloads of the Events after `after` (proves what a Command emitted). */
async function eventsAfter(g: string, after: number) {
  return (await suite.store.read(g, after, 100)).events.map((e) => {
    const v = verify('event', e.bytes, registry)
    if (!v.ok) throw new Error(`stored Event ${e.sequence} does not verify`)
    return {kind: e.kind, payload: v.document.payload as Record<string, unknown>}
  })
}

/** A Group with the root Mission and no members beyond its owner and Coordinator. */
const created = () => missionGroup(run, 'life', {members: [], touched})

// Command builders. Coordinator Commands carry coordinatorEpoch (default 1, §15.1).
const coord = (
  kind: string,
  g: string,
  payload: Record<string, unknown>,
  epoch = 1,
  signer: SigningKey = coordinator,
  fields: Record<string, unknown> = {},
) => groupCommand(signer, kind, g, payload, {coordinatorEpoch: epoch, ...fields})
const submitFor = (
  g: string,
  epoch = 1,
  signer: SigningKey = coordinator,
  hashes = [H1, H2],
  fields: Record<string, unknown> = {},
) => coord('mission.submit_for_approval', g, {artifactHashes: hashes}, epoch, signer, fields)
const byOwner = (kind: string, g: string, payload: Record<string, unknown>, fields: Record<string, unknown> = {}) =>
  groupCommand(owner, kind, g, payload, fields)
const requestChanges = (g: string, signer: SigningKey = owner) =>
  groupCommand(signer, 'mission.request_changes', g, {reason: 'Add the migration notes.'})
const approve = (g: string, doc: unknown, signer: SigningKey = owner) =>
  groupCommand(signer, 'mission.approve', g, {approval: doc})
const cancel = (g: string, signer: SigningKey = owner) =>
  groupCommand(signer, 'mission.cancel', g, {reason: 'No longer needed.'})
const terminate = (g: string, epoch = 1, signer: SigningKey = coordinator) =>
  signer.principal!.type === 'agent'
    ? coord('mission.terminate', g, {reason: 'Budget exhausted.'}, epoch, signer)
    : groupCommand(signer, 'mission.terminate', g, {reason: 'Budget exhausted.'})
const assign = (g: string, agentId: string, signer: SigningKey = owner) =>
  groupCommand(signer, 'mission.assign_coordinator', g, {agentId}, signer === coordinator ? {coordinatorEpoch: 1} : {})
const renew = (g: string, epoch = 1, signer: SigningKey = coordinator) =>
  coord('mission.renew_coordinator', g, {leaseExpiresAt: '2027-01-01T00:00:00Z'}, epoch, signer)
const change = (
  g: string,
  member: SigningKey,
  role: string,
  signer: SigningKey = owner,
  fields: Record<string, unknown> = {},
) => groupCommand(signer, 'membership.change', g, {member: member.principal, role}, fields)
const end = (g: string, member: SigningKey, signer: SigningKey = owner, fields: Record<string, unknown> = {}) =>
  groupCommand(signer, 'membership.end', g, {member: member.principal, reason: 'Work done.'}, fields)

/** A Group awaiting approval: submitted at revision 2 with {H1, H2}. */
async function submitted(): Promise<string> {
  const g = await created()
  receiptOf(await run(submitFor(g)))
  return g
}

describe('mission.submit_for_approval (active → awaiting_approval, current Coordinator)', () => {
  it('[+cmd:mission.submit_for_approval] [+evt:mission.submitted_for_approval] [+row:t7.1:active->awaiting_approval:mission.submit_for_approval] records the submitted Mission revision and Artifact set and advances the revision', async () => {
    const g = await created()
    const r = receiptOf(await run(submitFor(g, 1, coordinator, [H2, H1])))
    expect(r.aggregateRevision).toBe(3)
    expect(await eventsAfter(g, 2)).toEqual([
      {
        kind: 'mission.submitted_for_approval',
        payload: {missionId: (await state(g)).missionId, missionRevision: 2, artifactHashes: [H1, H2]},
      },
    ])
    expect((await state(g)).mission).toMatchObject({
      state: 'awaiting_approval',
      submission: {missionRevision: 2, artifactHashes: [H1, H2]},
    })
  })
  it('[-cmd:mission.submit_for_approval] [-evt:mission.submitted_for_approval] [-row:t7.1:active->awaiting_approval:mission.submit_for_approval] a stale coordinatorEpoch is AUTH_STALE_COORDINATOR, a non-Coordinator AUTH_FORBIDDEN, a second submission INVALID_STATE_TRANSITION', async () => {
    const g = await created()
    receiptOf(await run(assign(g, reviewer.principal!.id)))
    expect(await code(submitFor(g, 1))).toBe('AUTH_STALE_COORDINATOR')
    receiptOf(await run(change(g, developer, 'worker')))
    expect(await code(submitFor(g, 2, developer))).toBe('AUTH_FORBIDDEN')
    expect(await code(submitFor(g, 3, reviewer))).toBe('AUTH_FORBIDDEN') // never issued
    receiptOf(await run(submitFor(g, 2, reviewer)))
    const h = await head(g)
    expect(await code(submitFor(g, 2, reviewer))).toBe('INVALID_STATE_TRANSITION')
    expect(await head(g)).toBe(h)
  })
  it('an empty or malformed Artifact set is SCHEMA_VALIDATION_FAILED', async () => {
    const g = await created()
    expect(await code(submitFor(g, 1, coordinator, []))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await code(submitFor(g, 1, coordinator, ['sha256:XYZ']))).toBe('SCHEMA_VALIDATION_FAILED')
  })
})

describe('mission.request_changes (awaiting_approval → active, MissionOwner)', () => {
  it('[+cmd:mission.request_changes] [+evt:mission.changes_requested] [+row:t7.1:awaiting_approval->active:mission.request_changes] returns the Mission to active and clears the submission', async () => {
    const g = await submitted()
    receiptOf(await run(requestChanges(g)))
    expect(await eventsAfter(g, 3)).toEqual([
      {
        kind: 'mission.changes_requested',
        payload: {missionId: (await state(g)).missionId, reason: 'Add the migration notes.'},
      },
    ])
    expect((await state(g)).mission).toMatchObject({state: 'active', submission: null})
  })
  it('[-cmd:mission.request_changes] [-evt:mission.changes_requested] [-row:t7.1:awaiting_approval->active:mission.request_changes] the Coordinator is AUTH_FORBIDDEN; from active it is INVALID_STATE_TRANSITION', async () => {
    const g = await submitted()
    expect(await code(requestChanges(g, coordinator))).toBe('AUTH_FORBIDDEN')
    const a = await created()
    expect(await code(requestChanges(a))).toBe('INVALID_STATE_TRANSITION')
    expect([await head(g), await head(a)]).toEqual([3, 2])
  })
})

describe('mission.approve (awaiting_approval → approved, MissionOwner with a signed Approval)', () => {
  it('[+cmd:mission.approve] [+evt:mission.approved] [+row:t7.1:awaiting_approval->approved:mission.approve] approves with an Approval naming the submitted revision and Artifact set (any order)', async () => {
    const g = await submitted()
    const doc = approval(g, 2, [H2, H1])
    receiptOf(await run(approve(g, doc)))
    const s = await state(g)
    expect(s.mission.state).toBe('approved')
    expect(await eventsAfter(g, 3)).toEqual([
      {kind: 'mission.approved', payload: {missionId: s.missionId, approval: doc}},
    ])
  })
  it.each([
    ['another revision', (g: string) => approval(g, 3, [H1, H2])],
    ['a subset of the Artifacts', (g: string) => approval(g, 2, [H1])],
    ['a superset of the Artifacts', (g: string) => approval(g, 2, [H1, H2, `sha256:${'c'.repeat(64)}`])],
    ['another Mission', (g: string) => approval(g, 2, [H1, H2], {missionId: 'urn:mwp:test:mission:other'})],
    ['another Group', (g: string) => approval(g, 2, [H1, H2], {groupId: 'urn:mwp:test:group:other'})],
    ['decision changes_requested', (g: string) => approval(g, 2, [H1, H2], {decision: 'changes_requested'})],
    ['signed by another human', (g: string) => approval(g, 2, [H1, H2], {}, otherHuman)],
    ['a broken signature', (g: string) => ({...approval(g, 2, [H1, H2]), comments: 'edited after signing'})],
    ['not an Approval at all', () => ({hello: 'world'})],
  ])(
    '[-cmd:mission.approve] [-evt:mission.approved] an Approval with %s is INVALID_COMMAND and nothing is appended',
    async (_name, make) => {
      const g = await submitted()
      const h = await head(g)
      expect(await code(approve(g, make(g)))).toBe('INVALID_COMMAND')
      expect(await head(g)).toBe(h)
      expect((await state(g)).mission.state).toBe('awaiting_approval')
    },
  )
  it('[-row:t7.1:awaiting_approval->approved:mission.approve] the Coordinator is AUTH_FORBIDDEN; from active it is INVALID_STATE_TRANSITION', async () => {
    const g = await submitted()
    expect(await code(approve(g, approval(g, 2, [H1, H2]), coordinator))).toBe('AUTH_FORBIDDEN')
    const a = await created()
    expect(await code(approve(a, approval(a, 2, [H1, H2])))).toBe('INVALID_STATE_TRANSITION')
    expect([(await state(g)).mission.state, (await state(a)).mission.state]).toEqual(['awaiting_approval', 'active'])
  })
})

describe('mission.cancel (non-terminal → cancelled, MissionOwner)', () => {
  it('[+cmd:mission.cancel] [+evt:mission.cancelled] [+row:t7.1:non_terminal->cancelled:mission.cancel] cancels an active and an awaiting_approval Mission', async () => {
    const a = await created()
    receiptOf(await run(cancel(a)))
    expect((await state(a)).mission.state).toBe('cancelled')
    expect(await eventsAfter(a, 2)).toEqual([
      {kind: 'mission.cancelled', payload: {missionId: (await state(a)).missionId, reason: 'No longer needed.'}},
    ])
    const w = await submitted()
    receiptOf(await run(cancel(w)))
    expect((await state(w)).mission.state).toBe('cancelled')
  })
  it('[-cmd:mission.cancel] [-evt:mission.cancelled] the Coordinator is AUTH_FORBIDDEN (§7.1: it recommends, it does not cancel)', async () => {
    const g = await created()
    expect(await code(cancel(g, coordinator))).toBe('AUTH_FORBIDDEN')
    expect(await head(g)).toBe(2)
  })
})

describe('mission.terminate (non-terminal → failed, Coordinator or Organization policy)', () => {
  it('[+cmd:mission.terminate] [+evt:mission.terminated] [+row:t7.1:non_terminal->failed:mission.terminate] the current Coordinator with its epoch, and a policy terminator service, terminate', async () => {
    const a = await created()
    receiptOf(await run(terminate(a)))
    expect((await state(a)).mission.state).toBe('failed')
    expect(await eventsAfter(a, 2)).toEqual([
      {kind: 'mission.terminated', payload: {missionId: (await state(a)).missionId, reason: 'Budget exhausted.'}},
    ])
    const b = await submitted()
    receiptOf(await run(terminate(b, 0, orgService)))
    expect((await state(b)).mission.state).toBe('failed')
  })
  it('[-cmd:mission.terminate] [-evt:mission.terminated] a service outside the policy is AUTH_FORBIDDEN, a stale Coordinator AUTH_STALE_COORDINATOR, the MissionOwner is refused', async () => {
    const g = await created()
    const strict = authorityOn(suite.store)
    expect(codeOf(await submit(strict, terminate(g, 0, orgService)))).toBe('AUTH_FORBIDDEN')
    receiptOf(await run(assign(g, reviewer.principal!.id)))
    expect(await code(terminate(g, 1))).toBe('AUTH_STALE_COORDINATOR')
    // §15.1: never from a human. command.schema.json already refuses to sign such a Command; the
    // decider refuses it on its own too.
    const human = {
      actionId: 'urn:mwp:test:a:terminate',
      actor: owner.principal!,
      kind: 'mission.terminate',
      groupId: g,
      membershipEpoch: 1,
      payload: {reason: 'x'},
    }
    expect(
      decide(await state(g), human, {
        acceptedAt: '2026-11-30T00:00:00Z',
        newId: () => 'urn:mwp:test:id:x',
        validWorkContract,
      }),
    ).toMatchObject({error: 'AUTH_FORBIDDEN'})
    expect((await state(g)).mission.state).toBe('active')
  })
})

describe('terminal states refuse every lifecycle Command and message.post', () => {
  const toTerminal: Record<string, (g: string) => Promise<void>> = {
    approved: async (g) => void receiptOf(await run(approve(g, approval(g, 2, [H1, H2])))),
    cancelled: async (g) => void receiptOf(await run(cancel(g))),
    failed: async (g) => void receiptOf(await run(terminate(g))),
  }
  it.each(Object.keys(toTerminal))(
    '[-row:t7.1:non_terminal->cancelled:mission.cancel] [-row:t7.1:non_terminal->failed:mission.terminate] [-cmd:mission.renew_coordinator] [-evt:mission.coordinator.renewed] [-cmd:message.post] [-evt:message.posted] %s',
    async (terminal) => {
      const g = await submitted()
      await toTerminal[terminal]!(g)
      const h = await head(g)
      const attempts: [string, Buffer][] = [
        ['submit_for_approval', submitFor(g)],
        ['request_changes', requestChanges(g)],
        ['approve', approve(g, approval(g, 2, [H1, H2]))],
        ['cancel', cancel(g)],
        ['terminate', terminate(g)],
        ['assign_coordinator', assign(g, reviewer.principal!.id)],
        ['renew_coordinator', renew(g)],
        ['membership.change', change(g, developer, 'worker')],
        ['message.post', post(owner, g)],
      ]
      for (const [name, bytes] of attempts)
        expect([name, await code(bytes)]).toEqual([name, 'INVALID_STATE_TRANSITION'])
      expect(await head(g)).toBe(h)
    },
  )
})

describe('Coordinator lease (§7.2)', () => {
  it('[+cmd:mission.assign_coordinator] [+evt:mission.coordinator.assigned] mission.assign_coordinator: a new Agent at epoch + 1; the old Coordinator is fenced, the new one acts', async () => {
    const g = await created()
    const r = receiptOf(await run(assign(g, developer.principal!.id)))
    expect(r.aggregateRevision).toBe(3)
    const [assigned] = await eventsAfter(g, 2)
    expect(assigned).toMatchObject({
      kind: 'mission.coordinator.assigned',
      payload: {
        coordinator: {agentId: developer.principal!.id, coordinatorEpoch: 2},
        membership: {member: developer.principal, role: 'coordinator'},
      },
    })
    const s = await state(g)
    expect(s.mission.coordinator).toMatchObject({agentId: developer.principal!.id, coordinatorEpoch: 2})
    expect(s.members[developer.principal!.id]).toMatchObject({role: 'coordinator', membershipEpoch: 1, active: true})
    expect(await code(renew(g, 1))).toBe('AUTH_STALE_COORDINATOR')
    expect(await code(submitFor(g, 1))).toBe('AUTH_STALE_COORDINATOR')
    receiptOf(await run(renew(g, 2, developer)))
  })
  it('[-cmd:mission.assign_coordinator] [-evt:mission.coordinator.assigned] mission.assign_coordinator by the Coordinator is AUTH_FORBIDDEN', async () => {
    const g = await created()
    expect(await code(assign(g, developer.principal!.id, coordinator))).toBe('AUTH_FORBIDDEN')
    expect(await head(g)).toBe(2)
  })
  it('[+cmd:mission.renew_coordinator] [+evt:mission.coordinator.renewed] [-cmd:mission.renew_coordinator] mission.renew_coordinator sets the lease expiry; another Agent with the current epoch is AUTH_FORBIDDEN', async () => {
    const g = await created()
    receiptOf(await run(renew(g)))
    expect(await eventsAfter(g, 2)).toMatchObject([
      {
        kind: 'mission.coordinator.renewed',
        payload: {
          coordinator: {
            agentId: coordinator.principal!.id,
            coordinatorEpoch: 1,
            leaseExpiresAt: '2027-01-01T00:00:00Z',
          },
        },
      },
    ])
    expect((await state(g)).mission.coordinator).toMatchObject({
      coordinatorEpoch: 1,
      leaseExpiresAt: '2027-01-01T00:00:00Z',
    })
    receiptOf(await run(change(g, developer, 'worker')))
    expect(await code(renew(g, 1, developer))).toBe('AUTH_FORBIDDEN')
  })
})

describe('Membership epochs (§8)', () => {
  it('[+cmd:membership.change] [+evt:membership.changed] membership.change raises the epoch: the old epoch is MEMBERSHIP_STALE through ingress, the new one posts', async () => {
    const g = await created()
    receiptOf(await run(change(g, developer, 'worker')))
    expect(await eventsAfter(g, 2)).toMatchObject([
      {
        kind: 'membership.changed',
        payload: {membership: {member: developer.principal, role: 'worker', membershipEpoch: 1, state: 'active'}},
      },
    ])
    expect((await state(g)).members[developer.principal!.id]).toMatchObject({
      role: 'worker',
      membershipEpoch: 1,
      active: true,
      visibilityStartSequence: 3,
    })
    receiptOf(await run(post(developer, g)))
    // The Coordinator (with its Coordinator Epoch) changes the role.
    receiptOf(await run(change(g, developer, 'reviewer', coordinator, {coordinatorEpoch: 1})))
    expect((await state(g)).members[developer.principal!.id]).toMatchObject({role: 'reviewer', membershipEpoch: 2})
    expect(await code(post(developer, g))).toBe('MEMBERSHIP_STALE')
    receiptOf(await run(post(developer, g, {membershipEpoch: 2})))
  })
  it('[-cmd:membership.change] [-evt:membership.changed] membership.change by a worker is AUTH_FORBIDDEN; on the MissionOwner it is INVALID_COMMAND', async () => {
    const g = await created()
    receiptOf(await run(change(g, developer, 'worker')))
    expect(await code(change(g, reviewer, 'worker', developer))).toBe('AUTH_FORBIDDEN')
    expect(await code(change(g, owner, 'observer'))).toBe('INVALID_COMMAND')
    expect(await head(g)).toBe(3)
  })
  it('[+cmd:membership.end] [+evt:membership.ended] membership.end: the member is removed and later Commands are MEMBERSHIP_REQUIRED', async () => {
    const g = await created()
    receiptOf(await run(change(g, developer, 'worker')))
    receiptOf(await run(end(g, developer)))
    expect(await eventsAfter(g, 3)).toMatchObject([
      {
        kind: 'membership.ended',
        payload: {membership: {member: developer.principal, state: 'ended'}, reason: 'Work done.'},
      },
    ])
    expect((await state(g)).members[developer.principal!.id]).toMatchObject({active: false})
    expect(await code(post(developer, g))).toBe('MEMBERSHIP_REQUIRED')
  })
  it('[-cmd:membership.end] [-evt:membership.ended] membership.end of a non-member is INVALID_STATE_TRANSITION; by a worker AUTH_FORBIDDEN', async () => {
    const g = await created()
    expect(await code(end(g, reviewer))).toBe('INVALID_STATE_TRANSITION')
    receiptOf(await run(change(g, developer, 'worker')))
    receiptOf(await run(change(g, reviewer, 'worker')))
    expect(await code(end(g, reviewer, developer))).toBe('AUTH_FORBIDDEN')
    expect((await eventsAfter(g, 0)).map((e) => e.kind)).not.toContain('membership.ended')
  })
})

describe('expectedRevision (§15.3)', () => {
  const kinds: [string, (g: string, fields: Record<string, unknown>) => Buffer][] = [
    ['mission.submit_for_approval', (g, f) => submitFor(g, 1, coordinator, [H1], f)],
    ['mission.request_changes', (g, f) => byOwner('mission.request_changes', g, {reason: 'r'}, f)],
    ['mission.approve', (g, f) => byOwner('mission.approve', g, {approval: approval(g, 2, [H1])}, f)],
    ['mission.cancel', (g, f) => byOwner('mission.cancel', g, {reason: 'r'}, f)],
    ['mission.terminate', (g, f) => coord('mission.terminate', g, {reason: 'r'}, 1, coordinator, f)],
    [
      'mission.assign_coordinator',
      (g, f) => byOwner('mission.assign_coordinator', g, {agentId: developer.principal!.id}, f),
    ],
    [
      'mission.renew_coordinator',
      (g, f) => coord('mission.renew_coordinator', g, {leaseExpiresAt: '2027-01-01T00:00:00Z'}, 1, coordinator, f),
    ],
    ['membership.change', (g, f) => byOwner('membership.change', g, {member: developer.principal, role: 'worker'}, f)],
    ['membership.end', (g, f) => byOwner('membership.end', g, {member: developer.principal}, f)],
  ]
  it.each(kinds)('%s with a wrong expectedRevision is REVISION_CONFLICT, nothing appended', async (_kind, make) => {
    const g = await created()
    expect(await code(make(g, {expectedRevision: 7}))).toBe('REVISION_CONFLICT')
    expect(await head(g)).toBe(2)
  })
  it('the matching expectedRevision is accepted and each structured transition advances the revision', async () => {
    const g = await created()
    expect(receiptOf(await run(change(g, developer, 'worker', owner, {expectedRevision: 2}))).aggregateRevision).toBe(3)
    expect(receiptOf(await run(renew(g))).aggregateRevision).toBe(4)
    expect(receiptOf(await run(submitFor(g, 1, coordinator, [H1], {expectedRevision: 4}))).aggregateRevision).toBe(5)
  })
})

describe('replay', () => {
  it('a sequence of every transition replays to the live state', async () => {
    const g = await created()
    receiptOf(await run(change(g, developer, 'worker')))
    receiptOf(await run(post(developer, g)))
    receiptOf(await run(change(g, developer, 'reviewer')))
    receiptOf(await run(renew(g)))
    receiptOf(await run(submitFor(g)))
    receiptOf(await run(requestChanges(g)))
    receiptOf(await run(assign(g, reviewer.principal!.id)))
    receiptOf(await run(change(g, developer, 'worker', reviewer, {coordinatorEpoch: 2})))
    receiptOf(await run(end(g, developer)))
    receiptOf(await run(renew(g, 2, reviewer)))
    receiptOf(await run(submitFor(g, 2, reviewer)))
    const revision = (await state(g)).mission.submission!.missionRevision
    receiptOf(await run(approve(g, approval(g, revision, [H1, H2]))))
    const live = await state(g)
    expect(live.mission.state).toBe('approved')
    // Membership documents in Events are real Memberships (membership.schema.json).
    for (const e of (await suite.store.read(g, 0, 100)).events) {
      const v = verify('event', e.bytes, registry)
      if (!v.ok) throw new Error(`stored Event ${e.sequence} does not verify`)
      const membership = (v.document.payload as {membership?: unknown}).membership
      if (membership !== undefined)
        expect([e.kind, schemaCatalog().validate('membership', membership)]).toEqual([e.kind, {valid: true}])
    }
    // Every Group of this file, including the cancelled and failed ones.
    const fresh = authorityOn(suite.store, {rootMissionOwners: []})
    for (const group of touched) {
      expect(canonicalHash((await fresh.current(group))!)).toBe(canonicalHash((await suite.authority.current(group))!))
    }
  })
})
