// ext.missionweaveprotocol.core.lease_renew (spec §11.3, §11.4, §15.2): the Execution Lease holder
// renews its lease and reports structured progress; the authority answers with work.progressed
// carrying the new lease boundary and the progress summary. Only the current owner, under its
// current Ownership Epoch, naming the current active unexpired Lease ID, may renew: an expired
// lease is not revived (§11.5 — the Coordinator reassigns instead), a foreign or older Lease ID is
// WORK_LEASE_EXPIRED even with an unchanged Ownership Epoch (§11.3).
//
// ext.missionweaveprotocol.core.lease_revoke (§6.3, §11.3; ACCEPTANCE B9): when it opens a
// replacement Agent Session, the authority's own identity service revokes each active Execution
// Lease that Agent holds under an older Session Epoch (ingress/sessions.ts finds them in the
// store's lease index). The answer, ext.missionweaveprotocol.core.lease_revoked, returns the
// WorkItem to `queued` under the same owner and Ownership Epoch, so the new session's work.start
// issues a new lease. A lease already closed, expired, of another owner or ownership, or of the
// replacing session itself is refused and nothing is appended.

import {isRefusal, refuse} from './common.js'
import {type Handlers, live, ownerCheck} from './gate.js'
import {
  LEASE_REVOKE,
  currentLease,
  executionLeaseExpired,
  leaseLengths,
  leaseRevokedDraft,
  plusSeconds,
  replacedSessionLease,
} from '../model/work-leases.js'

export const LEASE_RENEW = 'ext.missionweaveprotocol.core.lease_renew'

export const LEASE_HANDLERS: Handlers = {
  [LEASE_REVOKE]: {
    on: 'group',
    gate: {
      // The identity service that opened the session (checked in ingress: the authority's own
      // principal, command-checks.ts) holds no Membership.
      membership: 'none',
      who: {by: 'service', reason: "lease revocation on session replacement is the identity service's"},
      mission: live((_, s) => `lease revocation in a ${s} Mission`),
    },
    decide: ({state}, command, ctx) => {
      const p = command.payload
      const item = state.workItems[p.workItemId]
      if (item === undefined) return refuse('INVALID_COMMAND', 'no such WorkItem')
      const owner = item.owner
      if (owner === null || owner.agentId !== p.agentId || owner.ownershipEpoch !== p.ownershipEpoch)
        return refuse('WORK_STALE_OWNERSHIP', 'the Agent no longer owns the WorkItem under that Ownership Epoch')
      if (item.lease === null || item.lease.leaseId !== p.leaseId || item.lease.state !== 'active')
        return refuse('WORK_LEASE_EXPIRED', 'not the active Execution Lease')
      const lease = replacedSessionLease(item, p.sessionEpoch)
      if (lease === null)
        return refuse('INVALID_COMMAND', 'the lease is not of an older session than the replacing one')
      // §11.5: a lapsed lease is the Coordinator's to reassign; the new session does not revive it.
      if (executionLeaseExpired(lease, ctx.acceptedAt))
        return refuse('WORK_LEASE_EXPIRED', `the Execution Lease expired at ${lease.expiresAt}`)
      return {events: [leaseRevokedDraft(item, lease, p.sessionEpoch, ctx.newId(), ctx.acceptedAt, ctx.leases)]}
    },
  },
  [LEASE_RENEW]: {
    on: 'group',
    gate: {
      membership: 'active',
      who: {by: 'agent', reason: 'only the Execution Lease holder renews it'},
      mission: live((_, s) => `lease renewal in a ${s} Mission`),
    },
    decide: ({state}, command, ctx) => {
      const p = command.payload
      const item = state.workItems[p.workItemId]
      if (item === undefined) return refuse('INVALID_COMMAND', 'no such WorkItem')
      const owned = ownerCheck(item, command.actor, p.ownershipEpoch)
      if (owned) return owned
      const at = ctx.acceptedAt
      const lease = currentLease(item, p.leaseId, command.sessionEpoch, at)
      if (isRefusal(lease)) return lease
      if (item.state !== 'active') return refuse('INVALID_STATE_TRANSITION', `lease renewal while ${item.state}`)
      const renewed = {
        expiresAt: plusSeconds(at, p.leaseSeconds ?? leaseLengths(ctx.leases).executionSeconds),
        renewalCount: (lease.renewalCount ?? 0) + 1,
        lastRenewedAt: at,
      }
      return {
        events: [
          {
            eventId: ctx.newId(),
            kind: 'work.progressed',
            conversationId: item.conversationId,
            payload: {
              workItemId: item.workItemId,
              revision: item.revision + 1,
              leaseId: lease.leaseId,
              lease: renewed,
              progress: p.progress,
            },
          },
        ],
      }
    },
  },
}
