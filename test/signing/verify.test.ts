// Six-stage verification (spec §6.4) on documents and registries built here, so each
// ACCEPTANCE C-line has a positive and a negative case independent of the upstream bundle.

import {describe, expect, it} from 'vitest'
import {checkSignatureR} from '../../src/crypto/ed25519.js'
import {type SigningKey, generateSigningKey} from '../../src/crypto/keyfile.js'
import {decodeBase64url, encodeBase64url} from '../../src/json/base64url.js'
import {canonicalize} from '../../src/json/jcs.js'
import type {JsonObject} from '../../src/json/parse.js'
import {sign} from '../../src/signing/sign.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {Rejection, Verified, verify} from '../../src/signing/verify.js'

const ORG = 'urn:mwp:test:org'
const alice = generateSigningKey({
  keyId: 'urn:mwp:test:key:alice-1',
  principal: {type: 'agent', id: 'urn:mwp:test:agent:alice'},
})
const bob = generateSigningKey({
  keyId: 'urn:mwp:test:key:bob-1',
  principal: {type: 'agent', id: 'urn:mwp:test:agent:bob'},
})
const registrar = generateSigningKey({
  keyId: 'urn:mwp:test:key:registrar-1',
  principal: {type: 'service', id: 'urn:mwp:test:service:registrar'},
})

type Binding = {
  keyId: string
  principal: object
  algorithm: string
  publicKey: string
  validFrom: string
  validityHistory: object[]
}
const binding = (k: SigningKey, extra: Partial<Binding> = {}): Binding => ({
  keyId: k.keyId,
  principal: k.principal!,
  algorithm: 'Ed25519',
  publicKey: k.publicKeyB64,
  validFrom: '2026-07-01T00:00:00Z',
  validityHistory: [],
  ...extra,
})
const registry = (...bindings: object[]) => ({organizationId: ORG, bindings})
const evidence = (snapshot: object) => RegistryEvidence.fromBytes(Buffer.from(JSON.stringify(snapshot)))
const standard = () => registry(binding(alice), binding(bob), binding(registrar))

function command(overrides: JsonObject = {}): JsonObject {
  return {
    protocolVersion: '0.1',
    actionId: 'urn:uuid:0b5c9a4e-0000-4000-8000-000000000001',
    actor: {type: 'agent', id: 'urn:mwp:test:agent:alice'},
    sessionEpoch: 1,
    membershipEpoch: 1,
    groupId: 'urn:mwp:test:group:g1',
    kind: 'message.post',
    correlationId: 'urn:uuid:0b5c9a4e-0000-4000-8000-000000000002',
    issuedAt: '2026-07-15T00:00:00Z',
    payload: {text: 'hello', nested: {signature: 'covered'}},
    ...overrides,
  }
}

const signed = (doc: JsonObject = command(), key: SigningKey = alice) => sign('command', doc, key).document
const bytesOf = (doc: unknown) => Buffer.from(JSON.stringify(doc))

function run(doc: unknown, snapshot: object = standard(), kind: 'command' | undefined = 'command') {
  return verify(kind, typeof doc === 'string' ? Buffer.from(doc) : bytesOf(doc), evidence(snapshot))
}
function rejected(result: ReturnType<typeof verify>): {code: string; stage: string; reason: string} {
  expect(result.ok, 'expected a rejection').toBe(false)
  const r = result as Rejection
  const d = Rejection.diagnostic(r)
  return {code: r.code, stage: d.stage, reason: d.reason}
}
function withSignature(doc: JsonObject, mutate: (sig: Uint8Array) => void): JsonObject {
  const sig = decodeBase64url((doc.signature as JsonObject).value as string)!
  const copy = Uint8Array.from(sig)
  mutate(copy)
  return {...doc, signature: {...(doc.signature as JsonObject), value: encodeBase64url(copy)}}
}

