// Our cryptography bundle (`cryptography/`), in the upstream manifest format:
//   - a profile matrix: the nine development documents, every `verified` field computed;
//   - a golden Command with JCS edge content, plus a re-serialized copy of it;
//   - a JCS canonicalization vector checked by hand;
//   - failure vectors: targeted mutations of the golden Command (or of its Registry), at least one
//     per verification stage, each naming the case it was derived from.

import {createHash} from 'node:crypto'
import {publicKeyFromSeed, signEd25519} from '../../src/crypto/ed25519.js'
import {serializeKeyFile} from '../../src/crypto/keyfile.js'
import {canonicalBytes, canonicalHash, canonicalize} from '../../src/json/jcs.js'
import type {JsonObject} from '../../src/json/parse.js'
import {DOCUMENT_KINDS, type DocumentKind, PROFILES} from '../../src/signing/profiles.js'
import {type Signed, sign} from '../../src/signing/sign.js'
import {
  MANIFEST_SCHEMA_ID,
  MANIFEST_SCHEMA_PATH,
  REGISTRY_FIXTURE_SCHEMA_PATH,
  SIGNING_KEY_FIXTURE_SCHEMA_PATH,
  manifestSchema,
  registryFixtureSchema,
  signingKeyFixtureSchema,
} from './bundle-schemas.js'
import {JCS_INPUT, checkedJcs} from './canonicalization.js'
import {
  EVIDENCE_ID,
  type DocumentSet,
  GROUP,
  PATCH_HASH,
  SIGNER,
  TEST_REPORT_HASH,
  WORK_CONVERSATION,
  WORK_ITEM,
  uuid,
} from './documents.js'
import {
  IDENTITY,
  NEGATIVE_ZERO,
  OFF_CURVE,
  ORDER_8,
  Y_ABOVE_P,
  Y_EQUALS_P,
  expectKeyFault,
  expectSignatureFault,
  mixedOrder,
  sPlusL,
  withR,
} from './ed25519-faults.js'
import {
  type Binding,
  type IdentityName,
  type Registry,
  bindingPrincipal,
  devRegistry,
  keyOf,
  principalOf,
} from './identities.js'
import {type Stage, WIRE_CODE} from '../../src/signing/verify.js'
import {
  type GeneratedFile,
  b64url,
  clone,
  edited,
  escapeNonAscii,
  jsonText,
  replaceOnce,
  reverseMembers,
  seedFor,
  setUnusedPadBit,
} from './util.js'

const KEYS = 'cryptography/keys'
const VALID = 'cryptography/vectors/signed-documents/valid'
const INVALID = 'cryptography/vectors/signed-documents/invalid'
const JCS = 'cryptography/vectors/canonicalization'
const REGISTRY_VALID = `${KEYS}/registry-valid.json`

const GOLDEN_CASE = 'accept.command.golden'
const MATRIX_CASE = 'accept.profile-matrix.dev-nine'
/** Protected signed time of the golden Command. */
const T = '2026-07-03T12:00:00Z'

// ---------------------------------------------------------------------------------------------
// The golden Command

function goldenUnsigned(): JsonObject {
  return {
    protocolVersion: '0.1',
    actionId: uuid(101),
    actor: principalOf('coordinator'),
    sessionEpoch: 3,
    membershipEpoch: 2,
    coordinatorEpoch: 1,
    groupId: GROUP,
    conversationId: WORK_CONVERSATION,
    workItemId: WORK_ITEM,
    kind: 'work.accept_result',
    expectedRevision: 21,
    correlationId: uuid(102),
    causedByEventId: uuid(103),
    issuedAt: T,
    payload: {
      artifactHashes: [PATCH_HASH],
      evidenceIds: [EVIDENCE_ID],
      signature: 'a payload member named signature is signed like any other member',
    },
    extensions: {
      'urn:mwp:dev:extension:vector-notes': {
        version: '1.0.0',
        critical: false,
        data: {
          negativeZero: -0,
          large: 1e30,
          tiny: 1e-7,
          repeating: 333333333.3333333,
          maxSafeInteger: 9007199254740991,
          text: 'Grüße aus Köln 🚀',
          nested: {signature: 'a nested member named signature is signed too'},
          '\ue000': 'private use U+E000',
          '😀': 'supplementary plane U+1F600',
          list: [3, 2, 1],
          enabled: true,
          nothing: null,
        },
      },
    },
  }
}

