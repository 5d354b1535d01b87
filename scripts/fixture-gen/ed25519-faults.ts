// Crafted Ed25519 encodings for the stage-3 (signature R/S) and stage-4 (public key) vectors.
// Every crafted value is checked here with the strict classifiers, so a vector can never end up
// testing something other than what its name says.

import {Point} from '@noble/ed25519'
import {L, checkSignatureEncoding, checkSignatureR, provePublicKey} from '../../src/crypto/ed25519.js'
import {fromHex} from './util.js'

/** The identity point I (y = 1), canonical encoding. */
export const IDENTITY = fromHex('0100000000000000000000000000000000000000000000000000000000000000')
/** Identity with the sign bit set: "negative zero", decodes to the same point. */
export const NEGATIVE_ZERO = fromHex('0100000000000000000000000000000000000000000000000000000000000080')
/** y = p (0x7fff…ffed): a noncanonical spelling of y = 0. */
export const Y_EQUALS_P = fromHex('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f')
/** y = p + 1: a noncanonical spelling of the identity. */
export const Y_ABOVE_P = fromHex('eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f')
/** A point of order 8 (from the well-known small-order list). */
export const ORDER_8 = fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a')

/** The first y (from 2 up) with no x on the curve: an off-curve encoding. */
export const OFF_CURVE: Uint8Array = (() => {
  for (let y = 2; y < 1000; y++) {
    const enc = new Uint8Array(32)
    enc[0] = y & 0xff
    enc[1] = y >> 8
    try {
      Point.fromBytes(enc, false)
    } catch {
      return enc
    }
  }
  throw new Error('no off-curve y below 1000')
})()

/** A prime-order point plus the order-8 point: on the curve, canonical, but mixed order. */
export function mixedOrder(primeOrderEncoding: Uint8Array): Uint8Array {
  return Point.fromBytes(primeOrderEncoding, false).add(Point.fromBytes(ORDER_8, false)).toBytes()
}

/** S + L (little-endian), the classic malleated S that must not be reduced. */
export function sPlusL(signature: Uint8Array): Uint8Array {
  let s = 0n
  for (let i = 31; i >= 0; i--) s = (s << 8n) | BigInt(signature[32 + i]!)
  let t = s + L
  const out = Uint8Array.from(signature)
  for (let i = 0; i < 32; i++) {
    out[32 + i] = Number(t & 0xffn)
    t >>= 8n
  }
  if (t !== 0n) throw new Error('S + L does not fit in 32 bytes')
  return out
}

/** The signature with R replaced. */
export function withR(signature: Uint8Array, r: Uint8Array): Uint8Array {
  const out = Uint8Array.from(signature)
  out.set(r, 0)
  return out
}

/** Asserts how the strict stage-4 key checks classify a crafted public key. */
export function expectKeyFault(raw: Uint8Array, fault: string): Uint8Array {
  const proof = provePublicKey(raw)
  const got = proof.ok ? 'ok' : proof.reason
  if (got !== fault) throw new Error(`crafted public key is ${got}, expected ${fault}`)
  return raw
}

/** Asserts how the strict stage-3 signature checks classify a crafted signature. */
export function expectSignatureFault(signature: Uint8Array, fault: string | null): Uint8Array {
  const got = checkSignatureEncoding(signature) ?? checkSignatureR(signature.subarray(0, 32))
  if (got !== fault) throw new Error(`crafted signature is ${got ?? 'well-formed'}, expected ${fault ?? 'well-formed'}`)
  return signature
}
