// Delegated work authority (spec §9.1, §20; ACCEPTANCE E12, M2) through the full ingress on
// SQLite: membership.grant_delegation by the current Coordinator only, scope a subset of what is
// delegated, no self-delegation; a grantee with an active work_delegate Membership offers the
// target or a descendant and authorizes new descendants linked by parentWorkItemId, within the
// allowed capabilities, the cumulative budget ceilings and the descendant depth; a Grant dies with
// a replaced Coordinator, a changed Membership, expiry or an ended target; the MissionOwner's
// explicit emergency override; replay reproduces the live state.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {canonicalHash} from '../../src/json/jcs.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityKey,
  codeOf,
  contract,
  coord,
  coordinator,
  developer,
  groupCommand,
  missionIdOf,
  owner,
  receiptOf,
  registry,
  reviewer,
  sqliteStore,
  uuid,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'

let store: Store
let cleanup: () => Promise<void>
let authority: Authority
let skewMs = 0
const touched: string[] = []
const open = () =>
  openAuthority({
    store,
    registry,
    authorityKey,
    policy: {rootMissionOwners: [owner.principal!.id]},
    clock: () => new Date(Date.now() + skewMs).toISOString(),
  })

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  authority = open()
}, 60_000)
afterAll(async () => cleanup?.())

const run = (bytes: Buffer) => submit(authority, bytes)
const code = async (bytes: Buffer) => codeOf(await run(bytes))
const head = async (g: string) => (await store.head(g))!.sequence
const lastEvent = async (g: string) => {
  const page = await store.read(g, (await head(g)) - 1, 1)
  return JSON.parse(Buffer.from(page.events[0]!.bytes).toString('utf8')) as Record<string, any>
}
const R = 'urn:mwp:test:work:root'
const inAnHour = () => new Date(Date.now() + skewMs + 3_600_000).toISOString()
const ceilings = {
  currency: 'EUR',
  financialLimit: 10,
  modelTokenLimit: 1000,
  toolCallLimit: 10,
  computeSecondsLimit: 100,
  wallClockSecondsLimit: 100,
  externalSideEffectLimit: 0,
}

/** Group: developer is a Worker, reviewer a work_delegate; WorkItem R is open (budget EUR 10). */
async function group(): Promise<string> {
  const g = await missionGroup(run, 'dlg', {members: [developer, [reviewer, 'work_delegate']], touched})
  receiptOf(await run(coord('work.authorize', g, {workItemId: R, contract: contract()})))
  return g
}
const grantPayload = (extra: Record<string, unknown> = {}) => ({
  grantId: uuid(70),
  granteeAgentId: reviewer.principal!.id,
  targetWorkItemId: R,
  allowedCapabilities: [{id: 'writing.release-notes', minVersion: '1.0.0'}],
  budgetCeilings: ceilings,
  maxDescendantDepth: 1,
  expiresAt: inAnHour(),
  ...extra,
})
const grant = (g: string, extra: Record<string, unknown> = {}, signer: SigningKey = coordinator, epoch = 1) =>
  coord('membership.grant_delegation', g, grantPayload(extra), epoch, signer)

/** A group with a Grant to reviewer on R; returns the Grant ID. */
async function delegated(extra: Record<string, unknown> = {}): Promise<{g: string; grantId: string}> {
  const g = await group()
  const grantId = uuid(71)
  receiptOf(await run(grant(g, {grantId, ...extra})))
  return {g, grantId}
}
const child = (budget: number, capability = 'writing.release-notes') =>
  contract({
    budget: {currency: 'EUR', financialLimit: budget},
    requiredCapabilities: [{id: capability, version: '1.2.0'}],
  })
const delegatedAuthorize = (
  g: string,
  grantId: string,
  workItemId: string,
  parentWorkItemId: string | undefined,
  c = child(4),
  signer: SigningKey = reviewer,
) =>
  groupCommand(signer, 'work.authorize', g, {
    workItemId,
    contract: c,
    delegationGrantId: grantId,
    ...(parentWorkItemId !== undefined ? {parentWorkItemId} : {}),
  })
const delegatedOffer = (g: string, grantId: string, workItemId: string, signer: SigningKey = reviewer) =>
  groupCommand(signer, 'work.offer', g, {
    workItemId,
    candidates: [developer.principal!.id],
    expiresAt: inAnHour(),
    delegationGrantId: grantId,
  })

