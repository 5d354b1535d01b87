// WorkItem aggregate decisions (spec §10.1 Work Contract, §10.2 state machine table, §10.3 offers
// and ownership, §11.3 Execution Leases): one handler per kind, behind the gate (gate.ts), which
// checks, in order, Membership (§8) → role / lease / ownership (§7.2, §11.3) → expectedRevision
// (§15.3) → Mission state → the WorkItem, its owner and lease, and its state (§10.2). Only rows of
// the §10.2 table are implemented; anything else is INVALID_STATE_TRANSITION.

import type {DecidedCommand} from './command.js'
import {
  type DecideContext,
  type Decision,
  type Refusal,
  coordinatorCheck,
  isRefusal,
  memberDoc,
  refuse,
} from './common.js'
import {
  type AuthorityCheck,
  type GroupGate,
  type Handler,
  type Handlers,
  type InGroup,
  type ItemGate,
  type OnItem,
  type Who,
  live,
} from './gate.js'
import {cascadeCancellation} from './child.js'
import {submittedEvidence} from './evidence.js'
import {offeredContext} from './context-package.js'
import {markWorkAuthority, workAuthority} from './delegation.js'
import {
  type GroupState,
  type MemberState,
  type SelectionBasis,
  type WorkItemView,
  type WorkState,
  UNFINISHED_WORK,
} from '../model/state.js'
import {allocationCheck} from './budget.js'
import type {WorkContract, WorkOfferCandidateBasis} from '../model/payloads.generated.js'
import {
  executionLeaseExpired,
  lapsedOwnership,
  lateResultDraft,
  leaseLengths,
  leaseRevokedDraft,
  plusSeconds,
  reached,
  replacedSessionLease,
} from '../model/work-leases.js'

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
function checkedContract(contract: Record<string, unknown>, ctx: DecideContext): WorkContract | Refusal {
  for (const f of CONTRACT_FIELDS) {
    if (contract[f] === undefined || contract[f] === null)
      return refuse('WORK_CONTRACT_INCOMPLETE', `the Work Contract lacks ${f}`)
  }
  for (const f of ['requiredDeliverables', 'acceptanceCriteria', 'requiredCapabilities'] as const) {
    const list = contract[f]
    if (!Array.isArray(list) || list.length === 0)
      return refuse('WORK_CONTRACT_INCOMPLETE', `the Work Contract has no ${f}`)
  }
  // Complete but malformed: the contract must still be a valid work-contract.schema.json document.
  return ctx.validWorkContract(contract)
    ? contract
    : refuse('SCHEMA_VALIDATION_FAILED', 'the Work Contract does not match work-contract.schema.json')
}

/** §12: a Work Contract whose executionApproval is not `not_required` is gated before work.start. */
const gated = (item: WorkItemView) =>
  item.contract.executionApproval !== undefined && item.contract.executionApproval !== 'not_required'

type WorkKind =
  | 'work.propose'
  | 'work.authorize'
  | 'work.offer'
  | 'work.accept_offer'
  | 'work.start'
  | 'work.submit'
  | 'work.accept_result'
  | 'work.cancel'
  | 'work.checkpoint'
  | 'work.block'
  | 'work.unblock'
  | 'work.fail'
  | 'approval.grant_execution'

const inLiveMission = live((kind, s) => `${kind} in a ${s} Mission`)
const workGate = <K extends WorkKind>(
  who: Who<K>,
  membership: GroupGate<K>['membership'] = 'active',
): GroupGate<K> => ({membership, who, mission: inLiveMission})
const worker = <K extends WorkKind>(kind: K): Who<K> => ({by: 'agent', reason: `${kind} is a Worker Agent's`})
/** §9.1: the Coordinator, the MissionOwner's emergency override, or a cited Delegation Grant. */
const workAuthor = {
  authorize: {
    by: 'rule',
    check: (state, command, ctx) => workAuthority(state, command, ctx.acceptedAt),
  } satisfies Who<'work.authorize'>,
  offer: {
    by: 'rule',
    check: (state, command, ctx) => workAuthority(state, command, ctx.acceptedAt),
  } satisfies Who<'work.offer'>,
}
/**
 * work.unblock / work.fail: the owner presents its Ownership Epoch (checked against the WorkItem
 * by the gate); anyone else must be the current Coordinator.
 */
