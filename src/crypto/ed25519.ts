// Strict pure Ed25519 (RFC 8032) for the Signed Document Verification Profile (spec §6.4).
//
// node:crypto (OpenSSL) does the fast work — signing and the verification equation — but it is not
// strict enough on its own: it accepts forgeries under identity, small-order and noncanonical public
// keys (see test/crypto/ed25519.test.ts). So every public key is first proven canonical, on-curve,
// non-identity and prime-order here, with @noble/ed25519 used only for point arithmetic. The
// canonical-encoding and negative-zero checks are done on the bytes ourselves so the result does not
// depend on a library's decoding mode (noble's `zip215` mode accepts both).
//
// Every signature check in the project — the six-stage verifier, the HELLO handshake, the Admission
// Log's row signatures — goes through strictVerify or strictVerifyOffThread: the bare equation is
// private to this module, and a VerifyKey exists only as the result of provePublicKey.

import {createPrivateKey, createPublicKey, randomBytes, sign, verify, type KeyObject} from 'node:crypto'
import {Point} from '@noble/ed25519'
import {encodeBase64url} from '../json/base64url.js'

/** Prime order of the base point B. */
export const L = 2n ** 252n + 27742317777372353535851937790883648493n
/** Field prime. */
export const p = 2n ** 255n - 19n

export type PublicKeyFault =
  | 'wrong-length'
  | 'noncanonical' // y > p
  | 'y-equals-p'
  | 'off-curve'
  | 'negative-zero'
  | 'identity'
  | 'small-order'
  | 'mixed-order'

/** Stage-3 ("signature-envelope") faults of a decoded signature. */
export type SignatureFault =
  | 'signature-wrong-length'
  | 's-out-of-range'
  | 'r-noncanonical'
  | 'r-y-equals-p'
  | 'r-off-curve'
  | 'r-negative-zero'
  | 'r-small-order'
  | 'r-mixed-order'

// Only provePublicKey holds this, so a VerifyKey in hand is a key that passed every check.
const PROVEN = Symbol('proven Ed25519 public key')

/** A public key proven canonical, on-curve, non-identity and prime-order, with its native key. */
export class VerifyKey {
  readonly #proven = true

  /** Only provePublicKey constructs one; any other token throws. */
  constructor(
    token: typeof PROVEN,
    readonly raw: Uint8Array,
    readonly b64: string,
    readonly keyObject: KeyObject,
  ) {
    if (token !== PROVEN) throw new TypeError('a VerifyKey is made only by provePublicKey')
  }

  /** Whether value was made by provePublicKey (a look-alike with the same members is not). */
  static is(value: unknown): value is VerifyKey {
    return typeof value === 'object' && value !== null && #proven in value
  }
}

export type ProveResult = {ok: true; key: VerifyKey} | {ok: false; reason: PublicKeyFault}

const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')

// ---------------------------------------------------------------------------------------------
// Point decoding

type DecodeFault = 'noncanonical' | 'y-equals-p' | 'off-curve' | 'negative-zero'

/**
 * Classifies a 32-byte encoding whose y (low 255 bits, little-endian) is >= p: 'y-equals-p',
 * 'noncanonical' (y > p), or null when y < p. y >= p only when bytes 1..30 are 0xff, the top byte
 * without the sign bit is 0x7f, and byte 0 is >= 0xed (p's low byte), so no BigInt is needed.
 */
function canonicalFault(enc: Uint8Array): 'noncanonical' | 'y-equals-p' | null {
  if ((enc[31]! & 0x7f) !== 0x7f) return null
  for (let i = 30; i >= 1; i--) if (enc[i] !== 0xff) return null
  if (enc[0]! < 0xed) return null
  return enc[0] === 0xed ? 'y-equals-p' : 'noncanonical'
}

/**
 * x = 0 only for y = 1 (the identity) and y = p - 1 (the point of order 2). Encoding either with
 * the sign bit set is "negative zero": it decodes to the same point as the canonical spelling.
 */
function isNegativeZero(enc: Uint8Array): boolean {
  if ((enc[31]! & 0x80) === 0) return false
  const top = enc[31]! & 0x7f
  const one = enc[0] === 0x01 && top === 0 && enc.subarray(1, 31).every((b) => b === 0)
  const minusOne = enc[0] === 0xec && top === 0x7f && enc.subarray(1, 31).every((b) => b === 0xff)
  return one || minusOne
}

