// How a command shows a verification, freshness or admission rejection: the wire code only,
// or with --explain the protected stage and reason for the local operator.

import {Rejection} from '../signing/verify.js'
import type {Outcome} from './base.js'

export function explainText(r: Rejection): string {
  const d = Rejection.diagnostic(r)
  return `${r.code}\n  stage: ${d.stage}\n  reason: ${d.reason}${d.detail ? `\n  detail: ${d.detail}` : ''}`
}

/** JSON form: `{code}` or, explained, `{code, diagnostic: {stage, reason, detail}}`. */
export function describeRejection(
  r: Rejection,
  explain: boolean,
): {code: string; diagnostic?: {stage: string; reason: string; detail?: string}} {
  if (!explain) return {code: r.code}
  const {stage, reason, detail} = Rejection.diagnostic(r)
  return {code: r.code, diagnostic: {stage, reason, detail}}
}

export function rejectionOutcome(r: Rejection, explain: boolean): Outcome {
  if (!explain) return {status: 'rejected', code: r.code}
  return {
    status: 'rejected',
    code: r.code,
    text: explainText(r),
    extra: {diagnostic: describeRejection(r, true).diagnostic},
  }
}
