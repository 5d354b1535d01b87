// Logic shared by the SQLite and PostgreSQL adapters: the store configuration, the signed
// Admission Log row and the decisions made about it, and audit rows. The adapters only move rows
// in and out of their database inside the right transaction; every verdict is made here, once.
//
// Authentication and integrity (spec §6.4 "Admission Log") are established, not asserted: each
// appended row carries an Ed25519 signature by the Organization's admission service key over a
// domain-separated message binding every column the log answers from (the logical key, the record
// ID, kind, key ID, Principal, accepting service) and the exact record bytes. `lookup` recomputes
// it with the configured public key, so a row edited in the database is `integrity-failed`, and a
// row naming another accepting service is `unauthenticated`. Only a store opened with the
// configured service key may append.

import {randomUUID} from 'node:crypto'
import type {AppendResult, Candidate, LookupResult} from '../admission/log.js'
import {provePublicKey, signEd25519, strictVerify, type VerifyKey} from '../crypto/ed25519.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {MwpError, type StoreErrorCode} from '../errors.js'
import {decodeBase64url, encodeBase64url} from '../json/base64url.js'
import {formatUtcNow, parseTimestamp, type Instant} from '../json/timestamp.js'
import type {Principal} from '../signing/profiles.js'
import type {AcceptanceContext, AuditEntry, AuditRow, StoreConfig} from './types.js'

// ---------------------------------------------------------------------------------------------
// Errors of opening / initializing / using a store (the codes are listed in src/errors.ts)

export type {StoreErrorCode}

export class StoreError extends MwpError<StoreErrorCode> {}

/** A short description of a caught database error, for `detail` and messages. */
export function describeError(error: unknown): string {
  const e = error as {code?: unknown; message?: unknown}
  const message = typeof e?.message === 'string' ? e.message : String(error)
  return typeof e?.code === 'string' && !message.includes(e.code) ? `${e.code}: ${message}` : message
}

/**
 * The failure handler of one store table's operations: a StoreError (the writer thread's own
 * already says what failed) is rethrown as it is; anything else becomes 'unavailable', naming `what`.
 */
export const tableFailure =
  (what: string) =>
  (e: unknown): never => {
    throw e instanceof StoreError
      ? e
      : new StoreError('unavailable', `cannot use ${what}: ${describeError(e)}`, {cause: e})
  }

/** The URL with any password replaced, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@')
}

// ---------------------------------------------------------------------------------------------
// Configuration

/** Bumped when the tables change incompatibly; kept in the `config` table as `schema-version`. */
export const SCHEMA_VERSION = '1'

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 2048
const wholeSeconds = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

/**
 * Validates a configuration and returns it with a fixed member order (so the stored JSON is
 * canonical and two configurations compare as strings). Throws StoreError('invalid-config').
 */
export function normalizeConfig(value: unknown): StoreConfig {
  const bad = (what: string): never => {
    throw new StoreError('invalid-config', `invalid store configuration: ${what}`)
  }
  const c = value as Partial<StoreConfig> | null
  if (c === null || typeof c !== 'object') return bad('not an object')
  if (!nonEmpty(c.organizationId)) bad('organizationId must be a non-empty string')
  const s = c.admissionService
  if (s === null || typeof s !== 'object') return bad('admissionService is missing')
  const p = s.principal
  if (p === null || typeof p !== 'object' || p.type !== 'service' || !nonEmpty(p.id)) {
    bad('admissionService.principal must be {"type": "service", "id": …}')
  }
  if (!nonEmpty(s.keyId)) bad('admissionService.keyId must be a non-empty string')
  const raw = typeof s.publicKey === 'string' ? decodeBase64url(s.publicKey) : null
  if (raw === null) return bad('admissionService.publicKey must be canonical unpadded base64url')
  const proof = provePublicKey(raw)
  if (!proof.ok) bad(`admissionService.publicKey is not a valid Ed25519 public key (${proof.reason})`)
  const f = c.freshness
  if (f === null || typeof f !== 'object' || !wholeSeconds(f.maxAgeSeconds) || !wholeSeconds(f.maxFutureSkewSeconds)) {
    bad('freshness must be {"maxAgeSeconds", "maxFutureSkewSeconds"}, whole seconds >= 0')
  }
  if (s.keyFile !== undefined && !nonEmpty(s.keyFile))
    bad('admissionService.keyFile must be a non-empty path when present')
  return {
    organizationId: c.organizationId!,
    admissionService: {
      principal: {type: 'service', id: p.id},
      keyId: s.keyId,
      publicKey: s.publicKey,
      ...(s.keyFile ? {keyFile: s.keyFile} : {}),
    },
    freshness: {maxAgeSeconds: f!.maxAgeSeconds, maxFutureSkewSeconds: f!.maxFutureSkewSeconds},
  }
}

