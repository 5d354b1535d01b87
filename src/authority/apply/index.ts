// apply(state, event) → state: the ONLY way Group state changes (ARCHITECTURE principle 2). The
// live path applies the Events it has just signed; replay folds the stored Events through the
// same function, so the two cannot drift. apply() trusts nothing about ordering: a sequence or
// revision that does not follow the state is a corrupt log and throws.

import type {CoordinatorState, SelectionBasis, ExecutionApprovalView, ExecutionLeaseView, GroupState, MemberRole, MemberState, MissionState, MissionView, WorkItemView, WorkOfferView, WorkOwnerView} from '../model/state.js'
import type {Principal} from '../../signing/profiles.js'
import {COOPERATION_EVENT_KINDS, COOPERATION_REVISION_NEUTRAL, applyCooperation, recordMessage, trackCooperation} from './cooperation.js'
import {LEASE_EVENT_KINDS, applyLeaseEvent, endUnfinishedWork, withLeaseFacts} from './lease.js'
import {ARCHIVE_EVENT_KINDS, applyArchiveEvent} from './archive.js'
import {MISSION_TREE_EVENT_KINDS, applyMissionTree, missionLinks} from './mission-tree.js'
import {LATE_RESULT_RECORDED} from '../model/work-leases.js'
import {MwpError} from '../../errors.js'

/** The Event fields apply() reads (a parsed, verified Event document). */
export interface AppliedEvent {
  kind: string
  groupId: string
  sequence: number
  aggregateRevision: number
  payload: Record<string, unknown>
  /** Read by the §20 rate buckets (apply-cooperation.ts); always present in a signed Event. */
  actor?: {type: string; id: string}
  occurredAt?: string
}

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
const REVISION_NEUTRAL: ReadonlySet<string> = new Set(['message.posted', ...COOPERATION_REVISION_NEUTRAL, LATE_RESULT_RECORDED])

/** The aggregate revision a `kind` Event carries when appended to a Group at `revision`. */
export function revisionAfter(kind: string, revision: number): number {
  return REVISION_NEUTRAL.has(kind) ? revision : revision + 1
}

interface MembershipPayload {
  membershipId: string
  member: Principal
  role: MemberRole
  membershipEpoch: number
  state: string
  scopes: string[]
  visibilityStartSequence: number
  provisionalExpiresAt?: string
  contextPackageId?: string
  workItemId?: string
}

const memberOf = (m: MembershipPayload): MemberState => ({
  membershipId: m.membershipId,
  principal: {type: m.member.type, id: m.member.id},
  role: m.role,
  membershipEpoch: m.membershipEpoch,
  active: m.state === 'active',
  scopes: [...m.scopes],
  visibilityStartSequence: m.visibilityStartSequence,
  ...(m.state === 'provisional' ? {provisional: {workItemId: m.workItemId!, expiresAt: m.provisionalExpiresAt!, contextPackageId: m.contextPackageId!}} : {}),
  // An active Membership citing a Context Package was activated by accepting a just-in-time offer.
  ...(m.state === 'active' && m.contextPackageId !== undefined ? {justInTime: true as const} : {}),
})

/** §8 just-in-time Worker Membership: an offer grants provisional Memberships, acceptance activates one. */
function jitMembers(members: Record<string, MemberState>, p: Record<string, unknown>): Record<string, MemberState> {
  let out = members
  for (const m of (p.provisionalMemberships as (MembershipPayload & {workItemId: string})[] | undefined) ?? []) out = withMember(out, memberOf({...m, workItemId: p.workItemId as string}))
  if (p.activatedMembership !== undefined) out = withMember(out, memberOf(p.activatedMembership as MembershipPayload))
  return out
}

const TERMINAL_BY_EVENT: Readonly<Record<string, MissionState>> = {
  'mission.approved': 'approved',
  'mission.cancelled': 'cancelled',
  'mission.terminated': 'failed',
}

const withMember = (members: Record<string, MemberState>, m: MemberState) => ({...members, [m.principal.id]: m})

