// Message decisions (spec §9): a Message is conversation only and never authority. Accepted
// Messages are immutable (§9.1, last paragraph): a correction, retraction or redaction is a new
// Event that names the original Message ID; the original Event bytes are never touched. The
// authority keeps a minimal Message table (store/message-table.ts) to judge those follow-ups; ingress
// looks the named Message up before deciding and passes it in (DecideContext.message), so the
// decider stays pure and the Group state does not hold every Message.

import type {DecidedCommand} from './command.js'
import {type DecideContext, type Decision, refuse} from './common.js'
import {type Handler, type Handlers, type InGroup, live} from './gate.js'
import {TERMINAL} from '../model/state.js'

/** The WorkItem whose dedicated Conversation this is (§9), if any. */
const workItemOf = (state: InGroup['state'], conversationId: string | undefined) =>
  conversationId === undefined
    ? undefined
    : Object.values(state.workItems).find((w) => w.conversationId === conversationId)?.workItemId

function messagePost({state}: InGroup, command: DecidedCommand<'message.post'>, ctx: DecideContext): Decision {
  const p = command.payload
  const conversationId = p.conversationId ?? state.conversationId
  // §9: the Group's planning Conversation, or the dedicated Conversation every WorkItem owns (a
  // Worker's questions, schedule disclosure and offer declines go there). Restricted
  // Conversations do not exist yet.
  if (conversationId !== state.conversationId && workItemOf(state, conversationId) === undefined)
    return refuse('INVALID_COMMAND', `no Conversation ${conversationId} in this Group`)

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
  'message.correct': {event: 'message.corrected', messageKind: 'correction', verb: 'correct'},
  'message.retract': {event: 'message.retracted', messageKind: 'retraction', verb: 'retract'},
  'message.redact': {event: 'message.redacted', messageKind: 'redaction', verb: 'redact'},
} as const

type FollowUpKind = keyof typeof FOLLOW_UP

/**
 * message.correct / message.retract: only the author, while the Mission is live, and never after
 * a retraction (a retracted Message has no latest form left to correct or retract).
 * message.redact: a policy act (§9.1 "Redaction requires an auditable policy reason"), so the
 * author cannot use it to hide their own words — the MissionOwner or an Organization policy
 * service (`redactors`, authorized in ingress) redacts, naming the policy and the reason, also in
 * a terminal Mission (the audit record outlives the Mission).
 *
 * The Mission state is checked after the target lookup (a missing Message is INVALID_COMMAND in
 * any state), so the gate leaves it to the handler.
 */
const followUp = <K extends FollowUpKind>(kind: K): Handler<K> => ({
  on: 'group',
  gate:
    kind === 'message.redact'
      ? {
          membership: 'active',
          services: 'policy',
          who: {by: 'owner', reason: 'redaction is a MissionOwner or Organization policy act'},
        }
      : {
          membership: 'active',
          who: {
            by: 'rule',
            check: (_, command, ctx) => {
              const target = ctx.message ?? undefined
              const author =
                target === undefined ||
                (target.author.type === command.actor.type && target.author.id === command.actor.id)
              return author ? null : refuse('AUTH_FORBIDDEN', `only the author may ${FOLLOW_UP[kind].verb} a Message`)
            },
          },
        },
  decide: ({state}, command, ctx) => {
    const p: DecidedCommand<FollowUpKind>['payload'] = command.payload
    const redaction = kind === 'message.redact'
    const target = ctx.message
    if (target === undefined || target === null) return refuse('INVALID_COMMAND', 'no such Message in this Group')
    if (!redaction && TERMINAL.has(state.mission.state))
      return refuse('INVALID_STATE_TRANSITION', `the Mission is ${state.mission.state}`)
    if (redaction ? target.redacted : target.status === 'retracted') {
      return refuse('INVALID_STATE_TRANSITION', `the Message is already ${redaction ? 'redacted' : 'retracted'}`)
    }

    const {event, messageKind} = FOLLOW_UP[kind]
    const text = 'text' in p ? p.text : `[${messageKind}] ${p.reason}`
    const message = {
      messageId: ctx.newId(),
      missionId: state.missionId,
      groupId: state.groupId,
      conversationId: target.conversationId,
      author: {type: command.actor.type, id: command.actor.id},
      kind: messageKind,
      authority: false,
      targetMessageId: p.messageId,
      content: [{type: 'text', text}],
      reason: p.reason,
      committedAt: ctx.acceptedAt,
    }
    const payload: Record<string, unknown> = {targetMessageId: p.messageId, message}
    if ('policy' in p) payload.policy = p.policy
    return {events: [{eventId: ctx.newId(), kind: event, conversationId: target.conversationId, payload}]}
  },
})

export const MESSAGE_HANDLERS: Handlers = {
  // §7.1: a terminal Mission is not reopened, not even by conversation; follow-ups get a new Group.
  'message.post': {
    on: 'group',
    gate: {
      // §8/§10.3: a just-in-time candidate may speak in the Conversation of the WorkItem it was
      // offered (a question, or why it declines: v0.1 has no decline Command), and nowhere else.
      membership: {provisionalFor: (p, state) => workItemOf(state, p.conversationId) ?? ''},
      who: {by: 'member'},
      mission: live((_, s) => `the Mission is ${s}`),
    },
    decide: messagePost,
  },
  'message.correct': followUp('message.correct'),
  'message.retract': followUp('message.retract'),
  'message.redact': followUp('message.redact'),
}