/** The stored spelling of a configuration. */
export function configJson(config: StoreConfig): string {
  return JSON.stringify(normalizeConfig(config))
}

/** Parses the configuration read back from a store. */
export function parseStoredConfig(text: string, where: string): StoreConfig {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new StoreError('invalid-config', `the configuration stored in ${where} is not JSON`)
  }
  return normalizeConfig(value)
}

/** The init decision once the stored configuration (if any) has been read under a lock. */
export function checkInit(
  stored: {version: string; config: string} | null,
  wanted: string,
  where: string,
): 'create' | 'same' {
  if (stored === null) return 'create'
  if (stored.version !== SCHEMA_VERSION) {
    throw new StoreError(
      'incompatible-schema',
      `${where} has store schema version ${stored.version}; this mwp uses ${SCHEMA_VERSION}`,
    )
  }
  if (stored.config !== wanted) {
    throw new StoreError(
      'config-mismatch',
      `${where} is already initialized with a different configuration; refusing to change it (existing: ${stored.config})`,
    )
  }
  return 'same'
}

/** The open-time check of what `config` holds. */
export function checkOpen(stored: {version: string; config: string} | null, where: string): StoreConfig {
  if (stored === null) throw new StoreError('not-initialized', `no initialized store at ${where}; run mwp store init`)
  if (stored.version !== SCHEMA_VERSION) {
    throw new StoreError(
      'incompatible-schema',
      `${where} has store schema version ${stored.version}; this mwp uses ${SCHEMA_VERSION}`,
    )
  }
  return parseStoredConfig(stored.config, where)
}

// ---------------------------------------------------------------------------------------------
// Admission Log rows

/** One `admission_records` row, column for column (both adapters select `*` into this). */
export interface AdmissionRow {
  organization_id: string
  signing_hash: string
  admission_record_id: string
  document_kind: string
  key_id: string
  principal_type: string
  principal_id: string
  /** The exact record bytes. */
  record: Uint8Array
  accepted_by_type: string
  accepted_by_id: string
  /** base64url Ed25519 signature by the admission service key over rowMessage(row). */
  service_signature: string
  created_at: string
}

/** Column order used by both adapters' INSERT. */
export const ROW_COLUMNS = [
  'organization_id',
  'signing_hash',
  'admission_record_id',
  'document_kind',
  'key_id',
  'principal_type',
  'principal_id',
  'record',
  'accepted_by_type',
  'accepted_by_id',
  'service_signature',
  'created_at',
] as const satisfies readonly (keyof AdmissionRow)[]

/** A selected row with its column types made exact (a text `record` becomes its UTF-8 bytes). */
export function admissionRow(raw: Record<string, unknown>): AdmissionRow {
  const text = (name: keyof AdmissionRow): string => String(raw[name])
  const record = raw.record
  return {
    organization_id: text('organization_id'),
    signing_hash: text('signing_hash'),
    admission_record_id: text('admission_record_id'),
    document_kind: text('document_kind'),
    key_id: text('key_id'),
    principal_type: text('principal_type'),
    principal_id: text('principal_id'),
    record: record instanceof Uint8Array ? Buffer.from(record) : Buffer.from(String(record), 'utf8'),
    accepted_by_type: text('accepted_by_type'),
    accepted_by_id: text('accepted_by_id'),
    service_signature: text('service_signature'),
    created_at: text('created_at'),
  }
}

/** What the `config` table holds, or null when the store was never initialized. */
export function storedConfig(rows: {name: unknown; value: unknown}[] | null): {version: string; config: string} | null {
  if (rows === null) return null
  const get = (name: string) => rows.find((r) => r.name === name)?.value
  const version = get('schema-version')
  const config = get('store-config')
  return typeof version === 'string' && typeof config === 'string' ? {version, config} : null
}

export const ROW_SIGNATURE_DOMAIN = 'mwp admission-record v1\n'

/**
 * The signed message: domain, the JSON array of every column the log answers from (an injective
 * encoding), a line feed, then the exact record bytes. `created_at` is informational only.
 */
export function rowMessage(row: Omit<AdmissionRow, 'service_signature' | 'created_at'>): Uint8Array {
  const columns = JSON.stringify([
    row.organization_id,
    row.signing_hash,
    row.admission_record_id,
    row.document_kind,
    row.key_id,
    row.principal_type,
    row.principal_id,
    row.accepted_by_type,
    row.accepted_by_id,
  ])
  return Buffer.concat([Buffer.from(ROW_SIGNATURE_DOMAIN + columns + '\n', 'utf8'), Buffer.from(row.record)])
}

