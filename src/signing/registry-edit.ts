// Building and editing Organization registry snapshot files (the format of the upstream
// cryptography bundle, read by `RegistryEvidence`):
//   {organizationId, bindings: [{keyId, principal: {type, id}, algorithm: "Ed25519", publicKey,
//                               validFrom, validityHistory: [{sequence, recordedAt, validUntil?, revokedAt?}]}]}
//
// Every edit is a pure function: it returns a NEW snapshot and never mutates its input. An edit
// that would break a §6.4 Registry invariant throws a RegistryEditError and produces nothing.
// The invariants themselves are enforced by `validateSnapshot` (registry.ts), which every result
// passes through; the checks made here before building a result exist only to refuse edits that
// `validateSnapshot` would accept but that are not edits (an identical re-add, a boundary set to
// its current value, an unknown key ID) and to explain a refusal in the terms of the edit.
//
// An Organization with zero bindings is a valid file being built (`initRegistry`), but it is not
// usable as Registry evidence: `validateSnapshot` requires at least one binding, and
// `checkRegistry` reports such a file as `registry-empty`.
//
// The last section holds the file plumbing the CLI uses: strict read, locked atomic rewrite.

import {randomBytes} from 'node:crypto'
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {type ErrorCategory, MwpError, type RegistryFileErrorCode} from '../errors.js'
import {decodeBase64url} from '../json/base64url.js'
import {parseJsonBytes} from '../json/parse.js'
import {type Instant, compareInstants, formatUtcNow, parseTimestamp} from '../json/timestamp.js'
import type {Principal, PrincipalType} from './profiles.js'
import {
  type ResolvedBinding,
  type ValidatedRegistry,
  RegistryEvidence,
  RegistryFault,
  isIdentifier,
} from './registry.js'

export interface StatusRecord {
  sequence: number
  recordedAt: string
  validUntil?: string
  revokedAt?: string
}

export interface BindingRecord {
  keyId: string
  principal: Principal
  algorithm: 'Ed25519'
  publicKey: string
  validFrom: string
  validityHistory: StatusRecord[]
}

export interface RegistrySnapshot {
  organizationId: string
  bindings: BindingRecord[]
}

export interface NewBinding {
  keyId: string
  principal: Principal
  /** Canonical unpadded base64url of the 32-byte Ed25519 public key. */
  publicKey: string
  /** Protocol timestamp; its text is kept as given. */
  validFrom: string
}

/**
 * Why an edit was refused. Reasons shared with `validateSnapshot` keep its names
 * (key-id-rebinding, valid-from-changed, key-alias, public-key-reuse, public-key-*,
 * history-boundary-moved-later, history-recorded-at-decreasing, …); the edit-only reasons are
 * registry-invalid, binding-exists, key-unknown and boundary-unchanged.
 */
export type RegistryEditReason =
  | 'organization-id-invalid'
  | 'registry-invalid'
  | 'key-id-invalid'
  | 'principal-invalid'
  | 'principal-id-invalid'
  | 'public-key-noncanonical-base64url'
  | `public-key-${string}`
  | 'valid-from-invalid'
  | 'history-time-invalid'
  | 'binding-exists'
  | 'key-id-rebinding'
  | 'valid-from-changed'
  | 'key-alias'
  | 'key-unknown'
  | 'history-boundary-moved-later'
  | 'boundary-unchanged'
  | 'history-recorded-at-decreasing'
  | (string & {})

/** Reasons that mean "this argument is not well formed", as opposed to "this edit breaks an invariant". */
const MALFORMED_INPUT: ReadonlySet<string> = new Set([
  'organization-id-invalid',
  'key-id-invalid',
  'principal-invalid',
  'principal-id-invalid',
  'public-key-noncanonical-base64url',
  'valid-from-invalid',
  'history-time-invalid',
])

/**
 * A malformed argument of an edit (registry-argument-malformed, a usage error), or an edit refused
 * (INVALID_COMMAND). `reason` names the rule, from the open set of Registry evidence reasons.
 */
export class RegistryEditError extends MwpError<'registry-argument-malformed' | 'INVALID_COMMAND'> {
  constructor(
    readonly reason: RegistryEditReason,
    message: string,
    /** For registry-invalid: the fault of the input snapshot. */
    readonly fault?: RegistryFault,
  ) {
    super(MALFORMED_INPUT.has(reason) ? 'registry-argument-malformed' : 'INVALID_COMMAND', message)
  }
}

