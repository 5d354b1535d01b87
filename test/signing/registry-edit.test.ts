// Registry editing (src/signing/registry-edit.ts): every refusal reason with a positive and a
// negative case, ACCEPTANCE C14–C19 on the editing path, lint findings, upstream fixture verdicts
// and the locked atomic file rewrite.

import {existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {generateSigningKey} from '../../src/crypto/keyfile.js'
import type {Principal} from '../../src/signing/profiles.js'
import {
  type NewBinding,
  type RegistrySnapshot,
  RegistryEditError,
  RegistryFileError,
  addBinding,
  checkRegistry,
  classifyEditFailure,
  describeBindings,
  editRegistryFile,
  expireKey,
  initRegistry,
  parsePrincipal,
  parseRegistryBytes,
  readRegistryFile,
  revokeKey,
  serializeRegistry,
  writeNewRegistryFile,
} from '../../src/signing/registry-edit.js'
import {RegistryFault, validateSnapshot} from '../../src/signing/registry.js'
import {HAVE_UPSTREAM, UPSTREAM} from '../support/upstream.js'

const ORG = 'urn:example:organization:acme'
const alice: Principal = {type: 'agent', id: 'urn:example:agent:alice'}
const bob: Principal = {type: 'human', id: 'urn:example:human:bob'}
const T0 = '2026-07-01T00:00:00Z'
const T1 = '2026-08-01T00:00:00Z'
const T2 = '2026-09-01T00:00:00Z'
const T3 = '2026-10-01T00:00:00Z'

const keyPair = (n: number) => generateSigningKey({keyId: `urn:example:key:k${n}`, principal: alice}).publicKeyB64
const K1 = keyPair(1)
const K2 = keyPair(2)
const K3 = keyPair(3)
// Weak keys from the upstream registry fixtures (RFC 8032 encodings of bad points).
const SMALL_ORDER = '7P_______________________________________38'
const IDENTITY = 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'

function binding(overrides: Partial<NewBinding> = {}): NewBinding {
  return {keyId: 'urn:example:key:alice-1', principal: alice, publicKey: K1, validFrom: T0, ...overrides}
}

/** A registry with alice-1 (K1) and bob-1 (K2). */
function base(): RegistrySnapshot {
  let reg = initRegistry(ORG)
  reg = addBinding(reg, binding())
  reg = addBinding(reg, binding({keyId: 'urn:example:key:bob-1', principal: bob, publicKey: K2}))
  return reg
}

/** The reason an edit is refused with; fails the test when it is not refused. */
function refusal(fn: () => unknown): {reason: string; malformed: boolean; message: string} {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(RegistryEditError)
    const err = e as RegistryEditError
    expect(err.message.length).toBeGreaterThan(10)
    return {reason: err.reason, malformed: err.code === 'registry-argument-malformed', message: err.message}
  }
  throw new Error('expected the edit to be refused')
}

const isValid = (reg: unknown) => !(validateSnapshot(reg, 'test') instanceof RegistryFault)

describe('initRegistry', () => {
  it('creates an empty registry for an absolute-URI organization', () => {
    expect(initRegistry(ORG)).toEqual({organizationId: ORG, bindings: []})
  })
  it('refuses a relative or malformed organization ID (organization-id-invalid)', () => {
    for (const bad of ['organizations/acme', '', 'urn:example:org\n', 'https://例え.テスト/x']) {
      expect(refusal(() => initRegistry(bad))).toMatchObject({reason: 'organization-id-invalid', malformed: true})
    }
  })
})

