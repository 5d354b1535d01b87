// The upstream cryptography bundle's Ed25519 cases, for the suites that show a signature path
// (documents, HELLO, Admission Log rows) refuses what strictVerify refuses: the golden key and
// message, the R = I, S = 0 forgery, the stage-3 signature vectors and the registries whose one
// changed key fails the strict key checks.

import {createPublicKey, verify} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {L, type PublicKeyFault, type SignatureFault} from '../../src/crypto/ed25519.js'
import {UPSTREAM} from './upstream.js'

export const CRYPTO = join(UPSTREAM, 'cryptography')
export const readCrypto = (path: string): any => JSON.parse(readFileSync(join(CRYPTO, path), 'utf8'))
export const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64url'))
export const hex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'))

/** The coordinator's public key, which signed the golden command. */
export const GOLDEN_PUBLIC = '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo'
export const coordinatorSeed = (): Uint8Array => b64(readCrypto('keys/signing-coordinator.json').seed)
export const goldenMessage = (): Uint8Array =>
  new Uint8Array(readFileSync(join(CRYPTO, 'vectors/canonicalization/command.signing.jcs')))

/** R = I, S = 0: verifies natively for every message under an identity key. */
export const FORGED_SIG = hex('01' + '00'.repeat(63))
/** The point of order 2 (y = p - 1): R = I, S = 0 verifies natively under it for about half of all messages. */
export const ORDER2_KEY = hex('ec' + 'ff'.repeat(30) + '7f')

/** Bare node:crypto verify with no strict checks: what a naive implementation would do. */
export function nodeVerify(rawKey: Uint8Array, message: Uint8Array, sig: Uint8Array): boolean {
  const keyObject = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), rawKey]),
    format: 'der',
    type: 'spki',
  })
  return verify(null, message, keyObject, sig)
}

const KEY_FAULTS: PublicKeyFault[] = [
  'identity',
  'small-order',
  'mixed-order',
  'noncanonical',
  'negative-zero',
  'off-curve',
  'y-equals-p',
  'wrong-length',
]

/** Each keys/registry-public-key-<fault>.json: the one key that differs from registry-valid.json. */
export function badPublicKeys(): {reason: PublicKeyFault; raw: Uint8Array}[] {
  const valid = new Set(readCrypto('keys/registry-valid.json').bindings.map((b: unknown) => JSON.stringify(b)))
  return KEY_FAULTS.map((reason) => {
    const changed = readCrypto(`keys/registry-public-key-${reason}.json`).bindings.find(
      (b: unknown) => !valid.has(JSON.stringify(b)),
    )
    return {reason, raw: b64(changed.publicKey)}
  })
}

const SIGNATURE_VECTORS: [string, SignatureFault][] = [
  ['command-signature-r-mixed-order', 'r-mixed-order'],
  ['command-signature-r-negative-zero', 'r-negative-zero'],
  ['command-signature-r-noncanonical', 'r-noncanonical'],
  ['command-signature-r-off-curve', 'r-off-curve'],
  ['command-signature-r-small-order', 'r-small-order'],
  ['command-signature-r-y-equals-p', 'r-y-equals-p'],
  ['command-signature-s-out-of-range', 's-out-of-range'],
  ['command-signature-wrong-length', 'signature-wrong-length'],
]

/** The signature values of the upstream stage-3 vectors, each with the fault it has. */
export function badSignatures(): {name: string; fault: SignatureFault; sig: Uint8Array}[] {
  return SIGNATURE_VECTORS.map(([name, fault]) => ({
    name,
    fault,
    sig: b64(readCrypto(`vectors/signed-documents/invalid/${name}.json`).signature.value),
  }))
}

/** The same signature with S replaced by S + L: the classic malleation, equal modulo L. */
export function malleateS(sig: Uint8Array): Uint8Array {
  const s = BigInt('0x' + Buffer.from(sig.subarray(32)).reverse().toString('hex'))
  const sPlusL = hex((s + L).toString(16).padStart(64, '0')).reverse()
  return new Uint8Array([...sig.subarray(0, 32), ...sPlusL])
}
