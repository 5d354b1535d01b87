// The tool service's side of capability tokens (spec §12; ACCEPTANCE G2): before it performs an
// operation, a tool service checks the presented token offline against the Authorization
// Service's public key, its own clock and revocation list, the operation and resource asked for,
// and its own usage meter — and, when it can reach the Authorization Service, whether the lease
// the token is bound to is still live (lease closure revokes every token issued under it, §11.3).
//
// Every refusal has its own reason and a §19 code. The token is a secret (§12, G3): a tool service
// must not log it or copy it into anything it publishes; the verdict carries only its claims.

import {
  addUsage,
  currencyMismatch,
  DIMENSIONS,
  overflow,
  type UsageDelta,
  ZERO_USAGE,
} from '../authority/model/budget.js'
import type {ErrorCode} from '../errors.js'
import {compareTimestampText, isProfileTimestamp} from '../json/timestamp.js'
import {type CapabilityClaims, decodeToken} from './token.js'

export type TokenRejection =
  | 'malformed'
  | 'bad-signature'
  | 'not-yet-valid'
  | 'expired'
  | 'revoked'
  | 'wrong-resource'
  | 'wrong-operation'
  | 'lease-ended'
  | 'currency-mismatch'
  | 'over-budget'

/** The §19 code each rejection is answered with. */
export const REJECTION_CODES: Readonly<Record<TokenRejection, ErrorCode>> = {
  malformed: 'PROTOCOL_VIOLATION',
  'bad-signature': 'AUTH_INVALID_SIGNATURE',
  // A credential outside its validity window fails the freshness check (§19 AUTH_INVALID_SIGNATURE).
  'not-yet-valid': 'AUTH_INVALID_SIGNATURE',
  expired: 'AUTH_INVALID_SIGNATURE',
  revoked: 'AUTH_FORBIDDEN',
  'wrong-resource': 'AUTH_FORBIDDEN',
  'wrong-operation': 'AUTH_FORBIDDEN',
  'lease-ended': 'WORK_LEASE_EXPIRED',
  'currency-mismatch': 'INVALID_COMMAND',
  'over-budget': 'BUDGET_EXCEEDED',
}

/** The service's usage meter for this token: what was used under it so far, and this call's cost. */
export interface UsageMeter {
  used: UsageDelta
  cost: UsageDelta
}

export interface VerifyOptions {
  /** The Authorization Service's Ed25519 public key. */
  publicKey: Uint8Array
  /** The tool service's trusted time (RFC 3339 UTC Z). */
  now: string
  operation: string
  resource: string
  /**
   * The service's usage meter, asked for the verified token's usage so far (the service keys it by
   * `claims.tokenId`, known only once the token verifies) and this call's cost.
   */
  usage?: (claims: CapabilityClaims) => UsageMeter
  /** The service's explicit revocation list. */
  revoked?: (tokenId: string) => boolean
  /**
   * Asks whether the bound execution is still live: null if so, else why not (e.g.
   * AuthorizationService.leaseStatus). Any non-null answer rejects the token as lease-ended.
   */
  leaseCheck?: (claims: CapabilityClaims) => Promise<{code: ErrorCode; reason: string} | null>
}

export type VerifyResult =
  {ok: true; claims: CapabilityClaims} | {ok: false; rejection: TokenRejection; code: ErrorCode; detail: string}

const reject = (rejection: TokenRejection, detail: string): VerifyResult => ({
  ok: false,
  rejection,
  code: REJECTION_CODES[rejection],
  detail,
})

/** §12: the token authorizes `operation` on `resource` now, within its limits (the checks in the order listed). */
export async function verifyToken(token: string, options: VerifyOptions): Promise<VerifyResult> {
  const decoded = decodeToken(token, options.publicKey)
  if (!decoded.ok) return reject(decoded.reason, decoded.detail)
  const claims = decoded.claims
  if (!isProfileTimestamp(options.now)) throw new RangeError(`now is not a protocol timestamp: ${options.now}`)
  if (compareTimestampText(options.now, claims.issuedAt) < 0)
    return reject('not-yet-valid', `issued at ${claims.issuedAt}`)
  // The expiry is exclusive, like a lease boundary (work-leases.ts `reached`).
  if (compareTimestampText(options.now, claims.expiresAt) >= 0)
    return reject('expired', `expired at ${claims.expiresAt}`)
  if (options.revoked?.(claims.tokenId) === true) return reject('revoked', `token ${claims.tokenId} is revoked`)
  const grant = claims.grants.find((g) => g.resource === options.resource)
  if (grant === undefined) return reject('wrong-resource', `${options.resource} is not granted`)
  if (!grant.operations.includes(options.operation))
    return reject('wrong-operation', `${options.operation} on ${options.resource} is not granted`)
  if (options.usage !== undefined) {
    const {used, cost} = options.usage(claims)
    if (currencyMismatch(claims.limits, used) || currencyMismatch(claims.limits, cost))
      return reject('currency-mismatch', `money is metered in ${claims.limits.currency ?? '(none)'}`)
    const after = addUsage(addUsage(ZERO_USAGE, used), cost)
    const over = overflow(claims.limits, after)
    if (over !== null) {
      const limit = DIMENSIONS.find(([d]) => d === over)![1]
      return reject('over-budget', `${over} ${after[over]} exceeds the token's ${limit} ${claims.limits[limit]}`)
    }
  }
  if (options.leaseCheck !== undefined) {
    const ended = await options.leaseCheck(claims)
    if (ended !== null) return reject('lease-ended', `${ended.code}: ${ended.reason}`)
  }
  return {ok: true, claims}
}