describe('addBinding', () => {
  it('adds to an empty registry; the result is valid evidence with an empty history', () => {
    const reg = addBinding(initRegistry(ORG), binding())
    expect(reg.bindings).toEqual([
      {
        keyId: 'urn:example:key:alice-1',
        principal: alice,
        algorithm: 'Ed25519',
        publicKey: K1,
        validFrom: T0,
        validityHistory: [],
      },
    ])
    expect(isValid(reg)).toBe(true)
  })

  it('is pure: the input snapshot is not modified', () => {
    const reg = base()
    const before = serializeRegistry(reg)
    addBinding(reg, binding({keyId: 'urn:example:key:alice-2', publicKey: K3}))
    expect(() => addBinding(reg, binding({keyId: 'urn:example:key:alice-2', publicKey: K1}))).toThrow(RegistryEditError)
    expect(serializeRegistry(reg)).toBe(before)
  })

  it('refuses malformed arguments (key-id / principal / public key / validFrom)', () => {
    const reg = base()
    expect(refusal(() => addBinding(reg, binding({keyId: 'key-1'})))).toMatchObject({
      reason: 'key-id-invalid',
      malformed: true,
    })
    expect(refusal(() => addBinding(reg, binding({keyId: 'urn:example:key:x\n'})))).toMatchObject({
      reason: 'key-id-invalid',
    })
    expect(
      refusal(() => addBinding(reg, binding({principal: {type: 'robot' as never, id: 'urn:example:x'}}))),
    ).toMatchObject({reason: 'principal-invalid', malformed: true})
    expect(
      refusal(() => addBinding(reg, binding({principal: {type: 'agent', id: 'urn:example:agent:%GG'}}))),
    ).toMatchObject({reason: 'principal-id-invalid', malformed: true})
    expect(refusal(() => addBinding(reg, binding({publicKey: K3 + '='})))).toMatchObject({
      reason: 'public-key-noncanonical-base64url',
      malformed: true,
    })
    expect(refusal(() => addBinding(reg, binding({publicKey: 'not base64url!'})))).toMatchObject({
      reason: 'public-key-noncanonical-base64url',
    })
    for (const bad of [
      '2026-07-01',
      '2026-07-01T00:00:60Z',
      '2026-07-01T00:00:00-00:00',
      '0000-01-01T00:00:00Z',
      '2026-07-01 00:00:00Z',
    ]) {
      expect(
        refusal(() => addBinding(reg, binding({keyId: 'urn:example:key:alice-9', publicKey: K3, validFrom: bad}))),
      ).toMatchObject({reason: 'valid-from-invalid', malformed: true})
    }
    // Negative: well-formed variants are accepted (offsets, fractions, lowercase t/z are profile-valid).
    for (const ok of ['2026-07-01T08:00:00+08:00', '2026-07-01T00:00:00.123456789Z', '2026-07-01t00:00:00z']) {
      expect(
        addBinding(reg, binding({keyId: 'urn:example:key:alice-9', publicKey: K3, validFrom: ok})).bindings.at(-1)!
          .validFrom,
      ).toBe(ok)
    }
  })

  it('refuses public keys that are not canonical prime-order points (public-key-*)', () => {
    const reg = base()
    expect(
      refusal(() => addBinding(reg, binding({keyId: 'urn:example:key:weak', publicKey: SMALL_ORDER}))),
    ).toMatchObject({reason: 'public-key-small-order', malformed: false})
    expect(refusal(() => addBinding(reg, binding({keyId: 'urn:example:key:weak', publicKey: IDENTITY})))).toMatchObject(
      {reason: 'public-key-identity'},
    )
    expect(refusal(() => addBinding(reg, binding({keyId: 'urn:example:key:weak', publicKey: 'AAAA'})))).toMatchObject({
      reason: 'public-key-wrong-length',
    })
    expect(addBinding(reg, binding({keyId: 'urn:example:key:strong', publicKey: K3})).bindings).toHaveLength(3)
  })

  it('C14: refuses reusing a key ID for another Principal or key (key-id-rebinding)', () => {
    const reg = base()
    expect(refusal(() => addBinding(reg, binding({publicKey: K3})))).toMatchObject({
      reason: 'key-id-rebinding',
      malformed: false,
    })
    expect(
      refusal(() => addBinding(reg, binding({principal: {type: 'agent', id: 'urn:example:agent:mallory'}}))),
    ).toMatchObject({reason: 'key-id-rebinding'})
    expect(refusal(() => addBinding(reg, binding({principal: {type: 'service', id: alice.id}})))).toMatchObject({
      reason: 'key-id-rebinding',
    })
    // Negative: a new key ID for new key material is fine.
    expect(addBinding(reg, binding({keyId: 'urn:example:key:alice-2', publicKey: K3})).bindings).toHaveLength(3)
  })

  it('refuses changing validFrom of a registered key ID (valid-from-changed)', () => {
    const reg = base()
    expect(refusal(() => addBinding(reg, binding({validFrom: T1})))).toMatchObject({reason: 'valid-from-changed'})
    // The same instant spelled differently is the same validFrom: an identical binding.
    expect(refusal(() => addBinding(reg, binding({validFrom: '2026-07-01T08:00:00+08:00'})))).toMatchObject({
      reason: 'binding-exists',
    })
  })

  it('C17: an identical re-add is a no-op refusal (binding-exists), while identical duplicate declarations in a file are accepted', () => {
    const reg = base()
    expect(refusal(() => addBinding(reg, binding()))).toMatchObject({reason: 'binding-exists', malformed: false})
    const dup: RegistrySnapshot = {...reg, bindings: [...reg.bindings, reg.bindings[0]!]}
    expect(isValid(dup)).toBe(true)
    const check = checkRegistry(dup, {at: T1})
    expect(check.valid).toBe(true)
    expect(check.bindings).toBe(2)
    expect(check.findings).toContainEqual(
      expect.objectContaining({severity: 'info', code: 'duplicate-declaration', keyId: 'urn:example:key:alice-1'}),
    )
    // Editing a file with duplicates keeps it valid and folds them in listings.
    const expired = expireKey(dup, 'urn:example:key:alice-1', T2, T1)
    expect(isValid(expired)).toBe(true)
    expect(describeBindings(expired, T1).find((r) => r.keyId === 'urn:example:key:alice-1')).toMatchObject({
      declarations: 2,
      validUntil: T2,
      historyRecords: 1,
    })
  })

  it('C15: refuses the same public key under another Principal (public-key-reuse)', () => {
    const reg = base()
    expect(
      refusal(() => addBinding(reg, binding({keyId: 'urn:example:key:bob-2', principal: bob, publicKey: K1}))),
    ).toMatchObject({reason: 'public-key-reuse', malformed: false})
    expect(
      refusal(() =>
        addBinding(
          reg,
          binding({keyId: 'urn:example:key:svc', principal: {type: 'service', id: alice.id}, publicKey: K1}),
        ),
      ),
    ).toMatchObject({reason: 'public-key-reuse'})
    expect(
      addBinding(reg, binding({keyId: 'urn:example:key:bob-2', principal: bob, publicKey: K3})).bindings,
    ).toHaveLength(3)
  })

  it('C16: refuses a key-ID alias for the same Principal and key (key-alias)', () => {
    const reg = base()
    const r = refusal(() => addBinding(reg, binding({keyId: 'urn:example:key:alice-1-alias'})))
    expect(r).toMatchObject({reason: 'key-alias', malformed: false})
    expect(r.message).toContain('urn:example:key:alice-1')
  })

  it('refuses to edit a registry that is itself invalid (registry-invalid)', () => {
    const reg = base()
    const broken = JSON.parse(JSON.stringify(reg)) as RegistrySnapshot
    broken.bindings[1]!.publicKey = K1 // public-key reuse already in the file
    const r = refusal(() => addBinding(broken, binding({keyId: 'urn:example:key:new', publicKey: K3})))
    expect(r).toMatchObject({reason: 'registry-invalid', malformed: false})
    expect(r.message).toContain('public-key-reuse')
    expect(refusal(() => expireKey(broken, 'urn:example:key:alice-1', T1, T1)).reason).toBe('registry-invalid')
    expect(refusal(() => addBinding({organizationId: 'relative'} as never, binding())).reason).toBe('registry-invalid')
    expect(
      refusal(() =>
        parseRegistryBytes(Buffer.from('{"organizationId":"urn:a:b","organizationId":"urn:a:c","bindings":[]}')),
      ).reason,
    ).toBe('registry-invalid')
    expect(refusal(() => parseRegistryBytes(Buffer.from('\ufeff{}'))).reason).toBe('registry-invalid')
  })
})