describe('happy path', () => {
  it('verifies and returns the verified facts', () => {
    const doc = signed()
    const result = run(doc) as Verified
    expect(result.ok).toBe(true)
    expect(result.kind).toBe('command')
    expect(result.keyId).toBe(alice.keyId)
    expect(result.principal).toEqual(alice.principal)
    expect(result.protectedTime).toBe('2026-07-15T00:00:00Z')
    expect(result.organizationId).toBe(ORG)
    expect(result.keyInterval).toEqual({validFrom: '2026-07-01T00:00:00Z'})
    const {signature: _s, ...unsigned} = doc
    expect(result.signingBytes.toString()).toBe(canonicalize(unsigned))
  })

  it('detects the kind when none is given', () => {
    expect((run(signed(), standard(), undefined) as Verified).kind).toBe('command')
  })

  it('C26: the signing hash depends only on the JCS bytes, not on the serialization', () => {
    const doc = signed()
    const pretty = JSON.stringify(doc, null, 7)
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(doc).reverse()))
    const a = run(pretty) as Verified
    const b = run(reordered) as Verified
    expect(a.signingHash).toBe(b.signingHash)
    expect(a.signingHash).toMatch(/^sha256:[0-9a-f]{64}$/)
  })
})

describe('stage order and wire mapping (C1, C29)', () => {
  it('reports only the first failing stage', () => {
    // Schema-invalid AND tampered: stage 2 wins.
    const doc = {...signed(), extraCoreProperty: true}
    expect(rejected(run(doc))).toMatchObject({stage: 'schema', code: 'SCHEMA_VALIDATION_FAILED'})
    // Duplicate member AND schema-invalid: stage 1 wins.
    expect(rejected(run('{"a":1,"a":2}'))).toMatchObject({stage: 'parse', code: 'PROTOCOL_VIOLATION'})
  })

  it('a rejection serializes to its wire code only', () => {
    const r = run({...signed(), payload: {text: 'tampered'}}) as Rejection
    expect(JSON.parse(JSON.stringify(r))).toEqual({code: 'AUTH_INVALID_SIGNATURE'})
    expect(Object.keys(r)).not.toContain('diagnostic')
    expect(Rejection.diagnostic(r)).toMatchObject({stage: 'signature', reason: 'equation-mismatch'})
  })
})

