// Six-stage verification of a Signed Document (spec §6.4).
//
//   1 parse               at most MAX_DOCUMENT_BYTES; strict UTF-8 JSON, one value, no duplicate
//                         decoded names, nesting at most MAX_DEPTH (512)
//   2 schema              the kind's normative schema, formats asserted
//   3 signature-envelope  protected time is uppercase-Z UTC and byte-identical to createdAt;
//                         signature.value canonical base64url, 64 bytes, S < L, R strict
//   4 key-resolution      complete Registry evidence validated, key selected under the
//                         expected signer, protected time inside the key's interval
//   5 canonicalization    JCS of the document without its top-level `signature`
//   6 signature           pure Ed25519 over the stage-5 bytes
//
// Only the first failing stage is reported. The wire learns only the code; the stage and reason
// are protected diagnostics for the local operator and the audit log.
//
// Speed: the expensive strict R decoding (BigInt, ~1 ms) is not needed on the happy path. Once
// the public key is proven canonical and prime-order, a successful native verify implies that R
// is the canonical encoding of [S]B - [k]A, a prime-order point. So stage 3 runs the cheap checks
// up front, and the full R checks run only when a later stage fails, to decide whether the
// failure must be reported at stage 3 instead. Stage 6 is strictVerify, the one strict Ed25519
// function every signature check of the project goes through.
//
// A success is a Verified, which only this module can construct: code that needs a verified
// document (admission, ingress) takes a Verified, and a look-alike object literal is neither
// assignable to one nor passes Verified.is.

import {
  type StrictVerifyResult,
  type VerifyKey,
  checkSignatureEncoding,
  checkSignatureR,
  strictVerify,
  strictVerifyOffThread,
} from '../crypto/ed25519.js'
import {decodeBase64url} from '../json/base64url.js'
import {JcsError, canonicalBytes} from '../json/jcs.js'
import {type JsonObject, JsonParseError, parseJsonBytes} from '../json/parse.js'
import {compareInstants, isUppercaseUtcZ, parseTimestamp} from '../json/timestamp.js'
import {schemaCatalog} from '../schema/catalog.js'
import {createHash} from 'node:crypto'
import {type DocumentKind, PROFILES, type Principal, detectKind, expectedSigner} from './profiles.js'
import {RegistryEvidence, RegistryFault, type ResolvedBinding} from './registry.js'

/**
 * Largest Signed Document verified: 16 MiB, the largest WebSocket message the client accepts (the
 * server accepts 1 MiB), so no document the wire can carry is refused. §17.4 sends large content
 * as an Artifact referenced by URI and content hash. Bigger documents are refused at stage 1
 * (PROTOCOL_VIOLATION, reason `size-limit`) before parsing: a parsed document costs from 8 bytes
 * (an array element) to over 100 (an object) of heap per few bytes of text, so no tree-building
 * verifier holds a small multiple of its input, and without a cap a 200 MB document exhausted the
 * heap (~4.5 GB) instead of being answered. At the cap, `mwp verify` of 16 MiB of numbers peaks at
 * ~0.3 GB resident, of 16 MiB of empty objects (the worst case) at ~1.3 GB.
 */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024

export const STAGES = [
  'parse',
  'schema',
  'signature-envelope',
  'key-resolution',
  'canonicalization',
  'signature',
] as const
export type Stage = (typeof STAGES)[number]
/**
 * Protected diagnostic stages: the six cryptographic stages, then two separate semantic layers
 * that run only after all six passed — First Admission and Command freshness.
 */
export type DiagnosticStage = Stage | 'admission' | 'freshness'
export type VerificationWireCode = 'PROTOCOL_VIOLATION' | 'SCHEMA_VALIDATION_FAILED' | 'AUTH_INVALID_SIGNATURE'

/**
 * §6.4: stages 1 and 5 → PROTOCOL_VIOLATION, 2 → SCHEMA_VALIDATION_FAILED, 3/4/6, admission and
 * freshness → AUTH_INVALID_SIGNATURE.
 */
export const WIRE_CODE: Readonly<Record<DiagnosticStage, VerificationWireCode>> = {
  parse: 'PROTOCOL_VIOLATION',
  schema: 'SCHEMA_VALIDATION_FAILED',
  'signature-envelope': 'AUTH_INVALID_SIGNATURE',
  'key-resolution': 'AUTH_INVALID_SIGNATURE',
  canonicalization: 'PROTOCOL_VIOLATION',
  signature: 'AUTH_INVALID_SIGNATURE',
  admission: 'AUTH_INVALID_SIGNATURE',
  freshness: 'AUTH_INVALID_SIGNATURE',
}

export interface Diagnostic {
  stage: DiagnosticStage
  /** Stable machine-readable reason, e.g. `key-alias`, `r-small-order`. */
  reason: string
  /** Human-readable detail for the local operator. */
  detail?: string
  /** Facts known when the failure happened, for the audit log. */
  kind?: DocumentKind
  signingHash?: string
}