const samePrincipal = (a: unknown, b: Principal): boolean => {
  const p = a as Principal | null
  return p !== null && typeof p === 'object' && p.type === b.type && p.id === b.id
}

/**
 * What both adapters decide with: the configured admission service (its proven public key) and,
 * when the store was opened as that service, its signing key.
 */
export class AdmissionAuthority {
  readonly service: Principal
  private readonly verifyKey: VerifyKey
  private readonly signingKey: SigningKey | undefined

  constructor(
    readonly config: StoreConfig,
    admissionKey: SigningKey | undefined,
  ) {
    const s = config.admissionService
    this.service = {type: s.principal.type, id: s.principal.id}
    const proof = provePublicKey(decodeBase64url(s.publicKey) ?? new Uint8Array())
    if (!proof.ok)
      throw new StoreError('invalid-config', `configured admission service public key is invalid (${proof.reason})`)
    this.verifyKey = proof.key
    if (admissionKey) {
      const mismatch =
        admissionKey.publicKeyB64 !== s.publicKey
          ? 'its public key differs'
          : admissionKey.keyId !== s.keyId
            ? `its keyId is ${admissionKey.keyId}, not ${s.keyId}`
            : !samePrincipal(admissionKey.principal, s.principal)
              ? `its principal is not ${s.principal.type}:${s.principal.id}`
              : null
      if (mismatch) {
        throw new StoreError(
          'wrong-admission-key',
          `the admission key is not this store's admission service key (${mismatch})`,
        )
      }
    }
    this.signingKey = admissionKey
  }

  acceptanceContext(): AcceptanceContext {
    return {
      admissionRecordId: `urn:uuid:${randomUUID()}`,
      trustedAcceptedAt: formatUtcNow(),
      acceptedBy: {type: this.service.type, id: this.service.id},
    }
  }

  /** A lookup this store cannot answer authoritatively, or null. */
  refuseLookup(organizationId: string): LookupResult | null {
    if (organizationId === this.config.organizationId) return null
    return {
      status: 'unauthenticated',
      detail: `this store's admission service serves ${this.config.organizationId}, not ${organizationId}`,
    }
  }

  /** Authenticates a stored row: found, or why it cannot be trusted. */
  authenticate(row: AdmissionRow): LookupResult {
    if (row.accepted_by_type !== this.service.type || row.accepted_by_id !== this.service.id) {
      return {
        status: 'unauthenticated',
        detail: `row accepted by ${row.accepted_by_type}:${row.accepted_by_id}, not the configured admission service`,
      }
    }
    const signature = decodeBase64url(row.service_signature)
    if (signature === null || !strictVerify(this.verifyKey, rowMessage(row), signature).ok) {
      return {status: 'integrity-failed', detail: 'the row does not carry a valid admission service signature'}
    }
    return {status: 'found', record: new Uint8Array(row.record), authenticatedService: {...this.service}}
  }

  /**
   * The signed row to insert for a candidate, or why this store will not append it: not opened
   * with the service key, another Organization or accepting service, or candidate bytes that
   * disagree with the candidate's own key fields (the store signs only what it can vouch for).
   */
  prepare(candidate: Candidate): {row: AdmissionRow} | {refused: AppendResult} {
    const key = this.signingKey
    if (!key) return {refused: {status: 'unauthenticated', detail: 'store not opened with the admission service key'}}
    if (candidate.organizationId !== this.config.organizationId) {
      return {
        refused: {
          status: 'unauthenticated',
          detail: `this store's admission service serves ${this.config.organizationId}, not ${candidate.organizationId}`,
        },
      }
    }
    let record: Record<string, unknown> | null = null
    try {
      record = JSON.parse(new TextDecoder('utf-8', {fatal: true}).decode(candidate.bytes)) as Record<string, unknown>
    } catch {
      // handled below
    }
    if (record === null || typeof record !== 'object') {
      return {refused: {status: 'integrity-failed', detail: 'candidate bytes are not one JSON object'}}
    }
    if (!samePrincipal(record.acceptedBy, this.service)) {
      return {
        refused: {status: 'unauthenticated', detail: 'candidate acceptedBy is not the configured admission service'},
      }
    }
    const consistent =
      record.organizationId === candidate.organizationId &&
      record.signingHash === candidate.signingHash &&
      record.admissionRecordId === candidate.admissionRecordId &&
      record.documentKind === candidate.documentKind &&
      record.keyId === candidate.keyId &&
      samePrincipal(record.principal, candidate.principal)
    if (!consistent)
      return {refused: {status: 'integrity-failed', detail: "candidate bytes disagree with the candidate's key fields"}}

    const unsigned = {
      organization_id: candidate.organizationId,
      signing_hash: candidate.signingHash,
      admission_record_id: candidate.admissionRecordId,
      document_kind: candidate.documentKind,
      key_id: candidate.keyId,
      principal_type: candidate.principal.type,
      principal_id: candidate.principal.id,
      record: Buffer.from(candidate.bytes),
      accepted_by_type: this.service.type,
      accepted_by_id: this.service.id,
    }
    const signature = encodeBase64url(signEd25519(key.seed, rowMessage(unsigned)))
    return {row: {...unsigned, service_signature: signature, created_at: formatUtcNow()}}
  }

