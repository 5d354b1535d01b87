// What both Command paths answer besides a receipt: one protocol error that names the Command's
// Action ID, or INTERNAL_ERROR for a fault that is not the actor's (the reason goes to the
// operator's audit log, never to the wire).

import {type ErrorCode, type ProtocolError, protocolError} from '../../errors.js'
import {StoreError} from '../../store/records.js'
import {type Authority, AuthorityIntegrityError} from '../authority.js'

/** The wire error of a refusal; `why` replaces the code's fixed message (at most the schema's 2000 characters). */
export function refusal(authority: Authority, actionId: string, code: ErrorCode, why?: string): {error: ProtocolError} {
  const error = protocolError(code, authority.clock())
  return {error: {...error, ...(why !== undefined ? {message: why.slice(0, 2000)} : {}), relatedActionId: actionId}}
}

/**
 * A store outage, a stored Event that no longer verifies or folds, or a bug: nothing was accepted
 * that the actor could not find again by its receipt. The wire gets INTERNAL_ERROR (retryable);
 * the operator gets the reason in the protected audit log.
 */
export async function internalError(
  authority: Authority,
  subject: string,
  e: unknown,
): Promise<{error: ProtocolError}> {
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