export function apply(state: GroupState | null, event: AppliedEvent): GroupState {
  const sequence = (state?.sequence ?? 0) + 1
  if (event.sequence !== sequence) throw new ApplyError(`event sequence ${event.sequence} does not follow ${sequence - 1}`)
  const revision = revisionAfter(event.kind, state?.revision ?? 0)
  if (event.aggregateRevision !== revision) throw new ApplyError(`event ${event.sequence} carries revision ${event.aggregateRevision}, expected ${revision}`)
  if (state !== null && event.groupId !== state.groupId) throw new ApplyError(`event for Group ${event.groupId} applied to ${state.groupId}`)
  const p = event.payload

  if (event.kind === 'mission.created' || event.kind === 'mission.follow_up.created') {
    if (state !== null) throw new ApplyError(`${event.kind} on an existing Group`)
    const m = p.mission as Omit<MissionView, 'coordinator' | 'submission'>
    const owner = memberOf(p.membership as MembershipPayload)
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
      ...missionLinks(m, p), // §14 parent / §7.1 follow-up links (apply-mission-tree.ts)
      coordinator: null,
      submission: null,
    }
    return {
      groupId: event.groupId,
      missionId: m.missionId,
      revision,
      sequence,
      conversationId: p.conversationId as string,
      mission,
      members: {[owner.principal.id]: owner},
      proposals: {},
      workItems: {},
    }
  }

  if (state === null) throw new ApplyError(`${event.kind} before mission.created`)
  const next = trackCooperation({...state, revision, sequence}, event)
  switch (event.kind) {
    case 'mission.coordinator.assigned':
    case 'mission.coordinator.renewed': {
      // Assignment carries the (new or bumped) Coordinator Membership; renewal only the lease.
      const c = p.coordinator as CoordinatorState
      const coordinator: CoordinatorState = {agentId: c.agentId, coordinatorEpoch: c.coordinatorEpoch, leaseId: c.leaseId, leaseExpiresAt: c.leaseExpiresAt ?? null}
      const members = p.membership === undefined ? state.members : withMember(state.members, memberOf(p.membership as MembershipPayload))
      return {...next, mission: {...state.mission, coordinator}, members}
    }
    case 'mission.submitted_for_approval':
      return {
        ...next,
        mission: {
          ...state.mission,
          state: 'awaiting_approval',
          submission: {missionRevision: p.missionRevision as number, artifactHashes: [...(p.artifactHashes as string[])]},
        },
      }
    case 'mission.changes_requested':
      return {...next, mission: {...state.mission, state: 'active', submission: null}}
    case 'mission.approved':
    case 'mission.cancelled':
    case 'mission.terminated':
      // §10.2: a cancelled or failed Mission also ends its unfinished WorkItems (apply-lease.ts).
      return endUnfinishedWork({...next, mission: {...state.mission, state: TERMINAL_BY_EVENT[event.kind]!}}, event.kind, p.reason)
    case 'membership.changed':
    case 'membership.ended':
      return {...next, members: withMember(state.members, memberOf(p.membership as MembershipPayload))}
    case 'work.proposed': {
      const pr = p.proposal as {proposalId: string; proposedBy: {type: 'human' | 'agent' | 'service'; id: string}; contract: Record<string, unknown>; proposedAt: string}
      return {...next, proposals: {...state.proposals, [pr.proposalId]: {proposalId: pr.proposalId, proposedBy: {type: pr.proposedBy.type, id: pr.proposedBy.id}, contract: pr.contract, proposedAt: pr.proposedAt}}}
    }
    case 'work.authorized': {
      const w = p.workItem as Omit<WorkItemView, 'offer' | 'owner' | 'ownershipEpoch' | 'lease' | 'submission' | 'checkpoint' | 'blocker' | 'executionApproval' | 'failure'>
      const item: WorkItemView = {
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
      const proposals = {...state.proposals}
      if (typeof p.proposalId === 'string') delete proposals[p.proposalId]
      return {...next, proposals, workItems: {...state.workItems, [item.workItemId]: item}}
    }
    case 'work.offer.created':
    case 'work.offer.accepted':
    case 'work.started':
    case 'work.submitted':
    case 'work.result.accepted':
    case 'work.cancelled':
    case 'work.checkpointed':
    case 'work.blocked':
    case 'work.unblocked':
    case 'work.failed':
    case 'approval.execution.granted':
      return {
        ...next,
        members: jitMembers(state.members, p),
        workItems: {...state.workItems, [p.workItemId as string]: withLeaseFacts(state.workItems[p.workItemId as string]!, applyWork(state, event), event)},
      }
    case 'message.posted':
      // Messages live in the log; the state keeps only the index later corrections need (§9.1).
      return recordMessage(next, p)
    default:
      if (COOPERATION_EVENT_KINDS.has(event.kind)) return applyCooperation(next, event.kind, p)
      if (MISSION_TREE_EVENT_KINDS.has(event.kind)) return applyMissionTree(next, event.kind, p)
      if (LEASE_EVENT_KINDS.has(event.kind)) return applyLeaseEvent(next, event)
      if (ARCHIVE_EVENT_KINDS.has(event.kind)) return applyArchiveEvent(next, event)
      throw new ApplyError(`unknown Event kind ${event.kind}`)
  }
}

