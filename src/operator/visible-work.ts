// The WorkItems of a Group as a member whose visibility starts late sees them (spec §8: a
// just-in-time Worker "MUST NOT automatically receive unrestricted history"; its Membership sees
// Events only from its offer on). apply() folds a Group from mission.created and cannot start in
// the middle, so this projection folds only the WorkItems whose Events are visible, each from the
// first of them — work.authorized, or the offer, which carries the current Work Contract
// (work.offer.created `workItem`) — with the authority's own row functions. What happened to a
// WorkItem before that is not known here: the caller says so ("history before sequence N is
// outside your visibility"). Members with complete visibility fold the whole Group (views.ts).

import {authorizedWorkItem, workItemTransition} from '../authority/apply/index.js'
import {endUnfinishedWork, leaseEventOn} from '../authority/apply/lease.js'
import {type EventIn, knownEvent} from '../authority/model/events.js'
import {LEASE_REVOKED} from '../authority/model/work-leases.js'
import type {WorkItemCore, WorkProposalView} from '../authority/model/state.js'
import type {EventDoc} from './transport.js'

/** The part of a Group's state a late-joining member can fold: its visible WorkItems and proposals. */
export interface VisibleWork {
  groupId: string
  /** The first sequence this member sees; history before it is outside its visibility. */
  visibleFrom: number
  /** The last sequence seen. */
  sequence: number
  workItems: Record<string, WorkItemCore>
  proposals: Record<string, WorkProposalView>
}

/**
 * Folds Events (in sequence order, from the member's visibility start) into the WorkItems they
 * show; null for no Events.
 */
export function visibleWork(events: readonly EventDoc[]): VisibleWork | null {
  const first = events[0]
  if (first === undefined) return null
  let view: VisibleWork = {
    groupId: first.groupId,
    visibleFrom: first.sequence,
    sequence: first.sequence - 1,
    workItems: {},
    proposals: {},
  }
  for (const e of events) view = {...foldVisible(view, e), sequence: e.sequence}
  return view
}

const put = (view: VisibleWork, item: WorkItemCore): VisibleWork => ({
  ...view,
  workItems: {...view.workItems, [item.workItemId]: item},
})

function foldVisible(view: VisibleWork, event: EventDoc): VisibleWork {
  const e = knownEvent(event)
  if (e === null) return view
  const held = (workItemId: string) => view.workItems[workItemId]
  switch (e.kind) {
    case 'work.proposed':
      return {...view, proposals: {...view.proposals, [e.payload.proposal.proposalId]: e.payload.proposal}}
    case 'work.authorized': {
      const {[e.payload.proposalId ?? '']: _closed, ...proposals} = view.proposals
      return {...put(view, authorizedWorkItem(e.payload.workItem)), proposals}
    }
    case 'work.offer.created': {
      const item = held(e.payload.workItemId) ?? offeredItem(e)
      return put(view, workItemTransition(item, e))
    }
    case 'work.offer.accepted':
    case 'work.started':
    case 'work.submitted':
    case 'work.result.accepted':
    case 'work.cancelled':
    case 'work.checkpointed':
    case 'work.blocked':
    case 'work.unblocked':
    case 'work.failed':
    case 'approval.execution.granted': {
      const item = held(e.payload.workItemId)
      return item === undefined ? view : put(view, workItemTransition(item, e))
    }
    case 'work.progressed':
    case 'work.contract.revised':
    case LEASE_REVOKED: {
      const item = held(e.payload.workItemId)
      return item === undefined ? view : put(view, leaseEventOn(item, e))
    }
    case 'mission.cancelled':
    case 'mission.terminated':
      return endUnfinishedWork(view, e)
    default:
      return view
  }
}

/**
 * A WorkItem first seen in its offer, as it stood just before it: the offer's WorkItem revision
 * minus one, its current contract, and nothing of its earlier ownerships (outside visibility).
 */
function offeredItem(e: EventIn<'work.offer.created'>): WorkItemCore {
  const w = e.payload.workItem
  return {
    workItemId: e.payload.workItemId,
    conversationId: w.conversationId,
    revision: e.payload.revision - 1,
    state: 'open',
    exclusive: w.exclusive,
    contract: w.contract,
    offer: null,
    owner: null,
    ownershipEpoch: 0,
    lease: null,
    submission: null,
    checkpoint: null,
    blocker: null,
    executionApproval: null,
    failure: null,
  }
}
