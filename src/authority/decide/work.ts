// WorkItem aggregate decisions (spec §10.1 Work Contract, §10.2 state machine table, §10.3 offers
// and ownership, §11.3 Execution Leases). Check order, as for the Mission: Membership (§8) → role /
// lease / ownership (§7.2, §11.3) → expectedRevision (§15.3) → Mission and WorkItem state (§10.2).
// Only rows of the §10.2 table are implemented; anything else is INVALID_STATE_TRANSITION.

import {
  type DecideContext,
  type DecidedCommand,
  type Decision,
  type Refusal,
  activeMember,
  coordinatorCheck,
  isOwner,
  isRefusal,
  memberDoc,
  refuse,
  revisionConflict,
} from './common.js'
import {schemaCatalog} from '../../schema/catalog.js'
import {workAuthority} from './delegation.js'
import {type GroupState, type MemberState, type SelectionBasis, type WorkItemView, type WorkState, TERMINAL, UNFINISHED_WORK} from '../model/state.js'
import {runningChild} from '../model/mission-tree.js'
import {allocationCheck} from './budget.js'
import type {Budget} from '../model/budget.js'
import {currentLease, lapsedOwnership, lateResultDraft, leaseLengths, plusSeconds, reached} from '../model/work-leases.js'

/** §10.1: the fields every Work Contract must carry (work-contract.schema.json `required`). */
export const CONTRACT_FIELDS = [
  'contractVersion',
  'goal',
  'requiredDeliverables',
  'acceptanceCriteria',
  'inputArtifacts',
  'dependencyWorkItemIds',
  'allowedResources',
  'requiredCapabilities',
  'deadline',
  'requestedUrgency',
  'businessImpact',
  'retryPolicy',
  'budget',
  'sideEffectRisk',
  'executionApproval',
] as const

/** §10.1: a missing required field, or a mandatory list left empty, is an incomplete contract. */
function contractIncomplete(contract: Record<string, unknown>): Refusal | null {
  for (const f of CONTRACT_FIELDS) {
    if (contract[f] === undefined || contract[f] === null) return refuse('WORK_CONTRACT_INCOMPLETE', `the Work Contract lacks ${f}`)
  }
  for (const f of ['requiredDeliverables', 'acceptanceCriteria', 'requiredCapabilities'] as const) {
    if (!Array.isArray(contract[f]) || (contract[f] as unknown[]).length === 0) return refuse('WORK_CONTRACT_INCOMPLETE', `the Work Contract has no ${f}`)
  }
  // Complete but malformed: the contract must still be a valid work-contract.schema.json document.
  return schemaCatalog().validate('work-contract', contract).valid ? null : refuse('SCHEMA_VALIDATION_FAILED', 'the Work Contract does not match work-contract.schema.json')
}

/** §10.2 rows: the states each transition leaves from. */
const FROM: Readonly<Record<string, ReadonlySet<WorkState>>> = {
  'work.offer': new Set(['open', 'offered', 'queued', 'active', 'blocked', 'failed']),
  'work.accept_offer': new Set(['offered']),
  'work.start': new Set(['queued']),
  'work.submit': new Set(['active']),
  'work.accept_result': new Set(['submitted']),
  'work.cancel': UNFINISHED_WORK,
  'work.checkpoint': new Set(['active']),
  'work.block': new Set(['active']),
  'work.unblock': new Set(['blocked']),
  'work.fail': UNFINISHED_WORK,
  'approval.grant_execution': new Set(['queued']),
}

/** §12: a Work Contract whose executionApproval is not `not_required` is gated before work.start. */
const gated = (item: WorkItemView) => item.contract.executionApproval !== undefined && item.contract.executionApproval !== 'not_required'

/** Owner Commands that present the current Execution Lease ID (§11.3). */
const LEASED: ReadonlySet<string> = new Set(['work.submit', 'work.checkpoint', 'work.block'])