/**
 * The golden file text: pretty JSON, but with number and string spellings that differ from their
 * JCS form, so the signing bytes can only be reproduced by canonicalizing the parsed values.
 */
function goldenSpelling(doc: JsonObject): string {
  let text = jsonText(doc)
  text = replaceOnce(text, '"negativeZero": 0,', '"negativeZero": -0.0,')
  text = replaceOnce(text, '"large": 1e+30,', '"large": 1E30,')
  text = replaceOnce(text, '"tiny": 1e-7,', '"tiny": 0.00000010,')
  text = replaceOnce(text, '"repeating": 333333333.3333333,', '"repeating": 333333333.33333329,')
  text = replaceOnce(text, '"text": "Grüße aus Köln 🚀"', escapeNonAscii('"text": "Grüße aus Köln 🚀"'))
  text = replaceOnce(text, '"\ue000":', '"\\ue000":')
  return text
}

/** A signature over the content of `doc` (its top-level signature omitted) by `signer`, without any checks. */
function resign(doc: JsonObject, signer: IdentityName, keyId = keyOf(signer).keyId): JsonObject {
  const {signature: _old, ...content} = doc
  const value = b64url(signEd25519(keyOf(signer).seed, canonicalBytes(content)))
  const envelope = doc.signature as JsonObject
  return {...content, signature: {...envelope, keyId, value}}
}

/** The golden signed Command with `edit` applied (re-signed by the coordinator when `resigned`). */
function mutant(golden: JsonObject, edit: (doc: JsonObject) => void, options: {resigned?: boolean} = {}): JsonObject {
  const doc = edited(golden, edit)
  return options.resigned ? resign(doc, 'coordinator') : doc
}

/** The golden document with its signature value replaced by crafted bytes. */
function withSignature(golden: JsonObject, signature: Uint8Array | string): JsonObject {
  return mutant(golden, (d) => {
    ;(d.signature as JsonObject).value = typeof signature === 'string' ? signature : b64url(signature)
  })
}

const setTime =
  (text: string, createdAt = text) =>
  (d: JsonObject) => {
    d.issuedAt = text
    ;(d.signature as JsonObject).createdAt = createdAt
  }

const data = (d: JsonObject): JsonObject =>
  ((d.extensions as JsonObject)['urn:mwp:dev:extension:vector-notes'] as JsonObject).data as JsonObject

// ---------------------------------------------------------------------------------------------
// Registry variants

function registryWith(edit: (r: Registry, coordinator: Binding) => void): Registry {
  const r = devRegistry()
  const coordinator = r.bindings.find((b) => b.keyId === keyOf('coordinator').keyId)!
  edit(r, coordinator)
  return r
}

const unrelated = (r: Registry): Binding => r.bindings.find((b) => b.keyId === keyOf('reviewer').keyId)!

/** Registries under which the golden Command must still verify. */
function acceptingRegistries(): Record<string, Registry> {
  return {
    // t = validFrom exactly, spelled with lowercase t/z; effective validUntil is t + 1 ns and
    // effective revokedAt t + 10^-21 s, both written with ±23:59 offsets; validUntil moves earlier.
    'interval-edges': registryWith((_, c) => {
      c.validFrom = '2026-07-03t12:00:00z'
      c.validityHistory = [
        {sequence: 1, recordedAt: '2026-07-02T12:01:00+23:59', validUntil: '2026-07-10T00:00:00Z'},
        {
          sequence: 2,
          recordedAt: '2026-07-01T12:02:00.5-23:59',
          validUntil: '2026-07-04T11:59:00.000000001+23:59',
          revokedAt: '2026-07-02T12:01:00.000000000000000000001-23:59',
        },
      ]
    }),
    // The same binding declared twice (another card or registry version) is one logical binding.
    'repeated-identical-binding': registryWith((r, c) => {
      r.bindings.push(clone(c))
    }),
  }
}

