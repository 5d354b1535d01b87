// Buffering while the Group service is unreachable (spec §11.5; ACCEPTANCE F11/F12): the critical
// bounded-offline-execution binding a Worker puts on each progress Message or checkpoint it
// buffers, and the rebase on reconnect that re-signs the buffered Command under the current
// session. Pure apart from signing: the caller supplies every time and epoch, so the runtime's
// outbox (and tests) decide when "now" is.

import type {UsageDelta} from '../authority/model/budget.js'
import {
  BOUNDED_OFFLINE_EXECUTION,
  BOUNDED_OFFLINE_EXECUTION_VERSION,
  OFFLINE_KINDS,
  type OfflineBinding,
  bindingTimeProblem,
} from '../authority/model/offline-execution.js'
import {OFFLINE_GRACE_SECONDS, plusSeconds} from '../authority/model/work-leases.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {type BuiltCommand, buildCommand, newUrn} from '../operator/command-builder.js'
import {MwpError} from '../errors.js'

export {BOUNDED_OFFLINE_EXECUTION, type OfflineBinding}

/** The execution the Worker was running when it lost the service: its last known lease. */
export interface HistoricalExecution {
  agentId: string
  groupId: string
  workItemId: string
  sessionEpoch: number
  ownershipEpoch: number
  leaseId: string
  leaseExpiresAt: string
}

/** Why a binding cannot be built: the Worker must not buffer this work (§11.5). */
export class OfflineBufferError extends MwpError<'offline-buffer-refused'> {
  constructor(message: string) {
    super('offline-buffer-refused', message)
  }
}

/**
 * The binding for a Command buffered at `bufferedAt`, after losing the service at
 * `disconnectedAt`. The grace deadline is the lease expiry plus the Organization's grace
 * (leases.offlineGraceSeconds; default OFFLINE_GRACE_SECONDS). Throws when the work may not be
 * buffered: the service was lost after the lease had expired (only already-active work
 * continues), or the grace is over — the Worker then stops and waits to reconcile.
 */
export function offlineBinding(
  execution: HistoricalExecution,
  times: {disconnectedAt: string; bufferedAt: string; graceSeconds?: number},
  usageDelta: UsageDelta,
): OfflineBinding {
  const binding: OfflineBinding = {
    ...execution,
    disconnectedAt: times.disconnectedAt,
    bufferedAt: times.bufferedAt,
    graceDeadline: plusSeconds(execution.leaseExpiresAt, times.graceSeconds ?? OFFLINE_GRACE_SECONDS),
    usageDelta: {...usageDelta},
  }
  const problem = bindingTimeProblem(binding)
  if (problem !== null) throw new OfflineBufferError(`cannot buffer offline: ${problem}`)
  return binding
}

/** A Command held in the outbox: what it will say, not yet signed for any session. */
export interface BufferedCommand {
  /** Kept across rebases: an accepted reconciliation answers a resend with its receipt, never a second charge. */
  actionId: string
  kind: string
  payload: Record<string, unknown>
  /** message.post: the WorkItem's Conversation (§11.5 "the bound WorkItem Conversation"). */
  conversationId?: string
  binding: OfflineBinding
}

/** Buffers a work.checkpoint or a progress message.post under `binding` (a fresh Action ID). */
export function bufferCommand(
  kind: string,
  payload: Record<string, unknown>,
  binding: OfflineBinding,
  conversationId?: string,
): BufferedCommand {
  if (!OFFLINE_KINDS.has(kind)) throw new OfflineBufferError(`${kind} cannot be buffered offline (§11.5)`)
  return {actionId: newUrn(), kind, payload, binding, ...(conversationId !== undefined ? {conversationId} : {})}
}

/**
 * §11.5 on reconnect: the buffered Command signed with the current `issuedAt`, Session Epoch and
 * Membership Epoch, the binding preserved unchanged. `actionId` replaces the buffered one where
 * §19 asks for a new Command (after a stale-fencing error).
 */
export function rebaseBuffered(
  key: SigningKey,
  buffered: BufferedCommand,
  current: {issuedAt: string; sessionEpoch: number; membershipEpoch: number; actionId?: string},
): BuiltCommand {
  const b = buffered.binding
  return buildCommand(key, {
    kind: buffered.kind,
    groupId: b.groupId,
    payload: buffered.payload,
    actionId: current.actionId ?? buffered.actionId,
    issuedAt: current.issuedAt,
    sessionEpoch: current.sessionEpoch,
    membershipEpoch: current.membershipEpoch,
    workItemId: b.workItemId,
    ...(buffered.conversationId !== undefined ? {conversationId: buffered.conversationId} : {}),
    extensions: {[BOUNDED_OFFLINE_EXECUTION]: {version: BOUNDED_OFFLINE_EXECUTION_VERSION, critical: true, data: b}},
  })
}