/**
 * §11.3 "every ... Worker-reported failure MUST reference the current Lease ID": a leased kind
 * always cites it; the owner's work.fail cites it while the WorkItem holds an active Execution
 * Lease (a queued or blocked item has none to cite, and the Coordinator's failure never does).
 */
const citesLease = (k: string, item: WorkItemView): boolean => LEASED.has(k) || (k === 'work.fail' && item.lease?.state === 'active')

export const WORK_KINDS: ReadonlySet<string> = new Set(['work.propose', 'work.authorize', ...Object.keys(FROM)])

export function workDecide(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state === null) return refuse('GROUP_NOT_FOUND', 'no such Group')
  const p = command.payload
  const k = command.kind
  const member = k === 'work.accept_offer' ? offerMember(state, command, ctx.acceptedAt) : activeMember(state, command)
  if (isRefusal(member)) return member

  // Who may issue the Command (§10.2 notes, §10.3, §11.3).
  if (k === 'work.authorize' || k === 'work.offer') {
    // §9.1: the Coordinator, the MissionOwner's emergency override, or a cited Delegation Grant.
    const denied = workAuthority(state, command, ctx.acceptedAt)
    if (denied) return denied
  } else if (k === 'work.accept_result') {
    const fenced = coordinatorCheck(state, command)
    if (fenced) return fenced
  } else if (k === 'work.cancel') {
    if (!isOwner(state, command.actor)) {
      const fenced = coordinatorCheck(state, command)
      if (fenced) return fenced
    }
  } else if (k === 'work.accept_offer' || k === 'work.start' || k === 'work.submit' || k === 'work.checkpoint' || k === 'work.block') {
    if (command.actor.type !== 'agent') return refuse('AUTH_FORBIDDEN', `${k} is a Worker Agent's`)
  } else if (k === 'work.unblock' || k === 'work.fail') {
    // The owner presents its Ownership Epoch (checked against the WorkItem below); anyone else
    // must be the current Coordinator.
    if (p.ownershipEpoch === undefined) {
      const fenced = coordinatorCheck(state, command)
      if (fenced) return fenced
    } else if (command.actor.type !== 'agent') return refuse('AUTH_FORBIDDEN', `only the owning Agent presents an ownershipEpoch`)
  } else if (k === 'approval.grant_execution') {
    // §12: the MissionOwner grants execution approval (Organization policy actors: not yet).
    if (!isOwner(state, command.actor)) return refuse('AUTH_FORBIDDEN', 'execution approval is the MissionOwner\'s')
  }
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  if (TERMINAL.has(state.mission.state)) return refuse('INVALID_STATE_TRANSITION', `${k} in a ${state.mission.state} Mission`)

  const at = ctx.acceptedAt
  // §11.3/§11.4: the Organization's lease lengths; each Event records the boundary they give.
  const lengths = leaseLengths(ctx.leases)
  const actor = {type: command.actor.type, id: command.actor.id}
  if (k === 'work.propose') {
    const proposalId = p.proposalId as string
    if (state.proposals[proposalId] !== undefined || state.workItems[proposalId] !== undefined) return refuse('INVALID_STATE_TRANSITION', 'that proposal ID is already used')
    const contract = p.contract as Record<string, unknown>
    const incomplete = contractIncomplete(contract)
    if (incomplete) return incomplete
    return {events: [{eventId: ctx.newId(), kind: 'work.proposed', payload: {proposal: {proposalId, proposedBy: actor, contract, proposedAt: at}}}]}
  }
  if (k === 'work.authorize') return authorize(state, command, ctx)

  const workItemId = p.workItemId as string
  const item = state.workItems[workItemId]
  if (item === undefined) return refuse('INVALID_COMMAND', 'no such WorkItem')
  // §10.2: while a linked child Mission runs, the WorkItem's ownership is fenced: it concludes
  // through the child (decide-child.ts), or the Coordinator fails or cancels it (and the child).
  const child = runningChild(item)
  if (child !== null && k !== 'work.fail' && k !== 'work.cancel') return refuse('INVALID_STATE_TRANSITION', `${k} while child Mission ${child.missionId} runs`)
  const from = FROM[k]!
  const eventId = ctx.newId()
  const one = (kind: string, payload: Record<string, unknown>): Decision => ({events: [{eventId, kind, conversationId: item.conversationId, payload: {workItemId, revision: item.revision + 1, ...payload}}]})

  switch (k) {
    case 'work.offer': {
      // §10.2: only with no live owner; "an expired owner is fenced first" (§11.5: a missed start
      // deadline or an unrenewed lease) — the offer Event records the fenced ownership.
      const lapsed = lapsedOwnership(item, at)
      if (!from.has(item.state) || (item.owner !== null && lapsed === null)) return refuse('INVALID_STATE_TRANSITION', `work.offer from ${item.state}${item.owner ? ' with a live owner' : ''}`)
      const unmet = unmetDependency(state, item)
      if (unmet !== null) return refuse('INVALID_STATE_TRANSITION', `ineligible until dependency ${unmet} is verified`)
      const candidates = p.candidates as string[]
      const expiresAt = p.expiresAt as string
      if (reached(at, expiresAt)) return refuse('INVALID_COMMAND', 'the offer would already be expired') // full precision (§2)
      const provisional = provisionalMemberships(state, item, candidates, p.contextPackageId as string | undefined, expiresAt, ctx)
      if (isRefusal(provisional)) return provisional
      const selectionBasis = selectionBases(item, candidates, p.selectionBasis as Record<string, Omit<SelectionBasis, 'requiredCapabilities'>>)
      if (isRefusal(selectionBasis)) return selectionBasis
      return one('work.offer.created', {
        offer: {offerId: ctx.newId(), candidates: [...candidates], expiresAt, offeredAt: at, selectionBasis},
        ...(lapsed !== null ? {fencedOwnership: lapsed} : {}),
        ...(provisional.length > 0 ? {provisionalMemberships: provisional} : {}),
      })
    }
    case 'work.accept_offer': {
      // §10.3: the first valid acceptance won; every later one loses, whatever the state now.
      if (item.owner !== null && item.state !== 'verified' && item.state !== 'cancelled') return refuse('WORK_ALREADY_OWNED', 'another candidate won ownership')
      if (!from.has(item.state)) return refuse('INVALID_STATE_TRANSITION', `work.accept_offer from ${item.state}`)
      // §10.1: a material contract revision withdrew the offer (apply-lease.ts); a new offer is needed.
      const offer = item.offer
      if (offer === null) return refuse('WORK_OFFER_EXPIRED', 'the offer was withdrawn by a contract revision')
      if (!offer.candidates.includes(command.actor.id)) return refuse('AUTH_FORBIDDEN', 'not a candidate of the offer')
      // A replaced offer is no longer valid; an expired one invalidates acceptance and appends nothing.
      if (p.offerId !== offer.offerId) return refuse('WORK_OFFER_EXPIRED', 'that offer was replaced')
      if (reached(at, offer.expiresAt)) return refuse('WORK_OFFER_EXPIRED', `offer expired at ${offer.expiresAt}`)
      // §11.3: the grant carries its start-by deadline (the bounded ownership lease).
      const owner = {agentId: command.actor.id, ownershipEpoch: item.ownershipEpoch + 1, sessionEpoch: command.sessionEpoch ?? 1, grantedAt: at, startBy: plusSeconds(at, lengths.ownershipSeconds)}
      const selectionBasis = offer.selectionBasis?.[command.actor.id]
      // §8 step 3: accepting the offer activates a just-in-time Membership (same epoch and visibility).
      const activatedMembership = member.provisional === undefined ? undefined : activated(state, member, at)
      return one('work.offer.accepted', {offerId: offer.offerId, owner, ...(selectionBasis ? {selectionBasis} : {}), ...(activatedMembership ? {activatedMembership} : {})})
    }
    default:
      break
  }

  // Owner Commands (§11.3): ownership epoch, then lease, then state.
  const ownerIssued = k === 'work.start' || LEASED.has(k) || ((k === 'work.unblock' || k === 'work.fail') && p.ownershipEpoch !== undefined)
  if (ownerIssued) {
    const owned = ownerCheck(item, command)
    if (owned) {
      // §11.5: a late result of an ended ownership is kept as non-authoritative Evidence.
      const late = k === 'work.submit' && owned.error === 'WORK_STALE_OWNERSHIP' ? lateResultDraft(item, command.actor.id, p as {ownershipEpoch: number; leaseId: string; artifactHashes: string[]}, eventId, at) : null
      return late !== null ? {...owned, record: [late]} : owned
    }
    if (citesLease(k, item)) {
      const lease = currentLease(item, p.leaseId, command.sessionEpoch, at)
      if (isRefusal(lease)) return lease
    }
    // §11.5: a missed start-by deadline ends the right to start.
    if (k === 'work.start' && item.state === 'queued' && reached(at, item.owner!.leaseExpiresAt)) return refuse('WORK_LEASE_EXPIRED', `the start-by deadline ${item.owner!.leaseExpiresAt} has passed`)
  }
  if (!from.has(item.state)) return refuse('INVALID_STATE_TRANSITION', `${k} from ${item.state}`)
  switch (k) {
    case 'work.start': {
      const owner = item.owner!
      // §12 (ACCEPTANCE G4): a gated WorkItem starts only under a signed execution approval
      // granted for the current Ownership Epoch.
      const unmet = unmetDependency(state, item)
      if (unmet !== null) return refuse('INVALID_STATE_TRANSITION', `ineligible until dependency ${unmet} is verified`)
      if (gated(item) && item.executionApproval?.ownershipEpoch !== owner.ownershipEpoch) return refuse('APPROVAL_REQUIRED', 'the WorkItem requires an execution approval')
      const lease = {
        leaseId: ctx.newId(),
        leaseType: 'execution',
        missionId: state.missionId,
        groupId: state.groupId,
        workItemId,
        holderAgentId: owner.agentId,
        sessionEpoch: command.sessionEpoch ?? owner.sessionEpoch,
        ownershipEpoch: owner.ownershipEpoch,
        issuedAt: at,
        startsAt: at,
        expiresAt: plusSeconds(at, lengths.executionSeconds),
        state: 'active',
        renewalCount: 0,
      }
      // §11.5: a reassigned WorkItem resumes from the latest checkpoint of any earlier ownership.
      return one('work.started', {lease, ...(item.checkpoint !== null ? {resumeFrom: item.checkpoint} : {})})
    }
    case 'work.submit':
      return one('work.submitted', {leaseId: item.lease!.leaseId, artifactHashes: [...(p.artifactHashes as string[])].sort()})
    case 'work.accept_result':
      return endingIdle(state, item, one('work.result.accepted', {artifactHashes: item.submission?.artifactHashes ?? []}), ctx)
    case 'work.checkpoint':
    case 'work.block': {
      const checkpoint = {progress: (p.progress as string | undefined) ?? (p.requiredResolution as string), artifactHashes: [...((p.artifactHashes as string[] | undefined) ?? [])].sort()}
      // §11.3/§11.4: ownership stays under a bounded ownership (queued) or blocked lease.
      if (k === 'work.checkpoint') return one('work.checkpointed', {leaseId: item.lease!.leaseId, checkpoint, ownershipLeaseExpiresAt: plusSeconds(at, lengths.ownershipSeconds)})
      return one('work.blocked', {leaseId: item.lease!.leaseId, checkpoint, requiredResolution: p.requiredResolution, blockedLeaseExpiresAt: plusSeconds(at, lengths.blockedSeconds)})
    }
    case 'work.unblock': {
      // §10.2: back to its queue (under a fresh ownership lease) while the owner holds live
      // ownership; after ownership expiry it is fenced and the item is open for re-offer.
      const lapsed = lapsedOwnership(item, at)
      const resolution = p.resolution !== undefined ? {resolution: p.resolution} : {}
      if (item.owner !== null && lapsed === null) return one('work.unblocked', {to: 'queued', ownershipLeaseExpiresAt: plusSeconds(at, lengths.ownershipSeconds), ...resolution})
      return one('work.unblocked', {to: 'open', ...(lapsed !== null ? {fencedOwnership: lapsed} : {}), ...resolution})
    }
    case 'work.fail':
      return endingIdle(state, item, one('work.failed', {reason: p.reason, evidenceHashes: [...(p.evidenceHashes as string[])].sort(), ...(item.lease?.state === 'active' ? {revokedLeaseId: item.lease.leaseId} : {})}), ctx)
    case 'approval.grant_execution': {
      const owner = item.owner!
      if (!gated(item)) return refuse('INVALID_STATE_TRANSITION', 'the WorkItem needs no execution approval')
      if (p.ownershipEpoch !== owner.ownershipEpoch) return refuse('WORK_STALE_OWNERSHIP', `ownershipEpoch ${String(p.ownershipEpoch)}, current ${owner.ownershipEpoch}`)
      if (item.executionApproval?.ownershipEpoch === owner.ownershipEpoch) return refuse('INVALID_STATE_TRANSITION', 'execution is already approved')
      return one('approval.execution.granted', {approval: {approvedBy: actor, ownershipEpoch: owner.ownershipEpoch, approvedAt: at}})
    }
    default:
      // work.cancel: cancellation revokes the Execution Lease (§11.3).
      return endingIdle(state, item, one('work.cancelled', {reason: p.reason, ...(item.lease?.state === 'active' ? {revokedLeaseId: item.lease.leaseId} : {})}), ctx)
  }
}