describe('stage 3: signature envelope (C3-C10)', () => {
  it('C4: protected time and createdAt must end in uppercase Z', () => {
    const doc = signed()
    const lower = {
      ...doc,
      issuedAt: '2026-07-15T00:00:00z',
      signature: {...(doc.signature as JsonObject), createdAt: '2026-07-15T00:00:00z'},
    }
    expect(rejected(run(lower))).toMatchObject({stage: 'signature-envelope', reason: 'protected-time-not-utc-z'})
    const offset = {
      ...doc,
      issuedAt: '2026-07-15T00:00:00+00:00',
      signature: {...(doc.signature as JsonObject), createdAt: '2026-07-15T00:00:00+00:00'},
    }
    expect(rejected(run(offset))).toMatchObject({stage: 'signature-envelope', reason: 'protected-time-not-utc-z'})
  })

  it('C5: createdAt must be byte-identical, an equal instant is not enough', () => {
    const doc = signed()
    const same = {...doc, signature: {...(doc.signature as JsonObject), createdAt: '2026-07-15T00:00:00.000Z'}}
    expect(rejected(run(same))).toMatchObject({stage: 'signature-envelope', reason: 'created-at-mismatch'})
  })

  it('C6: a lowercase t separator is accepted with an uppercase Z', () => {
    const doc = signed(command({issuedAt: '2026-07-15t00:00:00Z'}))
    expect(run(doc).ok).toBe(true)
  })

  it('C7: the signature must decode to exactly 64 bytes', () => {
    const doc = signed()
    const short = {...doc, signature: {...(doc.signature as JsonObject), value: encodeBase64url(new Uint8Array(63))}}
    expect(rejected(run(short))).toMatchObject({stage: 'signature-envelope', reason: 'signature-wrong-length'})
  })

  it('A13: a signature with nonzero unused pad bits fails at stage 3', () => {
    const doc = signed()
    const value = (doc.signature as JsonObject).value as string
    const last = value[value.length - 1]
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const bumped = value.slice(0, -1) + alphabet[alphabet.indexOf(last) + 1]
    expect(Buffer.from(bumped, 'base64url')).toEqual(Buffer.from(value, 'base64url'))
    expect(rejected(run({...doc, signature: {...(doc.signature as JsonObject), value: bumped}}))).toMatchObject({
      stage: 'signature-envelope',
      reason: 'signature-noncanonical-base64url',
    })
  })

  it('C10: S >= L is rejected, never reduced', () => {
    // Add L to S: the same signature modulo L, which a reducing verifier would accept.
    const L = 2n ** 252n + 27742317777372353535851937790883648493n
    const doc = withSignature(signed(), (sig) => {
      let s = 0n
      for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i])
      s += L
      for (let i = 32; i < 64; i++) {
        sig[i] = Number(s & 0xffn)
        s >>= 8n
      }
    })
    expect(rejected(run(doc))).toMatchObject({stage: 'signature-envelope', reason: 's-out-of-range'})
  })

  it('C8: a small-order R is a stage-3 failure even when detected after the equation fails', () => {
    // R = encoding of the order-4 point (y = 0): valid encoding, not prime order.
    const doc = withSignature(signed(), (sig) => sig.fill(0, 0, 32))
    expect(checkSignatureR(new Uint8Array(32))).not.toBeNull()
    expect(rejected(run(doc))).toMatchObject({stage: 'signature-envelope', reason: 'r-small-order'})
  })

  it('C8: an R fault outranks a later key-resolution failure', () => {
    const doc = withSignature(signed(), (sig) => sig.fill(0, 0, 32))
    expect(rejected(run(doc, registry(binding(bob))))).toMatchObject({
      stage: 'signature-envelope',
      reason: 'r-small-order',
    })
  })

  it('C9: the identity R is allowed at stage 3 and fails the equation at stage 6', () => {
    const doc = withSignature(signed(), (sig) => {
      sig.fill(0, 0, 64)
      sig[0] = 1
    })
    expect(rejected(run(doc))).toMatchObject({stage: 'signature', reason: 'equation-mismatch'})
  })
})