const ownerOrCoordinator: AuthorityCheck<'work.unblock' | 'work.fail'> = (state, command) => {
  if (command.payload.ownershipEpoch === undefined) return coordinatorCheck(state, command)
  return command.actor.type !== 'agent'
    ? refuse('AUTH_FORBIDDEN', `only the owning Agent presents an ownershipEpoch`)
    : null
}

const itemOf = {workItemId: (p: {workItemId: string}) => p.workItemId}
const ownership = {ownershipEpoch: (p: {ownershipEpoch?: number}) => p.ownershipEpoch}
const leaseCited = {cited: 'always', leaseId: (p: {leaseId: string}) => p.leaseId} as const
const states = (...s: WorkState[]): ReadonlySet<WorkState> => new Set(s)

/** A WorkItem decision's one Event, in the WorkItem's Conversation at its next revision. */
const one = ({item, eventId}: OnItem, kind: string, payload: Record<string, unknown>): Decision => ({
  events: [
    {
      eventId,
      kind,
      conversationId: item.conversationId,
      payload: {workItemId: item.workItemId, revision: item.revision + 1, ...payload},
    },
  ],
})

/** A decision that cancels or fails work also cancels the child Missions running it (child.ts). */
// The kind is the table key's (inferred from the Handler<K> the table expects), never the gate's.
const onGroup = <K extends WorkKind>(
  gate: GroupGate<NoInfer<K>>,
  decide: (at: InGroup, command: DecidedCommand<NoInfer<K>>, ctx: DecideContext) => Decision,
): Handler<K> => ({
  on: 'group',
  gate,
  decide: (at, command, ctx) => cascadeCancellation(at.state, ctx, decide(at, command, ctx)),
})
const onItem = <K extends WorkKind>(
  gate: GroupGate<NoInfer<K>>,
  item: ItemGate<NoInfer<K>>,
  decide: (at: OnItem, command: DecidedCommand<NoInfer<K>>, ctx: DecideContext) => Decision,
): Handler<K> => ({
  on: 'work-item',
  gate,
  item,
  decide: (at, command, ctx) => cascadeCancellation(at.state, ctx, decide(at, command, ctx)),
})