const PRINCIPAL_TYPES: readonly PrincipalType[] = ['agent', 'human', 'service']

// ---------------------------------------------------------------------------------------------
// Validation helpers

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** An Organization with no bindings yet: well formed, but not usable as evidence. */
export function isEmptyRegistry(snapshot: unknown): boolean {
  return (
    isRecord(snapshot) &&
    Object.keys(snapshot).every((k) => k === 'organizationId' || k === 'bindings') &&
    isIdentifier(snapshot.organizationId) &&
    Array.isArray(snapshot.bindings) &&
    snapshot.bindings.length === 0
  )
}

// An edit validates its input and its result, and the CLI then describes the result. Each goes
// through RegistryEvidence, whose content-hash cache means each key is proven (~1 ms) only once.
function validate(snapshot: unknown): ValidatedRegistry | RegistryFault {
  return RegistryEvidence.fromSnapshot(snapshot).resolve()
}

/** The validated view of an editable snapshot (null when it has no bindings yet), or a RegistryEditError. */
function validateInput(reg: unknown): ValidatedRegistry | null {
  if (isEmptyRegistry(reg)) return null
  const result = validate(reg)
  if (result instanceof RegistryFault) {
    throw new RegistryEditError(
      'registry-invalid',
      `the registry is not valid (${result.reason}${result.detail ? `: ${result.detail}` : ''}); it cannot be edited until it is repaired — see \`mwp registry check\``,
      result,
    )
  }
  return result
}

/** Validates an edit's result; a fault becomes a refusal with the fault's reason. */
function validateResult(
  reg: RegistrySnapshot,
  explain: (fault: RegistryFault) => string | undefined,
): RegistrySnapshot {
  const result = validate(reg)
  if (result instanceof RegistryFault) {
    throw new RegistryEditError(
      result.reason,
      explain(result) ?? `the edit would make the registry invalid (${result.reason}): ${result.detail ?? ''}`,
    )
  }
  return reg
}

function timestamp(text: unknown, reason: string, what: string): Instant {
  const instant = typeof text === 'string' ? parseTimestamp(text) : null
  if (instant === null) {
    throw new RegistryEditError(
      reason,
      `${what} is not a protocol timestamp (RFC 3339, e.g. 2026-07-01T00:00:00Z): ${JSON.stringify(text)}`,
    )
  }
  return instant
}

function copy(reg: RegistrySnapshot): RegistrySnapshot {
  // A JSON round trip keeps member order, so untouched bindings serialize to the same bytes.
  return JSON.parse(JSON.stringify(reg)) as RegistrySnapshot
}

/** Parses `TYPE:URI` (split on the first colon), e.g. `agent:urn:example:agent:alice`. */
export function parsePrincipal(text: string): Principal {
  const colon = text.indexOf(':')
  const type = colon === -1 ? text : text.slice(0, colon)
  if (colon === -1 || !PRINCIPAL_TYPES.includes(type as PrincipalType)) {
    throw new RegistryEditError(
      'principal-invalid',
      `principal must be TYPE:URI with TYPE agent, human or service (e.g. agent:urn:example:agent:alice), got ${JSON.stringify(text)}`,
    )
  }
  const id = text.slice(colon + 1)
  if (!isIdentifier(id))
    throw new RegistryEditError(
      'principal-id-invalid',
      `principal id is not an absolute URI identifier: ${JSON.stringify(id)}`,
    )
  return {type: type as PrincipalType, id}
}

// ---------------------------------------------------------------------------------------------
// Edits

/** A new, empty registry for one Organization. Not usable as evidence until a binding is added. */
export function initRegistry(organizationId: string): RegistrySnapshot {
  if (!isIdentifier(organizationId)) {
    throw new RegistryEditError(
      'organization-id-invalid',
      `organization ID is not an absolute URI identifier: ${JSON.stringify(organizationId)}`,
    )
  }
  return {organizationId, bindings: []}
}