/**
 * §8 step 4: a just-in-time Worker Membership "ends when the Worker has no WorkItems or review
 * obligations". When this decision concludes the owner's WorkItem (accepted, failed or cancelled)
 * and the owner neither owns nor is offered any other unfinished one, its Membership ends in the
 * same append; a later offer provisions it again. Memberships granted with membership.change stay
 * until membership.end.
 */
function endingIdle(state: GroupState, item: WorkItemView, decision: Decision, ctx: DecideContext): Decision {
  if ('error' in decision || item.owner === null) return decision
  const agentId = item.owner.agentId
  const m = state.members[agentId]
  if (m === undefined || !m.active || m.justInTime !== true) return decision
  const busy = Object.values(state.workItems).some(
    (w) => w.workItemId !== item.workItemId && UNFINISHED_WORK.has(w.state) && (w.owner?.agentId === agentId || (w.offer?.candidates.includes(agentId) ?? false)),
  )
  if (busy) return decision
  const membership = memberDoc(state, m, false, ctx.acceptedAt)
  return {events: [...decision.events, {eventId: ctx.newId(), kind: 'membership.ended', payload: {membership, reason: 'no WorkItems left (§8 just-in-time Membership)'}}]}
}

/**
 * §11.3: the owner with its current Ownership Epoch; an older epoch is fenced, and so is the
 * latest epoch once that ownership has ended (fenced on expiry or failed) with no successor yet.
 */
