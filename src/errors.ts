// Protocol error objects (spec §19, schemas/error.schema.json), and the one base of every error
// this toolkit throws: an MwpError's `code` is a §19 wire code or a local code of the layer that
// threw it. Local codes never reach the wire; each layer's are a named union below, so a
// `switch (e.code)` over MwpErrorCode is exhaustive-checkable and a new code must be placed in
// LOCAL_CATEGORY before it compiles.

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

/**
 * Each code's fixed message, the §19 meaning in a sentence. It is the same for every error of the
 * code, so it never says which check failed (§6.4); what a semantic refusal adds for its sender
 * goes in `details` (ErrorDetails).
 */
const MESSAGES: Record<ErrorCode, string> = {
  UNSUPPORTED_VERSION: 'No compatible protocol version.',
  AUTH_REQUIRED: 'Authentication is required.',
  AUTH_INVALID_SIGNATURE: 'Signed document signature, key validity, admission proof or freshness check failed.',
  AUTH_STALE_SESSION: 'The Session Epoch is fenced: authenticate again and use the current epoch.',
  AUTH_STALE_COORDINATOR: 'The Coordinator Epoch is fenced: a newer Coordinator lease exists.',
  AUTH_FORBIDDEN: 'The actor lacks permission or policy eligibility for this action.',
  GROUP_NOT_FOUND: 'The Group is absent or not disclosed to this actor.',
  MEMBERSHIP_REQUIRED: 'The actor has no applicable Membership.',
  MEMBERSHIP_STALE: 'The Membership Epoch is fenced: use the current epoch.',
  SCHEMA_VALIDATION_FAILED: 'Object does not conform to its schema.',
  INVALID_COMMAND: 'The Command is well-formed but semantically invalid.',
  INVALID_STATE_TRANSITION: 'The current state forbids this transition.',
  REVISION_CONFLICT: 'The expected revision does not match the current revision.',
  ACTION_ID_COLLISION: 'The Action ID was already used with different content.',
  UNKNOWN_CRITICAL_EXTENSION: 'A required extension cannot be interpreted.',
  WORK_CONTRACT_INCOMPLETE: 'Required Work Contract information is missing.',
  WORK_OFFER_EXPIRED: 'The offer is no longer valid.',
  WORK_ALREADY_OWNED: 'Another candidate won exclusive ownership.',
  WORK_LEASE_EXPIRED: 'The required lease is no longer valid.',
  WORK_STALE_OWNERSHIP: 'The Ownership Epoch is fenced.',
  APPROVAL_REQUIRED: 'A policy gate has not been satisfied.',
  BUDGET_EXCEEDED: 'A hard Mission or WorkItem budget is exhausted.',
  RATE_LIMITED: 'A rate or recursion limit was reached: retry later.',
  BACKPRESSURE: 'The receiver cannot accept more traffic now: retry later.',
  CURSOR_TOO_OLD: 'Online replay no longer holds the requested position.',
  PROTOCOL_VIOLATION: 'Input violates framing, JSON or canonical-encoding rules.',
  INTERNAL_ERROR: 'The authority failed without accepting the transition: retry.',
}

/** The fixed message of a code (MESSAGES). */
export const errorMessage = (code: ErrorCode): string => MESSAGES[code]

export interface ProtocolError {
  code: ErrorCode
  message: string
  retryable: boolean
  occurredAt: string
  [member: string]: unknown
}

/**
 * What a semantic refusal tells the authenticated sender of a well-signed Command, in the error
 * object's `details` (schemas/error.schema.json allows no other member): an RFC 9457-style
 * `detail` sentence from the authority's decision and, for a payload that fails its schema, the
 * RFC 6901 `pointer` of the failing member (e.g. `/payload/deadline`). Verification, admission,
 * freshness and session failures never carry details (§6.4).
 */
export interface ErrorDetails {
  detail: string
  pointer?: string
}

export function protocolError(
  code: ErrorCode,
  occurredAt = new Date().toISOString(),
  details?: ErrorDetails,
): ProtocolError {
  const error: ProtocolError = {code, message: MESSAGES[code], retryable: RETRYABLE.has(code), occurredAt}
  return details === undefined ? error : {...error, details: {...details}}
}

