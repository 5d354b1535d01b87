// The Group Authority's in-memory view of one Group (spec §7, §8). Plain JSON data, never mutated
// in place: apply() returns a new object, so a cached state can be handed out and compared by
// canonical hash (replay must reproduce the live state exactly).
//
// Size (issue #15): nothing here grows with the number of Events or Messages. Messages live in
// the store (store/message-table.ts); rate buckets are bounded per actor by RATE_HORIZON_MINUTES
// (apply/cooperation.ts); proposals leave when authorized. What remains grows with structured
// objects, each created by an authorized Command: members (one per Membership), workItems (one
// per WorkItem, with its ended ownerships and late results), artifacts, Delegation and Override
// Grants. The cold-start checkpoint (authority/checkpoints.ts) serializes this whole state.

import type {Principal} from '../../signing/profiles.js'
import type {ActorRates, ArtifactIndexEntry, DelegationGrantView, OverrideGrantView} from './cooperation-state.js'
import type {BudgetLedger, ChildMissionLink, FollowUpLink, MissionParentLink} from './mission-tree.js'
import type {WorkContract} from './payloads.generated.js'

export type MissionState = 'active' | 'awaiting_approval' | 'approved' | 'failed' | 'cancelled'
export type MemberRole = 'mission_owner' | 'coordinator' | 'worker' | 'reviewer' | 'observer' | 'work_delegate'

export interface MemberState {
  membershipId: string
  principal: Principal
  role: MemberRole
  membershipEpoch: number
  active: boolean
  /** §8: the capability scopes the Membership grants (changed by membership.change). */
  scopes: string[]
  /** §8: MissionOwner and Coordinator see the whole Group (sequence 1 on). */
  visibilityStartSequence: number
  /**
   * §8 just-in-time Worker Membership: present while the Membership is provisional (granted with
   * an offer; `active` is false). Only accepting that offer before `expiresAt` activates it.
   */
  provisional?: {workItemId: string; expiresAt: string; contextPackageId: string}
  /** §8 just-in-time: activated by accepting the offer it came with; it ends with the Worker's last WorkItem (decide/work.ts). */
  justInTime?: true
}

export interface CoordinatorState {
  agentId: string
  coordinatorEpoch: number
  leaseId: string
  /** §7.2: lease expiry, set by mission.renew_coordinator (null until the first renewal). */
  leaseExpiresAt: string | null
}

/** §7.3: what the Coordinator submitted — the Approval must name exactly this. */
export interface SubmissionState {
  missionRevision: number
  artifactHashes: string[]
}

export interface MissionView {
  missionId: string
  state: MissionState
  missionOwner: Principal
  objective: string
  definitionOfDone: unknown[]
  deadline: string
  budget: Record<string, unknown>
  approvalPolicy: Record<string, unknown>
  createdAt: string
  coordinator: CoordinatorState | null
  /** Set by mission.submitted_for_approval, cleared by mission.changes_requested. */
  submission: SubmissionState | null
  /** §14: a child Mission's parent WorkItem and depth (mission-tree.ts); absent for a root Mission. */
  parent?: MissionParentLink
  /** §7.1: the approved Mission a follow-up continues. */
  followUpTo?: FollowUpLink
}

/** §7.1: approved, cancelled and failed are terminal; nothing reopens them. */
export const TERMINAL: ReadonlySet<MissionState> = new Set(['approved', 'cancelled', 'failed'])

