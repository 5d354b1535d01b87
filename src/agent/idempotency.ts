// §16: external tool operations use a stable idempotency key derived from Mission ID, WorkItem ID,
// Ownership Epoch and logical operation ID — so a retried, resumed or restarted run of the same
// ownership presents the same key, and a new owner (higher epoch) a different one.

import {createHash} from 'node:crypto'
import {canonicalize} from '../json/jcs.js'

export function idempotencyKey(missionId: string, workItemId: string, ownershipEpoch: number, operationId: string) {
  const digest = createHash('sha256').update(canonicalize([missionId, workItemId, ownershipEpoch, operationId]))
  return `idem:${digest.digest('hex')}`
}
