// The HELLO client_response check (spec §6.3, B4) is strict Ed25519: every key and signature that
// strictVerify refuses is refused here too, including the ones a bare native verify accepts.

import {describe, expect, it} from 'vitest'
import {type VerifyKey, provePublicKey, signEd25519} from '../../src/crypto/ed25519.js'
import {encodeBase64url} from '../../src/json/base64url.js'
import {transcriptBytes, verifyHelloSignature} from '../../src/wire/hello.js'
import {
  FORGED_SIG,
  GOLDEN_PUBLIC,
  ORDER2_KEY,
  b64,
  badPublicKeys,
  badSignatures,
  coordinatorSeed,
  malleateS,
  nodeVerify,
} from '../support/crypto-vectors.js'

const transcript = (challenge = 'Y2hhbGxlbmdl') => ({
  principalId: 'urn:mwp:test:agent:coordinator',
  keyId: 'urn:mwp:test:key:coordinator-1',
  clientNonce: 'Y2xpZW50LW5vbmNl',
  serverNonce: 'c2VydmVyLW5vbmNl',
  challenge,
  selectedVersion: '0.1',
})

function goldenKey(): VerifyKey {
  const proof = provePublicKey(b64(GOLDEN_PUBLIC))
  if (!proof.ok) throw new Error(`the golden key does not prove: ${proof.reason}`)
  return proof.key
}

const honest = (t = transcript()) => signEd25519(coordinatorSeed(), transcriptBytes(t))

describe('verifyHelloSignature', () => {
  it('accepts the honest response under the proven key and under its raw bytes, and nothing signed over another transcript', () => {
    const sig = encodeBase64url(honest())
    expect(verifyHelloSignature(goldenKey(), transcript(), sig)).toEqual({ok: true})
    expect(verifyHelloSignature(b64(GOLDEN_PUBLIC), transcript(), sig)).toEqual({ok: true})
    expect(verifyHelloSignature(goldenKey(), transcript('b3RoZXI'), sig)).toEqual({
      ok: false,
      stage: 'signature',
      reason: 'equation-mismatch',
    })
  })

  it('refuses the R = I, S = 0 forgery under the identity and small-order keys that a bare verify accepts', () => {
    const identity = badPublicKeys().find((k) => k.reason === 'identity')!.raw
    expect(nodeVerify(identity, transcriptBytes(transcript()), FORGED_SIG)).toBe(true)
    expect(verifyHelloSignature(identity, transcript(), encodeBase64url(FORGED_SIG))).toEqual({
      ok: false,
      stage: 'key-resolution',
      reason: 'identity',
    })

    // Under the order-2 key the forgery holds for the challenges whose hash is even: find some.
    const forgeable = Array.from({length: 64}, (_, i) => transcript(`Y2hhbGxlbmdl${i}`)).filter((t) =>
      nodeVerify(ORDER2_KEY, transcriptBytes(t), FORGED_SIG),
    )
    expect(forgeable.length).toBeGreaterThan(0)
    for (const t of forgeable) {
      expect(verifyHelloSignature(ORDER2_KEY, t, encodeBase64url(FORGED_SIG))).toEqual({
        ok: false,
        stage: 'key-resolution',
        reason: 'small-order',
      })
    }
  })

  it('refuses every upstream registry-public-key-* key with its fault, whatever the signature', () => {
    const sig = encodeBase64url(honest())
    for (const {reason, raw} of badPublicKeys()) {
      expect(verifyHelloSignature(raw, transcript(), sig)).toEqual({ok: false, stage: 'key-resolution', reason})
    }
  })

  it('refuses a non-canonical S (S + L) and each upstream stage-3 signature vector with its fault', () => {
    const sig = honest()
    const malleated = malleateS(sig)
    expect(verifyHelloSignature(goldenKey(), transcript(), encodeBase64url(malleated))).toEqual({
      ok: false,
      stage: 'signature-envelope',
      reason: 's-out-of-range',
    })
    for (const {fault, sig: bad} of badSignatures()) {
      expect(verifyHelloSignature(goldenKey(), transcript(), encodeBase64url(bad))).toEqual({
        ok: false,
        stage: 'signature-envelope',
        reason: fault,
      })
    }
  })

  it('refuses a challengeSignature that is not canonical unpadded base64url', () => {
    const text = encodeBase64url(honest())
    for (const bad of [text + '=', text.replace(/-/g, '+').replace(/_/g, '/') + '+', `${text.slice(0, -1)}!`, '']) {
      expect(verifyHelloSignature(goldenKey(), transcript(), bad).ok).toBe(false)
    }
    expect(verifyHelloSignature(goldenKey(), transcript(), text + '=')).toEqual({
      ok: false,
      stage: 'signature-envelope',
      reason: 'signature-noncanonical-base64url',
    })
  })
})
