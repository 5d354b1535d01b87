// Private signing-key files.
//
// Our format: {"keyId", "principal": {"type", "id"}, "algorithm": "Ed25519", "seed", "publicKey"}.
// The loader also accepts the upstream test-only fixture format
// (cryptography/signing-key-fixture.schema.json: {"testOnly": true, "keyId", "algorithm", "seed",
// "publicKey"}, no principal) so the upstream fixture keys can sign.
//
// Key files are local operator files, not protocol input, so plain JSON.parse is enough here; the
// values are still validated strictly because a wrong seed/public-key pair would only surface later
// as signatures nobody can verify.

import {closeSync, fchmodSync, fsyncSync, openSync, readFileSync, unlinkSync, writeSync} from 'node:fs'
import {type KeyFileErrorCode, MwpError} from '../errors.js'
import {decodeBase64url, encodeBase64url} from '../json/base64url.js'
import {generateSeed, provePublicKey, publicKeyFromSeed} from './ed25519.js'

export type PrincipalType = 'agent' | 'human' | 'service'

export interface Principal {
  type: PrincipalType
  id: string
}

export interface SigningKey {
  keyId: string
  /** Absent only for upstream test-only fixture keys. */
  principal?: Principal
  seed: Uint8Array
  publicKey: Uint8Array
  publicKeyB64: string
  /** Set for keys loaded from the upstream test-only fixture format. */
  testOnly?: boolean
}

export type {KeyFileErrorCode}

export class KeyFileError extends MwpError<KeyFileErrorCode> {
  constructor(code: KeyFileErrorCode, message: string, options?: ErrorOptions) {
    super(code, `${message} (${code})`, options)
  }
}

const PRINCIPAL_TYPES: readonly string[] = ['agent', 'human', 'service']
const KNOWN_FIELDS = new Set(['keyId', 'principal', 'algorithm', 'seed', 'publicKey', 'testOnly'])
// Absolute URI shape used by the upstream fixture schema: scheme, colon, no whitespace.
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$/

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function uri(value: unknown, field: string): string {
  if (typeof value !== 'string' || !URI.test(value) || value.length > 512) {
    throw new KeyFileError('invalid-field', `${field} must be an absolute URI`)
  }
  return value
}

function bytes32(value: unknown, field: string): Uint8Array {
  const decoded = typeof value === 'string' ? decodeBase64url(value) : null
  if (!decoded) throw new KeyFileError('noncanonical-base64url', `${field} must be canonical unpadded base64url`)
  return decoded
}

/** Parses and validates a key file (either format). Throws KeyFileError. */
export function parseKeyFile(text: string): SigningKey {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new KeyFileError('invalid-json', `key file is not JSON: ${(error as Error).message}`, {cause: error})
  }
  if (!isObject(json)) throw new KeyFileError('invalid-field', 'key file must hold one JSON object')
  for (const name of Object.keys(json)) {
    if (!KNOWN_FIELDS.has(name)) throw new KeyFileError('invalid-field', `unknown key file member "${name}"`)
  }

  const keyId = uri(json.keyId, 'keyId')
  let principal: Principal | undefined
  if (json.principal !== undefined) {
    const pr = json.principal
    if (!isObject(pr) || typeof pr.type !== 'string' || !PRINCIPAL_TYPES.includes(pr.type)) {
      throw new KeyFileError('invalid-field', 'principal must be {"type": "agent"|"human"|"service", "id": URI}')
    }
    principal = {type: pr.type as PrincipalType, id: uri(pr.id, 'principal.id')}
  }
  if (json.testOnly !== undefined && json.testOnly !== true) {
    throw new KeyFileError('invalid-field', 'testOnly, when present, must be true')
  }
  // Exactly one of the two formats: ours names the principal, the upstream fixture is test-only.
  if (!principal && json.testOnly !== true) {
    throw new KeyFileError('invalid-field', 'principal is required (only upstream testOnly fixtures omit it)')
  }
  if (json.algorithm !== 'Ed25519') throw new KeyFileError('unsupported-algorithm', 'algorithm must be "Ed25519"')

  const seed = bytes32(json.seed, 'seed')
  if (seed.length !== 32) throw new KeyFileError('seed-wrong-length', `seed must be 32 bytes, got ${seed.length}`)
  const publicKey = bytes32(json.publicKey, 'publicKey')
  const proof = provePublicKey(publicKey)
  if (!proof.ok) throw new KeyFileError('invalid-public-key', `publicKey is not a valid Ed25519 key: ${proof.reason}`)
  if (!Buffer.from(publicKeyFromSeed(seed)).equals(publicKey)) {
    throw new KeyFileError('seed-public-key-mismatch', 'publicKey is not the public key of seed')
  }

  const key: SigningKey = {keyId, seed, publicKey, publicKeyB64: proof.key.b64}
  if (principal) key.principal = principal
  if (json.testOnly === true) key.testOnly = true
  return key
}

export function readKeyFile(path: string): SigningKey {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new KeyFileError('io-error', `cannot read key file ${path}: ${(error as Error).message}`, {cause: error})
  }
  return parseKeyFile(text)
}

/** The key file text for a key (our format; test-only fixture keys keep their testOnly marker). */
export function serializeKeyFile(key: SigningKey): string {
  const out: Record<string, unknown> = {}
  if (key.testOnly) out.testOnly = true
  out.keyId = key.keyId
  if (key.principal) out.principal = {type: key.principal.type, id: key.principal.id}
  out.algorithm = 'Ed25519'
  out.seed = encodeBase64url(key.seed)
  out.publicKey = encodeBase64url(key.publicKey)
  return `${JSON.stringify(out, null, 2)}\n`
}

/**
 * Creates a new key file readable only by its owner. Never overwrites: an existing file (perhaps an
 * operator's only copy of a key) fails with 'file-exists'.
 */
export function writeKeyFile(path: string, key: SigningKey): void {
  const text = serializeKeyFile(key)
  parseKeyFile(text) // refuse to write a key that could not be loaded back
  let fd: number
  try {
    fd = openSync(path, 'wx', 0o600)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code === 'EEXIST' ? 'file-exists' : 'io-error'
    throw new KeyFileError(code, `cannot create key file ${path}: ${(error as Error).message}`, {cause: error})
  }
  try {
    fchmodSync(fd, 0o600) // the mode passed to open is filtered by the umask; make it exact
    writeSync(fd, text)
    fsyncSync(fd)
  } catch (error) {
    closeSync(fd)
    unlinkSync(path) // do not leave a truncated key file behind
    throw new KeyFileError('io-error', `cannot write key file ${path}: ${(error as Error).message}`, {cause: error})
  }
  closeSync(fd)
}

export function generateSigningKey(options: {keyId: string; principal: Principal}): SigningKey {
  const keyId = uri(options.keyId, 'keyId')
  const principal = {type: options.principal.type, id: uri(options.principal.id, 'principal.id')}
  if (!PRINCIPAL_TYPES.includes(principal.type)) throw new KeyFileError('invalid-field', 'invalid principal type')
  const seed = generateSeed()
  const publicKey = publicKeyFromSeed(seed)
  return {keyId, principal, seed, publicKey, publicKeyB64: encodeBase64url(publicKey)}
}