describe('membership.grant_delegation', () => {
  it('[+cmd:membership.grant_delegation] [+evt:membership.delegation.granted] the current Coordinator grants a scoped Grant recording every §9.1 field', async () => {
    const g = await group()
    const grantId = uuid(72)
    receiptOf(await run(grant(g, {grantId})))
    const e = await lastEvent(g)
    expect(e.kind).toBe('membership.delegation.granted')
    expect(e.payload.grant).toEqual({
      grantId,
      granteeAgentId: reviewer.principal!.id,
      missionId: missionIdOf(g),
      groupId: g,
      targetWorkItemId: R,
      allowedCapabilities: [{id: 'writing.release-notes', minVersion: '1.0.0'}],
      budgetCeilings: ceilings,
      maxDescendantDepth: 1,
      granteeMembershipEpoch: 1,
      coordinatorEpoch: 1,
      issuedBy: coordinator.principal!.id,
      grantedAt: e.occurredAt,
      expiresAt: e.payload.grant.expiresAt,
    })
    expect((await authority.current(g))!.delegations?.[grantId]).toMatchObject({subtree: {[R]: 0}, charged: []})
  })

  it('[-cmd:membership.grant_delegation] [-evt:membership.delegation.granted] [M2] non-Coordinators, self-delegation, ineligible grantees, wider scope, dead or missing targets and reused IDs are rejected', async () => {
    const g = await group()
    const h = await head(g)
    expect(await code(grant(g, {}, developer))).toBe('AUTH_FORBIDDEN')
    expect(await code(grant(g, {}, coordinator, 2))).toBe('AUTH_FORBIDDEN') // an epoch never issued
    expect(await code(grant(g, {granteeAgentId: coordinator.principal!.id}))).toBe('INVALID_COMMAND') // cyclic: back to its source
    expect(await code(grant(g, {granteeAgentId: developer.principal!.id}))).toBe('INVALID_COMMAND') // a worker, not a work_delegate
    expect(await code(grant(g, {budgetCeilings: {...ceilings, financialLimit: 50}}))).toBe('INVALID_COMMAND') // wider than the target budget
    expect(await code(grant(g, {budgetCeilings: {...ceilings, currency: 'USD'}}))).toBe('INVALID_COMMAND')
    expect(await code(grant(g, {budgetCeilings: {...ceilings, modelTokenLimit: 2_000_000}}))).toBe('INVALID_COMMAND') // wider than the Mission budget
    expect(await code(grant(g, {targetWorkItemId: 'urn:mwp:test:work:none'}))).toBe('INVALID_COMMAND')
    expect(await code(grant(g, {expiresAt: new Date(Date.now() - 1000).toISOString()}))).toBe('INVALID_COMMAND')
    const {externalSideEffectLimit: _dropped, ...five} = ceilings
    expect(await code(grant(g, {budgetCeilings: five}))).toBe('SCHEMA_VALIDATION_FAILED') // all six dimensions are explicit
    expect(await head(g)).toBe(h)
    const grantId = uuid(73)
    receiptOf(await run(grant(g, {grantId})))
    expect(await code(grant(g, {grantId}))).toBe('INVALID_STATE_TRANSITION')
    receiptOf(await run(coord('work.cancel', g, {workItemId: R, reason: 'Dropped.'})))
    expect(await code(grant(g))).toBe('INVALID_STATE_TRANSITION') // the target ended
  })
})