/** Strict RFC 8032 decoding of a 32-byte point encoding. */
function decodePoint(enc: Uint8Array): {ok: true; point: Point} | {ok: false; fault: DecodeFault} {
  const canonical = canonicalFault(enc)
  if (canonical) return {ok: false, fault: canonical}
  // Both negative-zero encodings are on the curve, so checking them before decoding does not
  // change which fault an encoding gets relative to 'off-curve'.
  if (isNegativeZero(enc)) return {ok: false, fault: 'negative-zero'}
  try {
    // noble's strict mode (zip215 = false) also refuses y >= p and negative zero, but those were
    // excluded above, so the only remaining failure is "y has no x on the curve".
    return {ok: true, point: Point.fromBytes(enc, false)}
  } catch {
    return {ok: false, fault: 'off-curve'}
  }
}

/** [L]P, computed as [L-1]P + P because noble's multiply only accepts scalars below L. */
function timesL(point: Point): Point {
  return point.multiplyUnsafe(L - 1n).add(point)
}

type OrderClass = 'identity' | 'prime-order' | 'small-order' | 'mixed-order'

function orderClass(point: Point): OrderClass {
  if (point.is0()) return 'identity'
  if (timesL(point).is0()) return 'prime-order'
  // Not in the prime-order subgroup: either purely torsion (order divides 8) or torsion plus a
  // prime-order component.
  return point.multiplyUnsafe(8n).is0() ? 'small-order' : 'mixed-order'
}

// ---------------------------------------------------------------------------------------------
// Public keys (stage 4)

// Proving a key costs ~1-1.5 ms of BigInt work; registry keys are few and reused, so the verdict
// (including the native KeyObject) is cached per encoding. Failures are cached too so a bad key in
// a registry snapshot is not re-proven per document. The cap only guards against unbounded growth.
const proofCache = new Map<string, ProveResult>()
const PROOF_CACHE_MAX = 10_000

/** Strictly validates an Ed25519 public key per spec §6.4 (checks run in the order of the faults). */
export function provePublicKey(raw: Uint8Array): ProveResult {
  if (raw.length !== 32) return {ok: false, reason: 'wrong-length'}
  const b64 = encodeBase64url(raw)
  const cached = proofCache.get(b64)
  if (cached) return cached
  const result = provePublicKeyUncached(Uint8Array.from(raw), b64)
  if (proofCache.size >= PROOF_CACHE_MAX) proofCache.clear()
  proofCache.set(b64, result)
  return result
}

function provePublicKeyUncached(raw: Uint8Array, b64: string): ProveResult {
  const decoded = decodePoint(raw)
  if (!decoded.ok) return {ok: false, reason: decoded.fault}
  const order = orderClass(decoded.point)
  if (order !== 'prime-order') return {ok: false, reason: order}
  const keyObject = createPublicKey({
    key: Buffer.concat([SPKI_ED25519_PREFIX, raw]),
    format: 'der',
    type: 'spki',
  })
  return {ok: true, key: new VerifyKey(PROVEN, raw, b64, keyObject)}
}

// ---------------------------------------------------------------------------------------------
// Signatures (stage 3 and stage 6)

// L little-endian: S is compared against it from the most significant byte down.
const L_LE = Buffer.from(L.toString(16).padStart(64, '0'), 'hex').reverse()

/**
 * Cheap stage-3 checks: exactly 64 bytes, and S (bytes 32..63, little-endian) < L without any
 * reduction. Does not look at R; see checkSignatureR and strictVerify.
 */
export function checkSignatureEncoding(sig: Uint8Array): SignatureFault | null {
  if (sig.length !== 64) return 'signature-wrong-length'
  for (let i = 31; i >= 0; i--) {
    const s = sig[32 + i]!
    const l = L_LE[i]!
    if (s < l) return null
    if (s > l) return 's-out-of-range'
  }
  return 's-out-of-range' // S == L
}

/**
 * Full strict R checks (stage 3, BigInt, ~1 ms): canonical, on-curve, not negative zero and
 * [L]R = I. Unlike a public key, R may be the identity.
 */
export function checkSignatureR(rEnc: Uint8Array): SignatureFault | null {
  if (rEnc.length !== 32) return 'signature-wrong-length'
  const decoded = decodePoint(rEnc)
  if (!decoded.ok) return `r-${decoded.fault}`
  const order = orderClass(decoded.point)
  if (order === 'small-order') return 'r-small-order'
  if (order === 'mixed-order') return 'r-mixed-order'
  return null
}

export type StrictVerifyResult =
  | {ok: true}
  | {ok: false; stage: 'key-resolution'; reason: PublicKeyFault}
  | {ok: false; stage: 'signature-envelope'; reason: SignatureFault}
  | {ok: false; stage: 'signature'; reason: 'equation-mismatch'}

type StrictRefusal = Exclude<StrictVerifyResult, {ok: true}>

