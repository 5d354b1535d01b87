// Mission aggregate decisions (spec §7.1 lifecycle table, §7.2 Coordinator lease, §7.3 Approval).
// Check order for an existing Group: Membership (§8) → role / lease (§7.2, §15.1) →
// expectedRevision (§15.3) → lifecycle state (§7.1). Authorization comes before state so a
// stranger learns nothing about the Mission's state.

import type {Principal} from '../../signing/profiles.js'
import {
  type DecideContext,
  type DecidedCommand,
  type Decision,
  type EventDraft,
  type VerifiedApproval,
  activeMember,
  coordinatorCheck,
  isOwner,
  isRefusal,
  membershipDoc,
  refuse,
  revisionConflict,
} from './common.js'
import {type GroupState, type MissionState, TERMINAL} from '../model/state.js'
import {ancestorsOf} from '../model/ancestry.js'

export function missionCreate(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state !== null) return refuse('INVALID_STATE_TRANSITION', 'the Group already exists')
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  const p = command.payload
  if (p.groupId !== command.groupId) return refuse('INVALID_COMMAND', 'payload.groupId differs from the Command groupId')
  if (command.actor.type !== 'human') return refuse('AUTH_FORBIDDEN', 'a root MissionOwner is human (§7.1)')

  const groupId = p.groupId as string // equal to command.groupId, checked above
  const owner: Principal = {type: command.actor.type, id: command.actor.id}
  return {events: openingEvents({missionId: p.missionId as string, groupId}, owner, p, ctx)}
}

/**
 * §7.1: the two Events that open a Group — mission.created (with the MissionOwner's Membership and
 * the planning Conversation) and mission.coordinator.assigned (Coordinator Epoch 1, a stable lease
 * ID, the Coordinator's Membership) — from a create payload (objective, definitionOfDone, deadline,
 * budget, approvalPolicy, coordinatorAgentId). `extra` adds members for child Missions.
 */
export function openingEvents(
  target: {missionId: string; groupId: string},
  owner: Principal,
  p: Record<string, unknown>,
  ctx: DecideContext,
  extra: {mission?: Record<string, unknown>; payload?: Record<string, unknown>; groupId?: string} = {},
): EventDraft[] {
  const at = ctx.acceptedAt
  // Event IDs first, in Event order, so a deterministic generator gives readable test IDs.
  const createdId = ctx.newId()
  const assignedId = ctx.newId()
  // §8: MissionOwner and Coordinator Memberships have complete Group visibility.
  const membership = (member: Principal, role: 'mission_owner' | 'coordinator') =>
    membershipDoc(target, {membershipId: ctx.newId(), member, role, membershipEpoch: 1, scopes: ['group.full'], visibilityStartSequence: 1, active: true}, at)
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
  const created: EventDraft = {eventId: createdId, kind: 'mission.created', ...inGroup, conversationId, payload: {mission, ...extra.payload, conversationId, membership: membership(owner, 'mission_owner')}}
  const assigned: EventDraft = {
    eventId: assignedId,
    kind: 'mission.coordinator.assigned',
    ...inGroup,
    payload: {
      // §7.2: epoch 1 and a stable lease ID; the expiry arrives with mission.renew_coordinator.
      coordinator: {agentId: p.coordinatorAgentId as string, coordinatorEpoch: 1, leaseId: ctx.newId(), leaseExpiresAt: null},
      membership: membership({type: 'agent', id: p.coordinatorAgentId as string}, 'coordinator'),
    },
  }
  return [created, assigned]
}

type Who = 'owner' | 'coordinator'

/** Per lifecycle Command: who may issue it and from which states (§7.1 table). */
const RULES: Readonly<Record<string, {who: Who; from: (s: MissionState) => boolean}>> = {
  'mission.submit_for_approval': {who: 'coordinator', from: (s) => s === 'active'},
  'mission.request_changes': {who: 'owner', from: (s) => s === 'awaiting_approval'},
  'mission.approve': {who: 'owner', from: (s) => s === 'awaiting_approval'},
  'mission.cancel': {who: 'owner', from: (s) => !TERMINAL.has(s)},
  // Service terminators are authorized by Organization policy in ingress (§15.1); they carry no epochs.
  'mission.terminate': {who: 'coordinator', from: (s) => !TERMINAL.has(s)},
  'mission.assign_coordinator': {who: 'owner', from: (s) => !TERMINAL.has(s)},
  'mission.renew_coordinator': {who: 'coordinator', from: (s) => !TERMINAL.has(s)},
}

export const MISSION_KINDS: ReadonlySet<string> = new Set(Object.keys(RULES))