/**
 * A failed verification. Only `code` is public and serializable; the diagnostic is held in a
 * private field and read with `Rejection.diagnostic(r)` by code that may show it to an operator.
 */
export class Rejection {
  readonly ok = false
  readonly code: VerificationWireCode
  readonly #diagnostic: Diagnostic

  constructor(diagnostic: Diagnostic) {
    this.code = WIRE_CODE[diagnostic.stage]
    this.#diagnostic = diagnostic
  }

  static diagnostic(r: Rejection): Diagnostic {
    return r.#diagnostic
  }

  toJSON(): {code: VerificationWireCode} {
    return {code: this.code}
  }
}

export interface KeyInterval {
  validFrom: string
  validUntil?: string
  revokedAt?: string
}

/** What a successful verification establishes about a document. */
export interface VerifiedFacts {
  kind: DocumentKind
  document: JsonObject
  organizationId: string
  keyId: string
  principal: Principal
  /** Protected signed time, exactly as received. */
  protectedTime: string
  signingBytes: Buffer
  /** `sha256:` + hex of the stage-5 signing bytes. */
  signingHash: string
  /** Effective key-validity interval of the selected key (texts as registered). */
  keyInterval: KeyInterval
  binding: ResolvedBinding
}

// Held only by this module, so only verify() and verifyOffThread() construct a Verified.
const ISSUER = Symbol('six-stage verifier')

/** A document that passed all six stages. Only verify() and verifyOffThread() make one. */
export class Verified implements VerifiedFacts {
  readonly ok = true
  readonly kind: DocumentKind
  readonly document: JsonObject
  readonly organizationId: string
  readonly keyId: string
  readonly principal: Principal
  readonly protectedTime: string
  readonly signingBytes: Buffer
  readonly signingHash: string
  readonly keyInterval: KeyInterval
  readonly binding: ResolvedBinding
  readonly #issued = true

  /** Throws unless called by this module's verifier. */
  constructor(token: typeof ISSUER, facts: VerifiedFacts) {
    if (token !== ISSUER) throw new TypeError('a Verified is issued only by the six-stage verifier')
    this.kind = facts.kind
    this.document = facts.document
    this.organizationId = facts.organizationId
    this.keyId = facts.keyId
    this.principal = facts.principal
    this.protectedTime = facts.protectedTime
    this.signingBytes = facts.signingBytes
    this.signingHash = facts.signingHash
    this.keyInterval = facts.keyInterval
    this.binding = facts.binding
  }

  /** Whether value was issued by the verifier (an object with the same members is not). */
  static is(value: unknown): value is Verified {
    return typeof value === 'object' && value !== null && #issued in value
  }
}

export type VerifyResult = Verified | Rejection

const reject = (
  stage: Stage,
  reason: string,
  detail?: string,
  facts: Pick<Diagnostic, 'kind' | 'signingHash'> = {},
): Rejection => new Rejection({stage, reason, detail, ...facts})

/**
 * Verifies a Signed Document from its exact received bytes. `kind` may be omitted to detect it
 * from the document's members.
 */
export function verify(kind: DocumentKind | undefined, bytes: Uint8Array, evidence: RegistryEvidence): VerifyResult {
  const checked = verifyToEquation(kind, bytes, evidence)
  return checked instanceof Rejection
    ? checked
    : checked.finish(strictVerify(checked.key, checked.signingBytes, checked.signature))
}

/** Results of verifyOffThread are handed out in call order, whatever order the pool finishes in. */
let offThreadTail: Promise<unknown> = Promise.resolve()

/**
 * verify() with the stage-6 equation on libuv's thread pool (strictVerifyOffThread). Results
 * settle in the order of the calls, so Commands received in one order are admitted in that order.
 */
export function verifyOffThread(
  kind: DocumentKind | undefined,
  bytes: Uint8Array,
  evidence: RegistryEvidence,
): Promise<VerifyResult> {
  const checked = verifyToEquation(kind, bytes, evidence)
  const equation =
    checked instanceof Rejection ? null : strictVerifyOffThread(checked.key, checked.signingBytes, checked.signature)
  const result = offThreadTail.then(async () =>
    checked instanceof Rejection ? checked : checked.finish(await equation!),
  )
  offThreadTail = result
  return result
}

/** Stages 1-5 passed: what stage 6 checks, and how its answer completes the verification. */
interface AwaitingEquation {
  key: VerifyKey
  signingBytes: Buffer
  signature: Uint8Array
  finish(stage6: StrictVerifyResult): VerifyResult
}