export const WORK_HANDLERS: Handlers = {
  'work.propose': onGroup(workGate({by: 'member'}), ({state}, command, ctx) => {
    const p = command.payload
    const proposalId = p.proposalId
    if (state.proposals[proposalId] !== undefined || state.workItems[proposalId] !== undefined)
      return refuse('INVALID_STATE_TRANSITION', 'that proposal ID is already used')
    const contract = p.contract
    const checked = checkedContract(contract, ctx)
    if (isRefusal(checked)) return checked
    const proposedBy = {type: command.actor.type, id: command.actor.id}
    return {
      events: [
        {
          eventId: ctx.newId(),
          kind: 'work.proposed',
          payload: {proposal: {proposalId, proposedBy, contract, proposedAt: ctx.acceptedAt}},
        },
      ],
    }
  }),

  'work.authorize': onGroup(workGate(workAuthor.authorize), (at, command, ctx) =>
    markWorkAuthority(authorize(at, command, ctx), command),
  ),

  'work.offer': onItem(workGate(workAuthor.offer), {...itemOf, childFence: true}, (at, command, ctx) =>
    markWorkAuthority(offer(at, command, ctx), command),
  ),

  'work.accept_offer': onItem(
    workGate(worker('work.accept_offer'), {provisionalFor: (p) => p.workItemId}),
    {...itemOf, childFence: true},
    (at, command, ctx) => {
      const {state, item} = at
      const p = command.payload
      const now = ctx.acceptedAt
      // §10.3: the first valid acceptance won; every later one loses, whatever the state now.
      if (item.owner !== null && item.state !== 'verified' && item.state !== 'cancelled')
        return refuse('WORK_ALREADY_OWNED', 'another candidate won ownership')
      if (item.state !== 'offered') return refuse('INVALID_STATE_TRANSITION', `work.accept_offer from ${item.state}`)
      // §10.1: a material contract revision withdrew the offer (apply/lease.ts); a new offer is needed.
      const pending = item.offer
      if (pending === null) return refuse('WORK_OFFER_EXPIRED', 'the offer was withdrawn by a contract revision')
      if (!pending.candidates.includes(command.actor.id))
        return refuse('AUTH_FORBIDDEN', 'not a candidate of the offer')
      // A replaced offer is no longer valid; an expired one invalidates acceptance and appends nothing.
      if (p.offerId !== pending.offerId) return refuse('WORK_OFFER_EXPIRED', 'that offer was replaced')
      if (reached(now, pending.expiresAt)) return refuse('WORK_OFFER_EXPIRED', `offer expired at ${pending.expiresAt}`)
      // §11.3: the grant carries its start-by deadline (the bounded ownership lease).
      const startBy = plusSeconds(now, leaseLengths(ctx.leases).ownershipSeconds)
      const owner = {
        agentId: command.actor.id,
        ownershipEpoch: item.ownershipEpoch + 1,
        sessionEpoch: command.sessionEpoch ?? 1,
        grantedAt: now,
        startBy,
      }
      const selectionBasis = pending.selectionBasis?.[command.actor.id]
      // §8 step 3: accepting the offer activates a just-in-time Membership (same epoch and visibility).
      const member = at.member!
      const activatedMembership = member.provisional === undefined ? undefined : activated(state, member, now)
      return one(at, 'work.offer.accepted', {
        offerId: pending.offerId,
        owner,
        ...(selectionBasis ? {selectionBasis} : {}),
        ...(activatedMembership ? {activatedMembership} : {}),
      })
    },
  ),

  'work.start': onItem(
    workGate(worker('work.start')),
    {...itemOf, childFence: true, ...ownership, from: states('queued', 'active')},
    (at, command, ctx) => {
      const {state, item} = at
      const now = ctx.acceptedAt
      const owner = item.owner!
      // §11.3 (ACCEPTANCE B9): the owner's new session finds its old session's lease still active
      // — the authority stopped after opening the session and before revoking it
      // (ingress/sessions.ts). The revocation and the start are then one decision: LEASE_REVOKED
      // first, then work.started under a new lease. Any other start from active is refused.
      const replaced = item.state === 'active' ? replacedSessionLease(item, command.sessionEpoch) : null
      if (item.state === 'active' && (replaced === null || executionLeaseExpired(replaced, now)))
        return refuse('INVALID_STATE_TRANSITION', 'work.start from active')
      // §11.5: a missed start-by deadline ends the right to start.
      if (reached(now, owner.leaseExpiresAt))
        return refuse('WORK_LEASE_EXPIRED', `the start-by deadline ${owner.leaseExpiresAt} has passed`)
      // §12 (ACCEPTANCE G4): a gated WorkItem starts only under a signed execution approval
      // granted for the current Ownership Epoch.
      const unmet = unmetDependency(state, item)
      if (unmet !== null) return refuse('INVALID_STATE_TRANSITION', `ineligible until dependency ${unmet} is verified`)
      if (gated(item) && item.executionApproval?.ownershipEpoch !== owner.ownershipEpoch)
        return refuse('APPROVAL_REQUIRED', 'the WorkItem requires an execution approval')
      const lease = {
        leaseId: ctx.newId(),
        leaseType: 'execution',
        missionId: state.missionId,
        groupId: state.groupId,
        workItemId: item.workItemId,
        holderAgentId: owner.agentId,
        sessionEpoch: command.sessionEpoch ?? owner.sessionEpoch,
        ownershipEpoch: owner.ownershipEpoch,
        issuedAt: now,
        startsAt: now,
        expiresAt: plusSeconds(now, leaseLengths(ctx.leases).executionSeconds),
        state: 'active',
        renewalCount: 0,
      }
      // §11.5: a reassigned WorkItem resumes from the latest checkpoint of any earlier ownership.
      const started = one(at, 'work.started', {
        lease,
        ...(item.checkpoint !== null ? {resumeFrom: item.checkpoint} : {}),
      })
      if (replaced === null || 'error' in started) return started
      const revoked = leaseRevokedDraft(item, replaced, command.sessionEpoch!, ctx.newId(), now, ctx.leases)
      const [start] = started.events
      return {events: [revoked, {...start!, payload: {...start!.payload, revision: item.revision + 2}}]}
    },
  ),

  'work.submit': onItem(
    workGate(worker('work.submit')),
    {
      ...itemOf,
      childFence: true,
      ...ownership,
      lease: leaseCited,
      // §11.5: a late result of an ended ownership is kept as non-authoritative Evidence.
      staleRecord: (item, command, eventId, at) =>
        lateResultDraft(item, command.actor.id, command.payload, eventId, at),
      from: states('active'),
    },
    (at, command) => {
      // §13.2: Evidence mapped to the acceptance criteria (decide/evidence.ts).
      const evidence = submittedEvidence(at.state, at.item, command)
      if (isRefusal(evidence)) return evidence
      return one(at, 'work.submitted', {
        leaseId: at.item.lease!.leaseId,
        artifactHashes: [...command.payload.artifactHashes].sort(),
        evidence: evidence.map(({signingHash, document}) => ({signingHash, document})),
      })
    },
  ),

  'work.accept_result': onItem(
    workGate({by: 'coordinator'}),
    {...itemOf, childFence: true, from: states('submitted')},
    (at, _, ctx) =>
      endingIdle(
        at.state,
        at.item,
        one(at, 'work.result.accepted', {artifactHashes: at.item.submission?.artifactHashes ?? []}),
        ctx,
      ),
  ),

  // Cancellation revokes the Execution Lease (§11.3).
  'work.cancel': onItem(
    workGate({by: 'owner-or-coordinator'}),
    {...itemOf, childFence: false, from: UNFINISHED_WORK},
    (at, {payload: p}, ctx) => {
      const revoked = at.item.lease?.state === 'active' ? {revokedLeaseId: at.item.lease.leaseId} : {}
      return endingIdle(at.state, at.item, one(at, 'work.cancelled', {reason: p.reason, ...revoked}), ctx)
    },
  ),

  // §11.3/§11.4: ownership stays under a bounded ownership (queued) or blocked lease.
  'work.checkpoint': onItem(
    workGate(worker('work.checkpoint')),
    {...itemOf, childFence: true, ...ownership, lease: leaseCited, from: states('active', 'queued')},
    (at, {payload: p}, ctx) => {
      const {item} = at
      const checkpoint = {progress: p.progress, artifactHashes: [...(p.artifactHashes ?? [])].sort()}
      if (item.state === 'queued') {
        // §11.5 with ACCEPTANCE B9: a checkpoint buffered offline under a lease that session
        // replacement then revoked (decide/offline.ts admitted it) is recorded on the queued
        // WorkItem, so the owner resumes from it; owner, Ownership Epoch and start-by deadline stay.
        const lease = item.lease
        const reconciled = lease !== null && lease.state === 'revoked' && lease.revocation !== undefined
        if (!reconciled || ctx.reconciledLeaseId !== lease.leaseId || item.owner?.leaseExpiresAt === undefined)
          return refuse('INVALID_STATE_TRANSITION', 'work.checkpoint from queued')
        return one(at, 'work.checkpointed', {
          leaseId: lease.leaseId,
          checkpoint,
          ownershipLeaseExpiresAt: item.owner.leaseExpiresAt,
        })
      }
      const ownershipLeaseExpiresAt = plusSeconds(ctx.acceptedAt, leaseLengths(ctx.leases).ownershipSeconds)
      return one(at, 'work.checkpointed', {leaseId: item.lease!.leaseId, checkpoint, ownershipLeaseExpiresAt})
    },
  ),
  'work.block': onItem(
    workGate(worker('work.block')),
    {...itemOf, childFence: true, ...ownership, lease: leaseCited, from: states('active')},
    (at, {payload: p}, ctx) => {
      const checkpoint = {progress: p.requiredResolution, artifactHashes: []}
      const blockedLeaseExpiresAt = plusSeconds(ctx.acceptedAt, leaseLengths(ctx.leases).blockedSeconds)
      return one(at, 'work.blocked', {
        leaseId: at.item.lease!.leaseId,
        checkpoint,
        requiredResolution: p.requiredResolution,
        blockedLeaseExpiresAt,
      })
    },
  ),

  // §10.2: back to its queue (under a fresh ownership lease) while the owner holds live
  // ownership; after ownership expiry it is fenced and the item is open for re-offer.
  'work.unblock': onItem(
    workGate({by: 'rule', check: ownerOrCoordinator}),
    {...itemOf, childFence: true, ...ownership, from: states('blocked')},
    (at, {payload: p}, ctx) => {
      const {item} = at
      const lapsed = lapsedOwnership(item, ctx.acceptedAt)
      const resolution = p.resolution !== undefined ? {resolution: p.resolution} : {}
      if (item.owner !== null && lapsed === null) {
        return one(at, 'work.unblocked', {
          to: 'queued',
          ownershipLeaseExpiresAt: plusSeconds(ctx.acceptedAt, leaseLengths(ctx.leases).ownershipSeconds),
          ...resolution,
        })
      }
      return one(at, 'work.unblocked', {
        to: 'open',
        ...(lapsed !== null ? {fencedOwnership: lapsed} : {}),
        ...resolution,
      })
    },
  ),

  // §11.3 "every ... Worker-reported failure MUST reference the current Lease ID": the owner's
  // work.fail cites it while the WorkItem holds an active Execution Lease (a queued or blocked
  // item has none to cite, and the Coordinator's failure never does).
  'work.fail': onItem(
    workGate({by: 'rule', check: ownerOrCoordinator}),
    {
      ...itemOf,
      childFence: false,
      ...ownership,
      lease: {cited: 'while-active', leaseId: (p) => p.leaseId},
      from: UNFINISHED_WORK,
    },
    (at, {payload: p}, ctx) => {
      const revoked = at.item.lease?.state === 'active' ? {revokedLeaseId: at.item.lease.leaseId} : {}
      return endingIdle(
        at.state,
        at.item,
        one(at, 'work.failed', {reason: p.reason, evidenceHashes: [...p.evidenceHashes].sort(), ...revoked}),
        ctx,
      )
    },
  ),

  // §12: the MissionOwner grants execution approval (Organization policy actors: not yet).
  'approval.grant_execution': onItem(
    workGate({by: 'owner', reason: "execution approval is the MissionOwner's"}),
    {...itemOf, childFence: true, from: states('queued')},
    (at, command, ctx) => {
      const {item} = at
      const p = command.payload
      const owner = item.owner!
      if (!gated(item)) return refuse('INVALID_STATE_TRANSITION', 'the WorkItem needs no execution approval')
      if (p.ownershipEpoch !== owner.ownershipEpoch)
        return refuse(
          'WORK_STALE_OWNERSHIP',
          `ownershipEpoch ${String(p.ownershipEpoch)}, current ${owner.ownershipEpoch}`,
        )
      if (item.executionApproval?.ownershipEpoch === owner.ownershipEpoch)
        return refuse('INVALID_STATE_TRANSITION', 'execution is already approved')
      const approvedBy = {type: command.actor.type, id: command.actor.id}
      return one(at, 'approval.execution.granted', {
        approval: {approvedBy, ownershipEpoch: owner.ownershipEpoch, approvedAt: ctx.acceptedAt},
      })
    },
  ),
}

