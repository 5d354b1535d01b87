// The Group Events this authority emits (spec §7, §8, §9, §10, §11, §12, §13, §14, §15.2, §20),
// one payload type per kind: what decide/** writes into each EventDraft, which is what apply()
// folds and what a reader of the Group log finds. Organization-scoped facts (Agent Card
// registration, Session activation) are not Group Events and are not folded, so they are not here.
//
// The payload documents embedded in Events (Mission, Membership, WorkItem, Message, grants) keep
// their schema's shape; where a state view holds the same members (state.ts, cooperation-state.ts,
// mission-tree.ts), the payload type is written from that view, so the two cannot drift apart.

import type {Principal} from '../../signing/profiles.js'
import type {Signature, WorkContract} from './payloads.generated.js'
import type {Budget, Remaining, UsageDelta} from './budget.js'
import {LIMIT_NOTICE, OVERRIDE_CONSUMED, type DelegationGrantView, type OverrideGrantView} from './cooperation-state.js'
import {
  CHILD_CONCLUDED,
  RESOURCE_USAGE_RECORDED,
  type ChildFailurePolicy,
  type ChildMissionLink,
  type MissionParentLink,
  type Usage,
} from './mission-tree.js'
import type {
  CheckpointView,
  CoordinatorState,
  EndedOwnershipView,
  ExecutionApprovalView,
  ExecutionLeaseView,
  GroupState,
  LateResultView,
  MemberRole,
  MissionView,
  SelectionBasis,
  SubmittedEvidence,
  WorkItemView,
  WorkOfferView,
  WorkOwnerView,
  WorkProposalView,
  WorkState,
} from './state.js'
import {LATE_RESULT_RECORDED, LEASE_REVOKED} from './work-leases.js'

// ---------------------------------------------------------------------------------------------
// Documents carried in payloads

/** A signed document carried whole (an Approval, an Evidence record): the fold reads none of its members. */
export type CarriedDocument = Record<string, unknown>

/** mission.schema.json as mission.create / create_child / create_follow_up write it (decide/mission.ts openingEvents). */
type MissionDocumentFields =
  | 'missionId'
  | 'state'
  | 'missionOwner'
  | 'objective'
  | 'definitionOfDone'
  | 'deadline'
  | 'budget'
  | 'approvalPolicy'
  | 'createdAt'

export interface MissionDocument extends Pick<MissionView, MissionDocumentFields> {
  groupId: string
  /** §14: a child Mission's parent; the schema's `parent` has no Group ID (it rides beside, as parentGroupId). */
  parent?: Omit<MissionParentLink, 'groupId'>
  /** §7.1: the approved Mission a follow-up continues (its Group rides beside, as followUpToGroupId). */
  followUpToMissionId?: string
}

/** membership.schema.json members every Membership document carries (decide/common.ts membershipDoc). */
interface MembershipFields {
  membershipId: string
  missionId: string
  groupId: string
  member: Principal
  role: MemberRole
  membershipEpoch: number
  scopes: string[]
  visibilityStartSequence: number
  grantedAt: string
}

export interface ActiveMembershipDocument extends MembershipFields {
  state: 'active'
  activatedAt: string
  /** §8 just-in-time: the Context Package of the offer whose acceptance activated it. */
  contextPackageId?: string
}

export interface EndedMembershipDocument extends MembershipFields {
  state: 'ended'
  endedAt: string
}

/** §8 just-in-time Worker Membership, granted with an offer (decide/work.ts provisionalMemberships). */
export interface ProvisionalMembershipDocument extends MembershipFields {
  state: 'provisional'
  contextPackageId: string
  provisionalExpiresAt: string
}

export type MembershipDocument = ActiveMembershipDocument | EndedMembershipDocument | ProvisionalMembershipDocument

/** work-item.schema.json as work.authorize writes it. */
type WorkItemDocumentFields =
  | 'workItemId'
  | 'conversationId'
  | 'revision'
  | 'state'
  | 'exclusive'
  | 'contract'
  | 'createdBy'
  | 'authorizedBy'
  | 'createdAt'