function verifyToEquation(
  kind: DocumentKind | undefined,
  bytes: Uint8Array,
  evidence: RegistryEvidence,
): AwaitingEquation | Rejection {
  // Stage 1
  if (bytes.length > MAX_DOCUMENT_BYTES)
    return reject('parse', 'size-limit', `document is larger than ${MAX_DOCUMENT_BYTES} bytes (16 MiB)`)
  let doc: JsonObject
  try {
    const value = parseJsonBytes(bytes)
    doc = value as JsonObject
  } catch (e) {
    if (e instanceof JsonParseError) return reject('parse', e.reason, e.message)
    throw e
  }

  // Stage 2
  const detected = kind ?? detectKind(doc)
  if (detected === null)
    return reject('schema', 'kind-undetected', 'cannot tell which Signed Document kind this is; pass --document-kind')
  const profile = PROFILES[detected]
  const fail = (stage: Stage, reason: string, detail?: string, signingHash?: string): Rejection =>
    reject(stage, reason, detail, {kind: detected, signingHash})
  const schemaResult = schemaCatalog().validate(profile.schema, doc)
  if (!schemaResult.valid) {
    const first = schemaResult.errors[0]
    return fail('schema', 'schema-invalid', first ? `${first.instancePath || '/'} ${first.message}` : undefined)
  }

  // Stage 3 (cheap part)
  const envelope = doc.signature as unknown as {keyId: string; createdAt: string; value: string}
  const protectedTime = doc[profile.timeField] as string
  if (!isUppercaseUtcZ(protectedTime) || !isUppercaseUtcZ(envelope.createdAt)) {
    return fail(
      'signature-envelope',
      'protected-time-not-utc-z',
      `${profile.timeField} and signature.createdAt must be UTC with an uppercase Z`,
    )
  }
  if (protectedTime !== envelope.createdAt) {
    return fail('signature-envelope', 'created-at-mismatch', `signature.createdAt differs from ${profile.timeField}`)
  }
  const signer = expectedSigner(profile, doc)
  const signature = decodeBase64url(envelope.value)
  if (signature === null)
    return fail(
      'signature-envelope',
      'signature-noncanonical-base64url',
      'signature.value is not canonical unpadded base64url',
    )
  const encodingFault = checkSignatureEncoding(signature)
  if (encodingFault !== null) return fail('signature-envelope', encodingFault)

  // Any later failure must first rule out a stage-3 fault in R.
  const later = (stage: Stage, reason: string, detail?: string, signingHash?: string): Rejection => {
    const rFault = checkSignatureR(signature.subarray(0, 32))
    return rFault !== null ? fail('signature-envelope', rFault) : fail(stage, reason, detail, signingHash)
  }

  // Stage 4
  const registry = evidence.resolve()
  if (registry instanceof RegistryFault) return later('key-resolution', registry.reason, registry.detail)
  const binding = registry.bindings.get(envelope.keyId)
  if (binding === undefined) return later('key-resolution', 'unknown-key', `no binding for key ID ${envelope.keyId}`)
  if (binding.principal.type !== signer.type || (signer.id !== null && binding.principal.id !== signer.id)) {
    return later(
      'key-resolution',
      signer.id === null ? 'signer-not-service' : 'principal-mismatch',
      `key ${envelope.keyId} is bound to another Principal`,
    )
  }
  const t = parseTimestamp(protectedTime)!
  if (compareInstants(t, binding.validFrom.instant) < 0)
    return later('key-resolution', 'key-not-yet-valid', `key is valid from ${binding.validFrom.text}`)
  if (binding.validUntil && compareInstants(t, binding.validUntil.instant) >= 0)
    return later('key-resolution', 'key-expired', `key expired at ${binding.validUntil.text}`)
  if (binding.revokedAt && compareInstants(t, binding.revokedAt.instant) >= 0)
    return later('key-resolution', 'key-revoked', `key was revoked at ${binding.revokedAt.text}`)

  // Stage 5
  let signingBytes: Buffer
  try {
    const {signature: _omitted, ...unsigned} = doc
    signingBytes = canonicalBytes(unsigned)
  } catch (e) {
    if (e instanceof JcsError) return later('canonicalization', e.reason, e.message)
    throw e
  }

  // Stage 6
  const signingHash = 'sha256:' + createHash('sha256').update(signingBytes).digest('hex')
  const keyInterval: KeyInterval = {validFrom: binding.validFrom.text}
  if (binding.validUntil) keyInterval.validUntil = binding.validUntil.text
  if (binding.revokedAt) keyInterval.revokedAt = binding.revokedAt.text
  const facts: VerifiedFacts = {
    kind: detected,
    document: doc,
    organizationId: registry.organizationId,
    keyId: binding.keyId,
    principal: binding.principal,
    protectedTime,
    signingBytes,
    signingHash,
    keyInterval,
    binding,
  }
  return {
    key: binding.key,
    signingBytes,
    signature,
    finish: (stage6) => {
      if (stage6.ok) return new Verified(ISSUER, facts)
      // strictVerify has already decoded R on this failure: a bad R is its stage-3 fault.
      if (stage6.stage === 'signature') return fail('signature', stage6.reason, undefined, signingHash)
      if (stage6.stage === 'signature-envelope') return fail('signature-envelope', stage6.reason)
      // Unreachable: binding.key is a VerifyKey, proven when the evidence was read; named like those faults.
      return fail('key-resolution', `public-key-${stage6.reason}`)
    },
  }
}