/**
 * §10.2: an offer only with no live owner; "an expired owner is fenced first" (§11.5: a missed
 * start deadline or an unrenewed lease) — the offer Event records the fenced ownership.
 */
function offer(at: OnItem, command: DecidedCommand<'work.offer'>, ctx: DecideContext): Decision {
  const {state, item} = at
  const p = command.payload
  const now = ctx.acceptedAt
  const lapsed = lapsedOwnership(item, now)
  if (!OFFERED_FROM.has(item.state) || (item.owner !== null && lapsed === null)) {
    return refuse('INVALID_STATE_TRANSITION', `work.offer from ${item.state}${item.owner ? ' with a live owner' : ''}`)
  }
  const unmet = unmetDependency(state, item)
  if (unmet !== null) return refuse('INVALID_STATE_TRANSITION', `ineligible until dependency ${unmet} is verified`)
  const {candidates, expiresAt} = p
  if (reached(now, expiresAt)) return refuse('INVALID_COMMAND', 'the offer would already be expired') // full precision (§2)
  const context = offeredContext(state, item, command)
  if (isRefusal(context)) return context
  const provisional = provisionalMemberships(state, item, candidates, context.contextPackageId, expiresAt, ctx)
  if (isRefusal(provisional)) return provisional
  const selectionBasis = selectionBases(item, candidates, p.selectionBasis)
  if (isRefusal(selectionBasis)) return selectionBasis
  return one(at, 'work.offer.created', {
    offer: {offerId: ctx.newId(), candidates: [...candidates], expiresAt, offeredAt: now, selectionBasis},
    // §8 step 2 / §10.3: every candidate gets what admission control and execution need with the
    // offer itself, since its visibility may start here (a just-in-time Membership, §8).
    workItem: {
      missionId: state.missionId,
      conversationId: item.conversationId,
      exclusive: item.exclusive,
      contract: item.contract,
    },
    ...(context.document !== undefined ? {contextPackage: context.document} : {}),
    ...(lapsed !== null ? {fencedOwnership: lapsed} : {}),
    ...(provisional.length > 0 ? {provisionalMemberships: provisional} : {}),
  })
}

