// apply(state, event) → state: the ONLY way Group state changes (ARCHITECTURE principle 2). The
// live path applies the Events it has just signed; replay folds the stored Events through the
// same function, so the two cannot drift. apply() trusts nothing about ordering: a sequence or
// revision that does not follow the state is a corrupt log and throws. Each Event kind has one
// fold in FOLDS, handed the Event with its kind's payload type (model/events.ts); the payload is
// typed once, by knownEvent(), and read without casts from there on.

import type {GroupState, MemberState, MissionView, WorkItemCore, WorkItemView} from '../model/state.js'
import {
  type ActiveMembershipDocument,
  type AppliedEvent,
  type EndedMembershipDocument,
  type EventIn,
  type EventKind,
  type EventOf,
  type MembershipDocument,
  type ProvisionalMembershipDocument,
  type WorkItemDocument,
  knownEvent,
} from '../model/events.js'
import {
  COOPERATION_REVISION_NEUTRAL,
  artifactPublished,
  delegationGranted,
  limitNotice,
  overrideConsumed,
  overrideGranted,
  messageEvent,
  trackCooperation,
} from './cooperation.js'
import {applyLeaseEvent, endUnfinishedWork, withLeaseFacts} from './lease.js'
import {archived, snapshotCreated} from './archive.js'
import {applyMissionTree, missionLinks} from './mission-tree.js'
import {CHILD_CONCLUDED, RESOURCE_USAGE_RECORDED} from '../model/mission-tree.js'
import {LATE_RESULT_RECORDED, LEASE_REVOKED} from '../model/work-leases.js'
import {MwpError} from '../../errors.js'
import {LIMIT_NOTICE, OVERRIDE_CONSUMED} from '../model/cooperation-state.js'

export type {AppliedEvent} from '../model/events.js'

export class ApplyError extends MwpError<'event-unfoldable'> {
  constructor(message: string) {
    super('event-unfoldable', message)
  }
}

/**
 * Ordinary Messages are logically concurrent conversation (§15.2), not structured state: they
 * take a sequence but leave the aggregate revision alone, so chatter never makes a structured
 * Command's `expectedRevision` stale.
 */
const REVISION_NEUTRAL: ReadonlySet<string> = new Set([
  'message.posted',
  ...COOPERATION_REVISION_NEUTRAL,
  LATE_RESULT_RECORDED,
])

/** The aggregate revision a `kind` Event carries when appended to a Group at `revision`. */
export function revisionAfter(kind: string, revision: number): number {
  return REVISION_NEUTRAL.has(kind) ? revision : revision + 1
}

/** The Events that open a Group; every other kind folds into an existing one. */
type OpeningKind = 'mission.created' | 'mission.follow_up.created'
type FoldKind = Exclude<EventKind, OpeningKind>

/** One Event kind's fold; `next` already carries the Event's sequence, revision and §20 bookkeeping. */
type Fold<K extends FoldKind> = (next: GroupState, event: EventOf<K>) => GroupState

/** The core WorkItem transitions (§10.2, §11.3): one row each in applyWork, lease facts in apply/lease.ts. */
export type WorkTransitionKind =
  | 'work.offer.created'
  | 'work.offer.accepted'
  | 'work.started'
  | 'work.submitted'
  | 'work.result.accepted'
  | 'work.cancelled'
  | 'work.checkpointed'
  | 'work.blocked'
  | 'work.unblocked'
  | 'work.failed'
  | 'approval.execution.granted'

const membershipFields = (m: MembershipDocument) => ({
  membershipId: m.membershipId,
  principal: {type: m.member.type, id: m.member.id},
  role: m.role,
  membershipEpoch: m.membershipEpoch,
  active: m.state === 'active',
  scopes: [...m.scopes],
  visibilityStartSequence: m.visibilityStartSequence,
})

/** A Membership Event's member row (also folded by a late joiner's reader, operator/visible-work.ts). */
export const memberOf = (m: ActiveMembershipDocument | EndedMembershipDocument): MemberState => ({
  ...membershipFields(m),
  // An active Membership citing a Context Package was activated by accepting a just-in-time offer.
  ...(m.state === 'active' && m.contextPackageId !== undefined ? {justInTime: true as const} : {}),
})

/** §8 just-in-time Worker Membership: granted with the offer of `workItemId`, inactive until accepted. */
export const provisionalMember = (m: ProvisionalMembershipDocument, workItemId: string): MemberState => ({
  ...membershipFields(m),
  provisional: {workItemId, expiresAt: m.provisionalExpiresAt, contextPackageId: m.contextPackageId},
})