/** Adds a new signing-key binding with an empty validity history. */
export function addBinding(reg: RegistrySnapshot, binding: NewBinding): RegistrySnapshot {
  const validated = validateInput(reg)
  const {keyId, principal, publicKey, validFrom} = binding
  if (!isIdentifier(keyId))
    throw new RegistryEditError('key-id-invalid', `key ID is not an absolute URI identifier: ${JSON.stringify(keyId)}`)
  if (!isRecord(principal) || !PRINCIPAL_TYPES.includes(principal.type)) {
    throw new RegistryEditError(
      'principal-invalid',
      `principal type must be agent, human or service, got ${JSON.stringify(principal?.type)}`,
    )
  }
  if (!isIdentifier(principal.id))
    throw new RegistryEditError(
      'principal-id-invalid',
      `principal id is not an absolute URI identifier: ${JSON.stringify(principal.id)}`,
    )
  if (typeof publicKey !== 'string' || decodeBase64url(publicKey) === null) {
    throw new RegistryEditError(
      'public-key-noncanonical-base64url',
      `public key is not canonical unpadded base64url: ${JSON.stringify(publicKey)}`,
    )
  }
  timestamp(validFrom, 'valid-from-invalid', 'validFrom')

  const existing = validated?.bindings.get(keyId)
  if (existing) {
    const samePrincipalAndKey =
      existing.principal.type === principal.type &&
      existing.principal.id === principal.id &&
      existing.publicKey === publicKey
    if (samePrincipalAndKey && compareInstants(existing.validFrom.instant, parseTimestamp(validFrom)!) === 0) {
      throw new RegistryEditError(
        'binding-exists',
        `key ID ${keyId} is already registered with this Principal, key and validFrom; nothing to add`,
      )
    }
    if (samePrincipalAndKey) {
      throw new RegistryEditError(
        'valid-from-changed',
        `key ID ${keyId} is already registered with validFrom ${existing.validFrom.text}; validFrom is immutable`,
      )
    }
    throw new RegistryEditError(
      'key-id-rebinding',
      `key ID ${keyId} is already bound to ${existing.principal.type} ${existing.principal.id} with key ${existing.publicKey}; a key ID is never reused — choose a new key ID`,
    )
  }

  const next = copy(reg)
  next.bindings.push({
    keyId,
    principal: {type: principal.type, id: principal.id},
    algorithm: 'Ed25519',
    publicKey,
    validFrom,
    validityHistory: [],
  })
  return validateResult(next, (fault) => {
    const holder = validated && [...validated.bindings.values()].find((b) => b.publicKey === publicKey)
    if (fault.reason === 'key-alias' && holder) {
      return `this public key is already registered for ${principal.type} ${principal.id} as key ID ${holder.keyId}; a second key ID for the same key would be an alias`
    }
    if (fault.reason === 'public-key-reuse' && holder) {
      return `this public key is already registered as key ID ${holder.keyId} for ${holder.principal.type} ${holder.principal.id}; a public key may be bound only once per Organization`
    }
    if (fault.reason.startsWith('public-key-')) {
      return `the public key is not a usable Ed25519 key (${fault.reason.slice('public-key-'.length)}): it must be a canonical, non-identity, prime-order point`
    }
    return undefined
  })
}

/** Records an expiry: `validUntil` becomes the effective end of the key's validity. */
export function expireKey(
  reg: RegistrySnapshot,
  keyId: string,
  validUntil: string,
  recordedAt: string,
): RegistrySnapshot {
  return setBoundary(reg, keyId, 'validUntil', validUntil, recordedAt)
}

/** Records a revocation at `revokedAt`. */
export function revokeKey(
  reg: RegistrySnapshot,
  keyId: string,
  revokedAt: string,
  recordedAt: string,
): RegistrySnapshot {
  return setBoundary(reg, keyId, 'revokedAt', revokedAt, recordedAt)
}