interface RejectingRegistry {
  file: string
  fault: string
  registry: Registry
}

/** Registries that must make the golden Command fail key resolution. */
function rejectingRegistries(): RejectingRegistry[] {
  const coordinatorKey = keyOf('coordinator').publicKey
  const reg = (file: string, fault: string, edit: (r: Registry, c: Binding) => void): RejectingRegistry => ({
    file,
    fault,
    registry: registryWith(edit),
  })
  const publicKey = (file: string, fault: string, value: string): RejectingRegistry =>
    reg(file, fault, (_, c) => {
      c.publicKey = value
    })
  const crafted = (raw: Uint8Array, fault: string) => b64url(expectKeyFault(raw, fault))
  return [
    // validity interval at the protected time (compared as instants)
    reg('key-not-yet-valid', 'key-not-yet-valid', (_, c) => {
      c.validFrom = '2026-07-03T20:00:00.000000001+08:00' // t + 1 ns
    }),
    reg('valid-until-equality', 'valid-until-equals-protected-time', (_, c) => {
      c.validityHistory = [{sequence: 1, recordedAt: '2026-07-02T00:00:00Z', validUntil: '2026-07-03T14:00:00+02:00'}]
    }),
    reg('revoked-at-equality', 'revoked-at-equals-protected-time', (_, c) => {
      c.validityHistory = [{sequence: 1, recordedAt: '2026-07-03T12:30:00Z', revokedAt: '2026-07-03T12:00:00.000Z'}]
    }),
    reg('wrong-principal', 'wrong-principal-binding', (_, c) => {
      c.principal = bindingPrincipal('developer')
    }),
    // Organization-wide binding invariants
    reg('key-alias', 'key-id-alias', (r, c) => {
      r.bindings.push({...clone(c), keyId: 'urn:mwp:dev:key:coordinator-alias'})
    }),
    reg('public-key-rebinding', 'key-id-rebound-to-other-public-key', (r, c) => {
      r.bindings.push({...clone(c), publicKey: rebindingKey()})
    }),
    reg('principal-rebinding', 'key-id-rebound-to-other-principal', (r, c) => {
      r.bindings.push({...clone(c), principal: bindingPrincipal('reviewer')})
    }),
    reg('public-key-cross-principal-reuse', 'public-key-reused-by-other-principal', (r, c) => {
      r.bindings.push({...clone(c), keyId: 'urn:mwp:dev:key:reviewer-2', principal: bindingPrincipal('reviewer')})
    }),
    // one invalid unrelated binding fails every verification against the evidence
    reg('unrelated-key-id-trailing-line-feed', 'unrelated-key-id-trailing-line-feed', (r) => {
      unrelated(r).keyId += '\n'
    }),
    reg('unrelated-principal-id-malformed-percent', 'unrelated-principal-id-malformed-percent', (r) => {
      unrelated(r).principal.id = 'urn:mwp:dev:agent:review%GGer'
    }),
    reg('unrelated-public-key-small-order', 'unrelated-public-key-small-order', (r) => {
      unrelated(r).publicKey = crafted(ORDER_8, 'small-order')
    }),
    reg('organization-id-relative-reference', 'organization-id-relative-reference', (r) => {
      r.organizationId = 'org/example'
    }),
    // retained validity history
    reg('history-not-contiguous', 'validity-history-not-contiguous', (_, c) => {
      c.validityHistory = [{sequence: 2, recordedAt: '2026-07-02T00:00:00Z', validUntil: '2026-08-01T00:00:00Z'}]
    }),
    reg('history-recorded-at-decreasing', 'validity-history-recorded-at-decreasing', (_, c) => {
      c.validityHistory = [
        {sequence: 1, recordedAt: '2026-07-02T00:00:00Z', validUntil: '2026-08-01T00:00:00Z'},
        {sequence: 2, recordedAt: '2026-07-01T23:59:59.999Z', validUntil: '2026-07-20T00:00:00Z'},
      ]
    }),
    reg('history-valid-until-moved-later', 'validity-history-valid-until-moved-later', (_, c) => {
      c.validityHistory = [
        {sequence: 1, recordedAt: '2026-07-02T00:00:00Z', validUntil: '2026-08-01T00:00:00Z'},
        {sequence: 2, recordedAt: '2026-07-02T01:00:00Z', validUntil: '2026-09-01T00:00:00Z'},
      ]
    }),
    reg('valid-from-leap-second', 'registry-timestamp-leap-second', (_, c) => {
      c.validFrom = '2026-06-30T23:59:60Z'
    }),
    reg('valid-until-unknown-local-offset', 'registry-timestamp-unknown-local-offset', (_, c) => {
      c.validityHistory = [{sequence: 1, recordedAt: '2026-07-02T00:00:00Z', validUntil: '2026-08-01T00:00:00-00:00'}]
    }),
    // strict public-key decoding of the selected binding
    publicKey('public-key-identity', 'public-key-identity', crafted(IDENTITY, 'identity')),
    publicKey('public-key-small-order', 'public-key-small-order', crafted(ORDER_8, 'small-order')),
    publicKey('public-key-mixed-order', 'public-key-mixed-order', crafted(mixedOrder(coordinatorKey), 'mixed-order')),
    publicKey('public-key-negative-zero', 'public-key-negative-zero', crafted(NEGATIVE_ZERO, 'negative-zero')),
    publicKey('public-key-noncanonical', 'public-key-noncanonical', crafted(Y_ABOVE_P, 'noncanonical')),
    publicKey('public-key-y-equals-p', 'public-key-y-equals-p', crafted(Y_EQUALS_P, 'y-equals-p')),
    publicKey('public-key-off-curve', 'public-key-off-curve', crafted(OFF_CURVE, 'off-curve')),
    publicKey(
      'public-key-wrong-length',
      'public-key-wrong-length',
      crafted(coordinatorKey.subarray(0, 31), 'wrong-length'),
    ),
    publicKey('public-key-padded', 'public-key-padded-base64url', `${b64url(coordinatorKey)}=`),
    publicKey(
      'public-key-nonzero-unused-pad-bits',
      'public-key-nonzero-unused-pad-bits',
      setUnusedPadBit(b64url(coordinatorKey)),
    ),
  ]
}