const withMember = (members: Record<string, MemberState>, m: MemberState) => ({...members, [m.principal.id]: m})

/** §8 just-in-time Worker Membership: an offer grants provisional Memberships, acceptance activates one. */
function jitMembers(
  members: Record<string, MemberState>,
  event: EventIn<WorkTransitionKind>,
): Record<string, MemberState> {
  if (event.kind === 'work.offer.created') {
    let out = members
    for (const m of event.payload.provisionalMemberships ?? [])
      out = withMember(out, provisionalMember(m, event.payload.workItemId))
    return out
  }
  const activated = event.kind === 'work.offer.accepted' ? event.payload.activatedMembership : undefined
  return activated === undefined ? members : withMember(members, memberOf(activated))
}

export function apply(state: GroupState | null, event: AppliedEvent): GroupState {
  const sequence = (state?.sequence ?? 0) + 1
  if (event.sequence !== sequence)
    throw new ApplyError(`event sequence ${event.sequence} does not follow ${sequence - 1}`)
  const revision = revisionAfter(event.kind, state?.revision ?? 0)
  if (event.aggregateRevision !== revision)
    throw new ApplyError(`event ${event.sequence} carries revision ${event.aggregateRevision}, expected ${revision}`)
  if (state !== null && event.groupId !== state.groupId)
    throw new ApplyError(`event for Group ${event.groupId} applied to ${state.groupId}`)
  const known = knownEvent(event)
  if (known !== null && (known.kind === 'mission.created' || known.kind === 'mission.follow_up.created')) {
    if (state !== null) throw new ApplyError(`${event.kind} on an existing Group`)
    return opened(known, revision, sequence)
  }
  if (state === null) throw new ApplyError(`${event.kind} before mission.created`)
  if (known === null) throw new ApplyError(`unknown Event kind ${event.kind}`)
  return fold(trackCooperation({...state, revision, sequence}, known), known)
}

/** Hands the Event to its kind's fold, typed. */
function fold<K extends FoldKind>(next: GroupState, event: EventOf<K>): GroupState {
  const f: Fold<K> = FOLDS[event.kind]
  return f(next, event)
}

function opened(event: EventIn<OpeningKind>, revision: number, sequence: number): GroupState {
  const p = event.payload
  const m = p.mission
  const owner = memberOf(p.membership)
  const mission: MissionView = {
    missionId: m.missionId,
    state: m.state,
    missionOwner: {type: m.missionOwner.type, id: m.missionOwner.id},
    objective: m.objective,
    definitionOfDone: m.definitionOfDone,
    deadline: m.deadline,
    budget: m.budget,
    approvalPolicy: m.approvalPolicy,
    createdAt: m.createdAt,
    ...missionLinks(event), // §14 parent / §7.1 follow-up links (apply/mission-tree.ts)
    coordinator: null,
    submission: null,
  }
  return {
    groupId: event.groupId,
    missionId: m.missionId,
    revision,
    sequence,
    conversationId: p.conversationId,
    mission,
    members: {[owner.principal.id]: owner},
    proposals: {},
    workItems: {},
  }
}

/** Assignment carries the (new or bumped) Coordinator Membership; renewal only the lease. */
function coordinatorChanged(
  next: GroupState,
  event: EventIn<'mission.coordinator.assigned' | 'mission.coordinator.renewed'>,
): GroupState {
  const {agentId, coordinatorEpoch, leaseId, leaseExpiresAt} = event.payload.coordinator
  const coordinator = {agentId, coordinatorEpoch, leaseId, leaseExpiresAt}
  const members =
    event.kind === 'mission.coordinator.assigned'
      ? withMember(next.members, memberOf(event.payload.membership))
      : next.members
  return {...next, mission: {...next.mission, coordinator}, members}
}

/** The WorkItem a work.authorized Event creates (also the first sight of it for a late-joining reader, operator/visible-work.ts). */
export function authorizedWorkItem(w: WorkItemDocument): WorkItemView {
  return {
    workItemId: w.workItemId,
    conversationId: w.conversationId,
    revision: w.revision,
    state: w.state,
    exclusive: w.exclusive,
    contract: w.contract,
    createdBy: {type: w.createdBy.type, id: w.createdBy.id},
    authorizedBy: {type: w.authorizedBy.type, id: w.authorizedBy.id},
    createdAt: w.createdAt,
    offer: null,
    owner: null,
    ownershipEpoch: 0,
    lease: null,
    submission: null,
    checkpoint: null,
    blocker: null,
    executionApproval: null,
    failure: null,
  }
}

