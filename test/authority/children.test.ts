// Child and follow-up Missions through the full ingress on SQLite (spec §7.1, §10.2, §14, §20):
// mission.create_child writes the parent WorkItem's transition and the new child Group in one
// multi-Group append; subsets of budget / deadline / capabilities / resources; acyclic ancestry;
// the Organization default depth; child approval → parent WorkItem verified; child failure →
// blocked / failed per the declared policy, propagating to the parent Mission only when
// indispensable; follow-up Missions; replay of every Group to the live state.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {CHILD_CONCLUDED} from '../../src/authority/model/mission-tree.js'
import {missionTree} from '../../src/authority/model/mission-tree-view.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import type {Store} from '../../src/store/index.js'
import {
  approval,
  authorityKey,
  authorityOn,
  codeOf,
  command,
  contract,
  coord,
  coordinator,
  developer,
  groupCommand,
  missionIdOf,
  missionPayload,
  newGroup,
  otherHuman,
  owner,
  receiptOf,
  registry,
  reviewer,
  sqliteStore,
  uuid,
} from '../support/authority-helpers.js'
import {H1, treeSteps} from '../support/mission-tree-helpers.js'

let store: Store
let cleanup: () => Promise<void>
let authority: Authority
const touched: string[] = []

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  authority = openAuthority({
    store,
    registry,
    authorityKey,
    policy: {rootMissionOwners: [owner.principal!.id], maxMissionDepth: 2},
  })
}, 60_000)
afterAll(async () => cleanup?.())

const t = treeSteps(() => ({authority, store}))
const {run, state, item, head, events, lastEvent, workItem, createChild, unchanged} = t
const code = async (bytes: Buffer) => codeOf(await run(bytes))
const rootGroup = async () => {
  const g = await t.rootGroup()
  touched.push(g)
  return g
}
/** A Work Contract that fits a child Mission's budget (EUR 1). */
const small = contract({budget: {currency: 'EUR', financialLimit: 1}})
const childGroup = () => {
  const cg = newGroup('child')
  touched.push(cg)
  return cg
}

/** Root Group + WorkItem (in `target`) + a running child Mission with reviewer as its Coordinator. */
async function withChild(target: 'open' | 'queued' | 'active' = 'open', extra: Record<string, unknown> = {}) {
  const g = await rootGroup()
  const w = await workItem(g, target)
  const cg = childGroup()
  receiptOf(await run(createChild(g, w, cg, extra)))
  return {g, w, cg}
}

/** The child Coordinator submits the child Mission with Artifact H1 for approval. */
async function submitChild(cg: string) {
  receiptOf(await run(coord('mission.submit_for_approval', cg, {artifactHashes: [H1]}, 1, reviewer)))
  return (await state(cg)).mission.submission!.missionRevision
}

