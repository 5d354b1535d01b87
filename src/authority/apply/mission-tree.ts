// apply() for the Mission-tree Events (engineer B's kinds): the parent side of a child Mission
// (mission.child.created, CHILD_CONCLUDED) and the budget ledger (resource_usage_recorded). Called
// from apply/index.ts, so live state and replay share it; returns new objects, mutates nothing.

import {charge} from '../model/budget.js'
import type {EventIn, EventOf} from '../model/events.js'
import {CHILD_CONCLUDED, type ChildMissionLink, RESOURCE_USAGE_RECORDED} from '../model/mission-tree.js'
import type {GroupState, MissionView, WorkItemView} from '../model/state.js'
import {MwpError} from '../../errors.js'

/** ApplyError's failure, declared here because apply/index.ts imports this module. */
class MissionTreeApplyError extends MwpError<'event-unfoldable'> {
  constructor(message: string) {
    super('event-unfoldable', message)
  }
}

/**
 * The tree links of a mission.created / mission.follow_up.created Event, for MissionView. The
 * Mission document keeps mission.schema.json's shape (`parent` without a Group ID,
 * `followUpToMissionId`); the Group IDs ride beside it in the payload.
 */
export function missionLinks(
  event: EventIn<'mission.created' | 'mission.follow_up.created'>,
): Pick<MissionView, 'parent' | 'followUpTo'> {
  const p = event.payload
  const {parent, followUpToMissionId} = p.mission
  const followUpToGroupId = event.kind === 'mission.follow_up.created' ? event.payload.followUpToGroupId : undefined
  return {
    ...(parent !== undefined && p.parentGroupId !== undefined
      ? {
          parent: {
            missionId: parent.missionId,
            groupId: p.parentGroupId,
            workItemId: parent.workItemId,
            depth: parent.depth,
          },
        }
      : {}),
    ...(followUpToMissionId !== undefined && followUpToGroupId !== undefined
      ? {followUpTo: {missionId: followUpToMissionId, groupId: followUpToGroupId}}
      : {}),
  }
}

type MissionTreeKind = 'mission.child.created' | typeof CHILD_CONCLUDED | typeof RESOURCE_USAGE_RECORDED

export function applyMissionTree(next: GroupState, event: EventIn<MissionTreeKind>): GroupState {
  if (event.kind === RESOURCE_USAGE_RECORDED) {
    return {...next, budgetLedger: charge(next.budgetLedger, event.payload.workItemId, event.payload.delta)}
  }
  const {kind, payload: p} = event
  const item = next.workItems[p.workItemId]
  if (item === undefined) throw new MissionTreeApplyError(`${kind} for unknown WorkItem ${p.workItemId}`)
  if (p.revision !== item.revision + 1) {
    throw new MissionTreeApplyError(`${kind} carries WorkItem revision ${p.revision}, expected ${item.revision + 1}`)
  }
  const changed = event.kind === CHILD_CONCLUDED ? concluded(item, event) : promoted(item, event)
  return {...next, workItems: {...next.workItems, [item.workItemId]: changed}}
}

/** §10.2 mission.create_child: blocked, ownership fenced, an active lease revoked, the child linked. */
function promoted(item: WorkItemView, {payload: p}: EventOf<'mission.child.created'>): WorkItemView {
  const c = p.child
  const childMission: ChildMissionLink = {
    missionId: c.missionId,
    groupId: c.groupId,
    failurePolicy: {onFailure: c.failurePolicy.onFailure, indispensable: c.failurePolicy.indispensable},
    state: 'running',
  }
  return {
    ...item,
    revision: p.revision,
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
function concluded(item: WorkItemView, {payload: p}: EventOf<typeof CHILD_CONCLUDED>): WorkItemView {
  if (item.childMission === undefined)
    throw new MissionTreeApplyError(`${CHILD_CONCLUDED} for WorkItem ${item.workItemId} without a child Mission`)
  const to = p.to
  const childMission: ChildMissionLink = {...item.childMission, state: p.outcome}
  const base = {...item, revision: p.revision, state: to, childMission}
  if (to === 'verified') return {...base, blocker: null, submission: {artifactHashes: [...p.artifactHashes]}}
  const failure = {
    reason: `child Mission ${childMission.missionId} ${childMission.state}`,
    evidenceHashes: [...p.evidenceHashes],
  }
  if (to === 'failed') return {...base, blocker: null, failure}
  return {
    ...base,
    failure,
    blocker: {requiredResolution: `replan: child Mission ${childMission.missionId} ${childMission.state}`},
  }
}
