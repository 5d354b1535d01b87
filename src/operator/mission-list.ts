// `mwp mission list`: the Missions an operator can find again — each Group where it holds a live
// Membership (Transport.groups) and, below them, every child Mission reachable through
// mission.child.created (a root MissionOwner reads those without a Membership, §14) — with the
// Group ID every other command takes, the state, objective, deadline and what the Mission waits for.

import {awaiting} from './next-step.js'
import type {EventDoc} from './transport.js'
import {inspectMission} from './views.js'

export interface MissionListRow {
  groupId: string
  missionId: string | null
  state: string | null
  objective: string | null
  deadline: string | null
  overdue: boolean
  /** What the Mission waits for (next-step.ts awaiting), or why it cannot be shown. */
  awaiting: string
  /** A child Mission's parent Group, when it was reached through the Mission tree. */
  parentGroupId?: string
  /** Set when the Group's Mission cannot be folded here (visibility starts late, §8; unreadable). */
  unavailable?: string
}

/**
 * The rows for `groupIds` in order, each followed by its child Missions (depth first); a Group is
 * listed once. `load` returns a Group's whole history or throws why it cannot.
 */
export async function missionList(
  groupIds: readonly string[],
  load: (groupId: string) => Promise<EventDoc[]>,
  me?: string,
  now: string = new Date().toISOString(),
): Promise<MissionListRow[]> {
  const rows: MissionListRow[] = []
  const seen = new Set<string>()
  const visit = async (groupId: string, parentGroupId?: string): Promise<void> => {
    if (seen.has(groupId)) return
    seen.add(groupId)
    const parent = parentGroupId === undefined ? {} : {parentGroupId}
    let events: EventDoc[]
    try {
      events = await load(groupId)
    } catch (e) {
      const why = (e as {note?: string}).note ?? (e as Error).message
      rows.push({...unknownRow(groupId, why), ...parent})
      return
    }
    const v = inspectMission(events, now)
    if (v === null) return void rows.push({...unknownRow(groupId, 'no Events'), ...parent})
    rows.push({
      groupId,
      missionId: v.missionId,
      state: v.state,
      objective: v.objective,
      deadline: v.deadline,
      overdue: v.overdue,
      awaiting: awaiting(v, me),
      ...parent,
    })
    for (const c of v.children) await visit(c.groupId, groupId)
  }
  for (const g of groupIds) await visit(g)
  return rows
}

/** The row of a Group whose Mission cannot be shown, and why. */
export const unknownRow = (groupId: string, why: string): MissionListRow => ({
  groupId,
  missionId: null,
  state: null,
  objective: null,
  deadline: null,
  overdue: false,
  awaiting: `unavailable: ${why}`,
  unavailable: why,
})
