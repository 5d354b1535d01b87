// Mission aggregate decisions (spec §7.1 lifecycle table, §7.2 Coordinator lease, §7.3 Approval).
// Check order for an existing Group: Membership (§8) → role / lease (§7.2, §15.1) →
// expectedRevision (§15.3) → lifecycle state (§7.1), all in the gate (gate.ts). Authorization
// comes before state so a stranger learns nothing about the Mission's state.

import type {Principal} from '../../signing/profiles.js'
import type {DecidedCommand, VerifiedApproval} from './command.js'
import {type DecideContext, type Decision, type EventDraft, isRefusal, membershipDoc, refuse} from './common.js'
import type {Handler, Handlers, InGroup} from './gate.js'
import {cascadeCancellation, childOutcome} from './child.js'
import {type GroupState, type MissionState, TERMINAL} from '../model/state.js'
import {ancestorsOf} from '../model/ancestry.js'
import type {
  MissionCreateChildPayload,
  MissionCreateFollowUpPayload,
  MissionCreatePayload,
} from '../model/payloads.generated.js'

/**
 * mission.create after the gate (the Group does not exist, expectedRevision): the Group the
 * payload names is the Command's, and a root MissionOwner is human.
 */
export function missionCreate(
  command: DecidedCommand<'mission.create' | 'mission.create_follow_up'>,
  ctx: DecideContext,
): Decision {
  const p = command.payload
  if (p.groupId !== command.groupId)
    return refuse('INVALID_COMMAND', 'payload.groupId differs from the Command groupId')
  if (command.actor.type !== 'human') return refuse('AUTH_FORBIDDEN', 'a root MissionOwner is human (§7.1)')

  const owner: Principal = {type: command.actor.type, id: command.actor.id}
  return {events: openingEvents({missionId: p.missionId, groupId: p.groupId}, owner, p, ctx)}
}

/** What a Group-opening payload says of the new Mission. */
type OpeningPayload = Pick<
  MissionCreatePayload | MissionCreateFollowUpPayload | MissionCreateChildPayload,
  'objective' | 'definitionOfDone' | 'deadline' | 'budget' | 'approvalPolicy' | 'coordinatorAgentId'
>

/**
 * §7.1: the two Events that open a Group — mission.created (with the MissionOwner's Membership and
 * the planning Conversation) and mission.coordinator.assigned (Coordinator Epoch 1, a stable lease
 * ID, the Coordinator's Membership) — from a create payload (objective, definitionOfDone, deadline,
 * budget, approvalPolicy, coordinatorAgentId). `extra` adds members for child Missions.
 */
export function openingEvents(
  target: {missionId: string; groupId: string},
  owner: Principal,
  p: OpeningPayload,
  ctx: DecideContext,
  extra: {mission?: Record<string, unknown>; payload?: Record<string, unknown>; groupId?: string} = {},
): EventDraft[] {
  const at = ctx.acceptedAt
  // Event IDs first, in Event order, so a deterministic generator gives readable test IDs.
  const createdId = ctx.newId()
  const assignedId = ctx.newId()
  // §8: MissionOwner and Coordinator Memberships have complete Group visibility.
  const membership = (member: Principal, role: 'mission_owner' | 'coordinator') =>
    membershipDoc(
      target,
      {
        membershipId: ctx.newId(),
        member,
        role,
        membershipEpoch: 1,
        scopes: ['group.full'],
        visibilityStartSequence: 1,
        active: true,
      },
      at,
    )
  const conversationId = ctx.newId()
  const mission = {
    missionId: target.missionId,
    groupId: target.groupId,
    state: 'active',
    missionOwner: owner,
    objective: p.objective,
    definitionOfDone: p.definitionOfDone,
    deadline: p.deadline,
    budget: p.budget,
    approvalPolicy: p.approvalPolicy,
    createdAt: at,
    ...extra.mission,
  }
  const inGroup = extra.groupId !== undefined ? {groupId: extra.groupId} : {}
  const created: EventDraft = {
    eventId: createdId,
    kind: 'mission.created',
    ...inGroup,
    conversationId,
    payload: {mission, ...extra.payload, conversationId, membership: membership(owner, 'mission_owner')},
  }
  const assigned: EventDraft = {
    eventId: assignedId,
    kind: 'mission.coordinator.assigned',
    ...inGroup,
    payload: {
      // §7.2: epoch 1 and a stable lease ID; the expiry arrives with mission.renew_coordinator.
      coordinator: {agentId: p.coordinatorAgentId, coordinatorEpoch: 1, leaseId: ctx.newId(), leaseExpiresAt: null},
      membership: membership({type: 'agent', id: p.coordinatorAgentId}, 'coordinator'),
    },
  }
  return [created, assigned]
}

