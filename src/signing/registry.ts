// Registry evidence for stage 4 of the Signed Document Verification Profile (spec §6.4).
//
// Evidence is an Organization-scoped, complete snapshot of every signing-key binding and its
// validity history, in the format of the upstream cryptography bundle:
//   {organizationId, bindings: [{keyId, principal, algorithm, publicKey, validFrom, validityHistory}]}
// The whole snapshot is validated before `signature.keyId` selects a record, so one bad
// unrelated binding fails every verification that uses it (ACCEPTANCE C11). Validation proves
// each public key (BigInt point checks, ~1 ms) and is therefore cached by the snapshot's content
// hash: repeated verifications against the same registry reuse the proven keys.

import {createHash} from 'node:crypto'
import {type VerifyKey, provePublicKey} from '../crypto/ed25519.js'
import {MwpError} from '../errors.js'
import {decodeBase64url} from '../json/base64url.js'
import {canonicalize} from '../json/jcs.js'
import {parseJsonBytes} from '../json/parse.js'
import {type Instant, compareInstants, parseTimestamp} from '../json/timestamp.js'
import {isProtocolIdentifier} from '../json/uri.js'
import type {Principal} from './profiles.js'

/** What the adapter that produced the evidence can vouch for. Only `complete` is usable. */
export type Coverage = 'complete' | 'partial' | 'key-filtered' | 'unknown'

export interface TimeText {
  text: string
  instant: Instant
}

export interface ResolvedBinding {
  keyId: string
  principal: Principal
  publicKey: string
  key: VerifyKey
  validFrom: TimeText
  /** Effective (earliest) boundaries over the whole retained history, if any. */
  validUntil?: TimeText
  revokedAt?: TimeText
}

export interface ValidatedRegistry {
  organizationId: string
  contentHash: string
  bindings: ReadonlyMap<string, ResolvedBinding>
}

/** A stage-4 failure reason established while validating the evidence itself. */
export class RegistryFault {
  constructor(
    readonly reason: string,
    readonly detail?: string,
  ) {}
}

type Source =
  {type: 'bytes'; bytes: Uint8Array} | {type: 'snapshot'; snapshot: unknown} | {type: 'unavailable'; detail: string}

/**
 * Registry evidence handed to the verifier by a trusted key-resolution adapter. Validation is
 * lazy (it runs at stage 4, after the cheaper stages passed) and memoized.
 */
export class RegistryEvidence {
  private result?: ValidatedRegistry | RegistryFault

  private constructor(
    readonly coverage: Coverage,
    private readonly source: Source,
  ) {}

  /** The bytes of a complete Organization registry snapshot file. */
  static fromBytes(bytes: Uint8Array): RegistryEvidence {
    return new RegistryEvidence('complete', {type: 'bytes', bytes})
  }

  /** An already-parsed snapshot, with the coverage its source can vouch for. */
  static fromSnapshot(snapshot: unknown, coverage: Coverage = 'complete'): RegistryEvidence {
    return new RegistryEvidence(coverage, {type: 'snapshot', snapshot})
  }

  /** The adapter could not obtain evidence (store down, timeout, …). */
  static unavailable(detail: string): RegistryEvidence {
    return new RegistryEvidence('unknown', {type: 'unavailable', detail})
  }

  resolve(): ValidatedRegistry | RegistryFault {
    this.result ??= this.validate()
    return this.result
  }

  private validate(): ValidatedRegistry | RegistryFault {
    const s = this.source
    if (s.type === 'unavailable') return new RegistryFault('evidence-unavailable', s.detail)
    // A partial or key-filtered view cannot prove Organization-wide uniqueness (§6.4, C21).
    if (this.coverage !== 'complete') return new RegistryFault('evidence-incomplete', `coverage is ${this.coverage}`)
    let snapshot: unknown
    let contentHash: string
    try {
      if (s.type === 'bytes') {
        contentHash = 'sha256:' + createHash('sha256').update(s.bytes).digest('hex')
        const cached = cache.get(contentHash)
        if (cached) return cached
        snapshot = parseJsonBytes(s.bytes)
      } else {
        snapshot = s.snapshot
        contentHash = 'sha256:' + createHash('sha256').update(canonicalize(snapshot)).digest('hex')
        const cached = cache.get(contentHash)
        if (cached) return cached
      }
    } catch (e) {
      return new RegistryFault('evidence-malformed', (e as Error).message)
    }
    const result = validateSnapshot(snapshot, contentHash)
    remember(contentHash, result)
    return result
  }
}

