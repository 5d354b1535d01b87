// ext.missionweaveprotocol.core.dependency_insert (spec §10.4, §10.1, §15.2): the Coordinator adds
// dependencies to an existing WorkItem as the plan evolves; the authority answers with
// work.contract.revised carrying the new Work Contract revision (contractVersion + 1).
//
// The WorkItem graph stays a DAG: the existing graph is acyclic (every insertion was checked), so
// a new edge item → d closes a cycle exactly when item is reachable from d; that walk is the same
// dependencyCycle() work.authorize uses. Effect on a WorkItem already in flight (§10.4 "eligible
// only when its declared dependencies" are satisfied; §11.3 active work needs a valid lease): an
// `active` item that gains an unmet dependency has its Execution Lease revoked and returns to
// `queued`, its owner keeping ownership under a bounded ownership lease (as §11.3 does for
// Session replacement); it cannot restart (work.start) or be re-offered (work.offer) until the
// dependency is verified. An item in any other unfinished state keeps its state and is gated the
// same way; an `offered` item's pending offer, made under the old contract, is withdrawn (§10.1: a
// revised contract requires renewed acceptance), so the Coordinator must offer again. A
// submitted, verified or cancelled item no longer takes new dependencies.

import type {DecidedCommand} from './command.js'
import {type DecideContext, type Decision, refuse} from './common.js'
import {type Handlers, type InGroup, live} from './gate.js'
import {dependencyCycle} from './work.js'
import type {WorkState} from '../model/state.js'
import {leaseLengths, plusSeconds} from '../model/work-leases.js'

export const DEPENDENCY_INSERT = 'ext.missionweaveprotocol.core.dependency_insert'

const CLOSED: ReadonlySet<WorkState> = new Set(['submitted', 'verified', 'cancelled'])

export const DEPENDENCY_HANDLERS: Handlers = {
  [DEPENDENCY_INSERT]: {
    on: 'group',
    gate: {
      membership: 'active',
      who: {by: 'coordinator'},
      mission: live((_, s) => `dependency insertion in a ${s} Mission`),
    },
    decide: dependencyInsert,
  },
}

function dependencyInsert(
  {state}: InGroup,
  command: DecidedCommand<typeof DEPENDENCY_INSERT>,
  ctx: DecideContext,
): Decision {
  const p = command.payload
  const workItemId = p.workItemId
  const item = state.workItems[workItemId]
  if (item === undefined) return refuse('INVALID_COMMAND', 'no such WorkItem')
  if (CLOSED.has(item.state))
    return refuse('INVALID_STATE_TRANSITION', `dependency insertion into a ${item.state} WorkItem`)
  const current = item.contract.dependencyWorkItemIds
  const added = p.dependencyWorkItemIds
  const repeated = added.find((d) => current.includes(d))
  if (repeated !== undefined) return refuse('INVALID_COMMAND', `${repeated} is already a dependency`)
  const cycle = dependencyCycle(state, workItemId, added)
  if (cycle) return cycle

  const contract = {
    ...item.contract,
    contractVersion: item.contract.contractVersion + 1,
    dependencyWorkItemIds: [...current, ...added],
  }
  const unmet = added.some((d) => state.workItems[d]!.state !== 'verified')
  const revoke = unmet && item.state === 'active' && item.lease?.state === 'active'
  return {
    events: [
      {
        eventId: ctx.newId(),
        kind: 'work.contract.revised',
        conversationId: item.conversationId,
        payload: {
          workItemId,
          revision: item.revision + 1,
          contract,
          addedDependencyWorkItemIds: [...added],
          ...(p.reason !== undefined ? {reason: p.reason} : {}),
          ...(revoke
            ? {
                revokedLeaseId: item.lease!.leaseId,
                ownershipLeaseExpiresAt: plusSeconds(ctx.acceptedAt, leaseLengths(ctx.leases).ownershipSeconds),
              }
            : {}),
          // §10.1: a revised contract needs renewed acceptance; the pending offer (old contract) is withdrawn.
          ...(item.state === 'offered' && item.offer !== null ? {withdrawnOfferId: item.offer.offerId} : {}),
        },
      },
    ],
  }
}
