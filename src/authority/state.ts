// The Group Authority's in-memory view of one Group (spec §7, §8). Plain JSON data, never mutated
// in place: apply() returns a new object, so a cached state can be handed out and compared by
// canonical hash (replay must reproduce the live state exactly).

import type {Principal} from '../signing/profiles.js'

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
}

/** §7.1: approved, cancelled and failed are terminal; nothing reopens them. */
export const TERMINAL: ReadonlySet<MissionState> = new Set(['approved', 'cancelled', 'failed'])

export interface GroupState {
  groupId: string
  missionId: string
  /** The aggregate revision: advanced by structured transitions only (see apply.ts). */
  revision: number
  /** The Group head: the last applied Event's sequence. */
  sequence: number
  /** §9: the Group-level planning Conversation created with the Mission. */
  conversationId: string
  mission: MissionView
  /** Keyed by principal ID. */
  members: Record<string, MemberState>
}