describe('stage 4: registry evidence and key resolution (C11-C24)', () => {
  const doc = signed()

  it('C11: one invalid unrelated binding fails every verification', () => {
    const bad = registry(binding(alice), binding(bob, {keyId: 'urn:mwp:test:key:bob-1\n'}))
    expect(rejected(run(doc, bad))).toMatchObject({stage: 'key-resolution', reason: 'key-id-invalid'})
    const badPrincipal = registry(
      binding(alice),
      binding(bob, {principal: {type: 'agent', id: 'urn:mwp:test:agent:b%GG'}}),
    )
    expect(rejected(run(doc, badPrincipal))).toMatchObject({stage: 'key-resolution', reason: 'principal-id-invalid'})
    const badHistory = registry(
      binding(alice),
      binding(bob, {
        validityHistory: [{sequence: 2, recordedAt: '2026-07-02T00:00:00Z', validUntil: '2026-07-03T00:00:00Z'}],
      }),
    )
    expect(rejected(run(doc, badHistory))).toMatchObject({stage: 'key-resolution', reason: 'history-not-contiguous'})
  })

  it('C12: a relative organizationId or an IRI-only Principal ID fails', () => {
    expect(rejected(run(doc, {...standard(), organizationId: 'org/relative'}))).toMatchObject({
      reason: 'organization-id-invalid',
    })
    const iri = registry(
      binding(alice),
      binding(registrar, {principal: {type: 'service', id: 'https://例え.テスト/registrar'}}),
    )
    expect(rejected(run(doc, iri))).toMatchObject({reason: 'principal-id-invalid'})
  })

  it('C13: weak public keys are rejected even for an unrelated binding', () => {
    const identity = encodeBase64url(Uint8Array.from({length: 32}, (_, i) => (i === 0 ? 1 : 0)))
    expect(rejected(run(doc, registry(binding(alice), binding(bob, {publicKey: identity}))))).toMatchObject({
      reason: 'public-key-identity',
    })
    expect(
      rejected(run(doc, registry(binding(alice), binding(bob, {publicKey: bob.publicKeyB64 + 'A'})))),
    ).toMatchObject({stage: 'key-resolution'})
    expect(
      rejected(run(doc, registry(binding(alice), binding(bob, {publicKey: bob.publicKeyB64 + '=='})))),
    ).toMatchObject({reason: 'public-key-noncanonical-base64url'})
  })

  it('C14: a key ID bound to another key or Principal is rejected', () => {
    const rebinding = registry(binding(alice), binding(bob, {keyId: alice.keyId}))
    expect(rejected(run(doc, rebinding))).toMatchObject({reason: 'key-id-rebinding'})
  })

  it('C15/C16: the same public key under another Principal or key ID is rejected', () => {
    const reuse = registry(binding(alice), binding(bob, {publicKey: alice.publicKeyB64}))
    expect(rejected(run(doc, reuse))).toMatchObject({reason: 'public-key-reuse'})
    const alias = registry(binding(alice), binding(alice, {keyId: 'urn:mwp:test:key:alice-alias'}))
    expect(rejected(run(doc, alias))).toMatchObject({reason: 'key-alias'})
  })

  it('C17: an identical binding declared twice is one logical binding', () => {
    expect(run(doc, registry(binding(alice), binding(bob), binding(alice))).ok).toBe(true)
    // A later declaration may carry a longer history of the same binding.
    const history = [{sequence: 1, recordedAt: '2026-07-20T00:00:00Z', validUntil: '2026-08-01T00:00:00Z'}]
    expect(run(doc, registry(binding(alice), binding(alice, {validityHistory: history}))).ok).toBe(true)
    expect(
      rejected(run(doc, registry(binding(alice), binding(alice, {validFrom: '2026-07-02T00:00:00Z'})))),
    ).toMatchObject({reason: 'valid-from-changed'})
  })

  it('C18: history is contiguous from 1 with non-decreasing recordedAt; rewriting fails', () => {
    const rec = (sequence: number, recordedAt: string, validUntil: string) => ({sequence, recordedAt, validUntil})
    const ok = [
      rec(1, '2026-07-20T00:00:00Z', '2026-08-01T00:00:00Z'),
      rec(2, '2026-07-20T00:00:00Z', '2026-07-25T00:00:00Z'),
    ]
    expect(run(doc, registry(binding(alice, {validityHistory: ok}))).ok).toBe(true)
    const decreasing = [
      rec(1, '2026-07-20T00:00:00Z', '2026-08-01T00:00:00Z'),
      rec(2, '2026-07-19T00:00:00Z', '2026-07-25T00:00:00Z'),
    ]
    expect(rejected(run(doc, registry(binding(alice, {validityHistory: decreasing}))))).toMatchObject({
      reason: 'history-recorded-at-decreasing',
    })
    const rewritten = [rec(1, '2026-07-20T00:00:00Z', '2026-07-30T00:00:00Z')]
    expect(
      rejected(run(doc, registry(binding(alice, {validityHistory: ok}), binding(alice, {validityHistory: rewritten})))),
    ).toMatchObject({reason: 'history-rewritten'})
  })

  it('C19: validUntil and revokedAt only move earlier; the earliest is effective', () => {
    const later = [
      {sequence: 1, recordedAt: '2026-07-20T00:00:00Z', validUntil: '2026-07-10T00:00:00Z'},
      {sequence: 2, recordedAt: '2026-07-21T00:00:00Z', validUntil: '2026-08-01T00:00:00Z'},
    ]
    expect(rejected(run(doc, registry(binding(alice, {validityHistory: later}))))).toMatchObject({
      reason: 'history-boundary-moved-later',
    })
    const earlier = [
      {sequence: 1, recordedAt: '2026-07-20T00:00:00Z', revokedAt: '2026-08-01T00:00:00Z'},
      {sequence: 2, recordedAt: '2026-07-21T00:00:00Z', revokedAt: '2026-07-10T00:00:00Z'},
    ]
    const r = rejected(run(doc, registry(binding(alice, {validityHistory: earlier}))))
    expect(r).toMatchObject({reason: 'key-revoked'})
  })

  it('C20: an unknown key ID fails only after the registry is validated', () => {
    const unknown = signed(
      command(),
      generateSigningKey({keyId: 'urn:mwp:test:key:nobody', principal: alice.principal!}),
    )
    expect(rejected(run(unknown))).toMatchObject({stage: 'key-resolution', reason: 'unknown-key'})
    // With an invalid unrelated binding the registry fault is reported, not the unknown key.
    expect(rejected(run(unknown, registry(binding(alice), binding(bob, {algorithm: 'RSA'}))))).toMatchObject({
      reason: 'algorithm-unsupported',
    })
  })

  it('C21: partial, key-filtered or unavailable evidence is refused with the same wire code', () => {
    const bytes = bytesOf(doc)
    for (const ev of [
      RegistryEvidence.fromSnapshot(standard(), 'key-filtered'),
      RegistryEvidence.fromSnapshot(standard(), 'partial'),
      RegistryEvidence.fromSnapshot(standard(), 'unknown'),
      RegistryEvidence.unavailable('registry store timed out'),
    ]) {
      const r = verify('command', bytes, ev) as Rejection
      expect(r.code).toBe('AUTH_INVALID_SIGNATURE')
      expect(Rejection.diagnostic(r).stage).toBe('key-resolution')
    }
    expect(verify('command', bytes, RegistryEvidence.fromSnapshot(standard(), 'complete')).ok).toBe(true)
  })

  it('C22: the bound Principal must equal the signer; Agent Cards need a service', () => {
    const impostor = registry(binding(alice, {principal: {type: 'agent', id: 'urn:mwp:test:agent:mallory'}}))
    expect(rejected(run(doc, impostor))).toMatchObject({reason: 'principal-mismatch'})
    const sameIdOtherType = registry(binding(alice, {principal: {type: 'human', id: 'urn:mwp:test:agent:alice'}}))
    expect(rejected(run(doc, sameIdOtherType))).toMatchObject({reason: 'principal-mismatch'})
    // Bob's key cannot sign as Alice even though Bob's key is valid.
    expect(rejected(run(signed(command(), {...bob, principal: alice.principal})))).toMatchObject({
      reason: 'principal-mismatch',
    })
  })

  it('C23: the key interval is half-open', () => {
    const at = (validFrom: string, history: object[] = []) =>
      registry(binding(alice, {validFrom, validityHistory: history}))
    expect(run(doc, at('2026-07-15T00:00:00Z')).ok).toBe(true)
    expect(rejected(run(doc, at('2026-07-15T00:00:00.000000001Z')))).toMatchObject({reason: 'key-not-yet-valid'})
    const until = (t: string) => [{sequence: 1, recordedAt: '2026-07-01T00:00:00Z', validUntil: t}]
    expect(rejected(run(doc, at('2026-07-01T00:00:00Z', until('2026-07-15T00:00:00Z'))))).toMatchObject({
      reason: 'key-expired',
    })
    expect(run(doc, at('2026-07-01T00:00:00Z', until('2026-07-15T00:00:00.0000000001Z'))).ok).toBe(true)
    const revoked = (t: string) => [{sequence: 1, recordedAt: '2026-07-01T00:00:00Z', revokedAt: t}]
    expect(rejected(run(doc, at('2026-07-01T00:00:00Z', revoked('2026-07-15T00:00:00Z'))))).toMatchObject({
      reason: 'key-revoked',
    })
  })

  it('C24: registry times compare as instants, not text', () => {
    // 08:00+08:00 is the same instant as the protected time 00:00Z: valid from exactly then.
    expect(run(doc, registry(binding(alice, {validFrom: '2026-07-15T08:00:00+08:00'}))).ok).toBe(true)
    expect(rejected(run(doc, registry(binding(alice, {validFrom: '2026-07-15T08:00:01+08:00'}))))).toMatchObject({
      reason: 'key-not-yet-valid',
    })
    expect(rejected(run(doc, registry(binding(alice, {validFrom: '2026-07-15T25:00:00Z'}))))).toMatchObject({
      reason: 'valid-from-invalid',
    })
  })

  it('caches a validated snapshot by content hash', () => {
    const snapshot = standard()
    const a = evidence(snapshot).resolve()
    const b = evidence(snapshot).resolve()
    expect(a).toBe(b)
  })
})

