// apply() for the Mission-tree Events (engineer B's kinds): the parent side of a child Mission
// (mission.child.created, CHILD_CONCLUDED) and the budget ledger (resource_usage_recorded). Called
// from apply.ts, so live state and replay share it; returns new objects, mutates nothing.

import {charge, type UsageDelta} from '../model/budget.js'
import {CHILD_CONCLUDED, type ChildFailurePolicy, type ChildMissionLink, type MissionParentLink, RESOURCE_USAGE_RECORDED} from '../model/mission-tree.js'
import type {GroupState, MissionView, WorkItemView, WorkState} from '../model/state.js'
import {MwpError} from '../../errors.js'

export const MISSION_TREE_EVENT_KINDS: ReadonlySet<string> = new Set(['mission.child.created', CHILD_CONCLUDED, RESOURCE_USAGE_RECORDED])

/** ApplyError's failure, declared here because apply/index.ts imports this module. */
class MissionTreeApplyError extends MwpError<'event-unfoldable'> {
  constructor(message: string) {
    super('event-unfoldable', message)
  }
}

type Payload = Record<string, unknown>

/**
 * The tree links of a mission.created / mission.follow_up.created payload, for MissionView. The
 * Mission document keeps mission.schema.json's shape (`parent` without a Group ID,
 * `followUpToMissionId`); the Group IDs ride beside it in the payload.
 */
export function missionLinks(m: {parent?: Omit<MissionParentLink, 'groupId'>; followUpToMissionId?: string}, p: Payload): Pick<MissionView, 'parent' | 'followUpTo'> {
  return {
    ...(m.parent !== undefined ? {parent: {missionId: m.parent.missionId, groupId: p.parentGroupId as string, workItemId: m.parent.workItemId, depth: m.parent.depth}} : {}),
    ...(m.followUpToMissionId !== undefined ? {followUpTo: {missionId: m.followUpToMissionId, groupId: p.followUpToGroupId as string}} : {}),
  }
}

export function applyMissionTree(next: GroupState, kind: string, p: Payload): GroupState {
  if (kind === RESOURCE_USAGE_RECORDED) return {...next, budgetLedger: charge(next.budgetLedger, p.workItemId as string, p.delta as UsageDelta)}
  const item = next.workItems[p.workItemId as string]
  if (item === undefined) throw new MissionTreeApplyError(`${kind} for unknown WorkItem ${String(p.workItemId)}`)
  const revision = p.revision as number
  if (revision !== item.revision + 1) throw new MissionTreeApplyError(`${kind} carries WorkItem revision ${revision}, expected ${item.revision + 1}`)
  return {...next, workItems: {...next.workItems, [item.workItemId]: kind === CHILD_CONCLUDED ? concluded(item, p) : promoted(item, p)}}
}

/** §10.2 mission.create_child: blocked, ownership fenced, an active lease revoked, the child linked. */
function promoted(item: WorkItemView, p: Payload): WorkItemView {
  const c = p.child as {missionId: string; groupId: string; failurePolicy: ChildFailurePolicy}
  const childMission: ChildMissionLink = {
    missionId: c.missionId,
    groupId: c.groupId,
    failurePolicy: {onFailure: c.failurePolicy.onFailure, indispensable: c.failurePolicy.indispensable},
    state: 'running',
  }
  return {
    ...item,
    revision: p.revision as number,
    state: 'blocked',
    owner: null,
    offer: null,
    executionApproval: null,
    lease: item.lease && item.lease.state === 'active' ? {...item.lease, state: 'revoked'} : item.lease,
    blocker: {requiredResolution: `child Mission ${c.missionId} concludes`},
    childMission,
  }
}

/** §10.2 linked child approval (→ verified) or failure (→ blocked / failed, per the declared policy). */
function concluded(item: WorkItemView, p: Payload): WorkItemView {
  if (item.childMission === undefined) throw new MissionTreeApplyError(`${CHILD_CONCLUDED} for WorkItem ${item.workItemId} without a child Mission`)
  const to = p.to as WorkState
  const childMission: ChildMissionLink = {...item.childMission, state: p.outcome as ChildMissionLink['state']}
  const base = {...item, revision: p.revision as number, state: to, childMission}
  if (to === 'verified') return {...base, blocker: null, submission: {artifactHashes: [...(p.artifactHashes as string[])]}}
  const failure = {reason: `child Mission ${childMission.missionId} ${childMission.state}`, evidenceHashes: [...(p.evidenceHashes as string[])]}
  if (to === 'failed') return {...base, blocker: null, failure}
  return {...base, failure, blocker: {requiredResolution: `replan: child Mission ${childMission.missionId} ${childMission.state}`}}
}
