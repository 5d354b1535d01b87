// The Mission ancestry of a Group (spec §12, §14, §20): the chain of parent Groups a child
// Mission hangs under, read from the states ingress loaded into the DecideContext (the parent
// links are fixed at creation, so ingress can find the chain before it serializes on it).

import {type DecideContext, type Refusal, refuse} from '../decide/common.js'
import type {GroupState} from './state.js'

/** One step up the tree: the parent Group's state and the parent WorkItem the child hangs on. */
export interface AncestorLevel {
  state: GroupState
  workItemId: string
}

/**
 * The ancestors of `state`, nearest first. A parent Group ingress did not load is an authority
 * bug (INTERNAL_ERROR, retryable); a chain that returns to a Group already on it is a cyclic
 * ancestry (§20, INVALID_COMMAND) — unreachable through create_child, which refuses cycles.
 */
export function ancestorsOf(state: GroupState, ctx: DecideContext): AncestorLevel[] | Refusal {
  const out: AncestorLevel[] = []
  const seen = new Set([state.groupId])
  for (let link = state.mission.parent; link !== undefined;) {
    if (seen.has(link.groupId)) return refuse('INVALID_COMMAND', `cyclic Mission ancestry through ${link.groupId}`)
    seen.add(link.groupId)
    const parent = ctx.groups?.[link.groupId]
    if (parent === undefined || parent === null)
      return refuse('INTERNAL_ERROR', `the parent Group ${link.groupId} was not loaded`)
    out.push({state: parent, workItemId: link.workItemId})
    link = parent.mission.parent
  }
  return out
}