describe('expireKey / revokeKey', () => {
  const KEY = 'urn:example:key:alice-1'

  it('appends contiguous records and keeps earlier records unchanged (C18)', () => {
    const r1 = expireKey(base(), KEY, T3, T1)
    const r2 = revokeKey(r1, KEY, T2, T1) // same recordedAt is allowed (non-decreasing)
    const r3 = expireKey(r2, KEY, T2, '2026-08-02T00:00:00Z')
    const history = r3.bindings[0]!.validityHistory
    expect(history).toEqual([
      {sequence: 1, recordedAt: T1, validUntil: T3},
      {sequence: 2, recordedAt: T1, revokedAt: T2},
      {sequence: 3, recordedAt: '2026-08-02T00:00:00Z', validUntil: T2},
    ])
    expect(r3.bindings[1]).toEqual(base().bindings[1]) // other bindings untouched
    expect(isValid(r3)).toBe(true)
  })

  it('C18: history that is not contiguous or is rewritten fails validation', () => {
    const reg = expireKey(expireKey(base(), KEY, T3, T1), KEY, T2, T1)
    const gap = JSON.parse(JSON.stringify(reg)) as RegistrySnapshot
    gap.bindings[0]!.validityHistory[1]!.sequence = 3
    expect((validateSnapshot(gap, 'x') as RegistryFault).reason).toBe('history-not-contiguous')
    // The same key declared again with a rewritten record 1.
    const rewritten = JSON.parse(JSON.stringify(reg)) as RegistrySnapshot
    const copy = JSON.parse(JSON.stringify(reg.bindings[0])) as RegistrySnapshot['bindings'][0]
    copy.validityHistory[0]!.validUntil = '2026-12-01T00:00:00Z'
    rewritten.bindings.push(copy)
    expect((validateSnapshot(rewritten, 'x') as RegistryFault).reason).toBe('history-rewritten')
    // An edit on such a file is refused as registry-invalid.
    expect(refusal(() => revokeKey(gap, KEY, T1, T2)).reason).toBe('registry-invalid')
  })

  it('C18: refuses a recordedAt earlier than the previous record (history-recorded-at-decreasing)', () => {
    const reg = expireKey(base(), KEY, T3, T2)
    expect(refusal(() => revokeKey(reg, KEY, T2, T1))).toMatchObject({
      reason: 'history-recorded-at-decreasing',
      malformed: false,
    })
    // Compared as instants: 2026-09-01T07:00:00+08:00 is before T2 (2026-09-01T00:00:00Z).
    expect(refusal(() => revokeKey(reg, KEY, T2, '2026-09-01T07:00:00+08:00')).reason).toBe(
      'history-recorded-at-decreasing',
    )
    expect(revokeKey(reg, KEY, T2, '2026-09-01T08:00:00+08:00').bindings[0]!.validityHistory).toHaveLength(2)
  })

  it('C19: a boundary may only move earlier; the earliest is effective', () => {
    for (const [edit, field] of [
      [expireKey, 'validUntil'],
      [revokeKey, 'revokedAt'],
    ] as const) {
      const first = edit(base(), KEY, T2, T1)
      expect(refusal(() => edit(first, KEY, T3, T1))).toMatchObject({
        reason: 'history-boundary-moved-later',
        malformed: false,
      })
      const earlier = edit(first, KEY, '2026-08-15T00:00:00Z', T1)
      const row = describeBindings(earlier, T1).find((r) => r.keyId === KEY)!
      expect(row[field]).toBe('2026-08-15T00:00:00Z')
      // Moving later than the effective value fails even when it is earlier than the first value.
      expect(refusal(() => edit(earlier, KEY, '2026-08-20T00:00:00Z', T1)).reason).toBe('history-boundary-moved-later')
    }
    // validUntil and revokedAt are independent boundaries.
    const both = revokeKey(expireKey(base(), KEY, T2, T1), KEY, T3, T1)
    expect(describeBindings(both, T1)[0]).toMatchObject({validUntil: T2, revokedAt: T3})
  })

  it('C19: an edited file that moved a boundary later is refused by validation', () => {
    const moved = expireKey(base(), KEY, T2, T1)
    moved.bindings[0]!.validityHistory.push({sequence: 2, recordedAt: T1, validUntil: T3})
    expect((validateSnapshot(moved, 'x') as RegistryFault).reason).toBe('history-boundary-moved-later')
  })

  it('refuses setting a boundary to its current instant (boundary-unchanged)', () => {
    const reg = expireKey(base(), KEY, T2, T1)
    expect(refusal(() => expireKey(reg, KEY, T2, T1))).toMatchObject({reason: 'boundary-unchanged', malformed: false})
    expect(refusal(() => expireKey(reg, KEY, '2026-09-01T08:00:00+08:00', T1)).reason).toBe('boundary-unchanged')
    expect(refusal(() => expireKey(reg, KEY, '2026-09-01T00:00:00.000Z', T1)).reason).toBe('boundary-unchanged')
    // The other boundary at the same instant is a real change.
    expect(revokeKey(reg, KEY, T2, T1).bindings[0]!.validityHistory).toHaveLength(2)
  })

  it('refuses an unknown key ID (key-unknown), including on an empty registry', () => {
    expect(refusal(() => expireKey(base(), 'urn:example:key:nobody', T2, T1))).toMatchObject({
      reason: 'key-unknown',
      malformed: false,
    })
    expect(refusal(() => revokeKey(initRegistry(ORG), KEY, T2, T1)).reason).toBe('key-unknown')
  })

  it('refuses malformed timestamps (history-time-invalid)', () => {
    expect(refusal(() => expireKey(base(), KEY, 'tomorrow', T1))).toMatchObject({
      reason: 'history-time-invalid',
      malformed: true,
    })
    expect(refusal(() => revokeKey(base(), KEY, T2, '2026-02-30T00:00:00Z'))).toMatchObject({
      reason: 'history-time-invalid',
      malformed: true,
    })
  })

  it('is pure', () => {
    const reg = base()
    const before = serializeRegistry(reg)
    expireKey(reg, KEY, T2, T1)
    revokeKey(reg, KEY, T2, T1)
    expect(serializeRegistry(reg)).toBe(before)
  })
})