export interface GroupState {
  groupId: string
  missionId: string
  /** The aggregate revision: advanced by structured transitions only (see apply/index.ts). */
  revision: number
  /** The Group head: the last applied Event's sequence. */
  sequence: number
  /** §9: the Group-level planning Conversation created with the Mission. */
  conversationId: string
  mission: MissionView
  /** Keyed by principal ID. */
  members: Record<string, MemberState>
  /** §10.2: open Work Proposals (work.propose), keyed by proposal ID; removed when authorized. */
  proposals: Record<string, WorkProposalView>
  /** §10.2: WorkItems keyed by WorkItem ID. */
  workItems: Record<string, WorkItemView>
  // §9: committed Messages are not here: they live in the store's Message table
  // (store/message-table.ts), so the state does not grow with the number of Messages (issue #15).
  /** §13.1: published Artifacts by artifactId. */
  artifacts?: Record<string, ArtifactIndexEntry>
  /** §9.1: Delegation Grants by Grant ID. */
  delegations?: Record<string, DelegationGrantView>
  /** §20: Cooperation Override Grants by Grant ID (consumption recorded in place). */
  overrideGrants?: Record<string, OverrideGrantView>
  /** §20: per-actor rate buckets, keyed by principal ID. */
  rates?: Record<string, ActorRates>
  /** §7.4: the signed archival snapshot and the tombstone (decide/archive.ts); absent until archived. */
  archive?: GroupArchiveView
  /** §12: the aggregate six-dimension budget ledger (mission-tree.ts); absent until the first usage. */
  budgetLedger?: BudgetLedger
}

/** §7.4: reference to the signed final snapshot; once set, the Group accepts nothing new. */
export interface GroupArchiveView {
  snapshotId: string
  /** Signing hash of the signed group-snapshot document. */
  snapshotHash: string
  throughSequence: number
  stateHash: string
  /** Sequence of the group.snapshot.created Event that carries the signed snapshot. */
  snapshotEventSequence: number
  /** Set by group.archived, appended in the same atomic append as group.snapshot.created. */
  archivedAt: string | null
}

/** §10.2: the core WorkItem states (work-item.schema.json). */
export type WorkState =
  'open' | 'offered' | 'queued' | 'active' | 'blocked' | 'submitted' | 'verified' | 'failed' | 'cancelled'

/** WorkItems still to be done or decided (every state but verified, failed and cancelled). */
export const UNFINISHED_WORK: ReadonlySet<WorkState> = new Set([
  'open',
  'offered',
  'queued',
  'active',
  'blocked',
  'submitted',
])

/** §10.2: verified and cancelled are terminal for the WorkItem revision. */
export const WORK_TERMINAL: ReadonlySet<WorkState> = new Set(['verified', 'cancelled'])

export interface WorkProposalView {
  proposalId: string
  proposedBy: Principal
  contract: Record<string, unknown>
  proposedAt: string
}

/** §10.3: a durable offer to candidate Agents; it reserves nothing before acceptance. */
export interface WorkOfferView {
  offerId: string
  candidates: string[]
  expiresAt: string
  /** §10.3: the structured selection basis of each candidate, keyed by Agent ID. */
  selectionBasis?: Record<string, SelectionBasis>
}

/** §10.3 / work-item.schema.json selectionBasis: why this Agent, in structured members only. */
export interface SelectionBasis {
  requiredCapabilities: {id: string; version: string}[]
  verifiedMatches: {id: string; version: string}[]
  authorizationEligible: boolean
  availabilityEstimate: string
  expectedCost: number
  reliabilityEvidence: string[]
  policyRulesApplied: string[]
}

/** §11.3: the ownership grant won by the first valid acceptance. */
export interface WorkOwnerView {
  agentId: string
  ownershipEpoch: number
  sessionEpoch: number
  /**
   * §11.3/§11.5: expiry of the bounded ownership lease while queued (the start-by deadline) or of
   * the blocked lease while blocked; an owner past it is no longer live and a re-offer fences it.
   * While active, the Execution Lease's expiry governs instead. Absent: unbounded.
   */
  leaseExpiresAt?: string
}

/** §11.3: the Execution Lease issued by work.start (lease.schema.json subset). */
export interface ExecutionLeaseView {
  leaseId: string
  holderAgentId: string
  sessionEpoch: number
  ownershipEpoch: number
  issuedAt: string
  state: 'active' | 'released' | 'revoked' | 'expired'
  /** §11.3: the lease boundary, moved by ext.missionweaveprotocol.core.lease_renew (decide/lease.ts). */
  expiresAt?: string
  renewalCount?: number
  lastRenewedAt?: string
  /**
   * §11.3 (ACCEPTANCE B9): set when a replacement Agent Session revoked the lease
   * (ext.missionweaveprotocol.core.lease_revoked): the replacing Session Epoch and when. §11.5
   * still reconciles progress buffered before `revokedAt` under it (decide/offline.ts).
   */
  revocation?: {reason: 'session-replaced'; sessionEpoch: number; revokedAt: string}
}