function workAuthorized(next: GroupState, event: EventOf<'work.authorized'>): GroupState {
  const item = authorizedWorkItem(event.payload.workItem)
  const proposals = {...next.proposals}
  if (event.payload.proposalId !== undefined) delete proposals[event.payload.proposalId]
  return {...next, proposals, workItems: {...next.workItems, [item.workItemId]: item}}
}

function workTransition(next: GroupState, event: EventIn<WorkTransitionKind>): GroupState {
  const id = event.payload.workItemId
  const item = next.workItems[id]
  if (item === undefined) throw new ApplyError(`${event.kind} for unknown WorkItem ${id}`)
  return {
    ...next,
    members: jitMembers(next.members, event),
    workItems: {...next.workItems, [id]: workItemTransition(item, event)},
  }
}

/**
 * One core WorkItem transition with its lease facts: apply()'s fold of the WorkItem itself, also
 * for a reader that holds only the WorkItems it sees (operator/visible-work.ts).
 */
export function workItemTransition<W extends WorkItemCore>(item: W, event: EventIn<WorkTransitionKind>): W {
  return withLeaseFacts(item, applyWork(item, event), event)
}

/** Every Event kind but the opening ones, to its fold. */
const FOLDS: {readonly [K in FoldKind]: Fold<K>} = {
  'mission.coordinator.assigned': coordinatorChanged,
  'mission.coordinator.renewed': coordinatorChanged,
  'mission.submitted_for_approval': (next, {payload: p}) => ({
    ...next,
    mission: {
      ...next.mission,
      state: 'awaiting_approval',
      submission: {missionRevision: p.missionRevision, artifactHashes: [...p.artifactHashes]},
    },
  }),
  'mission.changes_requested': (next) => ({...next, mission: {...next.mission, state: 'active', submission: null}}),
  'mission.approved': (next) => ({...next, mission: {...next.mission, state: 'approved'}}),
  // §10.2: a cancelled or failed Mission also ends its unfinished WorkItems (apply/lease.ts).
  'mission.cancelled': (next, event) =>
    endUnfinishedWork<WorkItemView, GroupState>({...next, mission: {...next.mission, state: 'cancelled'}}, event),
  'mission.terminated': (next, event) =>
    endUnfinishedWork<WorkItemView, GroupState>({...next, mission: {...next.mission, state: 'failed'}}, event),
  'membership.changed': (next, {payload: p}) => ({...next, members: withMember(next.members, memberOf(p.membership))}),
  'membership.ended': (next, {payload: p}) => ({...next, members: withMember(next.members, memberOf(p.membership))}),
  'work.proposed': (next, {payload: {proposal: pr}}) => {
    const proposal = {
      proposalId: pr.proposalId,
      proposedBy: {type: pr.proposedBy.type, id: pr.proposedBy.id},
      contract: pr.contract,
      proposedAt: pr.proposedAt,
    }
    return {...next, proposals: {...next.proposals, [pr.proposalId]: proposal}}
  },
  'work.authorized': workAuthorized,
  'work.offer.created': workTransition,
  'work.offer.accepted': workTransition,
  'work.started': workTransition,
  'work.submitted': workTransition,
  'work.result.accepted': workTransition,
  'work.cancelled': workTransition,
  'work.checkpointed': workTransition,
  'work.blocked': workTransition,
  'work.unblocked': workTransition,
  'work.failed': workTransition,
  'approval.execution.granted': workTransition,
  'work.progressed': applyLeaseEvent,
  'work.contract.revised': applyLeaseEvent,
  [LATE_RESULT_RECORDED]: applyLeaseEvent,
  [LEASE_REVOKED]: applyLeaseEvent,
  // Messages live in the log; the state keeps only the index later corrections need (§9.1).
  'message.posted': messageEvent,
  'message.corrected': messageEvent,
  'message.retracted': messageEvent,
  'message.redacted': messageEvent,
  'artifact.published': artifactPublished,
  'membership.delegation.granted': delegationGranted,
  'policy.cooperation_override.granted': overrideGranted,
  [OVERRIDE_CONSUMED]: overrideConsumed,
  [LIMIT_NOTICE]: limitNotice,
  'mission.child.created': applyMissionTree,
  [CHILD_CONCLUDED]: applyMissionTree,
  [RESOURCE_USAGE_RECORDED]: applyMissionTree,
  'group.snapshot.created': snapshotCreated,
  'group.archived': archived,
}