describe('mission.create_child (§7.1 none → active, §10.2 → blocked)', () => {
  it('[+cmd:mission.create_child] [+evt:mission.child.created] [+row:t7.1:none->active:mission.create_child] [+row:t10.2:unowned_or_running->blocked:mission.create_child] the parent WorkItem is blocked with ownership fenced and the child Group exists, in one append', async () => {
    const g = await rootGroup()
    const w = await workItem(g, 'active')
    const lease = (await item(g, w)).lease!
    const cg = childGroup()
    const before = await head(g)
    const r = receiptOf(await run(createChild(g, w, cg)))
    // The receipt names the parent Group's Event and the child Group's two creation Events.
    expect(r.firstSequence).toBe(before + 1)
    expect((r as unknown as {linkedGroups: {groupId: string; eventIds: string[]}[]}).linkedGroups).toEqual([
      {groupId: cg, eventIds: expect.any(Array), firstSequence: 1, lastSequence: 2},
    ])

    const parentEvent = await lastEvent(g)
    expect(parentEvent).toMatchObject({
      kind: 'mission.child.created',
      payload: {
        workItemId: w,
        child: {
          missionId: missionIdOf(cg),
          groupId: cg,
          depth: 1,
          missionOwner: coordinator.principal,
          coordinatorAgentId: reviewer.principal!.id,
        },
        revokedLeaseId: lease.leaseId,
        fencedOwnershipEpoch: 1,
      },
    })
    const parentItem = await item(g, w)
    expect(parentItem.state).toBe('blocked')
    expect(parentItem.owner).toBeNull()
    expect(parentItem.lease!.state).toBe('revoked')
    expect(parentItem.childMission).toEqual({
      missionId: missionIdOf(cg),
      groupId: cg,
      failurePolicy: {onFailure: 'block', indispensable: false},
      state: 'running',
    })

    expect((await events(cg)).map((e) => e.kind)).toEqual(['mission.created', 'mission.coordinator.assigned'])
    const child = await state(cg)
    expect(child.mission).toMatchObject({
      state: 'active',
      missionOwner: coordinator.principal,
      parent: {missionId: missionIdOf(g), groupId: g, workItemId: w, depth: 1},
    })
    expect(child.mission.coordinator!.agentId).toBe(reviewer.principal!.id)
    expect(child.members[coordinator.principal!.id]!.role).toBe('mission_owner')
    // The child Mission document the Event carries is a valid mission.schema.json child (Agent owner).
    const created = (await events(cg))[0]!.payload.mission as Record<string, unknown>
    const asDocument = {
      ...created,
      revision: 1,
      coordinator: {
        agentId: reviewer.principal!.id,
        agentCardVersion: 1,
        coordinatorEpoch: 1,
        leaseId: 'urn:uuid:00000000-0000-4000-8000-000000000001',
      },
    }
    expect(schemaCatalog().validate('mission', asDocument)).toEqual({valid: true})

    // Ownership is fenced while the child runs: the old owner's submission, a re-offer and an
    // unblock are all refused, and nothing is appended.
    const h = await head(g)
    expect(
      await code(
        groupCommand(developer, 'work.submit', g, {
          workItemId: w,
          ownershipEpoch: 1,
          leaseId: lease.leaseId,
          artifactHashes: [H1],
        }),
      ),
    ).toBe('INVALID_STATE_TRANSITION')
    expect(
      await code(
        coord('work.offer', g, {
          workItemId: w,
          candidates: [developer.principal!.id],
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        }),
      ),
    ).toBe('INVALID_STATE_TRANSITION')
    expect(await code(coord('work.unblock', g, {workItemId: w, resolution: 'Done elsewhere.'}))).toBe(
      'INVALID_STATE_TRANSITION',
    )
    expect(await head(g)).toBe(h)
  })

  it('[-cmd:mission.create_child] [-evt:mission.child.created] [-row:t7.1:none->active:mission.create_child] [-row:t10.2:unowned_or_running->blocked:mission.create_child] wrong actor, wrong state, no subset, taken Group: each rejected with its code and nothing appended anywhere', async () => {
    const g = await rootGroup()
    const w = await workItem(g, 'queued')
    const cg = childGroup()
    const other = await rootGroup()
    const before = [await head(g), await head(other)]
    const cases: [Buffer, string][] = [
      // Not the current Coordinator (a Worker Agent claiming the epoch), and a stale epoch.
      [createChild(g, w, cg, {}, developer), 'AUTH_FORBIDDEN'],
      [
        coord('mission.create_child', g, {...JSON.parse(createChild(g, w, cg).toString()).payload}, 2),
        'AUTH_FORBIDDEN',
      ],
      // Budget: more than the WorkItem's EUR 10; a dimension the parent bounds left unbounded; another currency.
      [createChild(g, w, cg, {budget: {currency: 'EUR', financialLimit: 11}}), 'BUDGET_EXCEEDED'],
      [createChild(g, w, cg, {budget: {modelTokenLimit: 10}}), 'INVALID_COMMAND'],
      [createChild(g, w, cg, {budget: {currency: 'USD', financialLimit: 1}}), 'INVALID_COMMAND'],
      // Deadline after the parent WorkItem's (2027-01-15), capability and resource not granted to it.
      [createChild(g, w, cg, {deadline: '2027-01-20T00:00:00Z'}), 'INVALID_COMMAND'],
      [createChild(g, w, cg, {requiredCapabilities: [{id: 'payments.execute', version: '1.0.0'}]}), 'INVALID_COMMAND'],
      [
        createChild(g, w, cg, {allowedResources: [{resource: 'urn:mwp:dev:resource:prod-db', operations: ['write']}]}),
        'INVALID_COMMAND',
      ],
      // The parent requires high-risk execution approval; the child may not relax it.
      [
        createChild(g, w, cg, {approvalPolicy: {finalHumanApproval: false, highRiskExecutionApproval: false}}),
        'INVALID_COMMAND',
      ],
      // The child Coordinator cannot be the child MissionOwner (the Parent Coordinator) too.
      [createChild(g, w, cg, {}, coordinator, coordinator), 'INVALID_COMMAND'],
      // An existing Group; the parent's own Group or Mission (a cycle); an unknown WorkItem.
      [createChild(g, w, other), 'INVALID_STATE_TRANSITION'],
      [createChild(g, w, g), 'INVALID_COMMAND'],
      [createChild(g, w, cg, {missionId: missionIdOf(g)}), 'INVALID_COMMAND'],
      [createChild(g, 'urn:uuid:00000000-0000-4000-8000-00000000dead', cg), 'INVALID_COMMAND'],
      // A stale expected revision.
      [createChild(g, w, cg, {}, coordinator, reviewer, {expectedRevision: 1}), 'REVISION_CONFLICT'],
    ]
    for (const [bytes, expected] of cases) expect(await code(bytes)).toBe(expected)
    await unchanged([g, other], before)
    expect(await store.head(cg)).toBeNull()
    expect((await item(g, w)).state).toBe('queued')

    // From a terminal WorkItem state (cancelled) the row does not apply.
    receiptOf(await run(coord('work.cancel', g, {workItemId: w, reason: 'Out of scope.'})))
    expect(await code(createChild(g, w, cg))).toBe('INVALID_STATE_TRANSITION')
    // While one child runs, the WorkItem cannot be promoted again.
    const {g: g2, w: w2} = await withChild()
    expect(await code(createChild(g2, w2, childGroup()))).toBe('INVALID_STATE_TRANSITION')
    expect(await store.head(cg)).toBeNull()
  })

  it('[+cmd:mission.create_child] an unchanged retry returns the original receipt; two racing promotions of one WorkItem: exactly one wins', async () => {
    const g = await rootGroup()
    const w = await workItem(g, 'open')
    const cg = childGroup()
    const bytes = createChild(g, w, cg)
    const first = receiptOf(await run(bytes))
    const heads = [await head(g), await head(cg)]
    expect(receiptOf(await run(bytes))).toEqual(first)
    await unchanged([g, cg], heads)

    const w2 = await workItem(g, 'open')
    const [x, y] = [childGroup(), childGroup()]
    const results = await Promise.all([run(createChild(g, w2, x)), run(createChild(g, w2, y))])
    expect(results.map(codeOf).sort()).toEqual(['INVALID_STATE_TRANSITION', 'ok'])
    const winner = codeOf(results[0]!) === 'ok' ? x : y
    expect((await item(g, w2)).childMission!.groupId).toBe(winner)
    expect(await store.head(winner === x ? y : x)).toBeNull()
  })

  it('[-cmd:mission.create_child] beyond the Organization default depth the Command is RATE_LIMITED without an override grant (§14, §20)', async () => {
    const {cg} = await withChild()
    // Depth 2 (= maxMissionDepth): the child Coordinator promotes a child WorkItem.
    const cw = await workItem(cg, 'open', small, reviewer)
    const grand = childGroup()
    receiptOf(
      await run(
        createChild(
          cg,
          cw,
          grand,
          {budget: {currency: 'EUR', financialLimit: 1}, deadline: '2027-01-05T00:00:00Z'},
          reviewer,
          developer,
        ),
      ),
    )
    expect((await state(grand)).mission.parent).toEqual({
      missionId: missionIdOf(cg),
      groupId: cg,
      workItemId: cw,
      depth: 2,
    })
    // Depth 3 needs an explicit escalation.
    const gw = await workItem(grand, 'open', small, developer, reviewer)
    const deeper = childGroup()
    const before = [await head(grand), await head(cg)]
    expect(
      await code(
        createChild(
          grand,
          gw,
          deeper,
          {budget: {currency: 'EUR', financialLimit: 1}, deadline: '2027-01-04T00:00:00Z'},
          developer,
          reviewer,
        ),
      ),
    ).toBe('RATE_LIMITED')
    // A grandchild may not reuse any ancestor's Group (cyclic ancestry).
    expect(
      await code(
        createChild(
          grand,
          gw,
          cg,
          {budget: {currency: 'EUR', financialLimit: 1}, deadline: '2027-01-04T00:00:00Z'},
          developer,
          reviewer,
        ),
      ),
    ).toBe('INVALID_COMMAND')
    await unchanged([grand, cg], before)
    expect(await store.head(deeper)).toBeNull()
  })

  it('[+cmd:mission.create_child] beyond the default depth, a MissionOwner Cooperation Override Grant for mission-depth lets the cited Command through once (§14, §20)', async () => {
    const {cg} = await withChild()
    const cw = await workItem(cg, 'open', small, reviewer)
    const grand = childGroup()
    receiptOf(
      await run(
        createChild(
          cg,
          cw,
          grand,
          {budget: {currency: 'EUR', financialLimit: 1}, deadline: '2027-01-05T00:00:00Z'},
          reviewer,
          developer,
        ),
      ),
    )
    const gw = await workItem(grand, 'open', small, developer, reviewer)
    const deeper = childGroup()
    const actionId = uuid(90)
    const grantId = uuid(91)
    const extra = {budget: {currency: 'EUR', financialLimit: 1}, deadline: '2027-01-04T00:00:00Z'}
    // The grandchild's MissionOwner is the Parent Coordinator (reviewer): it issues the escalation.
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
    receiptOf(
      await run(
        groupCommand(reviewer, 'policy.grant_cooperation_override', grand, {
          grantId,
          policy: 'mission-depth',
          beneficiary: developer.principal,
          targetKind: 'mission.create_child',
          targetActionId: actionId,
          reason: 'the release needs a third level of decomposition',
          expiresAt,
        }),
      ),
    )
    receiptOf(
      await run(
        createChild(grand, gw, deeper, extra, developer, reviewer, {actionId, cooperationOverrideGrantId: grantId}),
      ),
    )
    expect((await state(deeper)).mission.parent).toMatchObject({groupId: grand, depth: 3})
    expect((await state(grand)).overrideGrants?.[grantId]?.consumedBy).not.toBeNull()
    // One-shot: the same grant cannot carry another Command.
    const gw2 = await workItem(grand, 'open', small, developer, reviewer)
    expect(
      await code(
        createChild(grand, gw2, childGroup(), extra, developer, reviewer, {cooperationOverrideGrantId: grantId}),
      ),
    ).toBe('AUTH_FORBIDDEN')
  })
})