export interface WorkItemDocument extends Pick<WorkItemView, WorkItemDocumentFields> {
  missionId: string
  groupId: string
}

/** §10.3: the ownership grant of the first valid acceptance, with its start-by deadline (§11.3). */
export interface OwnershipGrant extends Omit<WorkOwnerView, 'leaseExpiresAt'> {
  grantedAt: string
  startBy: string
}

/** lease.schema.json: the Execution Lease work.start issues. */
export interface ExecutionLeaseDocument extends Omit<ExecutionLeaseView, 'state' | 'lastRenewedAt'> {
  leaseType: 'execution'
  missionId: string
  groupId: string
  workItemId: string
  startsAt: string
  expiresAt: string
  state: 'active'
  renewalCount: number
}

/** message.schema.json as the Message decisions write it (decide/message.ts). */
export interface MessageDocument {
  messageId: string
  missionId: string
  groupId: string
  conversationId: string
  author: Principal
  kind: 'message' | 'correction' | 'retraction' | 'redaction'
  authority: false
  content: {type: 'text'; text: string}[]
  committedAt: string
  references?: string[]
  /** Corrections, retractions and redactions name the Message they follow up. */
  targetMessageId?: string
  reason?: string
}

/** artifact.schema.json: the verified manifest (§13.1); the members the authority reads. */
export interface ArtifactManifest {
  artifactId: string
  contentHash: string
  missionId: string
  groupId: string
  workItemId: string
  producer: {agentId: string}
}

/** evidence.schema.json (§13.2): a verified Evidence document; the members the authority reads. */
export interface EvidenceDocument {
  evidenceId: string
  missionId: string
  groupId: string
  workItemId: string
  type: SubmittedEvidence['type']
  subject: SubmittedEvidence['subject']
  criterionIds: string[]
  method: string
  result: SubmittedEvidence['result']
  artifactHashes: string[]
  generatedBy: Principal
  createdAt: string
}

/** context-package.schema.json (§13.3): a signed, scoped summary citing its source Events. */
export interface ContextPackageDocument {
  contextPackageId: string
  version: number
  previousContextPackageId?: string
  missionId: string
  groupId: string
  workItemId?: string
  sourceEventRange: {fromSequence: number; toSequence: number; eventIds: string[]}
  artifactHashes: string[]
  summary: string
  decisions: {description: string; sourceEventIds: string[]}[]
  constraints: string[]
  unresolvedQuestions: string[]
  generatedBy: Principal
  generatedAt: string
  extensions?: Record<string, unknown>
  signature: Signature
}

/** group-snapshot.schema.json: the verified final snapshot (§7.4); the members the authority reads. */
export type GroupSnapshotDocument = {
  snapshotId: string
  groupId: string
  throughSequence: number
  stateHash: string
}

// ---------------------------------------------------------------------------------------------
// Payloads

/** Every WorkItem transition names its WorkItem and the WorkItem revision it produces. */
export interface WorkItemStep {
  workItemId: string
  revision: number
}

/** §9.1: how a work.authorize / work.offer was authorized, if not by the Coordinator (decide/delegation.ts). */
export interface WorkAuthorityMark {
  delegation?: {grantId: string; parentWorkItemId?: string}
  ownerOverride?: {reason: string}
}

/** An active Execution Lease revoked by the transition, if there was one. */
interface RevokedLease {
  revokedLeaseId?: string
}

export interface MissionCreatedPayload {
  mission: MissionDocument
  conversationId: string
  membership: ActiveMembershipDocument
  /** §14: present on a child Mission (mission.create_child). */
  parentGroupId?: string
}

export interface MissionFollowUpCreatedPayload extends MissionCreatedPayload {
  followUpToGroupId: string
}

export interface CoordinatorAssignedPayload {
  coordinator: CoordinatorState
  /** The new Coordinator's Membership, or the existing one with its epoch raised (§8). */
  membership: ActiveMembershipDocument
}

