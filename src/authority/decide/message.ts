// Message decisions (spec §9): a Message is conversation only and never authority. Accepted
// Messages are immutable (§9.1, last paragraph): a correction, retraction or redaction is a new
// Event that names the original Message ID; the original Event bytes are never touched. The
// authority keeps a minimal Message index (cooperation-state.ts) to judge those follow-ups.

import {messageEntry} from '../model/message-index.js'
import {type DecideContext, type DecidedCommand, type Decision, activeMember, isOwner, isRefusal, refuse, revisionConflict} from './common.js'
import {type GroupState, TERMINAL} from '../model/state.js'

export const MESSAGE_FOLLOW_UP_KINDS: ReadonlySet<string> = new Set(['message.correct', 'message.retract', 'message.redact'])

export function messagePost(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state === null) return refuse('GROUP_NOT_FOUND', 'no such Group')
  const member = activeMember(state, command)
  if (isRefusal(member)) return member
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  // §7.1: a terminal Mission is not reopened, not even by conversation; follow-ups get a new Group.
  if (TERMINAL.has(state.mission.state)) return refuse('INVALID_STATE_TRANSITION', `the Mission is ${state.mission.state}`)
  const p = command.payload
  const conversationId = (p.conversationId as string | undefined) ?? state.conversationId
  // Only the Group-level Conversation exists until WorkItems and restricted Conversations do.
  if (conversationId !== state.conversationId) return refuse('INVALID_COMMAND', 'unknown conversationId')

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

const FOLLOW_UP = {
  'message.correct': {event: 'message.corrected', messageKind: 'correction'},
  'message.retract': {event: 'message.retracted', messageKind: 'retraction'},
  'message.redact': {event: 'message.redacted', messageKind: 'redaction'},
} as const

/**
 * message.correct / message.retract: only the author, while the Mission is live, and never after
 * a retraction (a retracted Message has no latest form left to correct or retract).
 * message.redact: a policy act (§9.1 "Redaction requires an auditable policy reason"), so the
 * author cannot use it to hide their own words — the MissionOwner or an Organization policy
 * service (`redactors`, authorized in ingress) redacts, naming the policy and the reason, also in
 * a terminal Mission (the audit record outlives the Mission).
 */
export function messageFollowUp(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state === null) return refuse('GROUP_NOT_FOUND', 'no such Group')
  const k = command.kind as keyof typeof FOLLOW_UP
  const redaction = k === 'message.redact'
  // A service reaching the decider was authorized by Organization policy in ingress; it holds no Membership.
  const policyService = redaction && command.actor.type === 'service'
  if (!policyService) {
    const member = activeMember(state, command)
    if (isRefusal(member)) return member
  }
  const p = command.payload
  const messageId = p.messageId as string
  const target = messageEntry(state.messages, messageId)
  if (redaction) {
    if (!policyService && !isOwner(state, command.actor)) return refuse('AUTH_FORBIDDEN', 'redaction is a MissionOwner or Organization policy act')
  } else if (target !== undefined && (target.author.type !== command.actor.type || target.author.id !== command.actor.id)) {
    return refuse('AUTH_FORBIDDEN', `only the author may ${k === 'message.correct' ? 'correct' : 'retract'} a Message`)
  }
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  if (target === undefined) return refuse('INVALID_COMMAND', 'no such Message in this Group')
  if (!redaction && TERMINAL.has(state.mission.state)) return refuse('INVALID_STATE_TRANSITION', `the Mission is ${state.mission.state}`)
  if (redaction ? target.redacted : target.status === 'retracted') {
    return refuse('INVALID_STATE_TRANSITION', `the Message is already ${redaction ? 'redacted' : 'retracted'}`)
  }

  const {event, messageKind} = FOLLOW_UP[k]
  const text = k === 'message.correct' ? (p.text as string) : `[${messageKind}] ${p.reason as string}`
  const message = {
    messageId: ctx.newId(),
    missionId: state.missionId,
    groupId: state.groupId,
    conversationId: target.conversationId,
    author: {type: command.actor.type, id: command.actor.id},
    kind: messageKind,
    authority: false,
    targetMessageId: messageId,
    content: [{type: 'text', text}],
    reason: p.reason as string,
    committedAt: ctx.acceptedAt,
  }
  const payload: Record<string, unknown> = {targetMessageId: messageId, message}
  if (redaction) payload.policy = p.policy
  return {events: [{eventId: ctx.newId(), kind: event, conversationId: target.conversationId, payload}]}
}