function setBoundary(
  reg: RegistrySnapshot,
  keyId: string,
  field: 'validUntil' | 'revokedAt',
  value: string,
  recordedAt: string,
): RegistrySnapshot {
  const validated = validateInput(reg)
  const boundary = timestamp(value, 'history-time-invalid', field)
  const recorded = timestamp(recordedAt, 'history-time-invalid', 'recordedAt')
  const current: ResolvedBinding | undefined = validated?.bindings.get(keyId)
  if (!current) throw new RegistryEditError('key-unknown', `key ID ${keyId} is not registered in this registry`)

  const effective = current[field]
  if (effective) {
    const order = compareInstants(boundary, effective.instant)
    if (order === 0)
      throw new RegistryEditError(
        'boundary-unchanged',
        `${field} of ${keyId} is already ${effective.text}; nothing to record`,
      )
    if (order > 0) {
      throw new RegistryEditError(
        'history-boundary-moved-later',
        `${field} of ${keyId} is already ${effective.text}; it may only be moved earlier, never later or cleared — to extend validity, register new key material under a new key ID`,
      )
    }
  }

  // Append to the declaration holding the longest history: duplicate identical declarations
  // carry prefixes of it and stay consistent.
  const next = copy(reg)
  let target: BindingRecord | undefined
  for (const b of next.bindings)
    if (b.keyId === keyId && (!target || b.validityHistory.length > target.validityHistory.length)) target = b
  const history = target!.validityHistory
  const last = history.at(-1)
  if (last && compareInstants(recorded, parseTimestamp(last.recordedAt)!) < 0) {
    throw new RegistryEditError(
      'history-recorded-at-decreasing',
      `recordedAt ${recordedAt} is earlier than the previous record of ${keyId} (sequence ${last.sequence}, recorded ${last.recordedAt}); history is append-only in time order`,
    )
  }
  const record: StatusRecord = {sequence: history.length + 1, recordedAt}
  record[field] = value
  history.push(record)
  return validateResult(next, () => undefined)
}

// ---------------------------------------------------------------------------------------------
// Reading a snapshot: status, listing, lint

export type KeyStatus = 'valid' | 'expired' | 'revoked' | 'not-yet-valid'

/** A key's status at an instant, with the half-open interval of §6.4. Revocation wins. */
export function keyStatus(b: ResolvedBinding, at: Instant): KeyStatus {
  if (b.revokedAt && compareInstants(b.revokedAt.instant, at) <= 0) return 'revoked'
  if (b.validUntil && compareInstants(b.validUntil.instant, at) <= 0) return 'expired'
  if (compareInstants(at, b.validFrom.instant) < 0) return 'not-yet-valid'
  return 'valid'
}

export interface BindingRow {
  keyId: string
  principal: Principal
  algorithm: 'Ed25519'
  publicKey: string
  validFrom: string
  /** Effective (earliest) boundaries over the whole history, or null. */
  validUntil: string | null
  revokedAt: string | null
  status: KeyStatus
  historyRecords: number
  declarations: number
}

/** One row per logical binding (duplicate declarations folded), in first-declaration order. */
export function describeBindings(reg: RegistrySnapshot, at: string): BindingRow[] {
  const instant = timestamp(at, 'history-time-invalid', 'the status instant')
  const validated = validateInput(reg)
  if (!validated) return []
  const declarations = new Map<string, number>()
  const history = new Map<string, number>()
  for (const b of reg.bindings) {
    declarations.set(b.keyId, (declarations.get(b.keyId) ?? 0) + 1)
    history.set(b.keyId, Math.max(history.get(b.keyId) ?? 0, b.validityHistory.length))
  }
  return [...validated.bindings.values()].map((b) => ({
    keyId: b.keyId,
    principal: {type: b.principal.type, id: b.principal.id},
    algorithm: 'Ed25519' as const,
    publicKey: b.publicKey,
    validFrom: b.validFrom.text,
    validUntil: b.validUntil?.text ?? null,
    revokedAt: b.revokedAt?.text ?? null,
    status: keyStatus(b, instant),
    historyRecords: history.get(b.keyId) ?? 0,
    declarations: declarations.get(b.keyId) ?? 1,
  }))
}

export type Severity = 'error' | 'warning' | 'info'

export interface Finding {
  severity: Severity
  code: string
  message: string
  keyId?: string
}

export interface RegistryCheck {
  /** True when the snapshot is usable as Registry evidence (warnings allowed). */
  valid: boolean
  organizationId: string | null
  /** Logical bindings (0 when invalid or empty). */
  bindings: number
  /** The refusing fault, when not valid. */
  fault: {reason: string; detail: string} | null
  findings: Finding[]
}

/**
 * Lint for `mwp registry check`: the `validateSnapshot` verdict (an error finding when the
 * snapshot would be refused as Registry evidence), plus warnings and notes that do not make it
 * invalid. `at` (default now) is the instant for expired/revoked/not-yet-valid notes.
 */