describe('stages 5 and 6', () => {
  it('C25: only the top-level signature is omitted; nested signatures are covered', () => {
    const doc = signed()
    const tampered = {...doc, payload: {text: 'hello', nested: {signature: 'changed'}}}
    expect(rejected(run(tampered))).toMatchObject({stage: 'signature', reason: 'equation-mismatch'})
  })

  it('A10/A11: 1e400 and unpaired surrogates fail at canonicalization with PROTOCOL_VIOLATION', () => {
    const text = JSON.stringify(signed()).replace('"text":"hello"', '"text":"hello","big":1e400')
    expect(rejected(run(text))).toMatchObject({
      stage: 'canonicalization',
      code: 'PROTOCOL_VIOLATION',
      reason: 'non-finite-number',
    })
    const text2 = JSON.stringify(signed()).replace('"text":"hello"', '"text":"\\ud800"')
    expect(rejected(run(text2))).toMatchObject({stage: 'canonicalization', reason: 'unpaired-surrogate'})
  })

  it('C27: changing any signed value fails the equation', () => {
    const doc = signed()
    expect(rejected(run({...doc, sessionEpoch: 2}))).toMatchObject({stage: 'signature'})
    expect(rejected(run({...doc, correlationId: 'urn:uuid:0b5c9a4e-0000-4000-8000-000000000003'}))).toMatchObject({
      stage: 'signature',
    })
  })
})

