// §20 rate and runaway controls, and the one-shot Cooperation Override Grant that lets exactly one
// cited Command past an exceeded limit. Configured by Organization policy
// (AuthorityPolicy.limits); with no `limits` nothing is limited.
//
// Limits (per actor, per Group):
//   message-rate      message.post + message.correct per sliding window of whole minutes
//   proposal-rate     work.propose per window
//   owned-work-items  queued + active WorkItems an Agent owns, checked at work.accept_offer
//   group-work-items  unfinished WorkItems of the whole Group (§20 "active and queued
//                     WorkItems": open, offered, queued, active, blocked, submitted), checked at
//                     work.authorize, where new work enters the Group
//   delegation-depth  the maxDescendantDepth a membership.grant_delegation may confer (§9.1
//                     "Descendant depth MUST satisfy both the Grant maximum and Organization
//                     cooperation policy": the Grant maximum is bounded here at issuance)
// Each has an optional soft threshold: the Command that reaches it is accepted and the authority
// appends a notice Event for the Coordinator (LIMIT_NOTICE) in the same append — no silent
// discard, no Coordinator-side polling. Above the hard limit the Command is RATE_LIMITED
// (retryable: the window slides), unless it cites a valid override grant for that policy.
//
// Counting is pure and replay-safe: the counts come from the Group state's rate buckets, which
// apply() fills from each Event's signed occurredAt (apply/cooperation.ts), and "now" is the
// acceptance time the Events will carry. The gate runs after decide() accepted the Command, so a
// Command that would be rejected anyway is neither counted nor limited and consumes no grant.

import {compareTimestampText} from '../../json/timestamp.js'
import type {Principal} from '../../signing/profiles.js'
import {RATE_HORIZON_MINUTES, minuteOf} from '../apply/cooperation.js'
import {LIMIT_NOTICE, OVERRIDE_CONSUMED} from '../model/cooperation-state.js'
import type {OverrideGrantView} from '../model/cooperation-state.js'
import {type EventDraft, type Refusal, refuse} from './common.js'
import {type GroupState, UNFINISHED_WORK} from '../model/state.js'

export interface RateLimit {
  /** Accepted, plus a notice Event to the Coordinator when a Command reaches this count. */
  soft?: number
  /** A Command that would exceed this count is RATE_LIMITED. */
  hard: number
  /** Sliding window in whole minutes, 1 .. RATE_HORIZON_MINUTES. */
  windowMinutes: number
}

export interface CountLimit {
  soft?: number
  hard: number
}

/** AuthorityPolicy.limits: Organization policy limits (§20). */
export interface CooperationLimits {
  messageRate?: RateLimit
  proposalRate?: RateLimit
  ownedWorkItems?: CountLimit
  groupWorkItems?: CountLimit
  delegationDepth?: CountLimit
}

/** The policy names a Cooperation Override Grant can name, and the Command kinds each limits. */
export const LIMIT_POLICIES: Readonly<Record<string, readonly string[]>> = {
  'message-rate': ['message.post', 'message.correct'],
  'proposal-rate': ['work.propose'],
  'owned-work-items': ['work.accept_offer'],
  'group-work-items': ['work.authorize'],
  'delegation-depth': ['membership.grant_delegation'],
  // §14: a child beyond the Organization's maxMissionDepth (checked in decide/child.ts).
  'mission-depth': ['mission.create_child'],
}

const policyFor = (kind: string): string | null =>
  Object.entries(LIMIT_POLICIES).find(([, kinds]) => kinds.includes(kind))?.[0] ?? null

/** The limits that count (no window). */
const COUNT_LIMITS: ReadonlySet<string> = new Set(['ownedWorkItems', 'groupWorkItems', 'delegationDepth'])

/** Rejects a limits configuration the counting cannot honour (called once by the Authority). */
export function checkLimits(limits: CooperationLimits | undefined): void {
  const whole = (n: unknown, min: number) => typeof n === 'number' && Number.isSafeInteger(n) && n >= min
  for (const [name, l] of Object.entries(limits ?? {}) as [string, Partial<RateLimit> | undefined][]) {
    if (l === undefined) continue
    if (!whole(l.hard, 0) || (l.soft !== undefined && !(whole(l.soft, 1) && l.soft <= l.hard!)))
      throw new Error(`limits.${name}: need 0 <= soft <= hard`)
    if (!COUNT_LIMITS.has(name) && !(whole(l.windowMinutes, 1) && l.windowMinutes! <= RATE_HORIZON_MINUTES)) {
      throw new Error(`limits.${name}.windowMinutes must be 1..${RATE_HORIZON_MINUTES}`)
    }
  }
}

