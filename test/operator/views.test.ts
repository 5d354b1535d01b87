// Human control at library level (issue 4): Commands built and signed locally by the command
// builder (epochs looked up from the folded state) and sent through the real ingress on SQLite,
// and the read-only views folded from the Group's verified Events — Mission inspection with the
// submission's Evidence, the Mission tree, and the WorkItem graph with derived progress.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Authority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {CommandBuildError, buildCommand, buildFinalApproval} from '../../src/operator/command-builder.js'
import {verifiedEvent, type EventDoc} from '../../src/operator/transport.js'
import {foldGroup, inspectMission, missionTree, workGraph} from '../../src/operator/views.js'
import {renderInspection} from '../../src/operator/render.js'
import type {Store} from '../../src/store/index.js'
import {treeSteps} from '../support/mission-tree-helpers.js'
import {withEvidence} from '../support/evidence.js'
import {
  authorityOn,
  codeOf,
  contract,
  coordinator,
  createCommand,
  developer,
  newGroup,
  otherHuman,
  owner,
  receiptOf,
  registry,
  reviewer,
  sqliteStore,
  uuid,
  candidateBasis,
} from '../support/authority-helpers.js'

const H1 = `sha256:${'d'.repeat(64)}`

let store: Store
let cleanup: () => Promise<void>
let authority: Authority

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  authority = authorityOn(store)
}, 60_000)
afterAll(async () => cleanup?.())

async function events(g: string): Promise<EventDoc[]> {
  const page = await store.read(g, 0, 1000)
  return page.events.map((e) => verifiedEvent(e.bytes, registry, g))
}

/** Builds from the current folded state (as the CLI does) and submits through the real ingress. */
async function act(
  signer: SigningKey,
  kind: string,
  g: string,
  payload: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  const state = foldGroup(await events(g))
  return submit(authority, buildCommand(signer, {kind, groupId: g, payload, state, ...extra}).bytes)
}
const ok = async (p: ReturnType<typeof act>) => receiptOf(await p)
const item = async (g: string, w: string) => foldGroup(await events(g))!.workItems[w]!

async function group(): Promise<string> {
  const g = newGroup('operator')
  receiptOf(await submit(authority, createCommand(g)))
  for (const w of [developer, reviewer])
    await ok(act(owner, 'membership.change', g, {member: w.principal, role: 'worker'}))
  return g
}

/** Authorizes `w` with `deps`, then offers it to the developer, who accepts and starts it. */
async function started(g: string, w: string, deps: string[] = [], extra: Record<string, unknown> = {}) {
  await ok(
    act(coordinator, 'work.authorize', g, {workItemId: w, contract: contract({dependencyWorkItemIds: deps, ...extra})}),
  )
  await ok(
    act(coordinator, 'work.offer', g, {
      workItemId: w,
      candidates: [developer.principal!.id],
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
      selectionBasis: {[developer.principal!.id]: candidateBasis()},
    }),
  )
  await ok(act(developer, 'work.accept_offer', g, {workItemId: w, offerId: (await item(g, w)).offer!.offerId}))
  await ok(act(developer, 'work.start', g, {workItemId: w, ownershipEpoch: 1}))
}

