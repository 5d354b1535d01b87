// Delegated work authority (spec §9.1, §20; ACCEPTANCE E12, M2).
//
// membership.grant_delegation: only the current Coordinator (under its lease epoch) issues a
// Delegation Grant to an Agent holding an active work_delegate Membership. The Grant's scope must
// be a subset of what the Coordinator delegates from: each budget ceiling within the target
// WorkItem's contract budget (or, for a dimension the contract leaves open, the Mission budget),
// in the same currency. Delegating to oneself is the degenerate cycle of §20 (authority flowing
// back to its source); the only issuer is the Coordinator and Grants are non-transferable, so no
// longer delegation chain can form.
//
// workAuthority: who may issue work.authorize / work.offer — the current Coordinator; the
// MissionOwner as an explicit, recorded emergency override (payload.ownerOverride); or the grantee
// of a persisted Grant it cites (payload.delegationGrantId), re-validated at every use.

import {type Budget, DIMENSIONS, ZERO_USAGE, addUsage, limitsAsUsage, overflow} from '../model/budget.js'
import {compareTimestampText} from '../../json/timestamp.js'
import type {Principal} from '../../signing/profiles.js'
import type {DecidedCommand, OneOf} from './command.js'
import {
  type DecideContext,
  type Decision,
  type EventDraft,
  type Refusal,
  coordinatorCheck,
  isOwner,
  refuse,
} from './common.js'
import {type Handlers, type InGroup, live} from './gate.js'
import type {DelegationGrantView} from '../model/cooperation-state.js'
import type {WorkContract} from '../model/payloads.generated.js'
import type {GroupState} from '../model/state.js'

/** The WorkItem states that end a Grant's target (§9.1). */
const DEAD_TARGET = new Set(['failed', 'cancelled', 'verified'])

export const DELEGATION_HANDLERS: Handlers = {
  'membership.grant_delegation': {
    on: 'group',
    gate: {membership: 'active', who: {by: 'coordinator'}, mission: live((_, s) => `the Mission is ${s}`)},
    decide: grantDelegation,
  },
}

function grantDelegation(
  {state}: InGroup,
  command: DecidedCommand<'membership.grant_delegation'>,
  ctx: DecideContext,
): Decision {
  const p = command.payload
  const grantId = p.grantId
  const granteeId = p.granteeAgentId
  if (state.delegations?.[grantId] !== undefined)
    return refuse('INVALID_STATE_TRANSITION', 'that Grant ID is already issued')
  if (granteeId === command.actor.id)
    return refuse('INVALID_COMMAND', 'cyclic delegation: the Coordinator cannot delegate to itself')
  const grantee = state.members[granteeId]
  if (
    grantee === undefined ||
    !grantee.active ||
    grantee.principal.type !== 'agent' ||
    grantee.role !== 'work_delegate'
  ) {
    return refuse('INVALID_COMMAND', 'the grantee needs an active work_delegate Membership')
  }
  const target = state.workItems[p.targetWorkItemId]
  if (target === undefined) return refuse('INVALID_COMMAND', 'no such target WorkItem')
  if (DEAD_TARGET.has(target.state)) return refuse('INVALID_STATE_TRANSITION', `the target WorkItem is ${target.state}`)
  if (compareTimestampText(p.expiresAt, ctx.acceptedAt) <= 0)
    return refuse('INVALID_COMMAND', 'the Grant would already be expired') // full precision (§2)
  const ceilings = p.budgetCeilings
  const wider = widerThan(ceilings, target.contract.budget as Budget, state.mission.budget as Budget)
  if (wider) return refuse('INVALID_COMMAND', `delegation scope is not a subset: ${wider}`)

  const grant = {
    grantId,
    granteeAgentId: granteeId,
    missionId: state.missionId,
    groupId: state.groupId,
    targetWorkItemId: target.workItemId,
    allowedCapabilities: p.allowedCapabilities.map((c) => ({id: c.id, minVersion: c.minVersion})),
    budgetCeilings: ceilings,
    maxDescendantDepth: p.maxDescendantDepth,
    granteeMembershipEpoch: grantee.membershipEpoch,
    coordinatorEpoch: command.coordinatorEpoch!, // the gate's coordinatorCheck required it
    issuedBy: command.actor.id,
    grantedAt: ctx.acceptedAt,
    expiresAt: p.expiresAt,
  }
  return {events: [{eventId: ctx.newId(), kind: 'membership.delegation.granted', payload: {grant}}]}
}