describe('using a Delegation Grant', () => {
  it('[+cmd:work.authorize] [+cmd:work.offer] [+row:t10.2:none_or_proposal->open:work.authorize] [+row:t10.2:no_live_owner->offered:work.offer] the grantee authorizes descendants and offers within the scope; cumulative budgets and depth are enforced', async () => {
    const {g, grantId} = await delegated()
    receiptOf(await run(delegatedAuthorize(g, grantId, 'urn:mwp:test:work:c1', R)))
    expect((await lastEvent(g)).payload).toMatchObject({
      workItem: {workItemId: 'urn:mwp:test:work:c1', authorizedBy: reviewer.principal},
      delegation: {grantId, parentWorkItemId: R},
    })
    receiptOf(await run(delegatedAuthorize(g, grantId, 'urn:mwp:test:work:c2', R)))
    // 4 + 4 + 4 > 10: the third child breaks the financial ceiling.
    expect(await code(delegatedAuthorize(g, grantId, 'urn:mwp:test:work:c3', R))).toBe('BUDGET_EXCEEDED')
    // Depth 2 > maxDescendantDepth 1.
    expect(await code(delegatedAuthorize(g, grantId, 'urn:mwp:test:work:gc', 'urn:mwp:test:work:c1', child(1)))).toBe(
      'RATE_LIMITED',
    )
    // Offering an already charged descendant adds nothing; offering the root (EUR 10) would exceed.
    receiptOf(await run(delegatedOffer(g, grantId, 'urn:mwp:test:work:c1')))
    expect((await lastEvent(g)).payload).toMatchObject({workItemId: 'urn:mwp:test:work:c1', delegation: {grantId}})
    expect(await code(delegatedOffer(g, grantId, R))).toBe('BUDGET_EXCEEDED')
    expect((await authority.current(g))!.delegations?.[grantId]).toMatchObject({
      subtree: {[R]: 0, 'urn:mwp:test:work:c1': 1, 'urn:mwp:test:work:c2': 1},
      charged: ['urn:mwp:test:work:c1', 'urn:mwp:test:work:c2'],
    })
  })

  it('[-cmd:work.authorize] [-cmd:work.offer] [-row:t10.2:none_or_proposal->open:work.authorize] [-row:t10.2:no_live_owner->offered:work.offer] the role alone, another Agent, an unknown Grant, a capability outside the Grant and a WorkItem outside the subtree are refused', async () => {
    const {g, grantId} = await delegated()
    const h = await head(g)
    expect(await code(groupCommand(reviewer, 'work.authorize', g, {workItemId: uuid(74), contract: child(1)}))).toBe(
      'AUTH_FORBIDDEN',
    ) // work_delegate without a Grant
    expect(await code(delegatedAuthorize(g, grantId, uuid(74), R, child(1), developer))).toBe('AUTH_FORBIDDEN') // non-transferable
    expect(await code(delegatedAuthorize(g, 'urn:mwp:test:grant:none', uuid(74), R))).toBe('INVALID_COMMAND')
    expect(await code(delegatedAuthorize(g, grantId, uuid(74), R, child(1, 'code.review')))).toBe('AUTH_FORBIDDEN')
    expect(
      await code(
        delegatedAuthorize(
          g,
          grantId,
          uuid(74),
          R,
          contract({
            requiredCapabilities: [{id: 'writing.release-notes', version: '0.9.0'}],
            budget: {currency: 'EUR', financialLimit: 1},
          }),
        ),
      ),
    ).toBe('AUTH_FORBIDDEN') // below minVersion
    expect(await code(delegatedAuthorize(g, grantId, uuid(74), undefined))).toBe('AUTH_FORBIDDEN') // not linked into the subtree
    receiptOf(await run(coord('work.authorize', g, {workItemId: 'urn:mwp:test:work:other', contract: contract()})))
    const h2 = await head(g)
    expect(h2).toBe(h + 1)
    expect(await code(delegatedAuthorize(g, grantId, uuid(74), 'urn:mwp:test:work:other'))).toBe('AUTH_FORBIDDEN')
    expect(await code(delegatedOffer(g, grantId, 'urn:mwp:test:work:other'))).toBe('AUTH_FORBIDDEN')
    expect(await head(g)).toBe(h2)
  })

  it('[E12] a Grant dies with a changed grantee Membership, expiry, a replaced Coordinator or an ended target', async () => {
    const membership = await delegated()
    receiptOf(
      await run(
        groupCommand(owner, 'membership.change', membership.g, {member: reviewer.principal, role: 'work_delegate'}),
      ),
    )
    expect(
      await code(
        groupCommand(
          reviewer,
          'work.authorize',
          membership.g,
          {workItemId: uuid(75), contract: child(1), delegationGrantId: membership.grantId, parentWorkItemId: R},
          {membershipEpoch: 2},
        ),
      ),
    ).toBe('AUTH_FORBIDDEN')

    const expiry = await delegated({expiresAt: new Date(Date.now() + 60_000).toISOString()})
    skewMs = 2 * 60_000
    try {
      expect(await code(delegatedAuthorize(expiry.g, expiry.grantId, uuid(75), R))).toBe('AUTH_FORBIDDEN')
    } finally {
      skewMs = 0
    }
    receiptOf(await run(delegatedAuthorize(expiry.g, expiry.grantId, uuid(75), R))) // still valid before expiry

    const replaced = await delegated()
    receiptOf(
      await run(groupCommand(owner, 'mission.assign_coordinator', replaced.g, {agentId: developer.principal!.id})),
    )
    expect(await code(delegatedAuthorize(replaced.g, replaced.grantId, uuid(75), R))).toBe('AUTH_FORBIDDEN')
    // [-cmd:membership.grant_delegation] the replaced Coordinator's epoch is fenced for new Grants too.
    expect(await code(grant(replaced.g))).toBe('AUTH_STALE_COORDINATOR')

    const ended = await delegated()
    receiptOf(await run(coord('work.cancel', ended.g, {workItemId: R, reason: 'Dropped.'})))
    expect(await code(delegatedAuthorize(ended.g, ended.grantId, uuid(75), R))).toBe('AUTH_FORBIDDEN')
  })
})

