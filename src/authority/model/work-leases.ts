// WorkItem lease timing (spec §11.3, §11.5) shared by the WorkItem, lease-renewal and reassignment
// decisions: lease lengths, expiry tests at the trusted acceptance time, which owner a re-offer
// fences, and the non-authoritative record of a late result. Pure: time comes from the caller.

import {compareTimestampText} from '../../json/timestamp.js'
import {type EventDraft, type Refusal, refuse} from '../decide/common.js'
import type {EndedOwnershipView, ExecutionLeaseView, WorkItemView} from './state.js'

/** §11.3: an Execution Lease lasts this long from work.start or its last renewal (default of AuthorityPolicy.leases.executionSeconds). */
export const EXECUTION_LEASE_SECONDS = 600
/** §11.3: the ownership grant's start-by window after acceptance, checkpoint or unblock (default of leases.ownershipSeconds). */
export const OWNERSHIP_LEASE_SECONDS = 900
/** §11.4: "Ownership MAY remain during a bounded blocked lease" (default of leases.blockedSeconds). */
export const BLOCKED_LEASE_SECONDS = 3600
/**
 * §11.5: how long past its historical Execution Lease expiry a disconnected Worker may keep
 * buffering reversible progress (default of leases.offlineGraceSeconds; model/offline-execution.ts).
 */
export const OFFLINE_GRACE_SECONDS = 300

/**
 * The Organization's lease lengths in seconds (AuthorityPolicy.leases); an unset member takes the
 * default above. Ingress hands the policy to the decider in its context, so decide stays pure and
 * each Event records the resulting boundary: replay never needs the policy.
 */
export interface LeasePolicy {
  ownershipSeconds?: number
  executionSeconds?: number
  blockedSeconds?: number
  offlineGraceSeconds?: number
}

/** The effective lease lengths a decision uses: the policy's, else the defaults. */
export function leaseLengths(policy: LeasePolicy | undefined): Required<LeasePolicy> {
  return {
    ownershipSeconds: policy?.ownershipSeconds ?? OWNERSHIP_LEASE_SECONDS,
    executionSeconds: policy?.executionSeconds ?? EXECUTION_LEASE_SECONDS,
    blockedSeconds: policy?.blockedSeconds ?? BLOCKED_LEASE_SECONDS,
    offlineGraceSeconds: policy?.offlineGraceSeconds ?? OFFLINE_GRACE_SECONDS,
  }
}

/** Refuses a lease policy that is not made of positive whole seconds (checked when the authority opens). */
export function checkLeasePolicy(policy: LeasePolicy | undefined): void {
  if (policy === undefined) return
  if (policy === null || typeof policy !== 'object' || Array.isArray(policy))
    throw new Error('leases must be an object')
  const known = new Set(['ownershipSeconds', 'executionSeconds', 'blockedSeconds', 'offlineGraceSeconds'])
  for (const [name, value] of Object.entries(policy)) {
    if (!known.has(name)) throw new Error(`leases.${name} is not a lease length`)
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || (value as number) < 1)
      throw new Error(`leases.${name} must be a positive whole number of seconds`)
  }
}

/** §4 invariant 5: the Event kind that keeps a stale owner's result as non-authoritative Evidence. */
export const LATE_RESULT_RECORDED = 'ext.missionweaveprotocol.core.late_result_recorded'

/**
 * §11.3 (ACCEPTANCE B9): the Command the authority's own identity service issues, for each
 * active Execution Lease of an older session, when it opens a replacement Agent Session
 * (ingress/sessions.ts), and the Event that answers it (also drafted by a work.start of the new
 * session that finds the revocation still missing, decide/work.ts).
 */
export const LEASE_REVOKE = 'ext.missionweaveprotocol.core.lease_revoke'
export const LEASE_REVOKED = 'ext.missionweaveprotocol.core.lease_revoked'
/** The one revocation reason LEASE_REVOKED carries. */
export const SESSION_REPLACED = 'session-replaced'

/** RFC 3339 UTC text `seconds` after `at` (at is a trusted acceptance time). */
export function plusSeconds(at: string, seconds: number): string {
  return new Date(Date.parse(at) + seconds * 1000).toISOString()
}

/** A lease boundary is exclusive: at or after it, the lease no longer authorizes anything. */
export const reached = (at: string, boundary: string | undefined): boolean =>
  boundary !== undefined && compareTimestampText(at, boundary) >= 0

/** §11.3: an active Execution Lease past its expiry ("timeout expires it"). */
export const executionLeaseExpired = (lease: ExecutionLeaseView, at: string): boolean =>
  lease.state === 'active' && reached(at, lease.expiresAt)

/**
 * §11.3 / ACCEPTANCE F5-F6: the one check every leased Command (renewal, checkpoint, block,
 * publication, usage, submission) makes: the cited Lease ID is the current, active, unexpired
 * lease, and it was issued to the session presenting it. A newer Session Epoch (§6.3: session
 * replacement) revokes the leases of older sessions (ACCEPTANCE B9: a LEASE_REVOKED Event, or a
 * work.start of the new session that revokes and starts in one decision), so the new session
 * must start afresh under a new Lease ID: it never continues the old one.
 */