/** One WorkItem transition (§10.2); the decider has already checked the row. */
function applyWork<W extends WorkItemCore>(item: W, event: EventIn<WorkTransitionKind>): W {
  const revision = event.payload.revision
  if (revision !== item.revision + 1)
    throw new ApplyError(`${event.kind} carries WorkItem revision ${revision}, expected ${item.revision + 1}`)
  const base = {...item, revision}
  switch (event.kind) {
    case 'work.offer.created': {
      const o = event.payload.offer
      return {
        ...base,
        state: 'offered',
        offer: {
          offerId: o.offerId,
          candidates: [...o.candidates],
          expiresAt: o.expiresAt,
          ...(o.selectionBasis ? {selectionBasis: o.selectionBasis} : {}),
        },
      }
    }
    case 'work.offer.accepted': {
      // §10.3: the winner holds a new Ownership Epoch; every losing offer is withdrawn.
      const {owner: o, selectionBasis} = event.payload
      return {
        ...base,
        state: 'queued',
        offer: null,
        owner: {agentId: o.agentId, ownershipEpoch: o.ownershipEpoch, sessionEpoch: o.sessionEpoch},
        ownershipEpoch: o.ownershipEpoch,
        ...(selectionBasis ? {selectionBasis} : {}),
      }
    }
    case 'work.started': {
      const l = event.payload.lease
      return {
        ...base,
        state: 'active',
        lease: {
          leaseId: l.leaseId,
          holderAgentId: l.holderAgentId,
          sessionEpoch: l.sessionEpoch,
          ownershipEpoch: l.ownershipEpoch,
          issuedAt: l.issuedAt,
          state: 'active',
        },
      }
    }
    case 'work.submitted':
      // §11.3: submission releases the Execution Lease.
      return {
        ...base,
        state: 'submitted',
        lease: item.lease && {...item.lease, state: 'released'},
        submission: {
          artifactHashes: [...event.payload.artifactHashes],
          evidence: event.payload.evidence.map(({signingHash, document: d}) => ({
            evidenceId: d.evidenceId,
            signingHash,
            type: d.type,
            subject: {type: d.subject.type, id: d.subject.id},
            criterionIds: [...d.criterionIds],
            result: d.result,
            artifactHashes: [...d.artifactHashes],
            generatedBy: {type: d.generatedBy.type, id: d.generatedBy.id},
            createdAt: d.createdAt,
          })),
        },
      }
    case 'work.result.accepted':
      return {...base, state: 'verified'}
    case 'work.checkpointed':
    case 'work.blocked': {
      // §11.3: checkpoint and block release the Execution Lease; ownership is retained. A
      // checkpoint reconciled after session replacement revoked its lease (§11.5, decide/offline.ts)
      // leaves the lease revoked.
      const p = event.payload
      const released =
        item.lease && (item.lease.state === 'active' ? {...item.lease, state: 'released' as const} : item.lease)
      const checkpoint = {
        progress: p.checkpoint.progress,
        leaseId: p.leaseId,
        artifactHashes: [...p.checkpoint.artifactHashes],
      }
      if (event.kind === 'work.checkpointed') return {...base, state: 'queued', lease: released, checkpoint}
      return {
        ...base,
        state: 'blocked',
        lease: released,
        checkpoint,
        blocker: {requiredResolution: event.payload.requiredResolution},
      }
    }
    case 'work.unblocked':
      return {...base, state: event.payload.to, blocker: null}
    case 'work.failed':
      // §10.2: control returns to the Coordinator — ownership ends and an active lease is revoked.
      return {
        ...base,
        state: 'failed',
        owner: null,
        offer: null,
        executionApproval: null,
        lease: item.lease && item.lease.state === 'active' ? {...item.lease, state: 'revoked'} : item.lease,
        failure: {reason: event.payload.reason, evidenceHashes: [...event.payload.evidenceHashes]},
      }
    case 'approval.execution.granted': {
      const a = event.payload.approval
      return {
        ...base,
        executionApproval: {
          approvedBy: {type: a.approvedBy.type, id: a.approvedBy.id},
          ownershipEpoch: a.ownershipEpoch,
          approvedAt: a.approvedAt,
        },
      }
    }
    case 'work.cancelled':
      // Cancellation revokes an active lease (§11.3).
      return {
        ...base,
        state: 'cancelled',
        lease: item.lease && item.lease.state === 'active' ? {...item.lease, state: 'revoked'} : item.lease,
      }
  }
}
