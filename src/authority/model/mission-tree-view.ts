// §14 "The root MissionOwner MUST be able to inspect the complete Mission tree": a read-only
// projection of a Mission and every child Mission below it (state, owner, Coordinator, budget,
// ledger usage, the WorkItems that link them), folded from the authoritative Group states. The
// Parent Coordinator, as child MissionOwner, sees the subtree it owns ("authorized on-demand
// inspection"); anyone else gets null, exactly as for a Group that does not exist.

import type {Principal} from '../../signing/profiles.js'
import type {Authority} from '../authority.js'
import {ZERO_USAGE} from './budget.js'
import type {ChildMissionLink, Usage} from './mission-tree.js'
import type {GroupState, MissionState, WorkState} from './state.js'

export interface MissionTreeNode {
  groupId: string
  missionId: string
  state: MissionState
  depth: number
  missionOwner: Principal
  coordinatorAgentId: string | null
  budget: Record<string, unknown>
  usage: Usage
  /** The parent WorkItem this Mission was promoted from (absent at the top of the view). */
  parentWorkItemId?: string
  workItems: {workItemId: string; state: WorkState; childMission?: ChildMissionLink}[]
  children: MissionTreeNode[]
}

/** Bounds a corrupt (cyclic) link structure; far beyond any legitimate tree. */
const MAX_NODES = 10_000

const same = (a: Principal, b: Principal) => a.type === b.type && a.id === b.id

/**
 * The tree below `groupId`, if `viewer` is the MissionOwner of that Mission or of any Mission
 * above it; otherwise null (no existence oracle).
 */
export async function missionTree(
  authority: Authority,
  groupId: string,
  viewer: Principal,
): Promise<MissionTreeNode | null> {
  const top = await authority.current(groupId)
  if (top === null || !(await ownsFromAbove(authority, top, viewer))) return null
  let budget = MAX_NODES
  const node = async (s: GroupState, parentWorkItemId?: string): Promise<MissionTreeNode> => {
    budget--
    const children: MissionTreeNode[] = []
    for (const w of Object.values(s.workItems)) {
      if (w.childMission === undefined || budget <= 0) continue
      const child = await authority.current(w.childMission.groupId)
      if (child !== null) children.push(await node(child, w.workItemId))
    }
    return {
      groupId: s.groupId,
      missionId: s.missionId,
      state: s.mission.state,
      depth: s.mission.parent?.depth ?? 0,
      missionOwner: s.mission.missionOwner,
      coordinatorAgentId: s.mission.coordinator?.agentId ?? null,
      budget: s.mission.budget,
      usage: s.budgetLedger?.mission ?? ZERO_USAGE,
      ...(parentWorkItemId !== undefined ? {parentWorkItemId} : {}),
      workItems: Object.values(s.workItems).map((w) => ({
        workItemId: w.workItemId,
        state: w.state,
        ...(w.childMission !== undefined ? {childMission: w.childMission} : {}),
      })),
      children,
    }
  }
  return node(top)
}

/** The viewer owns this Mission or one of its ancestors (the wire's inspection right, connection.ts). */
export async function ownsFromAbove(authority: Authority, state: GroupState, viewer: Principal): Promise<boolean> {
  const seen = new Set<string>()
  for (let s: GroupState | null = state; s !== null && !seen.has(s.groupId);) {
    if (same(s.mission.missionOwner, viewer)) return true
    seen.add(s.groupId)
    s = s.mission.parent === undefined ? null : await authority.current(s.mission.parent.groupId)
  }
  return false
}
