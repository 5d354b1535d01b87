// ext.missionweaveprotocol.core.lease_renew (spec §11.3, §11.4, §15.2): the Execution Lease holder
// renews its lease and reports structured progress; the authority answers with work.progressed
// carrying the new lease boundary and the progress summary. Only the current owner, under its
// current Ownership Epoch, naming the current active unexpired Lease ID, may renew: an expired
// lease is not revived (§11.5 — the Coordinator reassigns instead), a foreign or older Lease ID is
// WORK_LEASE_EXPIRED even with an unchanged Ownership Epoch (§11.3).

import {isRefusal, refuse} from './common.js'
import {type Handlers, live, ownerCheck} from './gate.js'
import {currentLease, leaseLengths, plusSeconds} from '../model/work-leases.js'

export const LEASE_RENEW = 'ext.missionweaveprotocol.core.lease_renew'

export const LEASE_HANDLERS: Handlers = {
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