export function ownerCheck(item: WorkItemView, command: DecidedCommand): Refusal | null {
  const epoch = command.payload.ownershipEpoch as number
  if (epoch < item.ownershipEpoch) return refuse('WORK_STALE_OWNERSHIP', `ownershipEpoch ${epoch}, current ${item.ownershipEpoch}`)
  const owner = item.owner
  if (owner === null && (item.endedOwnerships ?? []).some((e) => e.agentId === command.actor.id && e.ownershipEpoch === epoch)) {
    return refuse('WORK_STALE_OWNERSHIP', `ownership epoch ${epoch} has ended`)
  }
  if (owner === null || owner.agentId !== command.actor.id || epoch !== owner.ownershipEpoch) return refuse('AUTH_FORBIDDEN', 'not the WorkItem owner')
  return null
}

/**
 * §10.4 (ACCEPTANCE E10): the WorkItems form a DAG. A new WorkItem may depend only on WorkItems
 * already in the Group, whose own dependencies were fixed when they were authorized, so the only
 * way to close a cycle here is through the new WorkItem itself; the walk still follows the graph,
 * so dependency insertion into an existing WorkItem (decide-dependency.ts) reuses it unchanged.
 */
export function dependencyCycle(state: GroupState, workItemId: string, deps: readonly string[]): Refusal | null {
  const seen = new Set<string>()
  const stack = [...deps]
  while (stack.length > 0) {
    const d = stack.pop()!
    if (d === workItemId) return refuse('INVALID_COMMAND', `dependency cycle through ${workItemId}`)
    if (seen.has(d)) continue
    seen.add(d)
    const dep = state.workItems[d]
    if (dep === undefined) return refuse('INVALID_COMMAND', `dependency ${d} is not a WorkItem of this Group`)
    stack.push(...((dep.contract.dependencyWorkItemIds as string[] | undefined) ?? []))
  }
  return null
}