/** §7.2: renewal moves the lease expiry only. */
export interface CoordinatorRenewedPayload {
  coordinator: CoordinatorState
}

export interface MissionSubmittedPayload {
  missionId: string
  missionRevision: number
  artifactHashes: string[]
}

export interface MissionChangesRequestedPayload {
  missionId: string
  reason: string
}

export interface MissionApprovedPayload {
  missionId: string
  approval: CarriedDocument
  /** §14: the root human MissionOwner's Approval, when the child Mission's policy asks for it. */
  rootApproval?: CarriedDocument
}

/** mission.cancelled and mission.terminated: by a Command, or propagated through the Mission tree (§14). */
export interface MissionEndedPayload {
  missionId: string
  reason: string
  propagatedFrom?: {missionId: string; groupId: string}
}

export interface MembershipChangedPayload {
  membership: ActiveMembershipDocument
}

export interface MembershipEndedPayload {
  membership: EndedMembershipDocument
  reason?: string
}

export interface WorkProposedPayload {
  proposal: WorkProposalView
}

export interface WorkAuthorizedPayload extends WorkAuthorityMark {
  workItem: WorkItemDocument
  /** The Work Proposal this authorizes, closed by it. */
  proposalId?: string
}

/**
 * §8 step 2 / §10.3: the WorkItem as a candidate needs it for admission control and execution. A
 * just-in-time Membership sees history only from the offer on, so the offer carries the current
 * Work Contract itself (after a work.contract.revised, the revised one), not a reference to it.
 */
export interface OfferedWorkItem {
  missionId: string
  conversationId: string
  exclusive: boolean
  contract: WorkContract
}

export interface WorkOfferCreatedPayload extends WorkItemStep, WorkAuthorityMark {
  offer: WorkOfferView & {offeredAt: string}
  workItem: OfferedWorkItem
  /** §8 step 2: the signed Context Package the offer came with, as verified on ingress (its ID alone is state). */
  contextPackage?: ContextPackageDocument
  /** §10.2/§11.5: the lapsed ownership the re-offer fenced. */
  fencedOwnership?: EndedOwnershipView
  provisionalMemberships?: ProvisionalMembershipDocument[]
}

export interface WorkOfferAcceptedPayload extends WorkItemStep {
  offerId: string
  owner: OwnershipGrant
  selectionBasis?: SelectionBasis
  activatedMembership?: ActiveMembershipDocument
}

export interface WorkStartedPayload extends WorkItemStep {
  lease: ExecutionLeaseDocument
  /** §11.5: the latest checkpoint of an earlier ownership, to resume from. */
  resumeFrom?: CheckpointView
}

/** ext.missionweaveprotocol.core.lease_renew's answer (decide/lease.ts). */
export interface WorkProgressedPayload extends WorkItemStep {
  leaseId: string
  lease: Required<Pick<ExecutionLeaseView, 'expiresAt' | 'renewalCount' | 'lastRenewedAt'>>
  progress: Record<string, unknown>
}

export interface WorkSubmittedPayload extends WorkItemStep {
  leaseId: string
  artifactHashes: string[]
  /**
   * §13.2: the verified Evidence documents, in submitted order, each with its signing hash. The
   * documents live here, in the log; the WorkItem state keeps only their IDs, hashes and mapping.
   */
  evidence: {signingHash: string; document: EvidenceDocument}[]
}

export interface WorkResultAcceptedPayload extends WorkItemStep {
  artifactHashes: string[]
}

export interface WorkCheckpointedPayload extends WorkItemStep {
  leaseId: string
  checkpoint: Omit<CheckpointView, 'leaseId'>
  ownershipLeaseExpiresAt: string
}

export interface WorkBlockedPayload extends WorkItemStep {
  leaseId: string
  checkpoint: Omit<CheckpointView, 'leaseId'>
  requiredResolution: string
  blockedLeaseExpiresAt: string
}