/** The first ceiling wider than the scope it is delegated from, or null. */
function widerThan(ceilings: Budget, contract: Budget | undefined, mission: Budget | undefined): string | null {
  for (const [, d] of DIMENSIONS) {
    const from = contract?.[d] !== undefined ? contract : mission
    const bound = from?.[d]
    if (bound === undefined) continue
    if (d === 'financialLimit' && from?.currency !== undefined && from.currency !== ceilings.currency)
      return `currency ${String(ceilings.currency)} differs from ${from.currency}`
    if ((ceilings[d] ?? 0) > bound) return `${d} ${String(ceilings[d])} exceeds ${bound}`
  }
  return null
}

// ---------------------------------------------------------------------------------------------
// Use: work.authorize and work.offer

const semverAtLeast = (version: string, min: string): boolean => {
  const parse = (v: string) => v.split(/[-+]/)[0]!.split('.').map(Number)
  const [a, b] = [parse(version), parse(min)]
  for (let i = 0; i < 3; i++) if (a[i]! !== b[i]!) return a[i]! > b[i]!
  return true
}

/** The contract the Command authorizes or offers (null when authorize() will refuse it anyway). */
function contractOf(state: GroupState, command: WorkAuthorCommand): Record<string, unknown> | WorkContract | null {
  if (command.kind === 'work.offer') return state.workItems[command.payload.workItemId]?.contract ?? null
  const p = command.payload
  if (p.proposalId !== undefined) return state.proposals[p.proposalId]?.contract ?? null
  return p.contract ?? null
}

type WorkAuthorCommand = OneOf<'work.authorize' | 'work.offer'>

/** §9.1: the Grant-subtree WorkItem a delegated work.authorize links the new one under. */
const parentOf = (command: WorkAuthorCommand) =>
  command.kind === 'work.authorize' ? command.payload.parentWorkItemId : undefined

/**
 * §9.1: the Coordinator, the MissionOwner's explicit emergency override, or a Grant holder citing
 * its Grant. Returns the refusal, or null when the actor may author this WorkItem Command.
 */