describe('parsePrincipal', () => {
  it('splits TYPE:URI on the first colon', () => {
    expect(parsePrincipal('agent:urn:example:agent:alice')).toEqual({type: 'agent', id: 'urn:example:agent:alice'})
    expect(parsePrincipal('service:https://example.com/svc')).toEqual({type: 'service', id: 'https://example.com/svc'})
  })
  it('refuses unknown types, missing colons and bad URIs', () => {
    expect(refusal(() => parsePrincipal('robot:urn:x:y')).reason).toBe('principal-invalid')
    expect(refusal(() => parsePrincipal('agent')).reason).toBe('principal-invalid')
    expect(refusal(() => parsePrincipal('agent:relative/path')).reason).toBe('principal-id-invalid')
  })
})

describe('describeBindings', () => {
  it('reports status at an instant with half-open intervals', () => {
    const reg = revokeKey(expireKey(base(), 'urn:example:key:alice-1', T2, T1), 'urn:example:key:bob-1', T1, T1)
    const at = (t: string) => Object.fromEntries(describeBindings(reg, t).map((r) => [r.keyId, r.status]))
    expect(at('2026-06-30T23:59:59.999Z')).toEqual({
      'urn:example:key:alice-1': 'not-yet-valid',
      'urn:example:key:bob-1': 'not-yet-valid',
    })
    expect(at(T0)).toEqual({'urn:example:key:alice-1': 'valid', 'urn:example:key:bob-1': 'valid'})
    expect(at(T1)).toEqual({'urn:example:key:alice-1': 'valid', 'urn:example:key:bob-1': 'revoked'})
    expect(at(T2)).toEqual({'urn:example:key:alice-1': 'expired', 'urn:example:key:bob-1': 'revoked'})
    expect(describeBindings(initRegistry(ORG), T0)).toEqual([])
  })
})