/** §10.2: the states work.offer leaves from. */
const OFFERED_FROM: ReadonlySet<WorkState> = new Set(['open', 'offered', 'queued', 'active', 'blocked', 'failed'])

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
    (w) =>
      w.workItemId !== item.workItemId &&
      UNFINISHED_WORK.has(w.state) &&
      (w.owner?.agentId === agentId || (w.offer?.candidates.includes(agentId) ?? false)),
  )
  if (busy) return decision
  const membership = memberDoc(state, m, false, ctx.acceptedAt)
  return {
    events: [
      ...decision.events,
      {
        eventId: ctx.newId(),
        kind: 'membership.ended',
        payload: {membership, reason: 'no WorkItems left (§8 just-in-time Membership)'},
      },
    ],
  }
}

/**
 * §10.4 (ACCEPTANCE E10): the WorkItems form a DAG. A new WorkItem may depend only on WorkItems
 * already in the Group, whose own dependencies were fixed when they were authorized, so the only
 * way to close a cycle here is through the new WorkItem itself; the walk still follows the graph,
 * so dependency insertion into an existing WorkItem (decide/dependency.ts) reuses it unchanged.
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
    stack.push(...dep.contract.dependencyWorkItemIds)
  }
  return null
}

/** §10.4: a WorkItem is eligible only once every declared dependency is verified. */
export function unmetDependency(state: GroupState, item: WorkItemView): string | null {
  for (const d of item.contract.dependencyWorkItemIds) {
    if (state.workItems[d]?.state !== 'verified') return d
  }
  return null
}