/** §10.2: back to the queue under a fresh ownership lease, or open after the ownership lapsed. */
export type WorkUnblockedPayload = WorkItemStep & {resolution?: string} & (
    {to: 'queued'; ownershipLeaseExpiresAt: string} | {to: 'open'; fencedOwnership?: EndedOwnershipView}
  )

export interface WorkFailedPayload extends WorkItemStep, RevokedLease {
  reason: string
  evidenceHashes: string[]
}

export interface WorkCancelledPayload extends WorkItemStep, RevokedLease {
  reason: string
}

export interface ExecutionApprovalGrantedPayload extends WorkItemStep {
  approval: ExecutionApprovalView
}

/** ext.missionweaveprotocol.core.dependency_insert's answer (decide/dependency.ts). */
export type WorkContractRevisedPayload = WorkItemStep & {
  contract: WorkContract
  addedDependencyWorkItemIds: string[]
  reason?: string
  /** §10.1: the pending offer, made under the old contract, is withdrawn. */
  withdrawnOfferId?: string
} &
  // An active item that gained an unmet dependency waits in its queue under an ownership lease.
  (
    | {revokedLeaseId: string; ownershipLeaseExpiresAt: string}
    | {revokedLeaseId?: never; ownershipLeaseExpiresAt?: never}
  )

export interface ArtifactPublishedPayload {
  workItemId: string
  leaseId: string
  artifact: ArtifactManifest
  publishedAt: string
}

export interface MessagePostedPayload {
  message: MessageDocument
}

/** message.corrected, message.retracted, message.redacted: a new Message naming the original (§9.1). */
export interface MessageFollowUpPayload {
  targetMessageId: string
  message: MessageDocument
  /** message.redacted only: the policy the redaction invokes. */
  policy?: string
}

export interface DelegationGrantedPayload {
  grant: Omit<DelegationGrantView, 'subtree' | 'charged'> & {missionId: string; groupId: string}
}

export interface CooperationOverrideGrantedPayload {
  grant: Omit<OverrideGrantView, 'consumedBy'> & {missionId: string; groupId: string}
}

/** §20: the Command a Cooperation Override Grant let through (decide/rate-limits.ts cooperationGate). */
export interface OverrideConsumedPayload {
  grantId: string
  policy: string
  targetKind: string
  targetActionId: string
  targetEventId: string
}

/** §20: the soft limit reached, for the Coordinator. */
export interface LimitNoticePayload {
  policy: string
  actor: Principal
  count: number
  softLimit: number
  hardLimit: number
  windowMinutes?: number
  notify: Principal[]
}

export interface GroupSnapshotCreatedPayload {
  snapshot: GroupSnapshotDocument
  snapshotHash: string
  /** The Group state the snapshot's stateHash covers. */
  state: GroupState
}

export interface GroupArchivedPayload {
  snapshotId: string
  snapshotHash: string
  throughSequence: number
  archivedAt: string
}

/** §14: the parent side of mission.create_child (decide/child.ts createChild). */
export interface MissionChildCreatedPayload extends WorkItemStep, RevokedLease {
  child: {
    missionId: string
    groupId: string
    depth: number
    missionOwner: Principal
    coordinatorAgentId: string
    budget: Budget
    deadline: string
    requiredCapabilities: {id: string; version: string}[]
    allowedResources: {resource: string; operations: string[]}[]
    failurePolicy: ChildFailurePolicy
  }
  fencedOwnershipEpoch?: number
}

/** §10.2/§14: a linked child Mission reached a terminal state (decide/child.ts childOutcome). */
export interface ChildConcludedPayload extends WorkItemStep {
  child: {missionId: string; groupId: string}
  outcome: Exclude<ChildMissionLink['state'], 'running'>
  to: Extract<WorkState, 'verified' | 'blocked' | 'failed'>
  artifactHashes: string[]
  evidence: CarriedDocument
  evidenceHashes: string[]
  approval?: {approvalId?: string; artifactHashes?: string[]}
}

