// decide(state, command, ctx) → Event drafts | rejection: pure and synchronous (ARCHITECTURE
// principle 2). It sees a Command that already passed verification, admission, freshness, the
// epoch shape rules, idempotency, payload schema and role policy (ingress.ts), and decides only
// what the Group's current state allows. Everything non-deterministic (time, IDs) comes from ctx.

import type {ErrorCode} from '../errors.js'
import type {Principal} from '../signing/profiles.js'
import type {GroupState} from './state.js'

/** The Command fields the decider reads (a verified Command document). */
export interface DecidedCommand {
  actionId: string
  actor: Principal
  kind: string
  groupId?: string
  membershipEpoch?: number
  expectedRevision?: number
  payload: Record<string, unknown>
}

export interface DecideContext {
  /** Trusted acceptance time, RFC 3339 UTC with uppercase Z. */
  acceptedAt: string
  /** Fresh identifier (URI) for Events, Memberships, Conversations, Messages, leases. */
  newId(): string
}

/** An Event before the authority numbers and signs it. */
export interface EventDraft {
  eventId: string
  kind: string
  conversationId?: string
  payload: Record<string, unknown>
}

export type Decision = {events: EventDraft[]} | {error: ErrorCode; reason: string}

const reject = (error: ErrorCode, reason: string): Decision => ({error, reason})

export function decide(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  switch (command.kind) {
    case 'mission.create':
      return missionCreate(state, command, ctx)
    case 'message.post':
      return messagePost(state, command, ctx)
    default:
      return reject('INVALID_COMMAND', `this authority does not implement ${command.kind} yet`)
  }
}

/** §15.3: a given expectedRevision must equal the current aggregate revision (0 for no Group). */
function revisionConflict(state: GroupState | null, command: DecidedCommand): Decision | null {
  if (command.expectedRevision === undefined) return null
  const current = state?.revision ?? 0
  return command.expectedRevision === current ? null : reject('REVISION_CONFLICT', `expected revision ${command.expectedRevision}, current ${current}`)
}

function missionCreate(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state !== null) return reject('INVALID_STATE_TRANSITION', 'the Group already exists')
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  const p = command.payload
  if (p.groupId !== command.groupId) return reject('INVALID_COMMAND', 'payload.groupId differs from the Command groupId')
  if (command.actor.type !== 'human') return reject('AUTH_FORBIDDEN', 'a root MissionOwner is human (§7.1)')

  const groupId = command.groupId
  const missionId = p.missionId as string
  const at = ctx.acceptedAt
  const owner: Principal = {type: command.actor.type, id: command.actor.id}
  const coordinator: Principal = {type: 'agent', id: p.coordinatorAgentId as string}
  // Event IDs first, in Event order, so a deterministic generator gives readable test IDs.
  const createdId = ctx.newId()
  const assignedId = ctx.newId()
  const membership = (member: Principal, role: 'mission_owner' | 'coordinator') => ({
    membershipId: ctx.newId(),
    missionId,
    groupId,
    member,
    role,
    state: 'active',
    membershipEpoch: 1,
    scopes: ['group.full'],
    // §8: MissionOwner and Coordinator Memberships have complete Group visibility.
    visibilityStartSequence: 1,
    grantedAt: at,
    activatedAt: at,
  })
  const conversationId = ctx.newId()
  const created: EventDraft = {
    eventId: createdId,
    kind: 'mission.created',
    conversationId,
    payload: {
      mission: {
        missionId,
        groupId,
        state: 'active',
        missionOwner: owner,
        objective: p.objective,
        definitionOfDone: p.definitionOfDone,
        deadline: p.deadline,
        budget: p.budget,
        approvalPolicy: p.approvalPolicy,
        createdAt: at,
      },
      conversationId,
      membership: membership(owner, 'mission_owner'),
    },
  }
  const assigned: EventDraft = {
    eventId: assignedId,
    kind: 'mission.coordinator.assigned',
    payload: {
      // §7.2: the lease's Session Epoch, expiry and renewal policy arrive with sessions and
      // mission.renew_coordinator; epoch 1 and a stable lease ID are fixed here.
      coordinator: {agentId: coordinator.id, coordinatorEpoch: 1, leaseId: ctx.newId()},
      membership: membership(coordinator, 'coordinator'),
    },
  }
  return {events: [created, assigned]}
}

function messagePost(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state === null) return reject('GROUP_NOT_FOUND', 'no such Group')
  const member = state.members[command.actor.id]
  if (member === undefined || !member.active || member.principal.type !== command.actor.type) {
    return reject('MEMBERSHIP_REQUIRED', 'the actor has no active Membership in this Group')
  }
  // §8: an older epoch is fenced (MEMBERSHIP_STALE); an epoch never issued names no Membership.
  const epoch = command.membershipEpoch ?? 0
  if (epoch < member.membershipEpoch) return reject('MEMBERSHIP_STALE', `membershipEpoch ${epoch}, current ${member.membershipEpoch}`)
  if (epoch > member.membershipEpoch) return reject('MEMBERSHIP_REQUIRED', `membershipEpoch ${epoch} was never issued`)
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  const p = command.payload
  const conversationId = (p.conversationId as string | undefined) ?? state.conversationId
  // Only the Group-level Conversation exists until WorkItems and restricted Conversations do.
  if (conversationId !== state.conversationId) return reject('INVALID_COMMAND', 'unknown conversationId')

  const eventId = ctx.newId()
  const message: Record<string, unknown> = {
    messageId: ctx.newId(),
    missionId: state.missionId,
    groupId: state.groupId,
    conversationId,
    author: {type: command.actor.type, id: command.actor.id},
    kind: 'message',
    // §4.2/§9: a Message is conversation only and never authority.
    authority: false,
    content: [{type: 'text', text: p.text}],
    committedAt: ctx.acceptedAt,
  }
  if (p.references !== undefined) message.references = p.references
  return {events: [{eventId, kind: 'message.posted', conversationId, payload: {message}}]}
}