type LifecycleKind =
  | 'mission.submit_for_approval'
  | 'mission.request_changes'
  | 'mission.approve'
  | 'mission.cancel'
  | 'mission.terminate'
  | 'mission.assign_coordinator'
  | 'mission.renew_coordinator'

const from = (allowed: (s: MissionState) => boolean) => ({
  from: allowed,
  reason: (kind: string, s: MissionState) => `${kind} from ${s}`,
})
const awaitingApproval = from((s) => s === 'awaiting_approval')
const notTerminal = from((s) => !TERMINAL.has(s))

/**
 * A lifecycle Command (§7.1 table: who may issue it and from which states). When it ends a
 * Mission, the child Missions' and parent WorkItem's consequences join the same append (child.ts).
 */
function lifecycle<K extends LifecycleKind>(
  kind: K,
  who: 'owner' | 'coordinator',
  mission: ReturnType<typeof from>,
  decide: (at: InGroup, eventId: string, command: DecidedCommand<K>, ctx: DecideContext) => Decision,
  services?: 'policy',
): Handler<K> {
  return {
    on: 'group',
    gate: {
      membership: 'active',
      ...(services !== undefined ? {services} : {}),
      who: who === 'owner' ? {by: 'owner', reason: `${kind} is the MissionOwner's (§7.1)`} : {by: 'coordinator'},
      mission,
    },
    decide: (at, command, ctx) =>
      cascadeCancellation(at.state, ctx, childOutcome(at.state, command, ctx, decide(at, ctx.newId(), command, ctx))),
  }
}

const one = (eventId: string, kind: string, payload: Record<string, unknown>): Decision => ({
  events: [{eventId, kind, payload}],
})

export const MISSION_HANDLERS: Handlers = {
  'mission.create': {on: 'new-group', revision: true, decide: missionCreate},
  // §7.3: record the exact Mission revision and Artifact set the Approval must name.
  'mission.submit_for_approval': lifecycle(
    'mission.submit_for_approval',
    'coordinator',
    from((s) => s === 'active'),
    ({state}, eventId, {payload: p}) =>
      one(eventId, 'mission.submitted_for_approval', {
        missionId: state.missionId,
        missionRevision: state.revision,
        artifactHashes: [...p.artifactHashes].sort(),
      }),
  ),
  'mission.request_changes': lifecycle(
    'mission.request_changes',
    'owner',
    awaitingApproval,
    ({state}, eventId, {payload: p}) =>
      one(eventId, 'mission.changes_requested', {missionId: state.missionId, reason: p.reason}),
  ),
  'mission.approve': lifecycle('mission.approve', 'owner', awaitingApproval, ({state}, eventId, command, ctx) =>
    approve(state, command, ctx, eventId),
  ),
  'mission.cancel': lifecycle('mission.cancel', 'owner', notTerminal, ({state}, eventId, {payload: p}) =>
    one(eventId, 'mission.cancelled', {missionId: state.missionId, reason: p.reason}),
  ),
  // Service terminators are authorized by Organization policy in ingress (§15.1); they carry no
  // epochs. From a human it is never allowed (§15.1); from an Agent it needs the lease.
  'mission.terminate': lifecycle(
    'mission.terminate',
    'coordinator',
    notTerminal,
    ({state}, eventId, {payload: p}) =>
      one(eventId, 'mission.terminated', {missionId: state.missionId, reason: p.reason}),
    'policy',
  ),
  'mission.assign_coordinator': lifecycle(
    'mission.assign_coordinator',
    'owner',
    notTerminal,
    ({state}, eventId, command, ctx) => assignCoordinator(state, command, ctx, eventId),
  ),
  // The gate's Coordinator Epoch check is the compare-and-set (§7.2).
  'mission.renew_coordinator': lifecycle(
    'mission.renew_coordinator',
    'coordinator',
    notTerminal,
    ({state}, eventId, {payload: p}) =>
      one(eventId, 'mission.coordinator.renewed', {
        coordinator: {...state.mission.coordinator!, leaseExpiresAt: p.leaseExpiresAt},
      }),
  ),
}