describe('checkRegistry', () => {
  it('reports an empty registry as not yet usable (registry-empty)', () => {
    const c = checkRegistry(initRegistry(ORG))
    expect(c).toMatchObject({valid: false, organizationId: ORG, fault: {reason: 'registry-empty'}})
  })

  it('reports the validateSnapshot fault as the single error', () => {
    const reg = base()
    reg.bindings[1]!.publicKey = K1
    const c = checkRegistry(reg)
    expect(c.valid).toBe(false)
    expect(c.fault?.reason).toBe('public-key-reuse')
    expect(c.findings).toEqual([expect.objectContaining({severity: 'error', code: 'public-key-reuse'})])
  })

  it('warns about expired, revoked, never-valid keys and empty records; notes the rest', () => {
    let reg = base()
    reg = addBinding(reg, binding({keyId: 'urn:example:key:late', publicKey: K3, validFrom: T3}))
    reg = expireKey(reg, 'urn:example:key:alice-1', T1, T1)
    reg = revokeKey(reg, 'urn:example:key:bob-1', '2026-07-15T00:00:00Z', T1) // retroactive
    reg = expireKey(reg, 'urn:example:key:late', T2, T2) // ends before it starts
    reg.bindings[0]!.validityHistory.push({sequence: 2, recordedAt: T2}) // neither boundary
    reg.bindings[0]!.validityHistory.push({sequence: 3, recordedAt: T2, validUntil: T1}) // no effect
    const c = checkRegistry(reg, {at: T1})
    expect(c.valid).toBe(true)
    const codes = c.findings.map((f) => `${f.severity}:${f.code}:${f.keyId}`)
    expect(codes).toEqual(
      expect.arrayContaining([
        'warning:key-expired:urn:example:key:alice-1',
        'warning:key-revoked:urn:example:key:bob-1',
        'info:key-not-yet-valid:urn:example:key:late',
        'warning:key-never-valid:urn:example:key:late',
        'warning:history-record-empty:urn:example:key:alice-1',
        'info:history-record-no-effect:urn:example:key:alice-1',
        'info:boundary-retroactive:urn:example:key:bob-1',
      ]),
    )
    // A clean registry has no findings.
    expect(checkRegistry(base(), {at: T1}).findings).toEqual([])
  })

  describe.skipIf(!HAVE_UPSTREAM)('upstream registry fixtures', () => {
    const dir = join(UPSTREAM, 'cryptography', 'keys')
    const INVALID: Record<string, string> = {
      'registry-key-alias.json': 'key-alias',
      'registry-organization-id-relative-reference.json': 'organization-id-invalid',
      'registry-public-key-cross-principal-reuse.json': 'public-key-reuse',
      'registry-public-key-rebinding.json': 'key-id-rebinding',
      'registry-selected-service-principal-id-iri-only.json': 'principal-id-invalid',
      'registry-unrelated-key-id-trailing-line-feed.json': 'key-id-invalid',
      'registry-unrelated-principal-id-malformed-percent.json': 'principal-id-invalid',
    }
    const VALID = [
      'registry-valid.json',
      'registry-timestamp-casing-and-offset-bounds.json',
      'registry-timestamp-fractional-precision.json',
      'registry-key-not-yet-valid.json',
      'registry-valid-until-equality.json',
      'registry-revoked-at-equality.json',
      'registry-wrong-principal.json',
    ]
    const load = (f: string) => parseRegistryBytes(readFileSync(join(dir, f)))

    it('reports every registry-level failure as invalid', () => {
      const files = readdirSync(dir).filter((f) => f.startsWith('registry-') && f.endsWith('.json'))
      expect(files.length).toBeGreaterThanOrEqual(24)
      for (const f of files) {
        if (VALID.includes(f)) continue
        const c = checkRegistry(load(f))
        expect(c.valid, f).toBe(false)
        if (INVALID[f]) expect(c.fault?.reason, f).toBe(INVALID[f])
        else expect(f).toMatch(/^registry-public-key-/)
        if (f.startsWith('registry-public-key-') && !INVALID[f]) expect(c.fault?.reason, f).toMatch(/^public-key-/)
      }
    })

    it('accepts the registries that fail only for a particular document', () => {
      for (const f of VALID) expect(checkRegistry(load(f)).valid, f).toBe(true)
    })

    it('can extend the upstream valid registry, and the edited file is still accepted', () => {
      const reg = load('registry-valid.json') as RegistrySnapshot
      const edited = revokeKey(
        addBinding(reg, binding({keyId: 'urn:example:key:new', validFrom: T0})),
        'urn:missionweaveprotocol:key:crypto-vector-rfc8032-1',
        '2026-07-15T12:00:00Z',
        '2026-07-16T00:00:00Z',
      )
      expect(checkRegistry(edited).valid).toBe(true)
      // The existing binding's first record is untouched; the new record is appended.
      expect(edited.bindings[0]!.validityHistory).toEqual([
        {sequence: 1, recordedAt: '2026-07-16T00:00:00Z', validUntil: '2026-07-16T00:00:00Z'},
        {sequence: 2, recordedAt: '2026-07-16T00:00:00Z', revokedAt: '2026-07-15T12:00:00Z'},
      ])
      // validUntil given with an offset is compared as an instant: 2026-07-16T08:00:00+08:00 is the same.
      expect(
        refusal(() =>
          expireKey(
            reg,
            'urn:missionweaveprotocol:key:crypto-vector-rfc8032-1',
            '2026-07-16T08:00:00+08:00',
            '2026-07-16T00:00:00Z',
          ),
        ).reason,
      ).toBe('boundary-unchanged')
      // An upstream key under another key ID is an alias.
      expect(
        refusal(() =>
          addBinding(
            reg,
            binding({
              keyId: 'urn:example:key:alias',
              principal: {type: 'agent', id: 'urn:missionweaveprotocol:agent:developer-one'},
              publicKey: '7D-keB5WWULuPx53Zwf9j2JVLLTq4btqsJE1ubL66Vk',
            }),
          ),
        ).reason,
      ).toBe('key-alias')
    })
  })
})