export function currentLease(
  item: WorkItemView,
  leaseId: unknown,
  sessionEpoch: number | undefined,
  at: string,
): ExecutionLeaseView | Refusal {
  const lease = item.lease
  if (lease === null || lease.leaseId !== leaseId || lease.state !== 'active')
    return refuse('WORK_LEASE_EXPIRED', 'not the current Execution Lease')
  if (executionLeaseExpired(lease, at))
    return refuse('WORK_LEASE_EXPIRED', `the Execution Lease expired at ${lease.expiresAt}`)
  if (sessionEpoch !== undefined && sessionEpoch > lease.sessionEpoch)
    return refuse('WORK_LEASE_EXPIRED', 'the Execution Lease belongs to a replaced session')
  return lease
}

/**
 * §10.2 "an expired owner is fenced first", §11.5: the owner's grant lapses when it misses its
 * start-by deadline (queued), stops renewing its Execution Lease (active) or outstays its blocked
 * lease (blocked). Returns the ownership that a re-offer or unblock now ends, or null while the
 * owner is live (or there is none). A submitted item's owner has delivered and never lapses.
 */
export function lapsedOwnership(item: WorkItemView, at: string): EndedOwnershipView | null {
  const owner = item.owner
  if (owner === null) return null
  const ended = (reason: string): EndedOwnershipView => ({
    agentId: owner.agentId,
    ownershipEpoch: owner.ownershipEpoch,
    leaseId: item.lease?.leaseId ?? null,
    reason,
  })
  switch (item.state) {
    case 'active':
      return item.lease !== null && executionLeaseExpired(item.lease, at) ? ended('execution lease expired') : null
    case 'queued':
      return reached(at, owner.leaseExpiresAt) ? ended('start deadline missed') : null
    case 'blocked':
      return reached(at, owner.leaseExpiresAt) ? ended('blocked lease expired') : null
    default:
      return null
  }
}

/**
 * §11.5, §4 invariant 5: a work.submit from an ownership that has already ended is answered
 * WORK_STALE_OWNERSHIP, and its result is kept — once per ended ownership, only when it names
 * that ownership's last Execution Lease — as a non-authoritative Event in the Group log. We use
 * an Event rather than a side table because the Group log is the Mission's history and audit
 * trail (§7.4, §15.2): the late result is replayed, archived and delivered like every other fact,
 * while apply() keeps it out of every decision (it never changes the WorkItem's state, revision
 * or submission, so it can never complete the item).
 */
export function lateResultDraft(
  item: WorkItemView,
  actorId: string,
  payload: {ownershipEpoch: number; leaseId: string; artifactHashes: string[]},
  eventId: string,
  at: string,
): EventDraft | null {
  const ended = (item.endedOwnerships ?? []).find(
    (e) => e.agentId === actorId && e.ownershipEpoch === payload.ownershipEpoch,
  )
  if (ended === undefined || ended.leaseId === null || ended.leaseId !== payload.leaseId) return null
  if ((item.lateResults ?? []).some((r) => r.agentId === actorId && r.ownershipEpoch === payload.ownershipEpoch))
    return null
  return {
    eventId,
    kind: LATE_RESULT_RECORDED,
    conversationId: item.conversationId,
    payload: {
      workItemId: item.workItemId,
      authoritative: false,
      agentId: actorId,
      ownershipEpoch: payload.ownershipEpoch,
      leaseId: payload.leaseId,
      artifactHashes: [...payload.artifactHashes].sort(),
      rejectedWith: 'WORK_STALE_OWNERSHIP',
      recordedAt: at,
    },
  }
}

/**
 * §6.3/§11.3 (ACCEPTANCE B9): the owner's active Execution Lease on an `active` WorkItem when it
 * was issued under a Session Epoch older than `sessionEpoch` (the Agent's current one), else null.
 * Such a lease is fenced already (currentLease refuses it); revoking it returns the WorkItem to
 * `queued` so the new session can start it under a new lease.
 */
export function replacedSessionLease(item: WorkItemView, sessionEpoch: number | undefined): ExecutionLeaseView | null {
  const {lease, owner} = item
  if (sessionEpoch === undefined || item.state !== 'active' || lease === null || owner === null) return null
  if (lease.state !== 'active' || lease.holderAgentId !== owner.agentId) return null
  if (lease.ownershipEpoch !== owner.ownershipEpoch) return null
  return lease.sessionEpoch < sessionEpoch ? lease : null
}

/**
 * The LEASE_REVOKED Event revoking `lease` (replacedSessionLease) for Session Epoch `sessionEpoch`
 * at `at`: the WorkItem returns to `queued` under the same owner and Ownership Epoch with a fresh
 * ownership lease (start-by deadline) from the Organization's policy. `revision` is the WorkItem
 * revision it carries (the next one unless another Event of the decision comes first).
 */
export function leaseRevokedDraft(
  item: WorkItemView,
  lease: ExecutionLeaseView,
  sessionEpoch: number,
  eventId: string,
  at: string,
  policy: LeasePolicy | undefined,
  revision: number = item.revision + 1,
): EventDraft {
  return {
    eventId,
    kind: LEASE_REVOKED,
    conversationId: item.conversationId,
    payload: {
      workItemId: item.workItemId,
      revision,
      agentId: lease.holderAgentId,
      ownershipEpoch: lease.ownershipEpoch,
      leaseId: lease.leaseId,
      leaseSessionEpoch: lease.sessionEpoch,
      sessionEpoch,
      reason: SESSION_REPLACED,
      revokedAt: at,
      ownershipLeaseExpiresAt: plusSeconds(at, leaseLengths(policy).ownershipSeconds),
    },
  }
}
