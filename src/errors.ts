// Protocol error objects (spec §19, schemas/error.schema.json).

export const ERROR_CODES = [
  'UNSUPPORTED_VERSION',
  'AUTH_REQUIRED',
  'AUTH_INVALID_SIGNATURE',
  'AUTH_STALE_SESSION',
  'AUTH_STALE_COORDINATOR',
  'AUTH_FORBIDDEN',
  'GROUP_NOT_FOUND',
  'MEMBERSHIP_REQUIRED',
  'MEMBERSHIP_STALE',
  'SCHEMA_VALIDATION_FAILED',
  'INVALID_COMMAND',
  'INVALID_STATE_TRANSITION',
  'REVISION_CONFLICT',
  'ACTION_ID_COLLISION',
  'UNKNOWN_CRITICAL_EXTENSION',
  'WORK_CONTRACT_INCOMPLETE',
  'WORK_OFFER_EXPIRED',
  'WORK_ALREADY_OWNED',
  'WORK_LEASE_EXPIRED',
  'WORK_STALE_OWNERSHIP',
  'APPROVAL_REQUIRED',
  'BUDGET_EXCEEDED',
  'RATE_LIMITED',
  'BACKPRESSURE',
  'CURSOR_TOO_OLD',
  'PROTOCOL_VIOLATION',
  'INTERNAL_ERROR',
] as const
export type ErrorCode = (typeof ERROR_CODES)[number]

/**
 * Whether an unchanged retry of the same bytes can succeed (§19). Signature, schema and framing
 * failures never heal by themselves; load and an authority fault do. REVISION_CONFLICT is not
 * retryable: revisions only grow, so the same bytes conflict forever — the sender re-reads the
 * state and issues a new Command with the current expectedRevision.
 */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['BACKPRESSURE', 'RATE_LIMITED', 'INTERNAL_ERROR'])

/** Fixed, non-diagnostic messages: the wire never says which check failed (§6.4). */
const MESSAGES: Partial<Record<ErrorCode, string>> = {
  AUTH_INVALID_SIGNATURE: 'Signed document signature, key validity, admission proof or freshness check failed.',
  SCHEMA_VALIDATION_FAILED: 'Object does not conform to its schema.',
  PROTOCOL_VIOLATION: 'Input violates framing, JSON or canonical-encoding rules.',
}

export interface ProtocolError {
  code: ErrorCode
  message: string
  retryable: boolean
  occurredAt: string
  [member: string]: unknown
}

export function protocolError(code: ErrorCode, occurredAt = new Date().toISOString()): ProtocolError {
  return {code, message: MESSAGES[code] ?? code, retryable: RETRYABLE.has(code), occurredAt}
}