/**
 * Strict pure Ed25519 (not Ed25519ctx/ph): the public key proven (provePublicKey, cached per
 * encoding; a VerifyKey is already proven), the signature 64 bytes with S < L and a strict R, and
 * the equation over exactly `message`. Faults are named with the stages of spec §6.4.
 *
 * Why R is only inspected on failure (ARCHITECTURE.md "Performance notes"): OpenSSL rejects
 * S >= L and accepts only when Renc equals the encoding it computes for [S]B - [k]A. With A
 * proven prime-order, that point is in the prime-order subgroup and its computed encoding is
 * canonical, so a successful native verify already proves R strict — the BigInt R checks would
 * always pass. When verification fails, R is checked to decide whether the failure belongs to
 * stage 3 (a bad R encoding) or stage 6 (a well-formed signature that does not match).
 *
 * A six-stage verifier runs checkSignatureEncoding at stage 3, before it knows the key; when its
 * stage 4 or 5 then fails it must likewise run checkSignatureR on bytes 0..31 before reporting
 * that later stage, since stage 3 comes first.
 */
export function strictVerify(key: VerifyKey | Uint8Array, message: Uint8Array, sig: Uint8Array): StrictVerifyResult {
  const checked = beforeEquation(key, sig)
  return checked instanceof VerifyKey ? afterEquation(equation(checked, message, sig), sig) : checked
}

/**
 * strictVerify with the equation (about 100 µs) on libuv's thread pool, beside the calling thread
 * instead of on it. For a server's ingress, whose event loop also writes every Event to every
 * subscriber. The cheap checks run before it returns; R, on a failed equation, when it settles.
 */
export function strictVerifyOffThread(
  key: VerifyKey | Uint8Array,
  message: Uint8Array,
  sig: Uint8Array,
): Promise<StrictVerifyResult> {
  const checked = beforeEquation(key, sig)
  if (!(checked instanceof VerifyKey)) return Promise.resolve(checked)
  return new Promise((resolve) => {
    try {
      verify(null, message, checked.keyObject, sig, (error, holds) =>
        resolve(afterEquation(error === null && holds, sig)),
      )
    } catch {
      resolve(afterEquation(false, sig))
    }
  })
}

/** The checks that need no BigInt work: the key's proof (cached) and the signature's encoding. */
function beforeEquation(key: VerifyKey | Uint8Array, sig: Uint8Array): VerifyKey | StrictRefusal {
  let proven: VerifyKey
  if (VerifyKey.is(key)) {
    proven = key
  } else {
    // Anything but a VerifyKey is taken as key bytes and proven: a look-alike object is no 32 bytes.
    const proof = provePublicKey(key)
    if (!proof.ok) return {ok: false, stage: 'key-resolution', reason: proof.reason}
    proven = proof.key
  }
  const encoding = checkSignatureEncoding(sig)
  if (encoding) return {ok: false, stage: 'signature-envelope', reason: encoding}
  return proven
}

/** The verdict once the equation answered: R is decoded only when it did not hold. */
function afterEquation(holds: boolean, sig: Uint8Array): StrictVerifyResult {
  if (holds) return {ok: true}
  const r = checkSignatureR(sig.subarray(0, 32))
  if (r) return {ok: false, stage: 'signature-envelope', reason: r}
  return {ok: false, stage: 'signature', reason: 'equation-mismatch'}
}

/** The bare native equation: NOT strict about the key, R or S on its own, hence not exported. */
function equation(key: VerifyKey, message: Uint8Array, sig: Uint8Array): boolean {
  try {
    return verify(null, message, key.keyObject, sig)
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------------------------
// Signing

// Importing a PKCS#8 key is far more expensive than signing, and a process signs with few seeds.
const privateKeyCache = new Map<string, KeyObject>()

function privateKeyFor(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new RangeError(`Ed25519 seed must be 32 bytes, got ${seed.length}`)
  const id = Buffer.from(seed).toString('hex')
  let key = privateKeyCache.get(id)
  if (!key) {
    key = createPrivateKey({key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8'})
    privateKeyCache.set(id, key)
  }
  return key
}

/** Pure Ed25519 signature (64 bytes) of message under the RFC 8032 32-byte seed. */
export function signEd25519(seed: Uint8Array, message: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, privateKeyFor(seed)))
}

/** The 32-byte public key of a seed (the last 32 bytes of its SPKI DER encoding). */
export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  const spki = createPublicKey(privateKeyFor(seed)).export({format: 'der', type: 'spki'})
  return new Uint8Array(spki.subarray(spki.length - 32))
}

export function generateSeed(): Uint8Array {
  return new Uint8Array(randomBytes(32))
}