export interface WorkItemView {
  workItemId: string
  conversationId: string
  /** §10.3: the selection basis recorded with the current assignment (set on acceptance). */
  selectionBasis?: SelectionBasis
  /** The WorkItem's own revision, advanced by every WorkItem transition. */
  revision: number
  state: WorkState
  exclusive: boolean
  contract: WorkContract
  createdBy: Principal
  authorizedBy: Principal
  createdAt: string
  offer: WorkOfferView | null
  owner: WorkOwnerView | null
  /** The highest Ownership Epoch ever issued for this WorkItem (0 before the first acceptance). */
  ownershipEpoch: number
  lease: ExecutionLeaseView | null
  submission: WorkSubmissionView | null
  /** §11.3: the last durable checkpoint (work.checkpoint or work.block). */
  checkpoint: CheckpointView | null
  /** §11.4: the required resolution of a blocked WorkItem (cleared by work.unblock). */
  blocker: {requiredResolution: string} | null
  /** §12: the signed execution approval satisfying the start gate, bound to an Ownership Epoch. */
  executionApproval: ExecutionApprovalView | null
  /** §10.2: the Failure Evidence of the last work.fail. */
  failure: {reason: string; evidenceHashes: string[]} | null
  /** §14: the child Mission this WorkItem was promoted to (mission-tree.ts). */
  childMission?: ChildMissionLink
  /** §11.5: ownerships that ended without completing the item (fenced on expiry, failed). */
  endedOwnerships?: EndedOwnershipView[]
  /** §4 invariant 5: late results of ended ownerships, kept as non-authoritative Evidence. */
  lateResults?: LateResultView[]
}

/**
 * A WorkItem as its own Events define it: everything but who created and authorized it and when,
 * which only work.authorized says. A member whose visibility starts at the offer (§8) folds its
 * WorkItems from the offer on (operator/visible-work.ts) with the same row functions as apply().
 */
export type WorkItemCore = Omit<WorkItemView, 'createdBy' | 'authorizedBy' | 'createdAt'>

/**
 * §10.2/§13.2: what the WorkItem's owner submitted — its Artifacts and the Evidence mapped to the
 * acceptance criteria, kept for the Coordinator's review and the final Approval. Only the
 * Evidence's IDs, hashes and mapping are state; the signed documents are in the work.submitted
 * Event.
 */
export interface WorkSubmissionView {
  artifactHashes: string[]
  /** Absent when a linked child Mission's approval verified the WorkItem (its Approval is the Evidence, §10.2). */
  evidence?: SubmittedEvidence[]
}

/** One verified Evidence document of a submission (evidence.schema.json), without its method text and signature. */
export interface SubmittedEvidence {
  evidenceId: string
  /** The signing hash of the signed Evidence document (§6.4): the hash of its content. */
  signingHash: string
  type:
    | 'artifact_integrity'
    | 'schema_validation'
    | 'deterministic_test'
    | 'business_rule'
    | 'reviewer_assessment'
    | 'human_review'
    | 'policy_check'
    | 'failure_report'
  subject: {type: 'work_item' | 'artifact' | 'mission'; id: string}
  criterionIds: string[]
  result: 'passed' | 'failed' | 'inconclusive'
  artifactHashes: string[]
  generatedBy: Principal
  createdAt: string
}

/** §11.3: a durable checkpoint, under the Execution Lease it was taken in. */
export interface CheckpointView {
  progress: string
  leaseId: string
  artifactHashes: string[]
}

export interface EndedOwnershipView {
  agentId: string
  ownershipEpoch: number
  /** The Execution Lease it last held, if any. */
  leaseId: string | null
  reason: string
}

export interface LateResultView {
  agentId: string
  ownershipEpoch: number
  leaseId: string
  artifactHashes: string[]
  recordedAt: string
}

/** §12: who granted the execution approval, for which Ownership Epoch. */
export interface ExecutionApprovalView {
  approvedBy: Principal
  ownershipEpoch: number
  approvedAt: string
}