export function missionLifecycle(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state === null) return refuse('GROUP_NOT_FOUND', 'no such Group')
  const rule = RULES[command.kind]!
  if (command.kind === 'mission.terminate' && command.actor.type === 'service') {
    // Already authorized by the `terminators` policy in ingress; services hold no Membership.
  } else {
    const member = activeMember(state, command)
    if (isRefusal(member)) return member
    if (rule.who === 'owner' && !isOwner(state, command.actor)) return refuse('AUTH_FORBIDDEN', `${command.kind} is the MissionOwner's (§7.1)`)
    if (rule.who === 'coordinator') {
      // mission.terminate from a human is never allowed (§15.1); from an Agent it needs the lease.
      const fenced = coordinatorCheck(state, command)
      if (fenced) return fenced
    }
  }
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  if (!rule.from(state.mission.state)) return refuse('INVALID_STATE_TRANSITION', `${command.kind} from ${state.mission.state}`)

  const p = command.payload
  const eventId = ctx.newId()
  const one = (kind: string, payload: Record<string, unknown>): Decision => ({events: [{eventId, kind, payload}]})
  switch (command.kind) {
    case 'mission.submit_for_approval':
      // §7.3: record the exact Mission revision and Artifact set the Approval must name.
      return one('mission.submitted_for_approval', {missionId: state.missionId, missionRevision: state.revision, artifactHashes: [...(p.artifactHashes as string[])].sort()})
    case 'mission.request_changes':
      return one('mission.changes_requested', {missionId: state.missionId, reason: p.reason})
    case 'mission.approve':
      return approve(state, command, ctx, one)
    case 'mission.cancel':
      return one('mission.cancelled', {missionId: state.missionId, reason: p.reason})
    case 'mission.terminate':
      return one('mission.terminated', {missionId: state.missionId, reason: p.reason})
    case 'mission.assign_coordinator':
      return assignCoordinator(state, command, ctx, eventId)
    default: {
      // mission.renew_coordinator: the epoch check above is the compare-and-set (§7.2).
      const lease = state.mission.coordinator!
      return one('mission.coordinator.renewed', {coordinator: {...lease, leaseExpiresAt: p.leaseExpiresAt}})
    }
  }
}

/**
 * §7.3: the Approval must name exactly what was submitted, signed by the MissionOwner. §14: a child
 * Mission whose approval policy asks for final human approval (its risk policy) needs the root
 * human MissionOwner's Approval of the same revision and Artifact set too, as `rootApproval`; any
 * other Mission takes none.
 */
function approve(state: GroupState, command: DecidedCommand, ctx: DecideContext, one: (kind: string, payload: Record<string, unknown>) => Decision): Decision {
  const a = command.approval
  if (a === undefined) return refuse('INVALID_COMMAND', 'mission.approve needs a verified Approval')
  const child = state.mission.parent !== undefined
  // §14: a child Mission's owner (the Parent Coordinator, an Agent) signs a `child_mission` Approval.
  if (!approves(state, a, state.mission.missionOwner, child ? 'child_mission' : 'mission_final')) {
    return refuse('INVALID_COMMAND', 'the Approval does not match the submitted Mission revision and Artifact set')
  }
  const root = command.rootApproval
  if (!child || state.mission.approvalPolicy.finalHumanApproval !== true) {
    if (root !== undefined) return refuse('INVALID_COMMAND', 'rootApproval is only for a child Mission whose approval policy asks for final human approval (§14)')
    return one('mission.approved', {missionId: state.missionId, approval: a.document})
  }
  if (root === undefined) return refuse('INVALID_COMMAND', "this child Mission's approval policy asks for final human approval: the root human MissionOwner's Approval must come too, as rootApproval (§14)")
  const ancestors = ancestorsOf(state, ctx)
  if (isRefusal(ancestors)) return ancestors
  const rootOwner = ancestors.at(-1)!.state.mission.missionOwner
  if (!approves(state, root, rootOwner, 'child_mission')) {
    return refuse('INVALID_COMMAND', "rootApproval must be the root human MissionOwner's child_mission Approval of the submitted revision and Artifact set")
  }
  return one('mission.approved', {missionId: state.missionId, approval: a.document, rootApproval: root.document})
}

/** A verified Approval by `by` of `kind` that approves exactly the submitted revision and Artifact set. */
function approves(state: GroupState, a: VerifiedApproval, by: Principal, kind: string): boolean {
  const d = a.document
  const submitted = state.mission.submission!
  const approver = d.approver as Principal
  const hashes = d.artifactHashes as string[]
  const sameSet = hashes.length === submitted.artifactHashes.length && hashes.every((h) => submitted.artifactHashes.includes(h))
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
function assignCoordinator(state: GroupState, command: DecidedCommand, ctx: DecideContext, eventId: string): Decision {
  const agentId = command.payload.agentId as string
  const lease = state.mission.coordinator
  if (lease !== null && lease.agentId === agentId) return refuse('INVALID_COMMAND', 'that Agent already holds the Coordinator lease')
  const existing = state.members[agentId]
  if (existing !== undefined && existing.principal.type !== 'agent') return refuse('INVALID_COMMAND', 'a Coordinator is an Agent')
  const coordinator = {agentId, coordinatorEpoch: (lease?.coordinatorEpoch ?? 0) + 1, leaseId: ctx.newId(), leaseExpiresAt: null}
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
