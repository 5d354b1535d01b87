// mwp/authority: the Group Authority, its one Command path and the state it folds.

// Opening an authority over a store, Registry evidence and a service key.
export {Authority, AuthorityIntegrityError, openAuthority} from './authority.js'
export type {AppendListener, AuthorityOptions, AuthorityPolicy} from './authority.js'
// Group Commands: the one ingress path (verify → admit → … → decide → append).
export {submit} from './ingress/command.js'
export type {CommandReceipt, SubmitResult} from './ingress/command.js'
// Organization-scoped Commands (Session opening, Agent Card registration).
export {
  CARD_REGISTER,
  CARD_REGISTERED,
  SESSION_OPEN,
  SESSION_OPENED,
  isOrganizationKind,
  submitOrganizationCommand,
} from './ingress/organization.js'
export type {OrganizationReceipt, OrganizationSubmitResult} from './ingress/organization.js'
// Session Epochs issued to Agents.
export {SessionError, currentSessionEpoch, openSession} from './ingress/sessions.js'
// Signed Group snapshots.
export {latestSnapshot} from './ingress/snapshot.js'
export {groupStateHash} from './model/state-hash.js'
export type {SnapshotReference} from './ingress/snapshot.js'
// Folding Events into Group state: replay and projections are folds of apply.
export {ApplyError, apply} from './apply/index.js'
export type {AppliedEvent} from './apply/index.js'
// The Group state and its views.
export {TERMINAL, UNFINISHED_WORK, WORK_TERMINAL} from './model/state.js'
export type {
  CoordinatorState,
  ExecutionApprovalView,
  ExecutionLeaseView,
  GroupArchiveView,
  GroupState,
  MemberRole,
  MemberState,
  MissionState,
  MissionView,
  WorkItemView,
  WorkOfferView,
  WorkOwnerView,
  WorkState,
} from './model/state.js'
// The Mission tree as one viewer may see it.
export {missionTree} from './model/mission-tree-view.js'
export type {MissionTreeNode} from './model/mission-tree-view.js'
// Policy shapes an AuthorityPolicy carries.
export type {CooperationLimits} from './decide/rate-limits.js'
export type {LeasePolicy} from './model/work-leases.js'