/** A valid public key that no binding uses (seed "coordinator-rebound"): the rebinding target. */
function rebindingKey(): string {
  return b64url(publicKeyFromSeed(seedFor('coordinator-rebound')))
}

// ---------------------------------------------------------------------------------------------
// Manifest building blocks

interface Evaluation {
  profileId: DocumentKind
  document: string
  registry: string
  signingKey?: string
  fault: null | {id: string; basis: {caseId: string; profileId: DocumentKind}}
  expect: {stage: 'complete' | Stage; wireCode: string | null; verified?: object}
}

interface Case {
  id: string
  kind: 'single' | 'profile-matrix' | 'failure-matrix' | 'canonicalization'
  evaluations: object[]
}

class Bundle {
  readonly files = new Map<string, Buffer>()

  add(path: string, content: string | Buffer): string {
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content
    const existing = this.files.get(path)
    if (existing && !existing.equals(bytes)) throw new Error(`two different files generated at ${path}`)
    this.files.set(path, bytes)
    return path
  }

  registry(name: string, registry: Registry): string {
    return this.add(`${KEYS}/registry-${name}.json`, jsonText(registry))
  }

  signingKey(name: IdentityName): string {
    const {principal: _none, ...key} = keyOf(name)
    return this.add(`${KEYS}/signing-${name}.json`, serializeKeyFile({...key, testOnly: true}))
  }