  /**
   * The append outcome when the candidate's insert did not happen. `stored` is the row under the
   * candidate's logical key (undefined when the insert collided only on admission_record_id).
   * A compatible authentic row is returned as is (`existing`, its own bytes); anything else under
   * the key is a `conflict`, never replaced.
   */
  resolveExisting(stored: AdmissionRow | undefined, candidate: Candidate): AppendResult {
    if (stored === undefined) {
      return {
        status: 'conflict',
        detail: `admissionRecordId ${candidate.admissionRecordId} already identifies a record under another logical key`,
      }
    }
    const found = this.authenticate(stored)
    if (found.status !== 'found') return found as AppendResult
    const differs = [
      stored.document_kind !== candidate.documentKind && 'documentKind',
      stored.key_id !== candidate.keyId && 'keyId',
      (stored.principal_type !== candidate.principal.type || stored.principal_id !== candidate.principal.id) &&
        'principal',
    ].filter(Boolean)
    if (differs.length > 0)
      return {status: 'conflict', detail: `a record with another ${differs.join(', ')} exists for this logical key`}
    return {status: 'existing', record: found.record, authenticatedService: found.authenticatedService}
  }

  /** The outcome of an insert that committed. */
  committed(row: AdmissionRow): AppendResult {
    return {status: 'committed', record: new Uint8Array(row.record), authenticatedService: {...this.service}}
  }
}

// ---------------------------------------------------------------------------------------------
// Audit rows

/** An `audit_log` row without its id; `at_seconds`/`at_fraction` make `since` an SQL range. */
export interface AuditInsert {
  at: string
  at_seconds: number
  at_fraction: string
  stage: string
  reason: string
  document_kind: string | null
  signing_hash: string | null
  subject: string | null
  detail: string | null
}

export const AUDIT_COLUMNS = [
  'at',
  'at_seconds',
  'at_fraction',
  'stage',
  'reason',
  'document_kind',
  'signing_hash',
  'subject',
  'detail',
] as const satisfies readonly (keyof AuditInsert)[]

function instant(text: string, what: string): Instant {
  const parsed = typeof text === 'string' ? parseTimestamp(text) : null
  if (parsed === null)
    throw new StoreError('invalid-argument', `${what} is not an RFC 3339 protocol timestamp: ${JSON.stringify(text)}`)
  return parsed
}

export function auditInsert(entry: AuditEntry): AuditInsert {
  const at = instant(entry.at, 'audit entry time')
  if (!nonEmpty(entry.stage) || !nonEmpty(entry.reason))
    throw new StoreError('invalid-argument', 'audit entry needs a stage and a reason')
  return {
    at: entry.at,
    at_seconds: at.seconds,
    at_fraction: at.fraction,
    stage: entry.stage,
    reason: entry.reason,
    document_kind: entry.documentKind ?? null,
    signing_hash: entry.signingHash ?? null,
    subject: entry.subject ?? null,
    detail: entry.detail ?? null,
  }
}

/** The listAudit filter: `since` as an exact instant, and a positive limit (or none). */
export function auditQuery(options: {since?: string; limit?: number} = {}): {
  since: Instant | null
  limit: number | null
} {
  const since = options.since === undefined ? null : instant(options.since, 'since')
  const limit = options.limit ?? null
  if (limit !== null && !(Number.isSafeInteger(limit) && limit > 0))
    throw new StoreError('invalid-argument', 'limit must be a positive integer')
  return {since, limit}
}

export function auditRow(row: Record<string, unknown>): AuditRow {
  const out: AuditRow = {id: Number(row.id), at: String(row.at), stage: String(row.stage), reason: String(row.reason)}
  if (row.document_kind != null) out.documentKind = String(row.document_kind)
  if (row.signing_hash != null) out.signingHash = String(row.signing_hash)
  if (row.subject != null) out.subject = String(row.subject)
  if (row.detail != null) out.detail = String(row.detail)
  return out
}