describe('child outcome on the parent WorkItem (§10.2, §14)', () => {
  it(`[+row:t10.2:blocked->verified:child_mission_approval] the child's Approval makes the parent WorkItem verified, with the child result as Evidence and Artifacts`, async () => {
    const {g, w, cg} = await withChild()
    const revision = await submitChild(cg)
    const doc = approval(cg, revision, [H1], {kind: 'child_mission'}, coordinator)
    const r = receiptOf(await run(groupCommand(coordinator, 'mission.approve', cg, {approval: doc})))
    expect((r as unknown as {linkedGroups: {groupId: string}[]}).linkedGroups.map((l) => l.groupId)).toEqual([g])
    expect((await state(cg)).mission.state).toBe('approved')
    const parentItem = await item(g, w)
    expect(parentItem.state).toBe('verified')
    expect(parentItem.submission).toEqual({artifactHashes: [H1]})
    expect(parentItem.childMission!.state).toBe('approved')
    const e = await lastEvent(g)
    expect(e.kind).toBe(CHILD_CONCLUDED)
    expect(e.payload).toMatchObject({
      workItemId: w,
      outcome: 'approved',
      to: 'verified',
      artifactHashes: [H1],
      approval: {approvalId: doc.approvalId, kind: 'child_mission'},
    })
    const evidence = e.payload.evidence as Record<string, unknown>
    expect(evidence).toMatchObject({
      subject: {type: 'mission', id: missionIdOf(cg)},
      result: 'passed',
      artifactHashes: [H1],
      criterionIds: ['notes'],
    })
    expect(e.payload.evidenceHashes).toEqual([canonicalHash(evidence)])
    // The Evidence is a valid evidence.schema.json body (the Event signature covers it).
    expect(
      schemaCatalog().validate('evidence', {
        ...evidence,
        signature: {
          algorithm: 'Ed25519',
          keyId: 'urn:mwp:dev:key:group-authority-1',
          createdAt: '2026-11-30T00:00:00Z',
          value: 'A'.repeat(86),
        },
      }),
    ).toEqual({valid: true})
    // The parent Mission itself stays active: the parent Coordinator decides what comes next.
    expect((await state(g)).mission.state).toBe('active')
  })

  it(`[-row:t10.2:blocked->verified:child_mission_approval] a child Approval of the wrong kind, or before submission, changes neither Group`, async () => {
    const {g, w, cg} = await withChild()
    const before = [await head(g), await head(cg)]
    expect(
      await code(
        groupCommand(coordinator, 'mission.approve', cg, {
          approval: approval(cg, 3, [H1], {kind: 'child_mission'}, coordinator),
        }),
      ),
    ).toBe('INVALID_STATE_TRANSITION')
    const revision = await submitChild(cg)
    before[1]! += 1
    // A child Mission is approved with a `child_mission` Approval by its MissionOwner, not a root's `mission_final`.
    expect(
      await code(groupCommand(coordinator, 'mission.approve', cg, {approval: approval(cg, revision, [H1], {}, owner)})),
    ).toBe('INVALID_COMMAND')
    // Signed by another Agent than the child MissionOwner.
    expect(
      await code(
        groupCommand(coordinator, 'mission.approve', cg, {
          approval: approval(cg, revision, [H1], {kind: 'child_mission'}, developer),
        }),
      ),
    ).toBe('INVALID_COMMAND')
    await unchanged([g, cg], before)
    expect((await item(g, w)).state).toBe('blocked')
  })

  // §14: "Root-human approval is additionally required when risk policy says so": a child Mission
  // created with approvalPolicy.finalHumanApproval true needs the root human MissionOwner's
  // child_mission Approval beside its own MissionOwner's (payload.rootApproval).
  const humanGated = {approvalPolicy: {finalHumanApproval: true, highRiskExecutionApproval: true}}

  it("[+cmd:mission.approve] a child whose risk policy asks for final human approval is approved with the root human MissionOwner's Approval too — also two levels down", async () => {
    const {g, w, cg} = await withChild('open', humanGated)
    const revision = await submitChild(cg)
    const own = approval(cg, revision, [H1], {kind: 'child_mission'}, coordinator)
    const root = approval(cg, revision, [H1], {kind: 'child_mission'}, owner)
    receiptOf(await run(groupCommand(coordinator, 'mission.approve', cg, {approval: own, rootApproval: root})))
    expect((await state(cg)).mission.state).toBe('approved')
    const approved = (await events(cg)).at(-1)!
    expect(approved).toMatchObject({
      kind: 'mission.approved',
      payload: {
        approval: {approvalId: own.approvalId},
        rootApproval: {approvalId: root.approvalId, approver: owner.principal},
      },
    })
    expect((await item(g, w)).state).toBe('verified')

    // A grandchild: its MissionOwner is the child's Coordinator; the human is the tree's root owner.
    const mid = await withChild()
    const midItem = await workItem(mid.cg, 'open', small, reviewer)
    const grand = childGroup()
    receiptOf(
      await run(
        createChild(
          mid.cg,
          midItem,
          grand,
          {...humanGated, budget: {currency: 'EUR', financialLimit: 1}, deadline: '2027-01-05T00:00:00Z'},
          reviewer,
          developer,
        ),
      ),
    )
    receiptOf(await run(coord('mission.submit_for_approval', grand, {artifactHashes: [H1]}, 1, developer)))
    const gr = (await state(grand)).mission.submission!.missionRevision
    const byChildOwner = approval(grand, gr, [H1], {kind: 'child_mission'}, coordinator) // the Parent Coordinator one level up is not the root human
    expect(
      await code(
        groupCommand(reviewer, 'mission.approve', grand, {
          approval: approval(grand, gr, [H1], {kind: 'child_mission'}, reviewer),
          rootApproval: byChildOwner,
        }),
      ),
    ).toBe('INVALID_COMMAND')
    receiptOf(
      await run(
        groupCommand(reviewer, 'mission.approve', grand, {
          approval: approval(grand, gr, [H1], {kind: 'child_mission'}, reviewer),
          rootApproval: approval(grand, gr, [H1], {kind: 'child_mission'}, owner),
        }),
      ),
    )
    expect((await state(grand)).mission.state).toBe('approved')
    expect((await item(mid.cg, midItem)).state).toBe('verified')
  })

  it("[-cmd:mission.approve] without the root human's Approval, or with one that is not exactly it, nothing changes; a rootApproval where none is asked for is refused", async () => {
    const {g, w, cg} = await withChild('open', humanGated)
    const revision = await submitChild(cg)
    const own = approval(cg, revision, [H1], {kind: 'child_mission'}, coordinator)
    const before = [await head(g), await head(cg)]
    const refused = async (payload: Record<string, unknown>) =>
      expect(await code(groupCommand(coordinator, 'mission.approve', cg, {approval: own, ...payload}))).toBe(
        'INVALID_COMMAND',
      )
    await refused({}) // the root human's Approval is missing
    await refused({rootApproval: approval(cg, revision, [H1], {kind: 'child_mission'}, otherHuman)}) // another human
    await refused({rootApproval: approval(cg, revision, [H1], {}, owner)}) // a root Mission's mission_final kind
    await refused({rootApproval: approval(cg, revision - 1, [H1], {kind: 'child_mission'}, owner)}) // another revision
    await refused({rootApproval: approval(cg, revision, [`sha256:${'b'.repeat(64)}`], {kind: 'child_mission'}, owner)}) // another Artifact set
    await refused({rootApproval: approval(cg, revision, [H1], {kind: 'child_mission', decision: 'denied'}, owner)})
    const forged = {...approval(cg, revision, [H1], {kind: 'child_mission'}, owner), comments: 'changed after signing'}
    await refused({rootApproval: forged}) // fails verification
    await unchanged([g, cg], before)
    expect((await state(cg)).mission.state).toBe('awaiting_approval')
    expect((await item(g, w)).state).toBe('blocked')

    // A child that does not ask for it, and a root Mission, take no rootApproval.
    const plain = await withChild()
    const pr = await submitChild(plain.cg)
    const plainBefore = [await head(plain.g), await head(plain.cg)]
    expect(
      await code(
        groupCommand(coordinator, 'mission.approve', plain.cg, {
          approval: approval(plain.cg, pr, [H1], {kind: 'child_mission'}, coordinator),
          rootApproval: approval(plain.cg, pr, [H1], {kind: 'child_mission'}, owner),
        }),
      ),
    ).toBe('INVALID_COMMAND')
    await unchanged([plain.g, plain.cg], plainBefore)
    const root = await rootGroup()
    receiptOf(await run(coord('mission.submit_for_approval', root, {artifactHashes: [H1]})))
    const rr = (await state(root)).mission.submission!.missionRevision
    const rootBefore = [await head(root)]
    expect(
      await code(
        groupCommand(owner, 'mission.approve', root, {
          approval: approval(root, rr, [H1]),
          rootApproval: approval(root, rr, [H1], {kind: 'child_mission'}),
        }),
      ),
    ).toBe('INVALID_COMMAND')
    await unchanged([root], rootBefore)
  })

  it(`[+row:t10.2:blocked->blocked_or_failed:child_mission_failure] a failed child leaves the parent WorkItem blocked with structured failure Evidence (default policy); the parent Mission does not fail`, async () => {
    const {g, w, cg} = await withChild()
    receiptOf(await run(coord('mission.terminate', cg, {reason: 'The source data is unavailable.'}, 1, reviewer)))
    expect((await state(cg)).mission.state).toBe('failed')
    const parentItem = await item(g, w)
    expect(parentItem.state).toBe('blocked')
    expect(parentItem.childMission!.state).toBe('failed')
    expect(parentItem.blocker!.requiredResolution).toContain('replan')
    const e = await lastEvent(g)
    expect(e).toMatchObject({
      kind: CHILD_CONCLUDED,
      payload: {
        outcome: 'failed',
        to: 'blocked',
        evidence: {type: 'failure_report', result: 'failed', details: {reason: 'The source data is unavailable.'}},
      },
    })
    expect(parentItem.failure!.evidenceHashes).toEqual([canonicalHash(e.payload.evidence)])
    expect((await state(g)).mission.state).toBe('active')
    // The Parent Coordinator may replan: a replacement child for the same WorkItem.
    receiptOf(await run(createChild(g, w, childGroup())))
    expect((await item(g, w)).childMission!.state).toBe('running')
  })

  it(`[+row:t10.2:blocked->blocked_or_failed:child_mission_failure] [+row:t7.1:non_terminal->failed:mission.terminate] onFailure "fail" fails the parent WorkItem; an indispensable child's failure fails the parent Mission, up the whole tree`, async () => {
    const a = await withChild('open', {childFailurePolicy: {onFailure: 'fail', indispensable: false}})
    receiptOf(await run(coord('mission.terminate', a.cg, {reason: 'Gave up.'}, 1, reviewer)))
    expect((await item(a.g, a.w)).state).toBe('failed')
    expect((await state(a.g)).mission.state).toBe('active')

    // Root ← child (indispensable) ← grandchild (indispensable): the grandchild's failure climbs.
    const b = await withChild('open', {childFailurePolicy: {onFailure: 'fail', indispensable: true}})
    const cw = await workItem(b.cg, 'open', small, reviewer)
    const grand = childGroup()
    receiptOf(
      await run(
        createChild(
          b.cg,
          cw,
          grand,
          {
            budget: {currency: 'EUR', financialLimit: 1},
            deadline: '2027-01-05T00:00:00Z',
            childFailurePolicy: {onFailure: 'block', indispensable: true},
          },
          reviewer,
          developer,
        ),
      ),
    )
    receiptOf(await run(groupCommand(reviewer, 'mission.cancel', grand, {reason: 'Superseded.'})))
    expect((await state(grand)).mission.state).toBe('cancelled')
    // The child WorkItem is blocked by its grandchild's failure, then ends with its failed Mission (§10.2 last row).
    expect((await events(b.cg)).slice(-2).map((e) => [e.kind, e.payload.to])).toEqual([
      [CHILD_CONCLUDED, 'blocked'],
      ['mission.terminated', undefined],
    ])
    expect((await item(b.cg, cw)).state).toBe('failed')
    expect((await state(b.cg)).mission.state).toBe('failed')
    expect((await item(b.g, b.w)).state).toBe('failed')
    expect((await state(b.g)).mission.state).toBe('failed')
    const rootEvents = (await events(b.g)).slice(-2)
    expect(rootEvents.map((e) => e.kind)).toEqual([CHILD_CONCLUDED, 'mission.terminated'])
    expect(rootEvents[1]!.payload).toMatchObject({propagatedFrom: {missionId: missionIdOf(b.cg), groupId: b.cg}})
  })

  it(`[-row:t10.2:blocked->blocked_or_failed:child_mission_failure] a concluded child cannot conclude again, nothing reaches the parent twice; failing the parent WorkItem cancels its running replacement child`, async () => {
    const {g, w, cg} = await withChild()
    // A replacement child after the first one failed: the first one's late news is not the parent's.
    receiptOf(await run(coord('mission.terminate', cg, {reason: 'First attempt failed.'}, 1, reviewer)))
    const second = childGroup()
    receiptOf(await run(createChild(g, w, second)))
    const parentHead = await head(g)
    // The failed child can do nothing more; the running replacement is the parent's child now.
    expect(await code(coord('mission.terminate', cg, {reason: 'Again.'}, 1, reviewer))).toBe('INVALID_STATE_TRANSITION')
    expect(await head(g)).toBe(parentHead)
    // The Parent Coordinator fails the WorkItem itself: control returns to it, the running
    // replacement child is cancelled in the same append, and a re-offer is possible again.
    receiptOf(await run(coord('work.fail', g, {workItemId: w, reason: 'Replanned without it.', evidenceHashes: [H1]})))
    expect((await item(g, w)).state).toBe('failed')
    expect((await state(second)).mission.state).toBe('cancelled')
    receiptOf(
      await run(
        coord('work.offer', g, {
          workItemId: w,
          candidates: [developer.principal!.id],
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        }),
      ),
    )
    expect((await item(g, w)).state).toBe('offered')
  })
})