/** The actor's count for `policy` before this Command, and the limit that applies. */
function usage(
  state: GroupState,
  command: GatedCommand,
  policy: string,
  limits: CooperationLimits,
  at: string,
): {count: number; limit: CountLimit & {windowMinutes?: number}} | null {
  const actor = command.actor
  if (policy === 'mission-depth') return null // decide/child.ts enforces it; the gate only consumes the grant
  if (policy === 'delegation-depth') {
    if (limits.delegationDepth === undefined) return null
    // "count before this Command" such that count + 1 is the depth the Grant would confer. The
    // payload schema requires the depth; without one there is nothing to count.
    const depth = command.payload?.maxDescendantDepth
    if (typeof depth !== 'number') return null
    return {count: depth - 1, limit: limits.delegationDepth}
  }
  if (policy === 'group-work-items') {
    if (limits.groupWorkItems === undefined) return null
    return {
      count: Object.values(state.workItems).filter((w) => UNFINISHED_WORK.has(w.state)).length,
      limit: limits.groupWorkItems,
    }
  }
  if (policy === 'owned-work-items') {
    if (limits.ownedWorkItems === undefined) return null
    const count = Object.values(state.workItems).filter(
      (w) => w.owner?.agentId === actor.id && (w.state === 'queued' || w.state === 'active'),
    ).length
    return {count, limit: limits.ownedWorkItems}
  }
  const limit = policy === 'message-rate' ? limits.messageRate : limits.proposalRate
  if (limit === undefined) return null
  const buckets = state.rates?.[actor.id]?.[policy === 'message-rate' ? 'messages' : 'proposals'] ?? {}
  const now = minuteOf(at)
  let count = 0
  for (const [m, n] of Object.entries(buckets)) if (Number(m) > now - limit.windowMinutes) count += n
  return {count, limit}
}

export interface GatedCommand {
  actionId: string
  actor: Principal
  kind: string
  payload?: Record<string, unknown>
  cooperationOverrideGrantId?: string
}

/**
 * §20: the cited grant must exist, be unexpired and unconsumed, and exactly match this Group's
 * Mission and Group (it lives in this Group's state, issued for them), the actor, the kind and the
 * Action ID. An unknown grant is an invalid reference (INVALID_COMMAND); every other failed use —
 * expired, already consumed, someone else's, another Command's — is AUTH_FORBIDDEN.
 */
function citedGrant(state: GroupState, command: GatedCommand, at: string): OverrideGrantView | Refusal | null {
  const id = command.cooperationOverrideGrantId
  if (id === undefined) return null
  const grant = state.overrideGrants?.[id]
  if (grant === undefined) return refuse('INVALID_COMMAND', 'no such Cooperation Override Grant in this Group')
  if (grant.consumedBy !== null) return refuse('AUTH_FORBIDDEN', 'the Cooperation Override Grant was already used')
  if (compareTimestampText(at, grant.expiresAt) >= 0)
    return refuse('AUTH_FORBIDDEN', 'the Cooperation Override Grant expired') // full precision (§2)
  const same =
    grant.beneficiary.type === command.actor.type &&
    grant.beneficiary.id === command.actor.id &&
    grant.targetKind === command.kind &&
    grant.targetActionId === command.actionId
  if (!same) return refuse('AUTH_FORBIDDEN', 'the Cooperation Override Grant is for another actor or Command')
  return grant
}

/**
 * Runs after decide() accepted `command` with `events`: the Events to append (the decided ones,
 * plus a soft-limit notice and/or the grant consumption), or the refusal.
 */
export function cooperationGate(
  state: GroupState,
  command: GatedCommand,
  events: EventDraft[],
  limits: CooperationLimits | undefined,
  ctx: {acceptedAt: string; newId(): string},
): {events: EventDraft[]} | Refusal {
  const grant = citedGrant(state, command, ctx.acceptedAt)
  if (grant !== null && 'error' in grant) return grant
  const policy = policyFor(command.kind)
  // The grant must name the policy that limits this Command; it is consumed when the Command is
  // accepted, even if the window has slid below the limit since the grant was requested (the
  // escalation was approved for exactly this Action ID, and one-shot means it cannot be kept).
  if (grant !== null && grant.policy !== policy)
    return refuse('AUTH_FORBIDDEN', 'the Cooperation Override Grant is for another policy')

  const out = [...events]
  const used = policy === null || limits === undefined ? null : usage(state, command, policy, limits, ctx.acceptedAt)
  if (used !== null) {
    const after = used.count + 1
    if (after > used.limit.hard && grant === null)
      return refuse('RATE_LIMITED', `${policy}: ${used.count} of ${used.limit.hard}`)
    if (used.limit.soft !== undefined && after === used.limit.soft) {
      out.push({
        eventId: ctx.newId(),
        kind: LIMIT_NOTICE,
        payload: {
          policy,
          actor: {type: command.actor.type, id: command.actor.id},
          count: after,
          softLimit: used.limit.soft,
          hardLimit: used.limit.hard,
          ...(used.limit.windowMinutes !== undefined ? {windowMinutes: used.limit.windowMinutes} : {}),
          notify: state.mission.coordinator === null ? [] : [{type: 'agent', id: state.mission.coordinator.agentId}],
        },
      })
    }
  }
  if (grant !== null) {
    out.push({
      eventId: ctx.newId(),
      kind: OVERRIDE_CONSUMED,
      payload: {
        grantId: grant.grantId,
        policy: grant.policy,
        targetKind: command.kind,
        targetActionId: command.actionId,
        targetEventId: events[0]!.eventId,
      },
    })
  }
  return {events: out}
}
