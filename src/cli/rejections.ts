// How a command shows a rejection: a verification, freshness or admission rejection with the wire
// code only, or with --explain the protected stage and reason for the local operator; an
// authority's semantic refusal with the `details` it sent (errors.ts ErrorDetails).

import type {ErrorDetails} from '../errors.js'
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

/** The human form of a wire rejection: the code, then the authority's detail and the failing member's pointer. */
export function refusalText(code: string, details: ErrorDetails | undefined): string {
  if (details === undefined) return code
  return `${code}\n  detail: ${details.detail}${details.pointer !== undefined ? `\n  pointer: ${details.pointer}` : ''}`
}