describe('registry files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-registry-edit-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('writes new files without overwriting unless forced', () => {
    const path = join(dir, 'new.json')
    writeNewRegistryFile(path, initRegistry(ORG), false)
    expect(readFileSync(path, 'utf8')).toBe(`{\n  "organizationId": "${ORG}",\n  "bindings": []\n}\n`)
    expect(() => writeNewRegistryFile(path, initRegistry('urn:example:other'), false)).toThrow(RegistryFileError)
    expect(readFileSync(path, 'utf8')).toContain(ORG)
    writeNewRegistryFile(path, initRegistry('urn:example:other'), true)
    expect(readRegistryFile(path).organizationId).toBe('urn:example:other')
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([])
  })

  it('applies an edit atomically and leaves the file byte-identical when it is refused', () => {
    const path = join(dir, 'edit.json')
    writeFileSync(path, serializeRegistry(base()))
    const {after} = editRegistryFile(path, (reg) => expireKey(reg, 'urn:example:key:alice-1', T2, T1))
    expect(readFileSync(path, 'utf8')).toBe(serializeRegistry(after))
    const bytes = readFileSync(path)
    for (const edit of [
      (reg: RegistrySnapshot) => expireKey(reg, 'urn:example:key:alice-1', T3, T1),
      (reg: RegistrySnapshot) => addBinding(reg, binding({keyId: 'urn:example:key:alias'})),
      (reg: RegistrySnapshot) => addBinding(reg, binding({publicKey: K3})),
    ]) {
      expect(() => editRegistryFile(path, edit)).toThrow(RegistryEditError)
      expect(readFileSync(path).equals(bytes)).toBe(true)
    }
    expect(existsSync(`${path}.lock`)).toBe(false)
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([])
  })

  it('keeps the member order and bytes of untouched bindings (upstream file style)', () => {
    const path = join(dir, 'order.json')
    const text =
      '{\n  "bindings": [\n    {\n      "validityHistory": [],\n      "validFrom": "2026-07-01T00:00:00Z",\n      "publicKey": "' +
      K1 +
      '",\n      "algorithm": "Ed25519",\n      "principal": {"id": "urn:example:agent:alice", "type": "agent"},\n      "keyId": "urn:example:key:alice-1"\n    }\n  ],\n  "organizationId": "' +
      ORG +
      '"\n}\n'
    writeFileSync(path, text)
    const {after} = editRegistryFile(path, (reg) =>
      addBinding(reg, binding({keyId: 'urn:example:key:bob-1', principal: bob, publicKey: K2})),
    )
    expect(Object.keys(after)).toEqual(['bindings', 'organizationId'])
    expect(Object.keys(after.bindings[0]!)).toEqual([
      'validityHistory',
      'validFrom',
      'publicKey',
      'algorithm',
      'principal',
      'keyId',
    ])
  })

  it('refuses to edit while another edit holds the lock, and to edit an unreadable or invalid file', () => {
    const path = join(dir, 'locked.json')
    writeFileSync(path, serializeRegistry(base()))
    const bytes = readFileSync(path)
    writeFileSync(`${path}.lock`, '12345\n')
    let failure: unknown
    try {
      editRegistryFile(path, (reg) => expireKey(reg, 'urn:example:key:alice-1', T2, T1))
    } catch (e) {
      failure = e
    }
    expect(classifyEditFailure(failure)).toMatchObject({kind: 'environment', reason: 'locked'})
    expect(readFileSync(path).equals(bytes)).toBe(true)
    expect(existsSync(`${path}.lock`)).toBe(true) // someone else's lock is left alone
    rmSync(`${path}.lock`)

    try {
      editRegistryFile(join(dir, 'missing.json'), (reg) => reg)
    } catch (e) {
      failure = e
    }
    expect(classifyEditFailure(failure)).toMatchObject({kind: 'environment', reason: 'io-error'})

    const bad = join(dir, 'bad.json')
    writeFileSync(bad, '{"organizationId": "urn:a:b", "bindings": [], "bindings": []}')
    try {
      editRegistryFile(bad, (reg) => addBinding(reg, binding()))
    } catch (e) {
      failure = e
    }
    expect(classifyEditFailure(failure)).toMatchObject({kind: 'rejected', reason: 'registry-invalid'})
    expect(classifyEditFailure(new Error('other'))).toBeUndefined()
  })
})