describe('parent-cancellation propagation (§7.1, §10.2 last row)', () => {
  /** Root → child (reviewer coordinates) → grandchild (developer coordinates), all running. */
  async function threeLevels() {
    const {g, w, cg} = await withChild()
    const cw = await workItem(cg, 'open', small, reviewer)
    const grand = childGroup()
    receiptOf(
      await run(
        createChild(
          cg,
          cw,
          grand,
          {budget: {currency: 'EUR', financialLimit: 1}, deadline: '2027-01-05T00:00:00Z'},
          reviewer,
          developer,
        ),
      ),
    )
    return {g, w, cg, cw, grand}
  }

  it('[+cmd:mission.cancel] [+evt:mission.cancelled] [+row:t7.1:non_terminal->cancelled:mission.cancel] [+row:t10.2:unfinished->failed_or_cancelled:parent_mission_terminal] cancelling the root cancels every running descendant Mission in the same append', async () => {
    const {g, w, cg, cw, grand} = await threeLevels()
    const r = receiptOf(await run(groupCommand(owner, 'mission.cancel', g, {reason: 'Priorities changed.'})))
    expect((r as unknown as {linkedGroups: {groupId: string}[]}).linkedGroups.map((l) => l.groupId).sort()).toEqual(
      [cg, grand].sort(),
    )
    for (const x of [g, cg, grand]) expect((await state(x)).mission.state).toBe('cancelled')
    expect((await item(g, w)).state).toBe('cancelled')
    expect((await item(cg, cw)).state).toBe('cancelled')
    expect(await lastEvent(grand)).toMatchObject({
      kind: 'mission.cancelled',
      payload: {propagatedFrom: {missionId: missionIdOf(cg), groupId: cg}},
    })
  })

  it('[+cmd:work.cancel] [+evt:work.cancelled] [+row:t10.2:unfinished->cancelled:work.cancel] cancelling a parent WorkItem cancels its running child Mission subtree', async () => {
    const {g, w, cg, grand} = await threeLevels()
    receiptOf(await run(coord('work.cancel', g, {workItemId: w, reason: 'Dropped from scope.'})))
    expect((await item(g, w)).state).toBe('cancelled')
    expect((await state(cg)).mission.state).toBe('cancelled')
    expect((await state(grand)).mission.state).toBe('cancelled')
    expect((await state(g)).mission.state).toBe('active')
  })

  it('a cancel racing a new child never leaves a child running under the cancelled root', async () => {
    const g = await rootGroup()
    const w = await workItem(g, 'open')
    const cg = childGroup()
    const cancel = () => run(groupCommand(owner, 'mission.cancel', g, {reason: 'Stop everything.'}))
    const [promoted, cancelled] = await Promise.all([run(createChild(g, w, cg)), cancel()])
    // Either order is legal; a cancel that collected the tree before the child existed is refused
    // retryably (INTERNAL_ERROR) and a fresh Command then cancels the child too.
    expect(['ok', 'INVALID_STATE_TRANSITION']).toContain(codeOf(promoted))
    expect(['ok', 'INTERNAL_ERROR']).toContain(codeOf(cancelled))
    if (codeOf(cancelled) !== 'ok') receiptOf(await cancel())
    expect((await state(g)).mission.state).toBe('cancelled')
    const child = await authority.current(cg)
    expect(child === null || child.mission.state === 'cancelled').toBe(true)
  })

  it('[-evt:mission.cancelled] concluded children are not touched, and a rejected cancel changes no Group', async () => {
    const {g, w, cg} = await withChild()
    const revision = await submitChild(cg)
    receiptOf(
      await run(
        groupCommand(coordinator, 'mission.approve', cg, {
          approval: approval(cg, revision, [H1], {kind: 'child_mission'}, coordinator),
        }),
      ),
    )
    const childHead = await head(cg)
    // A Worker may not cancel the Mission: nothing anywhere.
    const before = [await head(g), childHead]
    expect(await code(groupCommand(developer, 'mission.cancel', g, {reason: 'No.'}))).toBe('AUTH_FORBIDDEN')
    await unchanged([g, cg], before)
    receiptOf(await run(groupCommand(owner, 'mission.cancel', g, {reason: 'Done enough.'})))
    expect(await head(cg)).toBe(childHead)
    expect((await state(cg)).mission.state).toBe('approved')
    expect((await item(g, w)).state).toBe('verified')
  })
})

