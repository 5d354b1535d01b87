// apply() for the lease, reassignment and contract-revision facts (spec §10.4, §11.3, §11.5).
// apply/index.ts keeps the core WorkItem rows; this module adds what those Events carry about lease
// boundaries and ended ownerships, and folds the Events only this area emits. Every field it
// sets comes from the Event payload, never from a clock, so replay reproduces it exactly.

import {ApplyError, type WorkTransitionKind} from './index.js'
import type {EventIn} from '../model/events.js'
import {
  type EndedOwnershipView,
  type ExecutionLeaseView,
  type GroupState,
  type LateResultView,
  UNFINISHED_WORK,
  type WorkItemCore,
} from '../model/state.js'
import {LEASE_REVOKED, type LATE_RESULT_RECORDED} from '../model/work-leases.js'

const withEnded = (item: WorkItemCore, ended: EndedOwnershipView): EndedOwnershipView[] => [
  ...(item.endedOwnerships ?? []),
  {agentId: ended.agentId, ownershipEpoch: ended.ownershipEpoch, leaseId: ended.leaseId, reason: ended.reason},
]

const closeLease = (lease: ExecutionLeaseView | null, state: 'expired' | 'revoked'): ExecutionLeaseView | null =>
  lease !== null && lease.state === 'active' ? {...lease, state} : lease

/**
 * The lease facts of a core WorkItem Event, applied to `after` (what apply/index.ts's row produced
 * from `before`): start-by and blocked-lease deadlines, Execution Lease expiry, and the ownership a
 * re-offer or unblock fenced (§10.2 "an expired owner is fenced first").
 */
export function withLeaseFacts<W extends WorkItemCore>(
  before: WorkItemCore,
  after: W,
  event: EventIn<WorkTransitionKind>,
): W {
  const ownerLease = (expiresAt: string): W =>
    after.owner !== null ? {...after, owner: {...after.owner, leaseExpiresAt: expiresAt}} : after
  const fence = (fenced: EndedOwnershipView): W => ({
    ...after,
    owner: null,
    lease: closeLease(after.lease, 'expired'),
    endedOwnerships: withEnded(before, fenced),
  })
  switch (event.kind) {
    case 'work.offer.created':
      return event.payload.fencedOwnership === undefined ? after : fence(event.payload.fencedOwnership)
    case 'work.offer.accepted':
      return ownerLease(event.payload.owner.startBy)
    case 'work.started': {
      // While active, the Execution Lease governs ownership: the start-by deadline is spent, and a
      // path back to queued (checkpoint, unblock, Session replacement …) sets a fresh one.
      const l = event.payload.lease
      if (after.lease === null) return after
      const owner = after.owner === null ? null : (({leaseExpiresAt: _spent, ...rest}) => rest)(after.owner)
      return {...after, owner, lease: {...after.lease, expiresAt: l.expiresAt, renewalCount: l.renewalCount}}
    }
    case 'work.checkpointed':
      return ownerLease(event.payload.ownershipLeaseExpiresAt)
    case 'work.unblocked': {
      const p = event.payload
      if (p.to === 'queued') return ownerLease(p.ownershipLeaseExpiresAt)
      return p.fencedOwnership === undefined ? after : fence(p.fencedOwnership)
    }
    case 'work.blocked':
      return ownerLease(event.payload.blockedLeaseExpiresAt)
    case 'work.failed':
      // §10.2: failure ends ownership; remember it so a late submit is fenced, not forbidden.
      if (before.owner === null) return after
      return {
        ...after,
        endedOwnerships: withEnded(before, {
          agentId: before.owner.agentId,
          ownershipEpoch: before.owner.ownershipEpoch,
          leaseId: before.lease?.leaseId ?? null,
          reason: 'failed',
        }),
      }
    default:
      return after
  }
}

/** Folds work.progressed, work.contract.revised, late results and session-replacement revocations into the Group state. */
export type LeaseKind = 'work.progressed' | 'work.contract.revised' | typeof LATE_RESULT_RECORDED | typeof LEASE_REVOKED

export function applyLeaseEvent(next: GroupState, event: EventIn<LeaseKind>): GroupState {
  const item = next.workItems[event.payload.workItemId]
  if (item === undefined) throw new ApplyError(`${event.kind} for unknown WorkItem ${event.payload.workItemId}`)
  return {...next, workItems: {...next.workItems, [item.workItemId]: leaseEventOn(item, event)}}
}