/** §10.4: a WorkItem is eligible only once every declared dependency is verified. */
export function unmetDependency(state: GroupState, item: WorkItemView): string | null {
  for (const d of (item.contract.dependencyWorkItemIds as string[] | undefined) ?? []) {
    if (state.workItems[d]?.state !== 'verified') return d
  }
  return null
}

/** §10.2 "none or open Work Proposal" → open: the Coordinator creates the WorkItem. */
function authorize(state: GroupState, command: DecidedCommand, ctx: DecideContext): Decision {
  const p = command.payload
  const workItemId = p.workItemId as string
  if (state.workItems[workItemId] !== undefined) return refuse('INVALID_STATE_TRANSITION', 'the WorkItem already exists')
  const proposalId = p.proposalId as string | undefined
  let contract: Record<string, unknown>
  let createdBy = {type: command.actor.type, id: command.actor.id}
  if (proposalId !== undefined) {
    const proposal = state.proposals[proposalId]
    if (proposal === undefined) return refuse('INVALID_STATE_TRANSITION', 'no open Work Proposal with that ID')
    if (p.contract !== undefined) return refuse('INVALID_COMMAND', 'an authorized proposal keeps its contract')
    contract = proposal.contract
    createdBy = {type: proposal.proposedBy.type, id: proposal.proposedBy.id}
  } else {
    if (p.contract === undefined) return refuse('WORK_CONTRACT_INCOMPLETE', 'a WorkItem needs a Work Contract')
    contract = p.contract as Record<string, unknown>
  }
  const incomplete = contractIncomplete(contract)
  if (incomplete) return incomplete
  const cycle = dependencyCycle(state, workItemId, contract.dependencyWorkItemIds as string[])
  if (cycle) return cycle
  const overAllocated = allocationCheck(state, contract.budget as Budget) // §12 G5 (decide-budget.ts)
  if (overAllocated) return overAllocated
  const eventId = ctx.newId()
  const conversationId = ctx.newId()
  const workItem = {
    workItemId,
    missionId: state.missionId,
    groupId: state.groupId,
    conversationId,
    revision: 1,
    state: 'open',
    exclusive: (p.exclusive as boolean | undefined) ?? true,
    contract,
    createdBy,
    authorizedBy: {type: command.actor.type, id: command.actor.id},
    createdAt: ctx.acceptedAt,
  }
  return {events: [{eventId, kind: 'work.authorized', conversationId, payload: {workItem, ...(proposalId !== undefined ? {proposalId} : {})}}]}
}