export function workAuthority(state: GroupState, command: WorkAuthorCommand, at: string): Refusal | null {
  const p = command.payload
  const parentWorkItemId = parentOf(command)
  if (p.ownerOverride !== undefined) {
    return isOwner(state, command.actor)
      ? null
      : refuse('AUTH_FORBIDDEN', 'only the MissionOwner has the emergency override')
  }
  if (p.delegationGrantId === undefined) {
    if (parentWorkItemId !== undefined)
      return refuse('INVALID_COMMAND', 'parentWorkItemId links a delegated WorkItem only')
    return coordinatorCheck(state, command)
  }
  const grant = state.delegations?.[p.delegationGrantId]
  if (grant === undefined) return refuse('INVALID_COMMAND', 'no such Delegation Grant')
  const invalid = grantUnusable(state, grant, command.actor, at)
  if (invalid) return refuse('AUTH_FORBIDDEN', invalid)

  let depth = 0
  if (command.kind === 'work.offer') {
    if (grant.subtree[p.workItemId] === undefined)
      return refuse('AUTH_FORBIDDEN', 'the WorkItem is outside the Grant scope')
  } else {
    const parent = parentWorkItemId
    if (parent === undefined || grant.subtree[parent] === undefined)
      return refuse('AUTH_FORBIDDEN', 'a delegated WorkItem must link into the Grant subtree by parentWorkItemId')
    depth = grant.subtree[parent]! + 1
    // §9.1/§20: descendant depth is a recursion limit.
    if (depth > grant.maxDescendantDepth)
      return refuse('RATE_LIMITED', `descendant depth ${depth} exceeds the Grant maximum ${grant.maxDescendantDepth}`)
  }
  const contract = contractOf(state, command)
  if (contract === null) return null
  for (const c of (contract.requiredCapabilities as {id: string; version: string}[] | undefined) ?? []) {
    const allowed = grant.allowedCapabilities.find((a) => a.id === c.id)
    if (allowed === undefined || !semverAtLeast(c.version, allowed.minVersion))
      return refuse('AUTH_FORBIDDEN', `capability ${c.id}@${c.version} is not allowed by the Grant`)
  }
  // Cumulative budgets of every WorkItem created or offered under the Grant (each once).
  const workItemId = p.workItemId
  const items = grant.charged.includes(workItemId) ? grant.charged : [...grant.charged, workItemId]
  const ceilings = grant.budgetCeilings as Budget
  let total = ZERO_USAGE
  for (const w of items) {
    const budget = (w === workItemId ? contract.budget : state.workItems[w]?.contract.budget) as Budget | undefined
    if (budget?.financialLimit !== undefined && budget.currency !== ceilings.currency)
      return refuse('BUDGET_EXCEEDED', 'a budget in another currency than the Grant')
    total = addUsage(total, limitsAsUsage(budget))
  }
  // A dimension the Grant leaves unbounded allows nothing under it.
  const bounded: Budget = {...ceilings}
  for (const [, limit] of DIMENSIONS) bounded[limit] ??= 0
  const over = overflow(bounded, total)
  return over === null ? null : refuse('BUDGET_EXCEEDED', `cumulative ${over} exceeds the Grant ceiling`)
}

/** §9.1: the checks that must still hold at every use; the reason, or null. */
function grantUnusable(state: GroupState, grant: DelegationGrantView, actor: Principal, at: string): string | null {
  if (actor.type !== 'agent' || actor.id !== grant.granteeAgentId) return 'the Grant is non-transferable'
  const m = state.members[actor.id]
  if (m === undefined || !m.active || m.role !== 'work_delegate' || m.membershipEpoch !== grant.granteeMembershipEpoch)
    return 'the grantee Membership changed or ended'
  const lease = state.mission.coordinator
  if (lease === null || lease.coordinatorEpoch !== grant.coordinatorEpoch || lease.agentId !== grant.issuedBy)
    return 'the issuing Coordinator was replaced'
  if (compareTimestampText(at, grant.expiresAt) >= 0) return 'the Grant expired'
  const target = state.workItems[grant.targetWorkItemId]
  if (target === undefined || DEAD_TARGET.has(target.state)) return 'the Grant target ended'
  return null
}

/**
 * Records on the accepted work.authorize / work.offer Event how it was authorized, so apply()
 * can grow the Grant's subtree and charged set on replay: {delegation: {grantId, parentWorkItemId?}}
 * or {ownerOverride: {reason}}.
 */
export function markWorkAuthority(decision: Decision, command: WorkAuthorCommand): Decision {
  if ('error' in decision) return decision
  const p = command.payload
  const parentWorkItemId = parentOf(command)
  const mark =
    p.delegationGrantId !== undefined
      ? {delegation: {grantId: p.delegationGrantId, ...(parentWorkItemId !== undefined ? {parentWorkItemId} : {})}}
      : p.ownerOverride !== undefined
        ? {ownerOverride: p.ownerOverride}
        : null
  if (mark === null) return decision
  const [first, ...rest] = decision.events as [EventDraft, ...EventDraft[]]
  return {...decision, events: [{...first, payload: {...first.payload, ...mark}}, ...rest]}
}