describe('command builder', () => {
  it('[+cmd:message.post] fills epochs from the folded state: human membershipEpoch, agent session + membership + coordinator epochs', async () => {
    const g = await group()
    const state = foldGroup(await events(g))!
    const human = buildCommand(owner, {kind: 'message.post', groupId: g, payload: {text: 'hello'}, state}).document
    expect(human).toMatchObject({membershipEpoch: 1, actor: owner.principal})
    expect(human).not.toHaveProperty('sessionEpoch')
    expect(human).not.toHaveProperty('coordinatorEpoch')
    const agent = buildCommand(coordinator, {kind: 'message.post', groupId: g, payload: {text: 'plan'}, state}).document
    expect(agent).toMatchObject({sessionEpoch: 1, membershipEpoch: 1, coordinatorEpoch: 1})
    const worker = buildCommand(developer, {kind: 'message.post', groupId: g, payload: {text: 'ack'}, state}).document
    expect(worker).not.toHaveProperty('coordinatorEpoch')
    for (const signer of [owner, coordinator, developer]) {
      const r = await act(signer, 'message.post', g, {text: `from ${signer.principal!.id}`})
      expect(codeOf(r)).toBe('ok')
    }
    expect((await events(g)).filter((e) => e.kind === 'message.posted').map((e) => e.actor.id)).toEqual(
      [owner, coordinator, developer].map((k) => k.principal!.id),
    )
  })

  it('[-cmd:message.post] refuses to guess an epoch for a non-member; an explicit stale epoch is sent and refused with its code', async () => {
    const g = await group()
    const state = foldGroup(await events(g))!
    expect(() => buildCommand(otherHuman, {kind: 'message.post', groupId: g, payload: {text: 'hi'}, state})).toThrow(
      CommandBuildError,
    )
    expect(() => buildCommand(owner, {kind: 'message.post', groupId: g, payload: {text: 'hi'}, state: null})).toThrow(
      CommandBuildError,
    )
    const before = (await store.head(g))!.sequence
    const r = await submit(
      authority,
      buildCommand(owner, {kind: 'message.post', groupId: g, payload: {text: 'hi'}, state, membershipEpoch: 2}).bytes,
    )
    expect(codeOf(r)).toBe('MEMBERSHIP_REQUIRED')
    expect((await store.head(g))!.sequence).toBe(before)
  })

  it('[-cmd:mission.approve] an expectedRevision guard taken from an older view is REVISION_CONFLICT and nothing is appended', async () => {
    const g = await group()
    await ok(act(coordinator, 'mission.submit_for_approval', g, {artifactHashes: [H1]}))
    const reviewed = foldGroup(await events(g))!
    await ok(act(owner, 'message.post', g, {text: 'one more look'})) // revision-neutral
    await ok(act(owner, 'membership.change', g, {member: reviewer.principal, role: 'reviewer'})) // structured: revision + 1
    const head = (await store.head(g))!.sequence
    const approval = buildFinalApproval(owner, reviewed)
    const r = await submit(
      authority,
      buildCommand(owner, {
        kind: 'mission.approve',
        groupId: g,
        payload: {approval},
        state: reviewed,
        expectedRevision: reviewed.revision,
      }).bytes,
    )
    expect(codeOf(r)).toBe('REVISION_CONFLICT')
    expect((await store.head(g))!.sequence).toBe(head)
    expect(foldGroup(await events(g))!.mission.state).toBe('awaiting_approval')
  })

  it('[+cmd:mission.approve] [+evt:mission.approved] the locally signed final Approval names exactly the submitted revision and Artifact set', async () => {
    const g = await group()
    await ok(act(coordinator, 'mission.submit_for_approval', g, {artifactHashes: [H1]}))
    const state = foldGroup(await events(g))!
    const approval = buildFinalApproval(owner, state, {comments: 'Looks right.'})
    expect(approval).toMatchObject({
      missionRevision: state.mission.submission!.missionRevision,
      artifactHashes: [H1],
      approver: owner.principal,
      groupId: g,
    })
    await ok(act(owner, 'mission.approve', g, {approval}, {expectedRevision: state.revision}))
    const last = (await events(g)).at(-1)!
    expect(last.kind).toBe('mission.approved')
    expect(canonicalHash((last.payload as {approval: unknown}).approval)).toBe(canonicalHash(approval))
    expect(inspectMission(await events(g))!.state).toBe('approved')
  })
})