/** applyLeaseEvent's fold of the WorkItem itself, also for a reader holding only the WorkItems it sees (operator/visible-work.ts). */
export function leaseEventOn<W extends WorkItemCore>(item: W, event: EventIn<LeaseKind>): W {
  if (event.kind === LEASE_REVOKED) return sessionReplaced(item, event)
  if (event.kind !== 'work.progressed' && event.kind !== 'work.contract.revised') {
    // A late result is non-authoritative: no WorkItem revision, state, submission or owner change.
    const p = event.payload
    const late: LateResultView = {
      agentId: p.agentId,
      ownershipEpoch: p.ownershipEpoch,
      leaseId: p.leaseId,
      artifactHashes: [...p.artifactHashes],
      recordedAt: p.recordedAt,
    }
    return {...item, lateResults: [...(item.lateResults ?? []), late]}
  }

  const revision = event.payload.revision
  if (revision !== item.revision + 1)
    throw new ApplyError(`${event.kind} carries WorkItem revision ${revision}, expected ${item.revision + 1}`)
  if (event.kind === 'work.progressed') {
    // §11.3: a renewal moves the Execution Lease boundary and extends its renewal history.
    const p = event.payload
    if (item.lease === null || item.lease.leaseId !== p.leaseId)
      throw new ApplyError(`work.progressed for a lease WorkItem ${item.workItemId} does not hold`)
    return {
      ...item,
      revision,
      lease: {
        ...item.lease,
        expiresAt: p.lease.expiresAt,
        renewalCount: p.lease.renewalCount,
        lastRenewedAt: p.lease.lastRenewedAt,
      },
    }
  }
  // work.contract.revised (§10.4): the new contract; a running item that gained an unmet
  // dependency has its Execution Lease revoked and waits in its queue under an ownership lease.
  // §10.1: a revised contract needs renewed acceptance, so a pending offer (made under the old
  // contract) is withdrawn; the WorkItem stays `offered` until the Coordinator offers again.
  const p = event.payload
  const revised: W = {
    ...item,
    revision,
    contract: p.contract,
    ...(p.withdrawnOfferId !== undefined ? {offer: null} : {}),
  }
  if (p.revokedLeaseId === undefined) return revised
  const owner = revised.owner === null ? null : {...revised.owner, leaseExpiresAt: p.ownershipLeaseExpiresAt}
  return {...revised, state: 'queued', owner, lease: closeLease(revised.lease, 'revoked')}
}

/**
 * §11.3 (ACCEPTANCE B9): a replacement session revoked the owner's active Execution Lease. The
 * WorkItem is queued again under the same owner and Ownership Epoch, with the ownership lease the
 * Event states; the lease stays in the WorkItem, revoked, with when and by which session (§11.5
 * reconciles progress buffered before that, decide/offline.ts).
 */
function sessionReplaced<W extends WorkItemCore>(item: W, event: EventIn<typeof LEASE_REVOKED>): W {
  const p = event.payload
  if (p.revision !== item.revision + 1)
    throw new ApplyError(`${event.kind} carries WorkItem revision ${p.revision}, expected ${item.revision + 1}`)
  const lease = item.lease
  if (lease === null || lease.leaseId !== p.leaseId || lease.state !== 'active' || item.owner === null)
    throw new ApplyError(`${event.kind} for a lease WorkItem ${item.workItemId} does not hold active`)
  return {
    ...item,
    revision: p.revision,
    state: 'queued',
    owner: {...item.owner, leaseExpiresAt: p.ownershipLeaseExpiresAt},
    lease: {
      ...lease,
      state: 'revoked',
      revocation: {reason: p.reason, sessionEpoch: p.sessionEpoch, revokedAt: p.revokedAt},
    },
  }
}

/**
 * §10.2 row "parent Mission failure or cancellation → failed or cancelled": a terminal Mission
 * state propagates to every unfinished WorkItem in the same fold as mission.cancelled /
 * mission.terminated (from whichever path appended it: the MissionOwner, the Coordinator,
 * Organization policy or a child's indispensable failure), so no owner keeps an Execution Lease
 * in a finished Mission. Derived from the Mission Event alone — replay reproduces it exactly. Also
 * folds the WorkItems a late-joining reader holds (operator/visible-work.ts).
 * Cancellation cancels; failure fails with the Mission's reason and ends ownership.
 */
export function endUnfinishedWork<W extends WorkItemCore, S extends {workItems: Record<string, W>}>(
  next: S,
  event: EventIn<'mission.cancelled' | 'mission.terminated'>,
): S {
  const workItems: Record<string, W> = {}
  for (const [id, item] of Object.entries(next.workItems)) {
    if (!UNFINISHED_WORK.has(item.state)) {
      workItems[id] = item
      continue
    }
    const lease = closeLease(item.lease, 'revoked')
    if (event.kind === 'mission.cancelled') {
      workItems[id] = {...item, revision: item.revision + 1, state: 'cancelled', lease}
      continue
    }
    const ended =
      item.owner === null
        ? item.endedOwnerships
        : withEnded(item, {
            agentId: item.owner.agentId,
            ownershipEpoch: item.owner.ownershipEpoch,
            leaseId: item.lease?.leaseId ?? null,
            reason: 'mission failed',
          })
    workItems[id] = {
      ...item,
      revision: item.revision + 1,
      state: 'failed',
      owner: null,
      offer: null,
      lease,
      failure: {reason: event.payload.reason, evidenceHashes: []},
      ...(ended !== undefined ? {endedOwnerships: ended} : {}),
    }
  }
  return {...next, workItems}
}
