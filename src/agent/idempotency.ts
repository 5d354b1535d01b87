// §16: external tool operations use a stable idempotency key derived from Mission ID, WorkItem ID,
// Ownership Epoch and logical operation ID — so a retried, resumed or restarted run of the same
// ownership presents the same key, and a new owner (higher epoch) a different one.

import {createHash} from 'node:crypto'
import {canonicalize} from '../json/jcs.js'

export function idempotencyKey(missionId: string, workItemId: string, ownershipEpoch: number, operationId: string) {
  const digest = createHash('sha256').update(canonicalize([missionId, workItemId, ownershipEpoch, operationId]))
  return `idem:${digest.digest('hex')}`
}

/**
 * §11.4 "a deterministic derived attempt key": one external attempt of `operationId` in retry
 * attempt `attempt` of the ownership — a retry presents a new key, a resumed or restarted run of
 * the same attempt the same one.
 */
export function attemptKey(
  missionId: string,
  workItemId: string,
  ownershipEpoch: number,
  operationId: string,
  attempt: number,
) {
  return idempotencyKey(missionId, workItemId, ownershipEpoch, `${operationId}\u0000attempt ${attempt}`)
}