/** §10.2 "none or open Work Proposal" → open: the Coordinator creates the WorkItem. */
function authorize({state}: InGroup, command: DecidedCommand<'work.authorize'>, ctx: DecideContext): Decision {
  const p = command.payload
  const workItemId = p.workItemId
  if (state.workItems[workItemId] !== undefined)
    return refuse('INVALID_STATE_TRANSITION', 'the WorkItem already exists')
  const proposalId = p.proposalId
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
    contract = p.contract
  }
  const checked = checkedContract(contract, ctx)
  if (isRefusal(checked)) return checked
  const cycle = dependencyCycle(state, workItemId, checked.dependencyWorkItemIds)
  if (cycle) return cycle
  const overAllocated = allocationCheck(state, checked.budget) // §12 G5 (decide/budget.ts)
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
    exclusive: p.exclusive ?? true,
    contract,
    createdBy,
    authorizedBy: {type: command.actor.type, id: command.actor.id},
    createdAt: ctx.acceptedAt,
  }
  return {
    events: [
      {
        eventId,
        kind: 'work.authorized',
        conversationId,
        payload: {workItem, ...(proposalId !== undefined ? {proposalId} : {})},
      },
    ],
  }
}

/**
 * §10.3: every assignment records a structured selection basis. The Coordinator states one per
 * candidate (and only for candidates); the required capabilities are the Work Contract's own, so
 * the record cannot disagree with the contract. An Agent the Coordinator itself does not find
 * authorization-eligible cannot be offered the work.
 */
function selectionBases(
  item: WorkItemView,
  candidates: string[],
  stated: Record<string, WorkOfferCandidateBasis>,
): Record<string, SelectionBasis> | Refusal {
  const named = Object.keys(stated)
  if (named.length !== candidates.length || !candidates.every((c) => Object.hasOwn(stated, c)))
    return refuse('INVALID_COMMAND', 'the selection basis must name exactly the candidates')
  const requiredCapabilities = (item.contract.requiredCapabilities as {id: string; version: string}[]).map((c) => ({
    id: c.id,
    version: c.version,
  }))
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
 * to the signed Context Package the offer cites (by ID or carried whole), and seeing history only
 * from the offer on.
 */
function provisionalMemberships(
  state: GroupState,
  item: WorkItemView,
  candidates: string[],
  contextPackageId: string | undefined,
  expiresAt: string,
  ctx: DecideContext,
) {
  const docs: Record<string, unknown>[] = []
  for (const c of candidates) {
    const m = state.members[c]
    if (m !== undefined && m.principal.type !== 'agent')
      return refuse('INVALID_COMMAND', 'every candidate must be an Agent')
    if (m?.active) continue
    if (contextPackageId === undefined)
      return refuse(
        'INVALID_COMMAND',
        `candidate ${c} has no active Membership: a just-in-time offer cites a Context Package`,
      )
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

const activated = (state: GroupState, m: MemberState, at: string) => ({
  ...memberDoc(state, m, true, at),
  contextPackageId: m.provisional!.contextPackageId,
})
