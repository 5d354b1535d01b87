// Bounded offline execution (spec §11.5; ACCEPTANCE F11-F14): the critical
// `urn:missionweaveprotocol:extension:bounded-offline-execution` binding a Worker puts on each
// Command it buffered while the Group service was unreachable, and the window the Group Authority
// accepts it in. Pure: the Agent runtime builds the binding with it (agent/offline-binding.ts),
// ingress validates its shape (ingress/extensions.ts), and the decider checks it against the
// WorkItem's historical Execution Lease (decide/offline.ts).

import {compareTimestampText} from '../../json/timestamp.js'
import type {ExtensionsBoundedOfflineExecution} from './payloads.generated.js'
import type {ExecutionLeaseView} from './state.js'
import {plusSeconds} from './work-leases.js'

/** The Extension Profile URI of the binding (§11.5). */
export const BOUNDED_OFFLINE_EXECUTION = 'urn:missionweaveprotocol:extension:bounded-offline-execution'
/** The profile version this authority implements; a binding of another major version is unknown (§18 pins majors). */
export const BOUNDED_OFFLINE_EXECUTION_VERSION = '0.1.0'

/** The binding's `data` (schemas/extensions/bounded-offline-execution.schema.json). */
export type OfflineBinding = ExtensionsBoundedOfflineExecution

/**
 * The Commands a Worker may buffer offline: §11.5 lets it "buffer signed progress and
 * checkpoints" and reconciles "the Message or checkpoint" — a progress Message in the WorkItem
 * Conversation and work.checkpoint. Not lease_renew: renewing a lease the Worker could not renew
 * would extend it retroactively past the bounded grace; not block, submit, fail or artifact
 * publication: §11.5 requires reconciliation "before submission or further side effects".
 */
export const OFFLINE_KINDS: ReadonlySet<string> = new Set(['work.checkpoint', 'message.post'])

/** Whether an extension version is of the major version this authority implements. */
export const implementedOfflineVersion = (version: string): boolean =>
  version.split('.')[0] === BOUNDED_OFFLINE_EXECUTION_VERSION.split('.')[0]

const before = (a: string, b: string) => compareTimestampText(a, b) < 0
const atOrBefore = (a: string, b: string) => compareTimestampText(a, b) <= 0

/** Why a binding's own times contradict each other (the Worker's clock story), or null. */
export function bindingTimeProblem(b: OfflineBinding): string | null {
  if (before(b.bufferedAt, b.disconnectedAt)) return 'bufferedAt precedes disconnectedAt'
  // Only already-active work continues offline: the Worker lost the service while its lease held.
  if (!before(b.disconnectedAt, b.leaseExpiresAt)) return 'disconnectedAt is not before the historical lease expiry'
  if (!before(b.bufferedAt, b.graceDeadline)) return 'bufferedAt is not before the grace deadline'
  return null
}

/**
 * §11.5 "progress buffered outside the historical lease/grace window": the authoritative window
 * is [lease start, min(authoritative expiry + grace, the binding's grace deadline)). The Worker
 * may not claim a later expiry than the Authority granted, nor a grace deadline beyond its
 * claimed expiry plus the Organization's grace. Returns the violation, or null.
 */
export function outsideWindow(
  b: OfflineBinding,
  lease: ExecutionLeaseView,
  graceSeconds: number,
  acceptedAt: string,
): string | null {
  const expiresAt = lease.expiresAt ?? lease.issuedAt
  if (before(expiresAt, b.leaseExpiresAt)) return `the binding's lease expiry is after the granted ${expiresAt}`
  if (before(plusSeconds(b.leaseExpiresAt, graceSeconds), b.graceDeadline))
    return `the grace deadline exceeds the lease expiry plus ${graceSeconds} s`
  if (before(b.disconnectedAt, lease.issuedAt)) return `disconnected before the lease started at ${lease.issuedAt}`
  if (before(b.bufferedAt, lease.issuedAt)) return `buffered before the lease started at ${lease.issuedAt}`
  // bufferedAt < graceDeadline (bindingTimeProblem) ≤ claimed expiry + grace ≤ granted expiry + grace.
  if (!atOrBefore(b.bufferedAt, acceptedAt)) return 'buffered in the future'
  return null
}
