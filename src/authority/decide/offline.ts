// Reconciling a buffered Command (spec §11.5; ACCEPTANCE F12-F14). A Worker that lost the Group
// service kept working under its Execution Lease for a bounded grace and buffered progress
// Messages and checkpoints, each with the critical bounded-offline-execution binding; on
// reconnect it re-signed them under its current session. The binding is checked against the
// WorkItem's state — same owner and Ownership Epoch, the ownership's last lease still unclosed,
// the buffer time inside that lease's window, the WorkItem's own Conversation — and then the
// Command is decided as usual, except that the gate accepts the historical lease in place of the
// current one (DecideContext.reconciledLeaseId). A nonzero usage delta is charged through the one
// usage path (budget.ts usageCharge) in the same decision, its Events first: an overflow refuses
// the progress too, so nothing is appended.
//
// The WorkItem keeps only its last Execution Lease, and that is all this needs: the lease a
// buffered Command ran under is the ownership's last one until the Worker starts a new lease,
// which it may not do before reconciling (§11.5), and every way a lease closes (checkpoint, block,
// submission, cancellation, failure, re-offer, session replacement) leaves it in the WorkItem
// with its closed state.
//
// Session replacement (§11.3, ACCEPTANCE B9): the Worker reconnects under a new session, whose
// opening revokes its lease and returns the WorkItem to `queued` before the buffered Commands
// arrive. That revocation is not the Worker giving up the lease, so progress buffered BEFORE it
// (the lease's `revocation.revokedAt`) is still reconciled — a buffered checkpoint is recorded
// on the queued WorkItem (decide/work.ts) — and progress buffered at or after it is "after lease
// closure" and refused. Every other closure refuses everything.

import {compareTimestampText} from '../../json/timestamp.js'
import {isZeroDelta} from '../model/budget.js'
import {type OfflineBinding, bindingTimeProblem, outsideWindow} from '../model/offline-execution.js'
import type {ExecutionLeaseView, GroupState, WorkItemView} from '../model/state.js'
import {leaseLengths} from '../model/work-leases.js'
import {usageCharge} from './budget.js'
import type {ReceivedCommand} from './command.js'
import {type DecideContext, type Decision, type Refusal, isRefusal, refuse} from './common.js'
import {ownerCheck} from './gate.js'

/** Decides `command`, buffered offline under `binding`, with `decideBuffered` deciding the Command itself. */
export function reconcileOffline(
  state: GroupState | null,
  command: ReceivedCommand,
  binding: OfflineBinding,
  ctx: DecideContext,
  decideBuffered: (ctx: DecideContext) => Decision,
): Decision {
  if (state === null) return refuse('INVALID_COMMAND', 'a buffered Command for a Group that does not exist')
  const item = boundItem(state, command, binding)
  if (isRefusal(item)) return item
  // §11.5 "for a changed owner": a reassignment raised the Ownership Epoch, or the ownership ended.
  const owned = ownerCheck(item, command.actor, binding.ownershipEpoch)
  if (owned !== null) return owned
  const lease = item.lease
  if (lease === null || lease.leaseId !== binding.leaseId)
    return refuse('WORK_LEASE_EXPIRED', 'not the last Execution Lease of this ownership')
  if (lease.sessionEpoch !== binding.sessionEpoch || lease.ownershipEpoch !== binding.ownershipEpoch)
    return refuse('INVALID_COMMAND', 'the binding does not describe the historical Execution Lease')
  // §11.5 "after lease closure": checkpoint, block and submission release it; cancellation,
  // failure and reassignment revoke or expire it. Only an unclosed lease (live or timed out) can
  // still have buffered work to reconcile — and one that session replacement revoked, for work
  // buffered before the revocation (B9).
  const closed = closure(lease, binding)
  if (closed !== null) return refuse('WORK_LEASE_EXPIRED', closed)
  const outside = outsideWindow(binding, lease, leaseLengths(ctx.leases).offlineGraceSeconds, ctx.acceptedAt)
  if (outside !== null) return refuse('WORK_LEASE_EXPIRED', outside)

  const decided = decideBuffered({...ctx, reconciledLeaseId: lease.leaseId})
  if ('error' in decided || isZeroDelta(binding.usageDelta)) return decided
  const charged = usageCharge(state, ctx, item.workItemId, binding.usageDelta, {
    agentId: command.actor.id,
    ownershipEpoch: binding.ownershipEpoch,
    leaseId: binding.leaseId,
    sessionEpoch: binding.sessionEpoch,
    reconciliation: {sessionEpoch: command.sessionEpoch!, bufferedAt: binding.bufferedAt},
  })
  // §11.5: the charge, then the Message or checkpoint — or neither.
  return isRefusal(charged) ? charged : {events: [...charged, ...decided.events]}
}

/** Why the historical lease no longer takes buffered progress, or null (see reconcileOffline). */
function closure(lease: ExecutionLeaseView, binding: OfflineBinding): string | null {
  if (lease.state === 'active') return null
  const revoked = lease.state === 'revoked' ? lease.revocation : undefined
  if (revoked === undefined) return `the Execution Lease was ${lease.state}`
  return compareTimestampText(binding.bufferedAt, revoked.revokedAt) < 0
    ? null
    : `buffered at or after session replacement revoked the Execution Lease at ${revoked.revokedAt}`
}

/**
 * The WorkItem the binding names, or where the binding and the Command it is on disagree: another
 * Agent, Group or WorkItem, a Session Epoch newer than the re-signed Command's, times that
 * contradict each other, a checkpoint citing another lease, or a Message outside the bound
 * WorkItem's Conversation.
 */
function boundItem(state: GroupState, command: ReceivedCommand, b: OfflineBinding): WorkItemView | Refusal {
  if (command.actor.type !== 'agent' || command.actor.id !== b.agentId)
    return refuse('INVALID_COMMAND', 'the binding names another Agent')
  if (command.groupId !== b.groupId) return refuse('INVALID_COMMAND', 'the binding names another Group')
  if (command.sessionEpoch === undefined || command.sessionEpoch < b.sessionEpoch)
    return refuse('INVALID_COMMAND', 'the binding is from a later session than the Command')
  const times = bindingTimeProblem(b)
  if (times !== null) return refuse('INVALID_COMMAND', times)
  const item = state.workItems[b.workItemId]
  if (item === undefined) return refuse('INVALID_COMMAND', 'the binding names no WorkItem of this Group')
  const p = command.payload
  if (command.kind === 'work.checkpoint') {
    if (p.workItemId !== b.workItemId || p.ownershipEpoch !== b.ownershipEpoch || p.leaseId !== b.leaseId)
      return refuse('INVALID_COMMAND', 'the checkpoint cites another WorkItem, ownership or lease than its binding')
    return item
  }
  // message.post: §11.5 "outside the bound WorkItem Conversation".
  return p.conversationId === item.conversationId
    ? item
    : refuse('INVALID_COMMAND', "the Message is not in the bound WorkItem's Conversation")
}