/**
 * §7.3: the Approval must name exactly what was submitted, signed by the MissionOwner. §14: a child
 * Mission whose approval policy asks for final human approval (its risk policy) needs the root
 * human MissionOwner's Approval of the same revision and Artifact set too, as `rootApproval`; any
 * other Mission takes none.
 */
function approve(
  state: GroupState,
  command: DecidedCommand<'mission.approve'>,
  ctx: DecideContext,
  eventId: string,
): Decision {
  const a = command.approval
  if (a === undefined) return refuse('INVALID_COMMAND', 'mission.approve needs a verified Approval')
  const child = state.mission.parent !== undefined
  // §14: a child Mission's owner (the Parent Coordinator, an Agent) signs a `child_mission` Approval.
  if (!approves(state, a, state.mission.missionOwner, child ? 'child_mission' : 'mission_final')) {
    return refuse('INVALID_COMMAND', 'the Approval does not match the submitted Mission revision and Artifact set')
  }
  const root = command.rootApproval
  if (!child || state.mission.approvalPolicy.finalHumanApproval !== true) {
    if (root !== undefined)
      return refuse(
        'INVALID_COMMAND',
        'rootApproval is only for a child Mission whose approval policy asks for final human approval (§14)',
      )
    return one(eventId, 'mission.approved', {missionId: state.missionId, approval: a.document})
  }
  if (root === undefined)
    return refuse(
      'INVALID_COMMAND',
      "this child Mission's approval policy asks for final human approval: the root human MissionOwner's Approval must come too, as rootApproval (§14)",
    )
  const ancestors = ancestorsOf(state, ctx)
  if (isRefusal(ancestors)) return ancestors
  const rootOwner = ancestors.at(-1)!.state.mission.missionOwner
  if (!approves(state, root, rootOwner, 'child_mission')) {
    return refuse(
      'INVALID_COMMAND',
      "rootApproval must be the root human MissionOwner's child_mission Approval of the submitted revision and Artifact set",
    )
  }
  return one(eventId, 'mission.approved', {
    missionId: state.missionId,
    approval: a.document,
    rootApproval: root.document,
  })
}

/** A verified Approval by `by` of `kind` that approves exactly the submitted revision and Artifact set. */
function approves(state: GroupState, a: VerifiedApproval, by: Principal, kind: string): boolean {
  const d = a.document
  const submitted = state.mission.submission!
  const approver = d.approver as Principal
  const hashes = d.artifactHashes
  if (!Array.isArray(hashes)) return false
  const sameSet =
    hashes.length === submitted.artifactHashes.length && hashes.every((h) => submitted.artifactHashes.includes(h))
  return (
    a.signer.id === by.id &&
    a.signer.type === by.type &&
    approver.id === by.id &&
    approver.type === by.type &&
    d.kind === kind &&
    d.decision === 'approved' &&
    d.missionId === state.missionId &&
    d.groupId === state.groupId &&
    d.missionRevision === submitted.missionRevision &&
    sameSet
  )
}

/** §7.2: a new lease for a new Agent at Coordinator Epoch + 1; the old epoch is fenced from now on. */
function assignCoordinator(
  state: GroupState,
  command: DecidedCommand<'mission.assign_coordinator'>,
  ctx: DecideContext,
  eventId: string,
): Decision {
  const agentId = command.payload.agentId
  const lease = state.mission.coordinator
  if (lease !== null && lease.agentId === agentId)
    return refuse('INVALID_COMMAND', 'that Agent already holds the Coordinator lease')
  const existing = state.members[agentId]
  if (existing !== undefined && existing.principal.type !== 'agent')
    return refuse('INVALID_COMMAND', 'a Coordinator is an Agent')
  const coordinator = {
    agentId,
    coordinatorEpoch: (lease?.coordinatorEpoch ?? 0) + 1,
    leaseId: ctx.newId(),
    leaseExpiresAt: null,
  }
  // The new Coordinator's Membership: a new one, or the existing one with its epoch raised (§8).
  const membership = membershipDoc(
    state,
    {
      membershipId: existing?.membershipId ?? ctx.newId(),
      member: {type: 'agent', id: agentId},
      role: 'coordinator',
      membershipEpoch: existing === undefined ? 1 : existing.membershipEpoch + 1,
      scopes: ['group.full'],
      visibilityStartSequence: 1,
      active: true,
    },
    ctx.acceptedAt,
  )
  return {events: [{eventId, kind: 'mission.coordinator.assigned', payload: {coordinator, membership}}]}
}