  /** A complete evaluation with every `verified` field computed from the signed document. */
  complete(
    kind: DocumentKind,
    document: string,
    signed: Signed,
    signer: IdentityName,
    jcsName: string,
    registry = REGISTRY_VALID,
  ): Evaluation {
    const key = keyOf(signer)
    const doc = signed.document
    return {
      profileId: kind,
      document,
      registry,
      signingKey: this.signingKey(signer),
      fault: null,
      expect: {
        stage: 'complete',
        wireCode: null,
        verified: {
          keyId: key.keyId,
          principal: key.principal,
          protectedTime: doc[PROFILES[kind].timeField],
          signingBytes: this.add(`${JCS}/${jcsName}.signing.jcs`, signed.signingBytes),
          signingHash: signed.signingHash,
          signature: (doc.signature as JsonObject).value,
          signedDocumentHash: canonicalHash(doc),
        },
      },
    }
  }
}

function failure(
  fault: string,
  stage: Stage,
  document: string,
  registry = REGISTRY_VALID,
  basis: {caseId: string; profileId: DocumentKind} = {caseId: GOLDEN_CASE, profileId: 'command'},
): Evaluation {
  return {
    profileId: basis.profileId,
    document,
    registry,
    fault: {id: fault, basis},
    expect: {stage, wireCode: WIRE_CODE[stage]},
  }
}

const single = (id: string, evaluation: Evaluation): Case => ({id, kind: 'single', evaluations: [evaluation]})
const matrix = (id: string, evaluations: Evaluation[]): Case => ({id, kind: 'failure-matrix', evaluations})

function profilesSection(): object[] {
  return DOCUMENT_KINDS.map((kind) => {
    const p = PROFILES[kind]
    const s = p.signer
    const expectedSigner =
      s.rule === 'principal-object'
        ? {rule: s.rule, pointer: `/${s.field}`}
        : s.rule === 'agent-id'
          ? {rule: s.rule, idPointer: `/${s.path.join('/')}`}
          : {rule: s.rule}
    return {profileId: kind, schema: `schemas/${p.schema}`, protectedTimePointer: `/${p.timeField}`, expectedSigner}
  })
}

const sha256 = (bytes: Buffer | string): string => 'sha256:' + createHash('sha256').update(bytes).digest('hex')

// ---------------------------------------------------------------------------------------------
// The bundle