describe('views', () => {
  it('the WorkItem graph derives progress: counts, blockers, waiting dependencies, overdue, approvals and the critical path — no percentage', async () => {
    const g = await group()
    const [w1, w2, w3, w4] = [uuid(7), uuid(7), uuid(7), uuid(7)]
    await started(g, w1)
    await ok(
      act(developer, 'work.block', g, {
        workItemId: w1,
        ownershipEpoch: 1,
        leaseId: (await item(g, w1)).lease!.leaseId,
        requiredResolution: 'Need the changelog source',
      }),
    )
    await ok(act(coordinator, 'work.authorize', g, {workItemId: w2, contract: contract({dependencyWorkItemIds: [w1]})}))
    await ok(act(coordinator, 'work.authorize', g, {workItemId: w3, contract: contract({dependencyWorkItemIds: [w2]})}))
    await ok(
      act(coordinator, 'work.authorize', g, {
        workItemId: w4,
        contract: contract({executionApproval: 'human_required', deadline: '2027-03-01T00:00:00Z'}),
      }),
    )
    const graph = workGraph(foldGroup(await events(g))!, '2027-02-01T00:00:00Z')
    const node = (w: string) => graph.items.find((n) => n.workItemId === w)!
    expect(graph.summary).toMatchObject({
      total: 4,
      done: 0,
      remaining: 4,
      byState: {blocked: 1, open: 3},
      blocked: [w1],
      criticalPath: [w1, w2, w3],
      awaitingApproval: [w4],
    })
    expect(graph.summary.overdue.sort()).toEqual([w1, w2, w3].sort()) // contract deadline 2027-01-15
    expect(node(w1)).toMatchObject({
      state: 'blocked',
      owner: developer.principal!.id,
      blockers: ['blocked: Need the changelog source'],
      critical: true,
      lastProgress: expect.any(String),
    })
    expect(node(w2)).toMatchObject({waitingOn: [w1], blockers: [`waits for ${w1}`], critical: true})
    expect(node(w3)).toMatchObject({waitingOn: [w2], critical: true})
    expect(node(w4)).toMatchObject({approval: 'pending', critical: false, overdue: false})
    expect(JSON.stringify(graph)).not.toMatch(/percent|%/)
  })

  it('verified work leaves the critical path and frees its dependents; a Mission submission shows which WorkItem produced each Artifact', async () => {
    const g = await group()
    const [w1, w2] = [uuid(7), uuid(7)]
    await started(g, w1)
    await ok(
      act(
        developer,
        'work.submit',
        g,
        withEvidence(developer, g, {
          workItemId: w1,
          ownershipEpoch: 1,
          leaseId: (await item(g, w1)).lease!.leaseId,
          artifactHashes: [H1],
        }),
      ),
    )
    await ok(act(coordinator, 'work.accept_result', g, {workItemId: w1}))
    await ok(act(coordinator, 'work.authorize', g, {workItemId: w2, contract: contract({dependencyWorkItemIds: [w1]})}))
    const graph = workGraph(foldGroup(await events(g))!, '2027-01-01T00:00:00Z')
    expect(graph.summary).toMatchObject({total: 2, done: 1, remaining: 1, criticalPath: [w2], blocked: [], overdue: []})
    expect(graph.items.find((n) => n.workItemId === w2)).toMatchObject({waitingOn: [], blockers: []})

    await ok(act(coordinator, 'mission.submit_for_approval', g, {artifactHashes: [H1, `sha256:${'e'.repeat(64)}`]}))
    const view = inspectMission(await events(g))!
    expect(view.state).toBe('awaiting_approval')
    expect(view.submission).toMatchObject({
      submittedBy: coordinator.principal!.id,
      criteria: [{criterionId: 'notes', evidenceRequired: ['human_review']}],
    })
    const evidence = Object.fromEntries(view.submission!.evidence.map((e) => [e.artifactHash, e.producedBy]))
    expect(evidence[H1]).toEqual([{workItemId: w1, state: 'verified'}])
    expect(evidence[`sha256:${'e'.repeat(64)}`]).toEqual([])
    expect(view.work).toMatchObject({done: 1, total: 2})
    // The Mission deadline (2027-01-31) counts only while the Mission is not terminal.
    expect(inspectMission(await events(g), '2027-02-01T00:00:00Z')!.overdue).toBe(true)
    expect(inspectMission(await events(g), '2027-01-01T00:00:00Z')!.overdue).toBe(false)
  })

  it('inspect and tree of an unknown Group: no view, an unavailable node; the tree of a root Mission without children is the root', async () => {
    expect(inspectMission([])).toBeNull()
    const missing = await missionTree('urn:mwp:test:group:none', events)
    expect(missing).toMatchObject({missionId: null, unavailable: 'no Events', children: []})
    const g = await group()
    const tree = await missionTree(g, events)
    expect(tree).toMatchObject({groupId: g, state: 'active', objective: 'Ship the release notes for 0.1', children: []})
  })

  it('[+evt:mission.child.created] the Mission tree follows child links into the child Groups (two levels)', async () => {
    const t = treeSteps(() => ({authority, store}))
    const g = await t.rootGroup()
    const w = await t.workItem(g, 'open')
    const cg = newGroup('child')
    receiptOf(await t.run(t.createChild(g, w, cg)))
    const tree = await missionTree(g, events)
    expect(tree).toMatchObject({groupId: g, state: 'active', children: [{groupId: cg, state: 'active', children: []}]})
    expect(inspectMission(await events(g))!.children).toEqual([
      {groupId: cg, missionId: foldGroup(await events(cg))!.missionId, sequence: expect.any(Number)},
    ])
    // Who approves: the root Mission's owner with a mission_final Approval; the child's owner with a child_mission one.
    expect(inspectMission(await events(g))!.approval).toEqual({kind: 'mission_final', rootHumanApproval: false})
    expect(inspectMission(await events(cg))!.approval).toEqual({kind: 'child_mission', rootHumanApproval: false})
    expect(renderInspection(inspectMission(await events(cg))!)).toContain(
      `child_mission Approval by the MissionOwner (${coordinator.principal!.id})`,
    )
    const gated = newGroup('gated-child')
    receiptOf(
      await t.run(
        t.createChild(g, await t.workItem(g, 'open'), gated, {
          approvalPolicy: {finalHumanApproval: true, highRiskExecutionApproval: true},
        }),
      ),
    )
    expect(inspectMission(await events(gated))!.approval).toEqual({kind: 'child_mission', rootHumanApproval: true})
    expect(renderInspection(inspectMission(await events(gated))!)).toContain(
      "with the root human MissionOwner's beside it",
    )
    // The parent WorkItem waits on its child: a blocker in the graph, not a percentage.
    expect(workGraph(foldGroup(await events(g))!).items.find((n) => n.workItemId === w)).toMatchObject({
      state: 'blocked',
      blockers: [expect.stringMatching(/^blocked: child Mission/)],
    })
  })

  it('[-evt:mission.child.created] a Group without child Missions has no children in inspect or tree', async () => {
    const g = await group()
    await started(g, uuid(7))
    expect(inspectMission(await events(g))!.children).toEqual([])
    expect((await missionTree(g, events)).children).toEqual([])
  })

  it("folding the stored Events reproduces the authority's live state exactly", async () => {
    const g = await group()
    await started(g, uuid(7))
    expect(canonicalHash(foldGroup(await events(g)))).toBe(canonicalHash(await authority.current(g)))
  })
})
