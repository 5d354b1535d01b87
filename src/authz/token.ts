// The capability token format (spec §12, §11.3): a compact bearer credential the Authorization
// Service signs for one Worker's execution, and that a tool service checks offline.
//
//   token = base64url(JCS(claims)) "." base64url(Ed25519(DOMAIN || JCS(claims)))
//
// The signature covers TOKEN_DOMAIN and a newline before the canonical claims. A protocol Signed
// Document is signed over JCS bytes alone, which always start with '{', so no token signature can
// ever verify as a Signed Document's (or a checkpoint's) and no document signature as a token's,
// even when the same key signed both. The claims also carry `typ`, so a decoded payload names its
// format.
//
// §12 / ACCEPTANCE G3: a token is a secret. It MUST NOT appear in Messages, Agent Cards, Context
// Packages, Artifacts or Group Events; nothing in src/authz/ writes it anywhere but the issuer's
// return value, and the claims never hold another credential.

import {signEd25519, strictVerify} from '../crypto/ed25519.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {decodeBase64url, encodeBase64url} from '../json/base64url.js'
import {canonicalBytes} from '../json/jcs.js'
import {type JsonValue, parseJsonBytes} from '../json/parse.js'
import {isProfileTimestamp} from '../json/timestamp.js'
import {DIMENSIONS, type Budget} from '../authority/model/budget.js'

/** The token format and its signing domain. */
export const TOKEN_DOMAIN = 'mwp-capability-token/1'
const DOMAIN_PREFIX = Buffer.from(`${TOKEN_DOMAIN}\n`, 'utf8')

/** One allowed resource and the operations on it (a subset of a Work Contract `allowedResources` entry). */
export interface TokenGrant {
  resource: string
  operations: string[]
  /** The contract's constraints on the resource, carried unchanged for the tool service to enforce. */
  constraints?: {[member: string]: JsonValue}
}

/** The six-dimension limits of one token (the Work Contract budget shape); an absent dimension is unbounded upstream too. */
export type TokenLimits = Budget

/** §12: everything a token is bound to. */
export interface CapabilityClaims {
  typ: typeof TOKEN_DOMAIN
  tokenId: string
  /** The Authorization Service principal ID. */
  issuer: string
  /** The Authorization Service key that signed it. */
  keyId: string
  agentId: string
  sessionEpoch: number
  missionId: string
  groupId: string
  workItemId: string
  ownershipEpoch: number
  leaseId: string
  grants: TokenGrant[]
  limits: TokenLimits
  issuedAt: string
  /** No later than the Execution Lease's expiry at issue (§11.3). */
  expiresAt: string
}

/** Signs `claims` with the Authorization Service key into the compact form. */
export function encodeToken(claims: CapabilityClaims, key: SigningKey): string {
  const body = canonicalBytes(claims)
  const signature = signEd25519(key.seed, Buffer.concat([DOMAIN_PREFIX, body]))
  return `${encodeBase64url(body)}.${encodeBase64url(signature)}`
}

export type DecodeResult =
  {ok: true; claims: CapabilityClaims} | {ok: false; reason: 'malformed' | 'bad-signature'; detail: string}

/**
 * The claims of `token` if it is well formed and its signature verifies under `publicKey`
 * (strict Ed25519). The signature is checked before the claims are parsed, so nothing
 * unauthenticated is interpreted beyond its base64url framing.
 */
export function decodeToken(token: string, publicKey: Uint8Array): DecodeResult {
  const malformed = (detail: string): DecodeResult => ({ok: false, reason: 'malformed', detail})
  const parts = token.split('.')
  if (parts.length !== 2) return malformed('a token has two dot-separated parts')
  const body = decodeBase64url(parts[0]!)
  const signature = decodeBase64url(parts[1]!)
  if (body === null || signature === null) return malformed('not canonical base64url')
  const checked = strictVerify(publicKey, Buffer.concat([DOMAIN_PREFIX, body]), signature)
  if (!checked.ok) return {ok: false, reason: 'bad-signature', detail: `${checked.stage}: ${checked.reason}`}
  let value: JsonValue
  try {
    value = parseJsonBytes(body)
  } catch {
    return malformed('the claims are not JSON')
  }
  if (!canonicalBytes(value).equals(Buffer.from(body))) return malformed('the claims are not canonical JSON')
  const problem = claimsProblem(value)
  return problem === null ? {ok: true, claims: value as unknown as CapabilityClaims} : malformed(problem)
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const isEpoch = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0
const isText = (v: unknown) => typeof v === 'string' && v !== ''

/**
 * Why a signed body is not CapabilityClaims (null: it is). The issuer is the only writer, so this
 * guards against a key shared with another format rather than against the issuer itself.
 */
function claimsProblem(v: JsonValue): string | null {
  if (!isObject(v)) return 'the claims are not an object'
  if (v.typ !== TOKEN_DOMAIN) return `typ is not ${TOKEN_DOMAIN}`
  for (const name of ['tokenId', 'issuer', 'keyId', 'agentId', 'missionId', 'groupId', 'workItemId', 'leaseId'])
    if (!isText(v[name])) return `${name} is not a string`
  for (const name of ['sessionEpoch', 'ownershipEpoch']) if (!isEpoch(v[name])) return `${name} is not an epoch`
  for (const name of ['issuedAt', 'expiresAt'])
    if (typeof v[name] !== 'string' || !isProfileTimestamp(v[name])) return `${name} is not a timestamp`
  const grants = v.grants
  if (!Array.isArray(grants)) return 'grants is not an array'
  for (const g of grants)
    if (
      !isObject(g) ||
      !isText(g.resource) ||
      !Array.isArray(g.operations) ||
      !g.operations.every(isText) ||
      (g.constraints !== undefined && !isObject(g.constraints))
    )
      return 'a grant is not {resource, operations, constraints?}'
  const limits = v.limits
  if (!isObject(limits)) return 'limits is not an object'
  for (const [, limit] of DIMENSIONS)
    if (limits[limit] !== undefined && (typeof limits[limit] !== 'number' || (limits[limit] as number) < 0))
      return `limits.${limit} is not a non-negative number`
  if (limits.currency !== undefined && typeof limits.currency !== 'string') return 'limits.currency is not a string'
  return null
}