/** The details a wire error carries, when it carries well-formed ones. */
export function detailsOf(error: ProtocolError): ErrorDetails | undefined {
  const d = error.details as {detail?: unknown; pointer?: unknown} | undefined
  if (typeof d?.detail !== 'string') return undefined
  return {detail: d.detail, ...(typeof d.pointer === 'string' ? {pointer: d.pointer} : {})}
}

const WIRE_CODES: ReadonlySet<string> = new Set(ERROR_CODES)

export function isErrorCode(code: string): code is ErrorCode {
  return WIRE_CODES.has(code)
}

/** The CLI's own failures (src/cli/base.ts): the exit-code category itself. */
export type CliErrorCode = 'usage' | 'environment'

/** Key files (src/crypto/keyfile.ts). */
export type KeyFileErrorCode =
  | 'invalid-json'
  | 'invalid-field'
  | 'unsupported-algorithm'
  | 'noncanonical-base64url'
  | 'seed-wrong-length'
  | 'invalid-public-key'
  | 'seed-public-key-mismatch'
  | 'file-exists'
  | 'io-error'

/** The one signer (src/signing/sign.ts): why a document cannot be signed as given. */
export type SignErrorCode = 'protected-time-not-utc-z' | 'signer-mismatch' | 'schema-invalid' | 'not-an-object'

/** Registry files on disk (src/signing/registry-edit.ts). */
export type RegistryFileErrorCode = 'io-error' | 'file-exists' | 'locked'

/**
 * Registry evidence and edits (src/signing/registry*.ts). A refused edit carries the wire code
 * INVALID_COMMAND; these are the rest: evidence that fails its invariants, a malformed argument.
 */
export type RegistryErrorCode = 'registry-invalid' | 'registry-argument-malformed' | RegistryFileErrorCode

/** The Organization configuration (src/config/). */
export type OrgConfigErrorCode =
  /** The configuration, or a file or key it names, is not valid. */
  | 'config-invalid'
  /** The configuration or something it names cannot be read or opened, or is another Organization's. */
  | 'config-unusable'
  /** `mwp org init` into a directory that already holds files. */
  | 'directory-not-empty'

/** Human control (src/operator/). */
export type OperatorErrorCode =
  /** An Event from the log or the peer fails verification: never shown or folded. */
  | 'event-integrity'
  /** The builder cannot fill a Command envelope. */
  | 'command-unbuildable'

/** The Group Authority (src/authority/). */
export type AuthorityErrorCode =
  /** The stored log does not verify or does not fold. */
  | 'log-integrity'
  /** apply() refuses an Event that names something the state lacks. */
  | 'event-unfoldable'

/** Errors of opening / initializing / using a store (not Admission Log outcomes, which are typed). */
export type StoreErrorCode =
  /** The URL names no supported store (`sqlite:PATH`, `postgres://…`, `postgresql://…`). */
  | 'unknown-scheme'
  /** No initialized store at the URL: run `mwp store init`. */
  | 'not-initialized'
  /** `initStore` on a store already initialized with another configuration. */
  | 'config-mismatch'
  /** A configuration (given, or read back from the store) that is not valid. */
  | 'invalid-config'
  /** The store was written by an incompatible schema version. */
  | 'incompatible-schema'
  /** `openStore` with an admission key that is not the configured admission service key. */
  | 'wrong-admission-key'
  /** The database cannot be reached or used. */
  | 'unavailable'
  /** A malformed argument (e.g. a `since` that is not a protocol timestamp). */
  | 'invalid-argument'

/** SQLite's shared group-commit transaction could not be opened or committed (src/store/group-commit.ts). */
export type GroupCommitErrorCode = 'group-commit-failed'

/** The wire client (src/wire/client.ts), beside the wire codes a peer answers with. */
export type WireErrorCode = 'HANDSHAKE_FAILED' | 'CLOSED'

/** Conformance bundles (src/conformance/bundle.ts): integrity or readability of a bundle. */
export type ConformanceErrorCode = 'bundle-invalid' | 'results-invalid'