describe('Organization delegation-depth policy (§9.1, §20)', () => {
  it('[M1] [M5] a Grant deeper than policy allows → RATE_LIMITED; a MissionOwner override grant lets exactly that Grant through', async () => {
    const limited = openAuthority({
      store,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id], limits: {delegationDepth: {hard: 1}}},
    })
    const g = await group()
    const h = await head(g)
    const deep = (actionId: string, fields: Record<string, unknown> = {}) =>
      coord(
        'membership.grant_delegation',
        g,
        grantPayload({grantId: uuid(78), maxDescendantDepth: 2}),
        1,
        coordinator,
        {actionId, ...fields},
      )
    const r = await submit(limited, deep(uuid(79)))
    expect(codeOf(r)).toBe('RATE_LIMITED')
    expect('error' in r && r.error.retryable).toBe(true)
    expect(await head(g)).toBe(h)
    receiptOf(
      await submit(
        limited,
        coord('membership.grant_delegation', g, grantPayload({grantId: uuid(78), maxDescendantDepth: 1})),
      ),
    )
    const target = uuid(80)
    const overrideId = uuid(81)
    receiptOf(
      await submit(
        limited,
        groupCommand(owner, 'policy.grant_cooperation_override', g, {
          grantId: overrideId,
          policy: 'delegation-depth',
          beneficiary: coordinator.principal,
          targetKind: 'membership.grant_delegation',
          targetActionId: target,
          reason: 'The release tree genuinely needs two levels.',
          expiresAt: inAnHour(),
        }),
      ),
    )
    const receipt = receiptOf(await submit(limited, deep(target, {cooperationOverrideGrantId: overrideId})))
    expect(receipt.eventIds).toHaveLength(2)
    const state = (await limited.current(g))!
    expect(
      Object.values(state.delegations ?? {})
        .map((d) => d.maxDescendantDepth)
        .sort(),
    ).toEqual([1, 2])
    expect(state.overrideGrants?.[overrideId]?.consumedBy?.actionId).toBe(target)
    expect((await store.policyLog(g)).map((e) => e.action)).toEqual(['issued', 'consumed'])
  })
})

describe('MissionOwner emergency override (§9.1)', () => {
  it('[+cmd:work.authorize] [+cmd:work.offer] the MissionOwner authorizes and offers with an explicit, recorded override', async () => {
    const g = await group()
    const w = uuid(76)
    receiptOf(
      await run(
        groupCommand(owner, 'work.authorize', g, {
          workItemId: w,
          contract: contract(),
          ownerOverride: {reason: 'Coordinator unresponsive during the incident.'},
        }),
      ),
    )
    expect((await lastEvent(g)).payload).toMatchObject({
      workItem: {workItemId: w, authorizedBy: owner.principal},
      ownerOverride: {reason: 'Coordinator unresponsive during the incident.'},
    })
    receiptOf(
      await run(
        groupCommand(owner, 'work.offer', g, {
          workItemId: w,
          candidates: [developer.principal!.id],
          expiresAt: inAnHour(),
          ownerOverride: {reason: 'Same incident.'},
        }),
      ),
    )
    expect((await lastEvent(g)).kind).toBe('work.offer.created')
  })

  it('[-cmd:work.authorize] without the override the MissionOwner is refused, and nobody else can claim it', async () => {
    const g = await group()
    const h = await head(g)
    expect(await code(groupCommand(owner, 'work.authorize', g, {workItemId: uuid(77), contract: contract()}))).toBe(
      'AUTH_FORBIDDEN',
    )
    expect(
      await code(
        groupCommand(developer, 'work.authorize', g, {
          workItemId: uuid(77),
          contract: contract(),
          ownerOverride: {reason: 'I say so.'},
        }),
      ),
    ).toBe('AUTH_FORBIDDEN')
    expect(await head(g)).toBe(h)
  })
})

describe('replay', () => {
  it('every Group above replays to the live state', async () => {
    const fresh = open()
    expect(touched.length).toBeGreaterThan(5)
    for (const g of touched)
      expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash((await authority.current(g))!))
  })
})