/**
 * §10.3: every assignment records a structured selection basis. The Coordinator states one per
 * candidate (and only for candidates); the required capabilities are the Work Contract's own, so
 * the record cannot disagree with the contract. An Agent the Coordinator itself does not find
 * authorization-eligible cannot be offered the work.
 */
function selectionBases(item: WorkItemView, candidates: string[], stated: Record<string, Omit<SelectionBasis, 'requiredCapabilities'>>): Record<string, SelectionBasis> | Refusal {
  const named = Object.keys(stated)
  if (named.length !== candidates.length || !candidates.every((c) => Object.hasOwn(stated, c))) return refuse('INVALID_COMMAND', 'the selection basis must name exactly the candidates')
  const requiredCapabilities = (item.contract.requiredCapabilities as {id: string; version: string}[]).map((c) => ({id: c.id, version: c.version}))
  const out: Record<string, SelectionBasis> = {}
  for (const c of candidates) {
    const b = stated[c]!
    if (!b.authorizationEligible) return refuse('INVALID_COMMAND', `candidate ${c} is not authorization-eligible`)
    out[c] = {requiredCapabilities, ...b}
  }
  return out
}

/**
 * §8 just-in-time Worker Membership, step 1-2: a candidate Agent that is not an active member gets
 * a provisional Membership with the offer — scoped to this WorkItem, expiring with the offer, bound
 * to the signed Context Package the offer cites, and seeing history only from the offer on.
 */
