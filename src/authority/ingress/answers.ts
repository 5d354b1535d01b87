// What both Command paths answer besides a receipt: one protocol error that names the Command's
// Action ID, or INTERNAL_ERROR for a fault that is not the actor's (the reason goes to the
// operator's audit log, never to the wire). Every refusal is audited with its ingress stage, its
// code and its reason; only a semantic refusal (`told`) also tells its sender the reason
// (errors.ts ErrorDetails). Verification, admission and freshness failures never get here with a
// reason: admit.ts answers them with the bare code, and the verifier has audited their stage.

import {type ErrorCode, type ProtocolError, protocolError} from '../../errors.js'
import {StoreError} from '../../store/records.js'
import type {AuditEntry} from '../../store/types.js'
import {type Authority, AuthorityIntegrityError} from '../authority.js'

/** The ingress step that refused a Command: the audit entry's stage. */
export type RefusalStage =
  | 'envelope'
  | 'payload'
  | 'extension'
  | 'policy'
  | 'embedded'
  | 'session'
  | 'idempotency'
  | 'decision'
  | 'rate-limit'
  | 'append'

/** A refusal on its way to the sender and to the audit log. */
export interface Refused {
  code: ErrorCode
  stage: RefusalStage
  /** The operator's reason (audited); the sender's `details.detail` only when `told`. */
  reason?: string
  /** The JSON Pointer of the payload member that fails its schema (told with the reason). */
  pointer?: string
  told?: true
}

/** A refusal whose reason stays with the operator (a fence, an embedded document that does not verify). */
export const opaque = (code: ErrorCode, stage: RefusalStage, reason?: string): Refused => ({
  code,
  stage,
  ...(reason !== undefined ? {reason} : {}),
})

/** A semantic refusal: the authenticated sender of a well-signed Command learns why (§19 `details`). */
export const told = (code: ErrorCode, stage: RefusalStage, reason: string, pointer?: string): Refused => ({
  code,
  stage,
  reason,
  ...(pointer !== undefined ? {pointer} : {}),
  told: true,
})

/** The Command a refusal is about, as the audit entry names it. */
export interface RefusedCommand {
  kind: string
  actionId: string
  actor: {type: string; id: string}
  groupId?: string
}

/** An answered refusal: the wire error, and the audit entry submit() writes before answering. */
export interface Refusal {
  error: ProtocolError
  audit?: AuditEntry
}

/** error.schema.json bounds `message` at 2000 characters and `details` not at all: a detail gets the same bound. */
const MAX_DETAIL = 2000

export function refusal(authority: Authority, command: RefusedCommand, r: Refused): Refusal {
  const at = authority.clock()
  const details =
    r.told === true && r.reason !== undefined
      ? {detail: r.reason.slice(0, MAX_DETAIL), ...(r.pointer !== undefined ? {pointer: r.pointer} : {})}
      : undefined
  return {
    error: {...protocolError(r.code, at, details), relatedActionId: command.actionId},
    audit: refusalAudit(at, command, r),
  }
}

/** The audit entry of a refused Command: its stage, its code as reason, what and whose it was, and why. */
function refusalAudit(at: string, command: RefusedCommand, r: Refused): AuditEntry {
  const where = command.groupId !== undefined ? ` in ${command.groupId}` : ''
  return {
    at,
    stage: r.stage,
    reason: r.code,
    documentKind: `command ${command.kind}`,
    subject: `${command.actor.type} ${command.actor.id} action ${command.actionId}${where}`,
    ...(r.reason !== undefined ? {detail: r.pointer !== undefined ? `${r.reason} (at ${r.pointer})` : r.reason} : {}),
  }
}

/**
 * Writes a refusal's audit entry, then answers without it. An audit log that cannot be written
 * does not change the answer (the refusal stands either way); the store's own error is reported
 * by the next write that needs it.
 */
export async function audited<R extends object>(authority: Authority, answer: R | Refusal): Promise<R | Refusal> {
  if (!('error' in answer) || answer.audit === undefined) return answer
  await authority.store.audit(answer.audit).catch(() => undefined)
  return {error: answer.error}
}

/**
 * A store outage, a stored Event that no longer verifies or folds, or a bug: nothing was accepted
 * that the actor could not find again by its receipt. The wire gets INTERNAL_ERROR (retryable);
 * the operator gets the reason in the protected audit log.
 */
export async function internalError(authority: Authority, subject: string, e: unknown): Promise<Refusal> {
  const reason =
    e instanceof AuthorityIntegrityError ? 'log-integrity' : e instanceof StoreError ? `store-${e.code}` : 'internal'
  await authority.store
    .audit({
      at: new Date().toISOString(),
      stage: 'authority',
      reason,
      documentKind: 'command',
      subject,
      detail: (e as Error)?.message,
    })
    .catch(() => undefined)
  return {error: protocolError('INTERNAL_ERROR', authority.clock())}
}