export function checkRegistry(snapshot: unknown, options: {at?: string} = {}): RegistryCheck {
  const at = timestamp(options.at ?? formatUtcNow(), 'history-time-invalid', 'the check instant')
  if (isEmptyRegistry(snapshot)) {
    const detail =
      'the registry has no bindings yet; it is not usable as Registry evidence until one is added (mwp registry add)'
    return {
      valid: false,
      organizationId: (snapshot as RegistrySnapshot).organizationId,
      bindings: 0,
      fault: {reason: 'registry-empty', detail},
      findings: [{severity: 'error', code: 'registry-empty', message: detail}],
    }
  }
  const result = validate(snapshot)
  if (result instanceof RegistryFault) {
    const detail = result.detail ?? result.reason
    return {
      valid: false,
      organizationId:
        isRecord(snapshot) && typeof snapshot.organizationId === 'string' ? snapshot.organizationId : null,
      bindings: 0,
      fault: {reason: result.reason, detail},
      findings: [{severity: 'error', code: result.reason, message: detail}],
    }
  }

  const findings: Finding[] = []
  const reg = snapshot as RegistrySnapshot
  const declarations = new Map<string, number>()
  for (const b of reg.bindings) declarations.set(b.keyId, (declarations.get(b.keyId) ?? 0) + 1)

  for (const b of result.bindings.values()) {
    const keyId = b.keyId
    const n = declarations.get(keyId) ?? 1
    if (n > 1)
      findings.push({
        severity: 'info',
        code: 'duplicate-declaration',
        keyId,
        message: `${keyId} is declared ${n} times with an identical binding (one logical binding; allowed)`,
      })
    const status = keyStatus(b, at)
    if (status === 'revoked')
      findings.push({
        severity: 'warning',
        code: 'key-revoked',
        keyId,
        message: `${keyId} was revoked at ${b.revokedAt!.text}`,
      })
    else if (status === 'expired')
      findings.push({
        severity: 'warning',
        code: 'key-expired',
        keyId,
        message: `${keyId} expired at ${b.validUntil!.text}`,
      })
    else if (status === 'not-yet-valid')
      findings.push({
        severity: 'info',
        code: 'key-not-yet-valid',
        keyId,
        message: `${keyId} becomes valid at ${b.validFrom.text}`,
      })
    for (const end of [b.validUntil, b.revokedAt]) {
      if (end && compareInstants(end.instant, b.validFrom.instant) <= 0) {
        findings.push({
          severity: 'warning',
          code: 'key-never-valid',
          keyId,
          message: `${keyId} ends (${end.text}) at or before its validFrom (${b.validFrom.text}): it is never valid`,
        })
        break
      }
    }
  }

  // Record-level notes, on the longest declaration of each key (the others are its prefixes).
  const longest = new Map<string, BindingRecord>()
  for (const b of reg.bindings) {
    const seen = longest.get(b.keyId)
    if (!seen || b.validityHistory.length > seen.validityHistory.length) longest.set(b.keyId, b)
  }
  for (const b of longest.values()) {
    const effective: Partial<Record<'validUntil' | 'revokedAt', Instant>> = {}
    for (const rec of b.validityHistory) {
      const where = `${b.keyId} history record ${rec.sequence}`
      if (rec.validUntil === undefined && rec.revokedAt === undefined) {
        findings.push({
          severity: 'warning',
          code: 'history-record-empty',
          keyId: b.keyId,
          message: `${where} sets neither validUntil nor revokedAt`,
        })
        continue
      }
      const recorded = parseTimestamp(rec.recordedAt)!
      for (const field of ['validUntil', 'revokedAt'] as const) {
        const text = rec[field]
        if (text === undefined) continue
        const value = parseTimestamp(text)!
        const before = effective[field]
        if (before && compareInstants(value, before) === 0) {
          findings.push({
            severity: 'info',
            code: 'history-record-no-effect',
            keyId: b.keyId,
            message: `${where} repeats the current ${field} ${text}`,
          })
        }
        if (!before || compareInstants(value, before) < 0) effective[field] = value
        if (compareInstants(value, recorded) < 0) {
          findings.push({
            severity: 'info',
            code: 'boundary-retroactive',
            keyId: b.keyId,
            message: `${where} sets ${field} ${text}, earlier than when it was recorded (${rec.recordedAt})`,
          })
        }
      }
    }
  }

  return {valid: true, organizationId: result.organizationId, bindings: result.bindings.size, fault: null, findings}
}

// ---------------------------------------------------------------------------------------------
// Files (used by the CLI)

/** The file text of a snapshot. */
export function serializeRegistry(reg: RegistrySnapshot): string {
  return JSON.stringify(reg, null, 2) + '\n'
}