describe('mission.create_follow_up (§7.1 none → active)', () => {
  /** A root Mission driven to approved by its human owner. */
  async function approvedMission() {
    const g = await rootGroup()
    receiptOf(await run(coord('mission.submit_for_approval', g, {artifactHashes: [H1]})))
    const revision = (await state(g)).mission.submission!.missionRevision
    receiptOf(await run(groupCommand(owner, 'mission.approve', g, {approval: approval(g, revision, [H1])})))
    return g
  }
  const followUp = (g: string, fg: string, signer = owner, extra: Record<string, unknown> = {}) =>
    command(signer, {
      kind: 'mission.create_follow_up',
      groupId: fg,
      payload: {...missionPayload(fg), followUpTo: {missionId: missionIdOf(g), groupId: g}, ...extra},
    })

  it('[+cmd:mission.create_follow_up] [+evt:mission.follow_up.created] [+row:t7.1:none->active:mission.create_follow_up] the same human owner creates a new Group linked to the approved Mission', async () => {
    const g = await approvedMission()
    const fg = childGroup()
    const before = await head(g)
    receiptOf(await run(followUp(g, fg)))
    expect((await events(fg)).map((e) => e.kind)).toEqual(['mission.follow_up.created', 'mission.coordinator.assigned'])
    expect((await events(fg))[0]!.payload).toMatchObject({
      mission: {missionId: missionIdOf(fg), followUpToMissionId: missionIdOf(g), missionOwner: owner.principal},
      followUpToGroupId: g,
    })
    const s = await state(fg)
    expect(s.mission).toMatchObject({
      state: 'active',
      followUpTo: {missionId: missionIdOf(g), groupId: g},
      missionOwner: owner.principal,
    })
    // The approved Mission is not reopened or rewritten.
    expect(await head(g)).toBe(before)
    expect((await state(g)).mission.state).toBe('approved')
  })

  it('[-cmd:mission.create_follow_up] [-evt:mission.follow_up.created] [-row:t7.1:none->active:mission.create_follow_up] not approved, another human, an existing Group, epochs: rejected, no Group created', async () => {
    const active = await rootGroup()
    const approved = await approvedMission()
    const fg = childGroup()
    expect(await code(followUp(active, fg))).toBe('INVALID_STATE_TRANSITION')
    expect(await code(followUp(approved, fg, otherHuman))).toBe('GROUP_NOT_FOUND')
    expect(
      await code(followUp(approved, fg, owner, {followUpTo: {missionId: missionIdOf(active), groupId: approved}})),
    ).toBe('GROUP_NOT_FOUND')
    expect(await code(followUp(approved, active))).toBe('INVALID_STATE_TRANSITION')
    expect(await store.head(fg)).toBeNull()
  })
})