/** The Agent runtime (src/agent/): its local blobs, its configuration and its environment. */
export type AgentErrorCode =
  'blob-integrity' | 'agent-invalid' | 'agent-unusable' | 'offline-buffer-refused' | 'plan-invalid'

/** Artifact content (src/store/artifact-blobs.ts, src/wire/artifact-client.ts): identity, size, integrity. */
export type ArtifactErrorCode =
  'artifact-not-a-hash' | 'artifact-mismatch' | 'artifact-too-large' | 'artifact-integrity'

export type LocalErrorCode =
  | AgentErrorCode
  | ArtifactErrorCode
  | CliErrorCode
  | KeyFileErrorCode
  | SignErrorCode
  | RegistryErrorCode
  | OrgConfigErrorCode
  | OperatorErrorCode
  | AuthorityErrorCode
  | StoreErrorCode
  | GroupCommitErrorCode
  | WireErrorCode
  | ConformanceErrorCode

export type MwpErrorCode = ErrorCode | LocalErrorCode

/**
 * How a front end reports an error: a wire code is a rejection; a local code is either the
 * caller's input at fault (usage) or the world around the process (environment). Front ends that
 * know better in context (e.g. a JSON parse failure of a flag's file is a usage error) say so
 * where they catch it; this is the default everywhere else.
 */
export type ErrorCategory = 'rejected' | 'usage' | 'environment'

const LOCAL_CATEGORY: Record<LocalErrorCode, Exclude<ErrorCategory, 'rejected'>> = {
  usage: 'usage',
  environment: 'environment',
  'invalid-json': 'usage',
  'invalid-field': 'usage',
  'unsupported-algorithm': 'usage',
  'noncanonical-base64url': 'usage',
  'seed-wrong-length': 'usage',
  'invalid-public-key': 'usage',
  'seed-public-key-mismatch': 'usage',
  'file-exists': 'environment',
  'io-error': 'environment',
  locked: 'environment',
  'protected-time-not-utc-z': 'usage',
  'signer-mismatch': 'usage',
  'schema-invalid': 'usage',
  'not-an-object': 'usage',
  'registry-invalid': 'usage',
  'registry-argument-malformed': 'usage',
  'config-invalid': 'usage',
  'config-unusable': 'environment',
  'directory-not-empty': 'environment',
  'event-integrity': 'environment',
  'command-unbuildable': 'usage',
  'log-integrity': 'environment',
  'event-unfoldable': 'environment',
  'unknown-scheme': 'usage',
  'not-initialized': 'environment',
  'config-mismatch': 'environment',
  'invalid-config': 'usage',
  'incompatible-schema': 'environment',
  'wrong-admission-key': 'usage',
  unavailable: 'environment',
  'invalid-argument': 'usage',
  'group-commit-failed': 'environment',
  HANDSHAKE_FAILED: 'environment',
  CLOSED: 'environment',
  'bundle-invalid': 'environment',
  'results-invalid': 'environment',
  'blob-integrity': 'environment',
  'agent-invalid': 'usage',
  'plan-invalid': 'usage',
  'agent-unusable': 'environment',
  // §11.5: the service is out of reach beyond what bounded offline execution allows.
  'offline-buffer-refused': 'environment',
  'artifact-not-a-hash': 'usage',
  'artifact-mismatch': 'usage',
  'artifact-too-large': 'usage',
  // Stored bytes that no longer match their hash, or a server that sent other bytes.
  'artifact-integrity': 'environment',
}

/** Whether a code read from outside (a JSON envelope, a log) is one this toolkit uses. */
export function isMwpErrorCode(code: string): code is MwpErrorCode {
  return isErrorCode(code) || Object.hasOwn(LOCAL_CATEGORY, code)
}

export function categoryOf(code: MwpErrorCode): ErrorCategory {
  return isErrorCode(code) ? 'rejected' : LOCAL_CATEGORY[code]
}

/** The base of every error the toolkit throws; `cause` goes through the standard option. */
export class MwpError<C extends MwpErrorCode = MwpErrorCode> extends Error {
  constructor(
    readonly code: C,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = new.target.name
  }

  get category(): ErrorCategory {
    return categoryOf(this.code)
  }
}