// Validated snapshots by content hash. Small and bounded: an authority uses one or two current
// registry revisions at a time.
const CACHE_LIMIT = 32
const cache = new Map<string, ValidatedRegistry | RegistryFault>()
function remember(hash: string, result: ValidatedRegistry | RegistryFault): void {
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!)
  cache.set(hash, result)
}

/** Thrown inside validation only, and returned from it as the RegistryFault it names. */
class Invalid extends MwpError<'registry-invalid'> {
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super('registry-invalid', detail)
  }
}

const BINDING_MEMBERS = new Set(['keyId', 'principal', 'algorithm', 'publicKey', 'validFrom', 'validityHistory'])
const STATUS_MEMBERS = new Set(['sequence', 'recordedAt', 'validUntil', 'revokedAt'])
const PRINCIPAL_TYPES = new Set(['agent', 'human', 'service'])

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

function onlyMembers(v: Record<string, unknown>, allowed: Set<string>, where: string): void {
  for (const k of Object.keys(v))
    if (!allowed.has(k)) throw new Invalid('evidence-malformed', `${where}: unexpected member ${JSON.stringify(k)}`)
}

/** Protocol identifier per §2 and the common `id` schema (absolute URI, at most 512 chars). */
export function isIdentifier(v: unknown): v is string {
  return typeof v === 'string' && v.length <= 512 && isProtocolIdentifier(v)
}

function identifier(v: unknown, reason: string, where: string): string {
  if (!isIdentifier(v)) throw new Invalid(reason, `${where} is not an absolute URI identifier: ${JSON.stringify(v)}`)
  return v
}

function time(v: unknown, reason: string, where: string): TimeText {
  const instant = typeof v === 'string' ? parseTimestamp(v) : null
  if (instant === null) throw new Invalid(reason, `${where} is not a protocol timestamp: ${JSON.stringify(v)}`)
  return {text: v as string, instant}
}

interface Declaration {
  binding: ResolvedBinding
  history: string[] // canonical text of each status record, for prefix comparison
}

function readBinding(raw: unknown, index: number): Declaration {
  const where = `bindings[${index}]`
  if (!isRecord(raw)) throw new Invalid('evidence-malformed', `${where} is not an object`)
  onlyMembers(raw, BINDING_MEMBERS, where)
  const keyId = identifier(raw.keyId, 'key-id-invalid', `${where}.keyId`)
  const p = raw.principal
  if (!isRecord(p) || !PRINCIPAL_TYPES.has(p.type as string) || Object.keys(p).length !== 2) {
    throw new Invalid('principal-invalid', `${where}.principal must be {type, id}`)
  }
  const principal: Principal = {
    type: p.type as Principal['type'],
    id: identifier(p.id, 'principal-id-invalid', `${where}.principal.id`),
  }
  if (raw.algorithm !== 'Ed25519') throw new Invalid('algorithm-unsupported', `${where}.algorithm must be Ed25519`)
  if (typeof raw.publicKey !== 'string') throw new Invalid('evidence-malformed', `${where}.publicKey is not a string`)
  const keyBytes = decodeBase64url(raw.publicKey)
  if (keyBytes === null)
    throw new Invalid('public-key-noncanonical-base64url', `${where}.publicKey is not canonical unpadded base64url`)
  const proof = provePublicKey(keyBytes)
  if (!proof.ok)
    throw new Invalid(
      `public-key-${proof.reason}`,
      `${where}.publicKey fails the strict Ed25519 point checks (${proof.reason})`,
    )
  const validFrom = time(raw.validFrom, 'valid-from-invalid', `${where}.validFrom`)
  if (!Array.isArray(raw.validityHistory))
    throw new Invalid('evidence-malformed', `${where}.validityHistory is not an array`)

  const binding: ResolvedBinding = {keyId, principal, publicKey: raw.publicKey, key: proof.key, validFrom}
  const history: string[] = []
  let lastRecorded: TimeText | undefined
  raw.validityHistory.forEach((rec: unknown, i: number) => {
    const at = `${where}.validityHistory[${i}]`
    if (!isRecord(rec)) throw new Invalid('evidence-malformed', `${at} is not an object`)
    onlyMembers(rec, STATUS_MEMBERS, at)
    if (rec.sequence !== i + 1) throw new Invalid('history-not-contiguous', `${at}.sequence must be ${i + 1}`)
    const recorded = time(rec.recordedAt, 'history-time-invalid', `${at}.recordedAt`)
    if (lastRecorded && compareInstants(recorded.instant, lastRecorded.instant) < 0) {
      throw new Invalid('history-recorded-at-decreasing', `${at}.recordedAt is earlier than the previous record`)
    }
    lastRecorded = recorded
    for (const field of ['validUntil', 'revokedAt'] as const) {
      if (rec[field] === undefined) continue
      const boundary = time(rec[field], 'history-time-invalid', `${at}.${field}`)
      const current = binding[field]
      // A boundary may be added or moved earlier, never later (§6.4, C19).
      if (current && compareInstants(boundary.instant, current.instant) > 0) {
        throw new Invalid(
          'history-boundary-moved-later',
          `${at}.${field} moves the boundary later than ${current.text}`,
        )
      }
      if (!current || compareInstants(boundary.instant, current.instant) < 0) binding[field] = boundary
    }
    history.push(canonicalize(rec))
  })
  return {binding, history}
}

