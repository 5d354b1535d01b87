// Command freshness (spec §6.4, last paragraphs; ACCEPTANCE D17): a newly presented Command's
// `issuedAt` must lie inside an Organization-defined, bounded window around the trusted
// acceptance time. Failure is AUTH_INVALID_SIGNATURE with protected stage `freshness`.
// Only newly presented Commands are checked: an unchanged retry of an admitted Command is found
// in the Admission Log and returns its original result.

import {type Instant, compareInstants, parseTimestamp} from '../json/timestamp.js'
import {Rejection} from '../signing/verify.js'
import type {FreshnessWindow} from '../store/types.js'

const shift = (t: Instant, seconds: number): Instant => ({...t, seconds: t.seconds + seconds})

/** null when `issuedAt` is fresh at `acceptedAt`, else the rejection (exact instants, no Date). */
export function checkFreshness(issuedAt: string, acceptedAt: string, window: FreshnessWindow): Rejection | null {
  const issued = parseTimestamp(issuedAt)
  const accepted = parseTimestamp(acceptedAt)
  if (issued === null || accepted === null)
    return new Rejection({stage: 'freshness', reason: 'time-unparseable', kind: 'command'})
  if (compareInstants(issued, shift(accepted, window.maxFutureSkewSeconds)) > 0) {
    return new Rejection({
      stage: 'freshness',
      reason: 'issued-in-future',
      detail: `issuedAt ${issuedAt} is more than ${window.maxFutureSkewSeconds}s after ${acceptedAt}`,
      kind: 'command',
    })
  }
  if (compareInstants(shift(issued, window.maxAgeSeconds), accepted) < 0) {
    return new Rejection({
      stage: 'freshness',
      reason: 'issued-too-old',
      detail: `issuedAt ${issuedAt} is more than ${window.maxAgeSeconds}s before ${acceptedAt}`,
      kind: 'command',
    })
  }
  return null
}
