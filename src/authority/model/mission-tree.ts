// The Group-state views of the Mission tree (engineer B's area, spec §7.1, §12, §14): a child
// Mission's link to its parent WorkItem, a follow-up's link to the Mission it continues, a parent
// WorkItem's link to its child Mission, and the six-dimension budget ledger. Every member is
// optional in GroupState, so a Group that never used the feature keeps exactly its old state.
// Plain JSON only.

/** §12: the Organization-owned usage Command and its Event (decide/budget.ts). */
export const RESOURCE_USAGE_RECORD = 'ext.missionweaveprotocol.core.resource_usage_record'
export const RESOURCE_USAGE_RECORDED = 'ext.missionweaveprotocol.core.resource_usage_recorded'

/**
 * §10.2/§14: the parent-side fact of a child Mission reaching a terminal state (decide/child.ts).
 * The spec names no Event for it, so it lives in mwp's own extension namespace (§18), not in the
 * reference core's `ext.missionweaveprotocol.core.*`.
 */
export const CHILD_CONCLUDED = 'ext.mwp.mission-tree.child_mission_concluded'

/** §14 / mission.schema.json `parent`: where a child Mission hangs in the tree. */
export interface MissionParentLink {
  missionId: string
  groupId: string
  workItemId: string
  /** Root Missions have depth 0; a child is its parent's depth + 1. */
  depth: number
}

/** §7.1: a follow-up Mission continues an approved Mission. */
export interface FollowUpLink {
  missionId: string
  groupId: string
}

/** §14: what the parent declared about a child's failure (its completion policy). */
export interface ChildFailurePolicy {
  /** The parent WorkItem on child failure: stays `blocked` for replanning, or becomes `failed`. */
  onFailure: 'block' | 'fail'
  /** Indispensable with no alternative: a child failure also fails the parent Mission. */
  indispensable: boolean
}

/** §14: the parent WorkItem's link to the child Mission created from it. */
export interface ChildMissionLink {
  missionId: string
  groupId: string
  failurePolicy: ChildFailurePolicy
  /** running until the child reaches a terminal state. */
  state: 'running' | 'approved' | 'failed' | 'cancelled'
}

/** §12: the six budget dimensions, as consumed amounts (financial in the budget's currency). */
export interface Usage {
  financial: number
  modelTokens: number
  toolCalls: number
  computeSeconds: number
  wallClockSeconds: number
  externalSideEffects: number
}

/** §12: the aggregate ledger of one Group: its Mission's and each WorkItem's cumulative usage. */
export interface BudgetLedger {
  mission: Usage
  workItems: Record<string, Usage>
}

/**
 * §10.2: a promoted WorkItem stays `blocked` while its child runs (work.fail / work.cancel are
 * the only ways out, and they cancel the child); so a child runs exactly while its link says
 * running and the WorkItem is still blocked.
 */
export const runningChild = (item: {state: string; childMission?: ChildMissionLink}): ChildMissionLink | null =>
  item.state === 'blocked' && item.childMission?.state === 'running' ? item.childMission : null
