// apply() for the Group-level cooperation Events (engineer A's kinds): Messages (no state), the Artifact
// index, Delegation Grants, Cooperation Override Grants and their consumption, rate-limit notices,
// and the per-actor rate buckets. Called from apply/index.ts, so live state and replay share it. Every
// function returns a new object; nothing is mutated in place.

import type {Principal} from '../../signing/profiles.js'
import {
  LIMIT_NOTICE,
  OVERRIDE_CONSUMED,
  type ActorRates,
  type DelegationGrantView,
  type OverrideGrantView,
} from '../model/cooperation-state.js'
import type {EventOf, KnownEvent} from '../model/events.js'
import type {GroupState} from '../model/state.js'
import {MwpError} from '../../errors.js'

/** Conversation-like and notice Events: they take a sequence but leave the aggregate revision alone. */
export const COOPERATION_REVISION_NEUTRAL: readonly string[] = [
  'message.corrected',
  'message.retracted',
  'message.redacted',
  LIMIT_NOTICE,
  OVERRIDE_CONSUMED,
]

/** ApplyError's failure, declared here because apply/index.ts imports this module. */
class CooperationApplyError extends MwpError<'event-unfoldable'> {
  constructor(message: string) {
    super('event-unfoldable', message)
  }
}

const principal = (p: Principal): Principal => ({type: p.type, id: p.id})

/**
 * message.posted / corrected / retracted / redacted leave the Group state alone: the Message table
 * lives in the store (store/message-table.ts), written in the same atomic append as these Events,
 * so the state no longer grows with the number of Messages (issue #15). Their rate buckets are
 * trackCooperation's. The decider judged the follow-up's target from the table (decide/message.ts).
 */
export function messageEvent(next: GroupState): GroupState {
  return next
}

export function artifactPublished(next: GroupState, {payload: p}: EventOf<'artifact.published'>): GroupState {
  const a = p.artifact
  const entry = {
    contentHash: a.contentHash,
    workItemId: a.workItemId,
    producerAgentId: a.producer.agentId,
    publishedAt: p.publishedAt,
  }
  return {...next, artifacts: {...next.artifacts, [a.artifactId]: entry}}
}

export function delegationGranted(next: GroupState, event: EventOf<'membership.delegation.granted'>): GroupState {
  const g = event.payload.grant
  const view: DelegationGrantView = {
    grantId: g.grantId,
    granteeAgentId: g.granteeAgentId,
    targetWorkItemId: g.targetWorkItemId,
    allowedCapabilities: g.allowedCapabilities.map((c) => ({id: c.id, minVersion: c.minVersion})),
    budgetCeilings: {...g.budgetCeilings},
    maxDescendantDepth: g.maxDescendantDepth,
    granteeMembershipEpoch: g.granteeMembershipEpoch,
    coordinatorEpoch: g.coordinatorEpoch,
    issuedBy: g.issuedBy,
    grantedAt: g.grantedAt,
    expiresAt: g.expiresAt,
    subtree: {[g.targetWorkItemId]: 0},
    charged: [],
  }
  return {...next, delegations: {...next.delegations, [view.grantId]: view}}
}

export function overrideGranted(next: GroupState, event: EventOf<'policy.cooperation_override.granted'>): GroupState {
  const g = event.payload.grant
  const view: OverrideGrantView = {
    grantId: g.grantId,
    policy: g.policy,
    beneficiary: principal(g.beneficiary),
    targetKind: g.targetKind,
    targetActionId: g.targetActionId,
    reason: g.reason,
    approver: principal(g.approver),
    grantedAt: g.grantedAt,
    expiresAt: g.expiresAt,
    consumedBy: null,
  }
  return {...next, overrideGrants: {...next.overrideGrants, [view.grantId]: view}}
}

/** Throws for a grant that is unknown or already consumed: one-shot (§20). */
export function overrideConsumed(next: GroupState, {payload: p}: EventOf<typeof OVERRIDE_CONSUMED>): GroupState {
  const id = p.grantId
  const grant = next.overrideGrants?.[id]
  if (grant === undefined || grant.consumedBy !== null) {
    throw new CooperationApplyError(`override grant ${id} is unknown or already consumed`)
  }
  const consumed = {...grant, consumedBy: {actionId: p.targetActionId, eventId: p.targetEventId}}
  return {...next, overrideGrants: {...next.overrideGrants, [id]: consumed}}
}

/** A notification to the Coordinator; the counts it reports are already in the rate buckets. */
export function limitNotice(next: GroupState): GroupState {
  return next
}

// ---------------------------------------------------------------------------------------------
// §20 rate buckets. Every rated Event adds 1 to its actor's bucket for the minute of its
// occurredAt (the authority's acceptance time, signed into the Event), so replay reproduces the
// counts exactly. Buckets older than RATE_HORIZON_MINUTES behind the newest are dropped, which
// bounds the state per actor; a configured window may not exceed the horizon.

export const RATE_HORIZON_MINUTES = 60

/** Which rate bucket an Event kind counts in. */
export const RATED_EVENTS: Readonly<Record<string, keyof ActorRates>> = {
  'message.posted': 'messages',
  'message.corrected': 'messages',
  'work.proposed': 'proposals',
}

export const minuteOf = (at: string): number => Math.floor(Date.parse(at) / 60_000)

/** The cross-cutting bookkeeping every Event passes through: rate buckets and Delegation Grant use. */
export function trackCooperation(next: GroupState, event: KnownEvent): GroupState {
  return trackDelegation(trackRates(next, event), event)
}

/**
 * §9.1: a work.authorize / work.offer accepted under a Grant carries {delegation: {grantId,
 * parentWorkItemId?}} (decide/delegation.ts markWorkAuthority): the WorkItem is charged against
 * the Grant's ceilings, and a newly authorized one joins its subtree one level below its parent.
 */
function trackDelegation(next: GroupState, event: KnownEvent): GroupState {
  if (event.kind !== 'work.authorized' && event.kind !== 'work.offer.created') return next
  const d = event.payload.delegation
  if (d === undefined) return next
  const grant = next.delegations?.[d.grantId]
  if (grant === undefined) throw new CooperationApplyError(`${event.kind} under unknown Delegation Grant ${d.grantId}`)
  const workItemId = event.kind === 'work.authorized' ? event.payload.workItem.workItemId : event.payload.workItemId
  const subtree =
    d.parentWorkItemId !== undefined
      ? {...grant.subtree, [workItemId]: (grant.subtree[d.parentWorkItemId] ?? 0) + 1}
      : grant.subtree
  const charged = grant.charged.includes(workItemId) ? grant.charged : [...grant.charged, workItemId]
  return {...next, delegations: {...next.delegations, [d.grantId]: {...grant, subtree, charged}}}
}

function trackRates(next: GroupState, event: {kind: string; actor?: {id: string}; occurredAt?: string}): GroupState {
  const bucket = RATED_EVENTS[event.kind]
  if (bucket === undefined || event.actor === undefined || event.occurredAt === undefined) return next
  const minute = minuteOf(event.occurredAt)
  const rates = next.rates?.[event.actor.id] ?? {}
  const kept: Record<string, number> = {}
  for (const [m, n] of Object.entries(rates[bucket] ?? {})) if (Number(m) > minute - RATE_HORIZON_MINUTES) kept[m] = n
  kept[String(minute)] = (kept[String(minute)] ?? 0) + 1
  return {...next, rates: {...next.rates, [event.actor.id]: {...rates, [bucket]: kept}}}
}
