// Message decisions (spec §9): a Message is conversation only and never authority.

import {type DecideContext, type DecidedCommand, type Decision, activeMember, isRejected, reject, revisionConflict} from './decide-common.js'
import {type GroupState, TERMINAL} from './state.js'

export function messagePost(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state === null) return reject('GROUP_NOT_FOUND', 'no such Group')
  const member = activeMember(state, command)
  if (isRejected(member)) return member
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  // §7.1: a terminal Mission is not reopened, not even by conversation; follow-ups get a new Group.
  if (TERMINAL.has(state.mission.state)) return reject('INVALID_STATE_TRANSITION', `the Mission is ${state.mission.state}`)
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
