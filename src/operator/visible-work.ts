// What a member whose visibility starts late sees of a Group (spec §8: a just-in-time Worker
// "MUST NOT automatically receive unrestricted history"; its Membership sees Events only from its
// offer on, a member granted by membership.change from that grant on). apply() folds a Group from
// mission.created and cannot start in the middle, so this projection folds only what the visible
// Events show:
//   - the WorkItems whose Events are visible, each from the first of them — work.authorized, or
//     the offer, which carries the current Work Contract (work.offer.created `workItem`) — with
//     the authority's own row functions;
//   - the Memberships granted or changed in them — the reader's own among them, since the Event
//     that grants a Membership is where its visibility starts — so the reader can sign Commands
//     under its current Membership Epoch;
//   - the aggregate revision, which every Event carries (an expectedRevision guard, §15.3).
// What happened before that is not known here: the caller says so ("history before sequence N is
// outside your visibility"), and a command that needs the whole Group refuses (cli-context.ts).
// Members with complete visibility fold the whole Group (views.ts).

import {authorizedWorkItem, memberOf, provisionalMember, workItemTransition} from '../authority/apply/index.js'
import {endUnfinishedWork, leaseEventOn} from '../authority/apply/lease.js'
import {type EventIn, knownEvent} from '../authority/model/events.js'
import {LEASE_REVOKED} from '../authority/model/work-leases.js'
import type {MemberState, WorkItemCore, WorkProposalView} from '../authority/model/state.js'
import type {EventDoc} from './transport.js'

/**
 * The part of a Group's state a late-joining member can fold: its visible WorkItems, proposals and
 * Memberships, and the Group's revision.
 */
export interface VisibleWork {
  groupId: string
  /** The first sequence this member sees; history before it is outside its visibility. */
  visibleFrom: number
  /** The last sequence seen. */
  sequence: number
  /** The aggregate revision the last seen Event carries: the Group's revision as of `sequence`. */
  revision: number
  workItems: Record<string, WorkItemCore>
  proposals: Record<string, WorkProposalView>
  /**
   * The Memberships granted, changed, activated or ended in the visible Events, as apply() holds
   * them (by principal ID); the reader's own is among them.
   */
  members: Record<string, MemberState>
}

/**
 * Folds Events (in sequence order, from the member's visibility start) into the WorkItems,
 * proposals and Memberships they show; null for no Events.
 */
export function visibleWork(events: readonly EventDoc[]): VisibleWork | null {
  let view: VisibleWork | null = null
  for (const e of events) view = foldVisibleEvent(view, e)
  return view
}

/** One more Event into `view` (null: `e` is the first Event the member sees, its visibility start). */
export function foldVisibleEvent(view: VisibleWork | null, e: EventDoc): VisibleWork {
  const start = view ?? {
    groupId: e.groupId,
    visibleFrom: e.sequence,
    sequence: e.sequence - 1,
    revision: e.aggregateRevision,
    workItems: {},
    proposals: {},
    members: {},
  }
  return {...foldVisible(start, e), sequence: e.sequence, revision: e.aggregateRevision}
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
    case 'mission.created': // seen only by a reader from sequence 1
    case 'mission.follow_up.created':
    case 'mission.coordinator.assigned':
    case 'membership.changed':
    case 'membership.ended':
      return withMember(view, memberOf(e.payload.membership))
    case 'work.proposed':
      return {...view, proposals: {...view.proposals, [e.payload.proposal.proposalId]: e.payload.proposal}}
    case 'work.authorized': {
      const {[e.payload.proposalId ?? '']: _closed, ...proposals} = view.proposals
      return {...put(view, authorizedWorkItem(e.payload.workItem)), proposals}
    }
    case 'work.offer.created': {
      const item = held(e.payload.workItemId) ?? offeredItem(e)
      let next = put(view, workItemTransition(item, e))
      for (const m of e.payload.provisionalMemberships ?? [])
        next = withMember(next, provisionalMember(m, e.payload.workItemId))
      return next
    }
    case 'work.offer.accepted': {
      const item = held(e.payload.workItemId)
      const next = item === undefined ? view : put(view, workItemTransition(item, e))
      const activated = e.payload.activatedMembership
      return activated === undefined ? next : withMember(next, memberOf(activated))
    }
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

const withMember = (view: VisibleWork, m: MemberState): VisibleWork => ({
  ...view,
  members: {...view.members, [m.principal.id]: m},
})

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