/** One WorkItem transition (§10.2); the decider has already checked the row. */
function applyWork(state: GroupState, event: AppliedEvent): WorkItemView {
  const p = event.payload
  const item = state.workItems[p.workItemId as string]
  if (item === undefined) throw new ApplyError(`${event.kind} for unknown WorkItem ${String(p.workItemId)}`)
  const revision = p.revision as number
  if (revision !== item.revision + 1) throw new ApplyError(`${event.kind} carries WorkItem revision ${revision}, expected ${item.revision + 1}`)
  const base = {...item, revision}
  switch (event.kind) {
    case 'work.offer.created': {
      const o = p.offer as WorkOfferView
      return {...base, state: 'offered', offer: {offerId: o.offerId, candidates: [...o.candidates], expiresAt: o.expiresAt, ...(o.selectionBasis ? {selectionBasis: o.selectionBasis} : {})}}
    }
    case 'work.offer.accepted': {
      // §10.3: the winner holds a new Ownership Epoch; every losing offer is withdrawn.
      const o = p.owner as WorkOwnerView
      const selectionBasis = p.selectionBasis as SelectionBasis | undefined
      return {...base, state: 'queued', offer: null, owner: {agentId: o.agentId, ownershipEpoch: o.ownershipEpoch, sessionEpoch: o.sessionEpoch}, ownershipEpoch: o.ownershipEpoch, ...(selectionBasis ? {selectionBasis} : {})}
    }
    case 'work.started': {
      const l = p.lease as ExecutionLeaseView
      return {
        ...base,
        state: 'active',
        lease: {leaseId: l.leaseId, holderAgentId: l.holderAgentId, sessionEpoch: l.sessionEpoch, ownershipEpoch: l.ownershipEpoch, issuedAt: l.issuedAt, state: 'active'},
      }
    }
    case 'work.submitted':
      // §11.3: submission releases the Execution Lease.
      return {...base, state: 'submitted', lease: item.lease && {...item.lease, state: 'released'}, submission: {artifactHashes: [...(p.artifactHashes as string[])]}}
    case 'work.result.accepted':
      return {...base, state: 'verified'}
    case 'work.checkpointed':
    case 'work.blocked': {
      // §11.3: checkpoint and block release the Execution Lease; ownership is retained.
      const c = p.checkpoint as {progress: string; artifactHashes: string[]}
      const released = item.lease && {...item.lease, state: 'released' as const}
      const checkpoint = {progress: c.progress, leaseId: p.leaseId as string, artifactHashes: [...c.artifactHashes]}
      if (event.kind === 'work.checkpointed') return {...base, state: 'queued', lease: released, checkpoint}
      return {...base, state: 'blocked', lease: released, checkpoint, blocker: {requiredResolution: p.requiredResolution as string}}
    }
    case 'work.unblocked':
      return {...base, state: p.to as 'queued' | 'open', blocker: null}
    case 'work.failed':
      // §10.2: control returns to the Coordinator — ownership ends and an active lease is revoked.
      return {
        ...base,
        state: 'failed',
        owner: null,
        offer: null,
        executionApproval: null,
        lease: item.lease && item.lease.state === 'active' ? {...item.lease, state: 'revoked'} : item.lease,
        failure: {reason: p.reason as string, evidenceHashes: [...(p.evidenceHashes as string[])]},
      }
    case 'approval.execution.granted': {
      const a = p.approval as ExecutionApprovalView
      return {...base, executionApproval: {approvedBy: {type: a.approvedBy.type, id: a.approvedBy.id}, ownershipEpoch: a.ownershipEpoch, approvedAt: a.approvedAt}}
    }
    default:
      // work.cancelled: cancellation revokes an active lease (§11.3).
      return {...base, state: 'cancelled', lease: item.lease && item.lease.state === 'active' ? {...item.lease, state: 'revoked'} : item.lease}
  }
}