function provisionalMemberships(state: GroupState, item: WorkItemView, candidates: string[], contextPackageId: string | undefined, expiresAt: string, ctx: DecideContext) {
  const docs: Record<string, unknown>[] = []
  for (const c of candidates) {
    const m = state.members[c]
    if (m !== undefined && m.principal.type !== 'agent') return refuse('INVALID_COMMAND', 'every candidate must be an Agent')
    if (m?.active) continue
    if (contextPackageId === undefined) return refuse('INVALID_COMMAND', `candidate ${c} has no active Membership: a just-in-time offer cites a Context Package`)
    docs.push({
      membershipId: ctx.newId(),
      missionId: state.missionId,
      groupId: state.groupId,
      member: {type: 'agent', id: c},
      role: 'worker',
      state: 'provisional',
      membershipEpoch: (m?.membershipEpoch ?? 0) + 1,
      scopes: [`workitem:${item.workItemId}`],
      visibilityStartSequence: state.sequence + 1,
      contextPackageId,
      provisionalExpiresAt: expiresAt,
      grantedAt: ctx.acceptedAt,
    })
  }
  return docs
}

/** The Membership that may accept an offer: an active one, or the provisional one granted with it. */
function offerMember(state: GroupState, command: DecidedCommand, at: string): MemberState | Refusal {
  const m = state.members[command.actor.id]
  if (m?.provisional === undefined) return activeMember(state, command)
  if (m.principal.type !== command.actor.type) return refuse('MEMBERSHIP_REQUIRED', 'the actor has no Membership in this Group')
  const epoch = command.membershipEpoch ?? 0
  if (epoch < m.membershipEpoch) return refuse('MEMBERSHIP_STALE', `membershipEpoch ${epoch}, current ${m.membershipEpoch}`)
  if (epoch > m.membershipEpoch) return refuse('MEMBERSHIP_REQUIRED', `membershipEpoch ${epoch} was never issued`)
  if (m.provisional.workItemId !== command.payload.workItemId) return refuse('MEMBERSHIP_REQUIRED', 'the provisional Membership is for another WorkItem')
  if (reached(at, m.provisional.expiresAt)) return refuse('WORK_OFFER_EXPIRED', 'the provisional Membership expired with its offer')
  return m
}

const activated = (state: GroupState, m: MemberState, at: string) => ({...memberDoc(state, m, true, at), contextPackageId: m.provisional!.contextPackageId})