function sameBinding(a: ResolvedBinding, b: ResolvedBinding): boolean {
  return a.principal.type === b.principal.type && a.principal.id === b.principal.id && a.publicKey === b.publicKey
}

/** Validates a complete snapshot; exported for `mwp registry check`. */
export function validateSnapshot(snapshot: unknown, contentHash: string): ValidatedRegistry | RegistryFault {
  try {
    if (!isRecord(snapshot)) throw new Invalid('evidence-malformed', 'the registry is not a JSON object')
    onlyMembers(snapshot, new Set(['organizationId', 'bindings']), 'registry')
    const organizationId = identifier(snapshot.organizationId, 'organization-id-invalid', 'organizationId')
    if (!Array.isArray(snapshot.bindings) || snapshot.bindings.length === 0)
      throw new Invalid('evidence-malformed', 'bindings must be a non-empty array')

    const byKeyId = new Map<string, Declaration>()
    const byPublicKey = new Map<string, ResolvedBinding>()
    snapshot.bindings.forEach((raw: unknown, i: number) => {
      const decl = readBinding(raw, i)
      const b = decl.binding
      const earlier = byKeyId.get(b.keyId)
      if (earlier) {
        // The same logical binding declared again (another card or registry version) is fine
        // (C17); anything else under the same key ID is reuse (C14).
        if (!sameBinding(earlier.binding, b))
          throw new Invalid('key-id-rebinding', `key ID ${b.keyId} is bound to another Principal or key`)
        if (compareInstants(earlier.binding.validFrom.instant, b.validFrom.instant) !== 0) {
          throw new Invalid('valid-from-changed', `key ID ${b.keyId} is declared with two different validFrom values`)
        }
        const [short, long] = earlier.history.length <= decl.history.length ? [earlier, decl] : [decl, earlier]
        if (short.history.some((rec, j) => rec !== long.history[j])) {
          throw new Invalid('history-rewritten', `key ID ${b.keyId} is declared with conflicting validity records`)
        }
        byKeyId.set(b.keyId, long)
        return
      }
      const holder = byPublicKey.get(b.publicKey)
      if (holder) {
        const alias = holder.principal.type === b.principal.type && holder.principal.id === b.principal.id
        throw new Invalid(
          alias ? 'key-alias' : 'public-key-reuse',
          `public key of ${b.keyId} is already registered as ${holder.keyId}`,
        )
      }
      byKeyId.set(b.keyId, decl)
      byPublicKey.set(b.publicKey, b)
    })
    const bindings = new Map<string, ResolvedBinding>()
    for (const [keyId, decl] of byKeyId) bindings.set(keyId, decl.binding)
    return {organizationId, contentHash, bindings}
  } catch (e) {
    if (e instanceof Invalid) return new RegistryFault(e.reason, e.message)
    throw e
  }
}