describe('signing', () => {
  it('refuses a protected time that is not uppercase-Z UTC', () => {
    expect(() => sign('command', command({issuedAt: '2026-07-15T00:00:00+00:00'}), alice)).toThrow(/uppercase Z/)
  })

  it('refuses a key whose Principal is not the expected signer', () => {
    expect(() => sign('command', command(), bob)).toThrow(/must be signed by agent urn:mwp:test:agent:alice/)
  })

  it('replaces an existing envelope and sets createdAt to the protected time', () => {
    const once = signed()
    const again = sign('command', {...once, issuedAt: '2026-07-16T00:00:00Z'}, alice).document
    expect((again.signature as JsonObject).createdAt).toBe('2026-07-16T00:00:00Z')
    expect(run(again).ok).toBe(true)
  })
})

describe('Verified is issued only by the verifier', () => {
  const issued = () => {
    const result = run(signed())
    if (!(result instanceof Verified)) throw new Error('the fixture does not verify')
    return result
  }

  it('a verification result is a Verified that passes Verified.is, with the facts consumers read', () => {
    const v = issued()
    expect(Verified.is(v)).toBe(true)
    expect(v.ok).toBe(true)
    expect(v.keyId).toBe(alice.keyId)
    expect(v.signingHash).toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it('an object literal with every member of a Verified is not one: not to the compiler, not to Verified.is', () => {
    const v = issued()
    const lookalike = {...v}
    expect(lookalike).toEqual(v)
    expect(Verified.is(lookalike)).toBe(false)
    expect(Verified.is(Object.create(Verified.prototype))).toBe(false)
    expect(Verified.is(null)).toBe(false)
    // @ts-expect-error -- a literal lacks the verifier's private brand, so it is not assignable to Verified
    const forged: Verified = {
      ok: true,
      kind: v.kind,
      document: v.document,
      organizationId: v.organizationId,
      keyId: v.keyId,
      principal: v.principal,
      protectedTime: v.protectedTime,
      signingBytes: v.signingBytes,
      signingHash: v.signingHash,
      keyInterval: v.keyInterval,
      binding: v.binding,
    }
    expect(Verified.is(forged)).toBe(false)
  })

  it('the constructor refuses any token but the verifier’s own', () => {
    const v = issued()
    expect(() => new Verified(Symbol('six-stage verifier') as never, v)).toThrow(TypeError)
  })
})