/** §12: one level of a usage charge (decide/budget.ts recordUsage): the charged execution, or an ancestor. */
export type ResourceUsageRecordedPayload = {
  missionId: string
  workItemId: string
  delta: UsageDelta
  cumulative: {workItem: Usage; mission: Usage}
  /** `effective` (the least remainder up the tree) on the charged execution's level only. */
  remaining: {workItem: Remaining; mission: Remaining; effective?: Remaining}
} & (
  | {
      agentId: string
      ownershipEpoch: number
      leaseId: string
      /** The session that spent it: for a reconciled offline delta (§11.5), the historical execution session. */
      sessionEpoch: number | null
      /** §11.5: a reconciled offline delta only — the session that reconciled it and when the Worker buffered it. */
      reconciliation?: {sessionEpoch: number; bufferedAt: string}
    }
  | {source: {missionId: string; groupId: string; workItemId: string}}
)

/** §4 invariant 5: a stale owner's result kept as non-authoritative Evidence (work-leases.ts lateResultDraft). */
export interface LateResultRecordedPayload extends LateResultView {
  workItemId: string
  authoritative: false
  rejectedWith: 'WORK_STALE_OWNERSHIP'
}

/**
 * §11.3 (ACCEPTANCE B9, decide/lease.ts): a replacement Agent Session revoked the owner's active
 * Execution Lease; the WorkItem is `queued` again under the same owner and Ownership Epoch, with
 * a fresh ownership lease (start-by deadline) for the new session's work.start.
 */
export interface LeaseRevokedPayload extends WorkItemStep {
  agentId: string
  ownershipEpoch: number
  /** The revoked Execution Lease and the Session Epoch it was issued under. */
  leaseId: string
  leaseSessionEpoch: number
  /** The replacing Session Epoch. */
  sessionEpoch: number
  reason: 'session-replaced'
  revokedAt: string
  ownershipLeaseExpiresAt: string
}

/** The payload of every Group Event kind this authority emits. */
export interface EventPayloads {
  'mission.created': MissionCreatedPayload
  'mission.follow_up.created': MissionFollowUpCreatedPayload
  'mission.coordinator.assigned': CoordinatorAssignedPayload
  'mission.coordinator.renewed': CoordinatorRenewedPayload
  'mission.submitted_for_approval': MissionSubmittedPayload
  'mission.changes_requested': MissionChangesRequestedPayload
  'mission.approved': MissionApprovedPayload
  'mission.cancelled': MissionEndedPayload
  'mission.terminated': MissionEndedPayload
  'mission.child.created': MissionChildCreatedPayload
  'membership.changed': MembershipChangedPayload
  'membership.ended': MembershipEndedPayload
  'membership.delegation.granted': DelegationGrantedPayload
  'message.posted': MessagePostedPayload
  'message.corrected': MessageFollowUpPayload
  'message.retracted': MessageFollowUpPayload
  'message.redacted': MessageFollowUpPayload
  'work.proposed': WorkProposedPayload
  'work.authorized': WorkAuthorizedPayload
  'work.offer.created': WorkOfferCreatedPayload
  'work.offer.accepted': WorkOfferAcceptedPayload
  'work.contract.revised': WorkContractRevisedPayload
  'work.started': WorkStartedPayload
  'work.progressed': WorkProgressedPayload
  'work.checkpointed': WorkCheckpointedPayload
  'work.blocked': WorkBlockedPayload
  'work.unblocked': WorkUnblockedPayload
  'work.submitted': WorkSubmittedPayload
  'work.result.accepted': WorkResultAcceptedPayload
  'work.failed': WorkFailedPayload
  'work.cancelled': WorkCancelledPayload
  'artifact.published': ArtifactPublishedPayload
  'approval.execution.granted': ExecutionApprovalGrantedPayload
  'policy.cooperation_override.granted': CooperationOverrideGrantedPayload
  'group.snapshot.created': GroupSnapshotCreatedPayload
  'group.archived': GroupArchivedPayload
  [OVERRIDE_CONSUMED]: OverrideConsumedPayload
  [LIMIT_NOTICE]: LimitNoticePayload
  [RESOURCE_USAGE_RECORDED]: ResourceUsageRecordedPayload
  [CHILD_CONCLUDED]: ChildConcludedPayload
  [LATE_RESULT_RECORDED]: LateResultRecordedPayload
  [LEASE_REVOKED]: LeaseRevokedPayload
}