/** An I/O failure (environment error), as opposed to a refused edit. */
export class RegistryFileError extends MwpError<RegistryFileErrorCode> {}

/** Strictly parses registry file bytes (no validation). Throws RegistryEditError('registry-invalid'). */
export function parseRegistryBytes(bytes: Uint8Array): unknown {
  try {
    return parseJsonBytes(bytes)
  } catch (e) {
    throw new RegistryEditError(
      'registry-invalid',
      `the registry is not strict JSON: ${(e as Error).message}`,
      new RegistryFault('evidence-malformed', (e as Error).message),
    )
  }
}

/** Reads and validates an editable registry file (valid, or well formed with no bindings yet). */
export function readRegistryFile(path: string): RegistrySnapshot {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch (e) {
    throw new RegistryFileError(
      'io-error',
      `cannot read registry ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      {cause: e},
    )
  }
  const snapshot = parseRegistryBytes(bytes)
  validateInput(snapshot)
  return JSON.parse(JSON.stringify(snapshot)) as RegistrySnapshot // plain objects, same member order
}

function writeAll(path: string, text: string, mode: number): void {
  const fd = openSync(path, 'wx', mode)
  try {
    fchmodSync(fd, mode)
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {
    // Not every platform can fsync a directory; the rename itself is still atomic.
  }
}

function tempPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
}

/**
 * Writes a new registry file. Without `force` an existing file is never replaced (the new file
 * is linked into place, which fails if the name exists); with `force` it is replaced atomically.
 */
export function writeNewRegistryFile(path: string, reg: RegistrySnapshot, force: boolean): void {
  const temp = tempPath(path)
  try {
    writeAll(temp, serializeRegistry(reg), 0o644)
    if (force) renameSync(temp, path)
    else {
      linkSync(temp, path)
      unlinkSync(temp)
    }
    syncDirectory(dirname(path))
  } catch (e) {
    try {
      unlinkSync(temp)
    } catch {
      // already gone
    }
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw new RegistryFileError('file-exists', `${path} already exists; use --force to replace it`, {cause: e})
    throw new RegistryFileError(
      'io-error',
      `cannot write registry ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      {cause: e},
    )
  }
}

/**
 * Applies `edit` to the registry file at `path` under an exclusive lock file (`PATH.lock`), then
 * replaces the file atomically (temporary file in the same directory, fsync, rename). When the
 * edit throws, or anything fails before the rename, the file is left byte-for-byte unchanged.
 */
export function editRegistryFile(
  path: string,
  edit: (reg: RegistrySnapshot) => RegistrySnapshot,
): {before: RegistrySnapshot; after: RegistrySnapshot} {
  const lock = `${path}.lock`
  let lockFd: number
  try {
    lockFd = openSync(lock, 'wx', 0o600)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new RegistryFileError(
        'locked',
        `${path} is being edited by another process (lock file ${lock} exists); if no edit is running, remove the lock file`,
        {cause: e},
      )
    }
    throw new RegistryFileError(
      'io-error',
      `cannot lock registry ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      {cause: e},
    )
  }
  try {
    writeSync(lockFd, `${process.pid}\n`)
    closeSync(lockFd)
    const before = readRegistryFile(path)
    const after = edit(before)
    let mode = 0o644
    try {
      mode = statSync(path).mode & 0o777
    } catch {
      // keep the default
    }
    const temp = tempPath(path)
    try {
      writeAll(temp, serializeRegistry(after), mode)
      renameSync(temp, path)
    } catch (e) {
      try {
        unlinkSync(temp)
      } catch {
        // already gone
      }
      throw new RegistryFileError(
        'io-error',
        `cannot write registry ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        {cause: e},
      )
    }
    syncDirectory(dirname(path))
    return {before, after}
  } finally {
    try {
      unlinkSync(lock)
    } catch {
      // nothing to release
    }
  }
}

/** How a front end should report a failure of the functions above. */
export interface EditFailure {
  kind: ErrorCategory
  reason: string
  message: string
}

/** Classifies RegistryEditError / RegistryFileError by their code; anything else is not ours (undefined). */
export function classifyEditFailure(e: unknown): EditFailure | undefined {
  if (e instanceof RegistryFileError) return {kind: e.category, reason: e.code, message: e.message}
  if (e instanceof RegistryEditError) return {kind: e.category, reason: e.reason, message: e.message}
  return undefined
}