export function cryptographyBundle(docs: DocumentSet): GeneratedFile[] {
  const b = new Bundle()
  const cases: Case[] = []
  b.add(MANIFEST_SCHEMA_PATH, jsonText(manifestSchema()))
  b.add(REGISTRY_FIXTURE_SCHEMA_PATH, jsonText(registryFixtureSchema()))
  b.add(SIGNING_KEY_FIXTURE_SCHEMA_PATH, jsonText(signingKeyFixtureSchema()))
  b.registry('valid', devRegistry())

  // JCS edge cases, checked against a hand-written expectation.
  const expectedJcs = checkedJcs()
  cases.push({
    id: 'accept.canonicalization.jcs-edge-cases',
    kind: 'canonicalization',
    evaluations: [
      {
        input: b.add(`${JCS}/jcs-edge-cases-input.json`, JCS_INPUT),
        expectedJcs: b.add(`${JCS}/jcs-edge-cases.jcs`, expectedJcs),
        sha256: sha256(expectedJcs),
      },
    ],
  })

  // Golden Command and a re-serialization of it (same values, different bytes, same signature).
  const golden = sign('command', goldenUnsigned(), keyOf('coordinator'))
  const g = golden.document
  const goldenText = goldenSpelling(g)
  const goldenPath = b.add(`${VALID}/command-golden.json`, goldenText)
  cases.push(single(GOLDEN_CASE, b.complete('command', goldenPath, golden, 'coordinator', 'command-golden')))
  const reserialized = b.add(
    `${VALID}/command-golden-reserialized.json`,
    escapeNonAscii(JSON.stringify(reverseMembers(g))),
  )
  cases.push(
    single(
      'accept.command.reserialized-members-reversed-ascii-escaped',
      b.complete('command', reserialized, golden, 'coordinator', 'command-golden'),
    ),
  )

  // Profile matrix: the nine development documents exactly as in fixtures/documents/.
  cases.push({
    id: MATRIX_CASE,
    kind: 'profile-matrix',
    evaluations: DOCUMENT_KINDS.map((kind) =>
      b.complete(
        kind,
        b.add(`${VALID}/${kind}.json`, jsonText(docs.signed[kind].document)),
        docs.signed[kind],
        SIGNER[kind],
        kind,
      ),
    ),
  })

  // Registries under which the golden Command still verifies.
  for (const [name, registry] of Object.entries(acceptingRegistries())) {
    cases.push(
      single(
        `accept.key-resolution.${name}`,
        b.complete('command', goldenPath, golden, 'coordinator', 'command-golden', b.registry(name, registry)),
      ),
    )
  }

  const invalid = (name: string, content: string | Buffer | JsonObject): string =>
    b.add(`${INVALID}/${name}`, typeof content === 'string' || Buffer.isBuffer(content) ? content : jsonText(content))

  // Stage 1: byte-level faults in the golden text.
  // A 0xFF byte (never valid in UTF-8) inside the payload's "signature" string.
  const invalidUtf8 = Buffer.from(replaceOnce(goldenText, 'signed like any', 'signed\u0000like any'), 'utf8')
  invalidUtf8[invalidUtf8.indexOf(0)] = 0xff
  cases.push(
    matrix('reject.parse.byte-level-matrix', [
      failure(
        'utf8-bom',
        'parse',
        invalid('command-utf8-bom.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(goldenText)])),
      ),
      failure('trailing-data', 'parse', invalid('command-trailing-data.json', `${goldenText}{}\n`)),
      failure(
        'duplicate-decoded-member',
        'parse',
        invalid(
          'command-duplicate-decoded-member.json',
          replaceOnce(goldenText, '\n  "payload": {', '\n  "pay\\u006coad": {},\n  "payload": {'),
        ),
      ),
      failure('invalid-utf8', 'parse', invalid('command-invalid-utf8.bin', invalidUtf8)),
    ]),
  )

  // Stage 2: schema faults (re-signed where the signature would otherwise be a second fault).
  cases.push(
    matrix('reject.schema.validation-matrix', [
      failure(
        'timestamp-leap-second',
        'schema',
        invalid('command-leap-second.json', mutant(g, setTime('2026-07-03T11:59:60Z'), {resigned: true})),
      ),
      failure(
        'timestamp-year-zero',
        'schema',
        invalid('command-year-zero.json', mutant(g, setTime('0000-07-03T12:00:00Z'), {resigned: true})),
      ),
      failure(
        'timestamp-unknown-local-offset',
        'schema',
        invalid('command-unknown-local-offset.json', mutant(g, setTime('2026-07-03T12:00:00-00:00'), {resigned: true})),
      ),
      failure(
        'timestamp-invalid-gregorian-date',
        'schema',
        invalid('command-invalid-gregorian-date.json', mutant(g, setTime('2026-02-29T12:00:00Z'), {resigned: true})),
      ),
      failure(
        'unsupported-algorithm',
        'schema',
        invalid(
          'command-unsupported-algorithm.json',
          mutant(g, (d) => ((d.signature as JsonObject).algorithm = 'Ed448')),
        ),
      ),
      failure(
        'padded-signature-base64url',
        'schema',
        invalid(
          'command-padded-signature.json',
          mutant(g, (d) => ((d.signature as JsonObject).value += '==')),
        ),
      ),
      failure(
        'missing-signature',
        'schema',
        invalid(
          'command-missing-signature.json',
          mutant(g, (d) => delete d.signature),
        ),
      ),
      failure(
        'unknown-core-property',
        'schema',
        invalid(
          'command-unknown-core-property.json',
          mutant(g, (d) => (d.priority = 'high'), {resigned: true}),
        ),
      ),
      failure(
        'coordinator-kind-missing-coordinator-epoch',
        'schema',
        invalid(
          'command-missing-coordinator-epoch.json',
          mutant(g, (d) => delete d.coordinatorEpoch, {resigned: true}),
        ),
      ),
    ]),
  )

  // Stage 3: signature envelope.
  const sig = Buffer.from((g.signature as JsonObject).value as string, 'base64url')
  const badSig = (name: string, fault: string, bytes: Uint8Array, expected: string) =>
    failure(
      fault,
      'signature-envelope',
      invalid(`command-signature-${name}.json`, withSignature(g, expectSignatureFault(bytes, expected))),
    )
  cases.push(
    matrix('reject.signature-envelope.matrix', [
      failure(
        'protected-time-not-utc-z',
        'signature-envelope',
        invalid(
          'command-protected-time-not-utc-z.json',
          mutant(g, setTime('2026-07-03T12:00:00+00:00'), {resigned: true}),
        ),
      ),
      failure(
        'protected-time-lowercase-z',
        'signature-envelope',
        invalid(
          'command-protected-time-lowercase-z.json',
          mutant(g, setTime('2026-07-03T12:00:00z'), {resigned: true}),
        ),
      ),
      failure(
        'protected-time-created-at-mismatch',
        'signature-envelope',
        invalid('command-created-at-mismatch.json', mutant(g, setTime(T, '2026-07-03T12:00:00.000Z'))),
      ),
      failure(
        'signature-nonzero-unused-pad-bits',
        'signature-envelope',
        invalid('command-signature-nonzero-unused-pad-bits.json', withSignature(g, setUnusedPadBit(b64url(sig)))),
      ),
      badSig('wrong-length', 'signature-wrong-length', sig.subarray(0, 63), 'signature-wrong-length'),
      badSig('s-out-of-range', 'signature-s-plus-l', sPlusL(sig), 's-out-of-range'),
      badSig('r-noncanonical', 'signature-r-noncanonical', withR(sig, Y_ABOVE_P), 'r-noncanonical'),
      badSig('r-y-equals-p', 'signature-r-y-equals-p', withR(sig, Y_EQUALS_P), 'r-y-equals-p'),
      badSig('r-off-curve', 'signature-r-off-curve', withR(sig, OFF_CURVE), 'r-off-curve'),
      badSig('r-negative-zero', 'signature-r-negative-zero', withR(sig, NEGATIVE_ZERO), 'r-negative-zero'),
      badSig('r-small-order', 'signature-r-small-order', withR(sig, ORDER_8), 'r-small-order'),
      badSig('r-mixed-order', 'signature-r-mixed-order', withR(sig, mixedOrder(sig.subarray(0, 32))), 'r-mixed-order'),
    ]),
  )

  // Stage 4: documents naming the wrong, unknown or out-of-interval key.
  const asActor = (name: IdentityName, keyName: IdentityName) =>
    resign(
      edited(g, (d) => (d.actor = principalOf(name))),
      keyName,
    )
  const matrixBasis = (kind: DocumentKind) => ({caseId: MATRIX_CASE, profileId: kind})
  cases.push(
    matrix('reject.key-resolution.document-matrix', [
      failure(
        'unknown-key',
        'key-resolution',
        invalid(
          'command-unknown-key.json',
          mutant(g, (d) => ((d.signature as JsonObject).keyId = 'urn:mwp:dev:key:coordinator-2')),
        ),
      ),
      failure(
        'signer-not-actor',
        'key-resolution',
        invalid('command-signed-by-other-agent.json', resign(g, 'developer')),
      ),
      failure(
        'key-expired',
        'key-resolution',
        invalid('command-expired-key.json', asActor('developer', 'developer-expired')),
      ),
      failure(
        'key-revoked',
        'key-resolution',
        invalid('command-revoked-key.json', asActor('reviewer', 'reviewer-revoked')),
      ),
      failure(
        'agent-card-signer-not-service',
        'key-resolution',
        invalid('agent-card-signed-by-agent.json', resign(docs.signed['agent-card'].document, 'coordinator')),
        REGISTRY_VALID,
        matrixBasis('agent-card'),
      ),
      failure(
        'artifact-signer-not-producer',
        'key-resolution',
        invalid('artifact-signed-by-reviewer.json', resign(docs.signed.artifact.document, 'reviewer')),
        REGISTRY_VALID,
        matrixBasis('artifact'),
      ),
    ]),
  )
  // Stage 4: the unchanged golden Command against faulty Registry evidence.
  cases.push(
    matrix(
      'reject.key-resolution.registry-matrix',
      rejectingRegistries().map((r) => failure(r.fault, 'key-resolution', goldenPath, b.registry(r.file, r.registry))),
    ),
  )

  // Stage 5: values outside the JCS data model (syntactically valid JSON).
  cases.push(
    matrix('reject.canonicalization.data-model-matrix', [
      failure(
        'number-outside-finite-binary64',
        'canonicalization',
        invalid('command-number-1e400.json', replaceOnce(goldenText, '"large": 1E30', '"large": 1e400')),
      ),
      failure(
        'unpaired-surrogate-in-string',
        'canonicalization',
        invalid(
          'command-unpaired-surrogate.json',
          replaceOnce(goldenText, 'K\\u00f6ln \\ud83d\\ude80"', 'K\\u00f6ln \\ud800"'),
        ),
      ),
      failure(
        'unpaired-surrogate-in-member-name',
        'canonicalization',
        invalid('command-unpaired-surrogate-member-name.json', replaceOnce(goldenText, '"\\ue000":', '"\\udc00":')),
      ),
    ]),
  )

  // Stage 6: signature does not match the signing bytes.
  cases.push(
    matrix('reject.signature.equation-matrix', [
      failure(
        'payload-tamper',
        'signature',
        invalid(
          'command-payload-tamper.json',
          mutant(g, (d) => ((d.payload as JsonObject).artifactHashes = [TEST_REPORT_HASH])),
        ),
      ),
      failure(
        'payload-nested-signature-tamper',
        'signature',
        invalid(
          'command-payload-signature-tamper.json',
          mutant(g, (d) => ((d.payload as JsonObject).signature = 'tampered')),
        ),
      ),
      failure(
        'extension-nested-signature-tamper',
        'signature',
        invalid(
          'command-extension-signature-tamper.json',
          mutant(g, (d) => ((data(d).nested as JsonObject).signature = 'tampered')),
        ),
      ),
      failure(
        'protected-time-tamper',
        'signature',
        invalid('command-protected-time-tamper.json', mutant(g, setTime('2026-07-03T12:00:01Z'))),
      ),
      failure(
        'signed-by-other-key-under-this-key-id',
        'signature',
        invalid('command-signed-by-other-key.json', resign(g, 'developer', keyOf('coordinator').keyId)),
      ),
      failure(
        'identity-r-equation-mismatch',
        'signature',
        invalid(
          'command-signature-r-identity.json',
          withSignature(g, expectSignatureFault(withR(sig, IDENTITY), null)),
        ),
      ),
    ]),
  )

  // Manifest: every file above is an artifact; the digest covers the manifest without itself.
  const artifacts = [...b.files.keys()]
    .sort()
    .map((path) => ({path, byteLength: b.files.get(path)!.length, sha256: sha256(b.files.get(path)!)}))
  const manifest: Record<string, unknown> = {
    $schema: MANIFEST_SCHEMA_ID,
    manifestVersion: 1,
    protocolVersion: '0.1',
    profileId: 'missionweaveprotocol.signed-document-verification.v0.1',
    semanticStages: [
      'parse',
      'schema',
      'signature-envelope',
      'key-resolution',
      'canonicalization',
      'signature',
      'complete',
    ],
    fixtureSchemas: {registry: REGISTRY_FIXTURE_SCHEMA_PATH, signingKey: SIGNING_KEY_FIXTURE_SCHEMA_PATH},
    profiles: profilesSection(),
    artifacts,
    cases,
  }
  manifest.artifactDigest = sha256(canonicalize(manifest))
  b.add('cryptography/manifest.json', jsonText(manifest))
  return [...b.files].map(([path, bytes]) => ({path, bytes, mode: 0o644}))
}