export type EventKind = keyof EventPayloads

// ---------------------------------------------------------------------------------------------
// Events

/** The Event fields apply() reads, of a parsed, verified Event document: the payload still untyped. */
export interface AppliedEvent {
  kind: string
  groupId: string
  sequence: number
  aggregateRevision: number
  payload: Record<string, unknown>
  /** Read by the §20 rate buckets (apply/cooperation.ts); always present in a signed Event. */
  actor?: {type: string; id: string}
  occurredAt?: string
}

/** An Event of kind K with its typed payload. */
export interface EventOf<K extends EventKind> extends Omit<AppliedEvent, 'kind' | 'payload'> {
  kind: K
  payload: EventPayloads[K]
}

/** The Events of the kinds K, as a union discriminated by `kind` (a switch on kind narrows the payload). */
export type EventIn<K extends EventKind> = {[P in K]: EventOf<P>}[K]

/** Any Event this authority emits. */
export type KnownEvent = EventIn<EventKind>

/** Every kind of EventPayloads, at run time; the compiler holds the two lists equal. */
const KINDS: {readonly [K in EventKind]: true} = {
  'mission.created': true,
  'mission.follow_up.created': true,
  'mission.coordinator.assigned': true,
  'mission.coordinator.renewed': true,
  'mission.submitted_for_approval': true,
  'mission.changes_requested': true,
  'mission.approved': true,
  'mission.cancelled': true,
  'mission.terminated': true,
  'mission.child.created': true,
  'membership.changed': true,
  'membership.ended': true,
  'membership.delegation.granted': true,
  'message.posted': true,
  'message.corrected': true,
  'message.retracted': true,
  'message.redacted': true,
  'work.proposed': true,
  'work.authorized': true,
  'work.offer.created': true,
  'work.offer.accepted': true,
  'work.contract.revised': true,
  'work.started': true,
  'work.progressed': true,
  'work.checkpointed': true,
  'work.blocked': true,
  'work.unblocked': true,
  'work.submitted': true,
  'work.result.accepted': true,
  'work.failed': true,
  'work.cancelled': true,
  'artifact.published': true,
  'approval.execution.granted': true,
  'policy.cooperation_override.granted': true,
  'group.snapshot.created': true,
  'group.archived': true,
  [OVERRIDE_CONSUMED]: true,
  [LIMIT_NOTICE]: true,
  [RESOURCE_USAGE_RECORDED]: true,
  [CHILD_CONCLUDED]: true,
  [LATE_RESULT_RECORDED]: true,
  [LEASE_REVOKED]: true,
}

export const isEventKind = (kind: string): kind is EventKind => Object.hasOwn(KINDS, kind)

/**
 * The one place an Event's untyped payload becomes typed; null for a kind this authority does not
 * emit. The kind is checked; the payload is not re-checked, and need not be: every Event apply()
 * folds is a Group Event this authority's decider drafted — on the live path just drafted and
 * signed (ingress/command.ts seal), on replay read back from the log or the wire and verified by
 * the six-stage verifier under the authority's key first (authority.ts #fold,
 * wire/snapshot-reference.ts, operator/transport.ts) — so its payload has the shape decide/**
 * wrote for its kind, which is the shape EventPayloads declares.
 */
export function knownEvent(event: AppliedEvent): KnownEvent | null {
  return isEventKind(event.kind) ? (event as KnownEvent) : null
}