describe('inspecting the Mission tree (§14)', () => {
  it('the root MissionOwner sees the complete tree; the Parent Coordinator its subtree; anyone else nothing', async () => {
    const {g, w, cg} = await withChild()
    const cw = await workItem(cg, 'open', small, reviewer)
    const grand = childGroup()
    receiptOf(
      await run(
        createChild(
          cg,
          cw,
          grand,
          {budget: {currency: 'EUR', financialLimit: 1}, deadline: '2027-01-05T00:00:00Z'},
          reviewer,
          developer,
        ),
      ),
    )
    const tree = (await missionTree(authority, g, owner.principal!))!
    expect(tree).toMatchObject({
      groupId: g,
      depth: 0,
      state: 'active',
      missionOwner: owner.principal,
      coordinatorAgentId: coordinator.principal!.id,
    })
    expect(tree.children).toHaveLength(1)
    expect(tree.children[0]).toMatchObject({
      groupId: cg,
      depth: 1,
      parentWorkItemId: w,
      missionOwner: coordinator.principal,
      coordinatorAgentId: reviewer.principal!.id,
    })
    expect(tree.children[0]!.children.map((c) => [c.groupId, c.depth, c.parentWorkItemId])).toEqual([[grand, 2, cw]])
    // The root owner may also start the view at any Mission below it.
    expect((await missionTree(authority, grand, owner.principal!))!.groupId).toBe(grand)
    // The Parent Coordinator owns the child Mission: it sees that subtree, not the root's Mission.
    expect((await missionTree(authority, cg, coordinator.principal!))!.children.map((c) => c.groupId)).toEqual([grand])
    expect(await missionTree(authority, g, coordinator.principal!)).toBeNull()
    expect(await missionTree(authority, g, otherHuman.principal!)).toBeNull()
    expect(await missionTree(authority, newGroup('none'), owner.principal!)).toBeNull()
  })
})

describe('replay', () => {
  it('every Group of the tree replays to the live state', async () => {
    const fresh = authorityOn(store, {rootMissionOwners: []})
    expect(touched.length).toBeGreaterThan(10)
    for (const g of touched) {
      const live = await authority.current(g)
      if (live === null) continue
      expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash(live))
    }
  })
})
