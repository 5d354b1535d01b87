// Our admission bundle (`admission/`), in the upstream manifest format (spec §6.4 "First-Admission
// Record", ACCEPTANCE D1-D16, N5, N6), for the development Organization:
//   - documents and the current Registry come from our cryptography bundle (pinned by its
//     artifactDigest); two historical Registries with a later expiry / revocation of the
//     coordinator key live under admission/registries/;
//   - First-Admission Records are written here field by field from the signed documents (never by
//     the implementation's candidate builder), as `JSON.stringify(record, null, 2) + "\n"` with
//     the nine fields in schema order, so a committed append checks the candidate bytes exactly;
//   - every evaluation scripts the Admission Log's lookup / append outcomes and the trusted
//     acceptance context, and names the protected reason an implementation must report.

import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {signEd25519} from '../../src/crypto/ed25519.js'
import {canonicalBytes, canonicalize} from '../../src/json/jcs.js'
import type {JsonObject} from '../../src/json/parse.js'
import {packageRoot} from '../../src/schema/catalog.js'
import {DOCUMENT_KINDS, type DocumentKind, PROFILES, type Principal} from '../../src/signing/profiles.js'
import {REGISTRY_FIXTURE_SCHEMA_PATH} from './bundle-schemas.js'
import {type DocumentSet, SIGNER} from './documents.js'
import {ORG, VALID_FROM, type Registry, bindingPrincipal, devRegistry, keyOf} from './identities.js'
import {type GeneratedFile, b64url, jsonText, replaceOnce, reverseMembers} from './util.js'
import type {AcceptanceContext} from '../../src/admission/log.js'
import {ADMISSION_REASONS, type AdmissionReason, type FirstAdmissionRecord} from '../../src/admission/record.js'

const CRYPTO_MANIFEST = 'cryptography/manifest.json'
const CRYPTO_VALID = 'cryptography/vectors/signed-documents/valid'
const REGISTRY_VALID = 'cryptography/keys/registry-valid.json'
const RECORDS_VALID = 'admission/records/valid'
const RECORDS_INVALID = 'admission/records/invalid'
const REGISTRIES = 'admission/registries'
const MANIFEST_SCHEMA_PATH = 'admission/manifest.schema.json'
const MANIFEST_SCHEMA_ID = 'https://mwp.dev.example/admission/0.1/manifest.schema.json'
const RECORD_SCHEMA_PATH = 'schemas/first-admission-record.schema.json'
/** Our normative schemas the record expectations depend on: pinned as artifacts, like upstream. */
const PINNED_SCHEMAS = ['schemas/common.schema.json', RECORD_SCHEMA_PATH]

const PROFILE_ID = 'missionweaveprotocol.first-admission-historical-trust.v0.1'
const WIRE_CODE = 'AUTH_INVALID_SIGNATURE'
type Reason = AdmissionReason

const LOOKUP_STATUSES = [
  'found',
  'authoritative-absence',
  'unauthenticated',
  'integrity-failed',
  'unavailable',
  'indeterminate',
] as const
const APPEND_STATUSES = [
  'committed',
  'existing',
  'conflict',
  'unauthenticated',
  'integrity-failed',
  'unavailable',
  'indeterminate',
  'commit-failed',
] as const
type LookupStatus = (typeof LOOKUP_STATUSES)[number]
type AppendStatus = (typeof APPEND_STATUSES)[number]

// ---------------------------------------------------------------------------------------------
// Time and identities

/** The admission service of the development Organization (fixtures/keys/admission.key.json). */
const ADMISSION = bindingPrincipal('admission')
/** Another authenticated Organization service: never the acceptor of these records. */
const OTHER_SERVICE = bindingPrincipal('group-authority')

/** A Z timestamp `seconds` after `time` (whole seconds, no fraction). */
function after(time: string, seconds: number): string {
  return new Date(Date.parse(time) + seconds * 1000).toISOString().replace('.000Z', 'Z')
}

/** The coordinator key's later expiry (after the golden Command was signed and admitted). */
const LATER_VALID_UNTIL = '2026-07-05T00:00:00Z'
/** The coordinator key's later revocation. */
const LATER_REVOKED_AT = '2026-07-05T12:00:00Z'

function coordinatorRegistry(history: Registry['bindings'][number]['validityHistory']): Registry {
  const r = devRegistry()
  const coordinator = r.bindings.find((b) => b.keyId === keyOf('coordinator').keyId)!
  coordinator.validityHistory = history
  return r
}

const laterExpiry = (): Registry =>
  coordinatorRegistry([{sequence: 1, recordedAt: VALID_FROM, validUntil: LATER_VALID_UNTIL}])
const laterRevocation = (): Registry =>
  coordinatorRegistry([
    {sequence: 1, recordedAt: VALID_FROM, validUntil: '2027-01-01T00:00:00Z'},
    {sequence: 2, recordedAt: '2026-07-05T12:30:00Z', revokedAt: LATER_REVOKED_AT},
  ])

// ---------------------------------------------------------------------------------------------
// Records

// The types only: records themselves are built field by field here, independently of
// candidateRecord(), so the committed-bytes check really tests the implementation.
type RecordFields = FirstAdmissionRecord

const recordId = (name: string): string => `urn:mwp:dev:admission-record:${name}`

/** The first admission context of a development document: five minutes after its protected time. */
function contextFor(
  docs: DocumentSet,
  kind: DocumentKind,
  name: string = kind,
  trustedAcceptedAt?: string,
  acceptedBy: Principal = ADMISSION,
): AcceptanceContext {
  const protectedTime = docs.signed[kind].document[PROFILES[kind].timeField] as string
  return {
    admissionRecordId: recordId(name),
    trustedAcceptedAt: trustedAcceptedAt ?? after(protectedTime, 300),
    acceptedBy: {...acceptedBy},
  }
}

/** The nine fields, in schema order, from the signed document and the acceptance context. */
function recordFor(docs: DocumentSet, kind: DocumentKind, context: AcceptanceContext): RecordFields {
  const key = keyOf(SIGNER[kind])
  return {
    protocolVersion: '0.1',
    admissionRecordId: context.admissionRecordId,
    organizationId: ORG,
    documentKind: kind,
    signingHash: docs.signed[kind].signingHash,
    keyId: key.keyId,
    principal: bindingPrincipal(SIGNER[kind]),
    trustedAcceptedAt: context.trustedAcceptedAt,
    acceptedBy: {type: context.acceptedBy.type, id: context.acceptedBy.id},
  }
}

// ---------------------------------------------------------------------------------------------
// Manifest building blocks

interface Outcome {
  status: string
  record?: string
  authenticatedService?: Principal
}

interface Evaluation {
  id: string
  profileId: DocumentKind
  mode: 'first-admission' | 'historical-replay'
  document: string
  registry: string
  trustedContext: AcceptanceContext | null
  lookup: Outcome
  append: Outcome | null
  expect:
    | {stage: 'complete'; wireCode: null; record: string}
    | {stage: 'admission'; wireCode: typeof WIRE_CODE; reason: Reason}
}

const documentPath = (kind: DocumentKind): string => `${CRYPTO_VALID}/${kind}.json`

const stored = (
  status: 'found' | 'committed' | 'existing',
  record: string,
  authenticatedService: Principal = ADMISSION,
): Outcome => ({
  status,
  record,
  authenticatedService: {...authenticatedService},
})
const bare = (status: LookupStatus | AppendStatus): Outcome => ({status})
const complete = (record: string): Evaluation['expect'] => ({stage: 'complete', wireCode: null, record})
const rejected = (reason: Reason): Evaluation['expect'] => ({stage: 'admission', wireCode: WIRE_CODE, reason})

interface Options {
  kind?: DocumentKind
  document?: string
  registry?: string
}

/** Historical replay: one lookup, never a trusted context or an append. */
function replay(id: string, lookup: Outcome, expect: Evaluation['expect'], o: Options = {}): Evaluation {
  const kind = o.kind ?? 'command'
  return {
    id,
    profileId: kind,
    mode: 'historical-replay',
    document: o.document ?? documentPath(kind),
    registry: o.registry ?? REGISTRY_VALID,
    trustedContext: null,
    lookup,
    append: null,
    expect,
  }
}

/** First admission whose lookup is not an authoritative absence: no context, no append. */
function admitAfterLookup(id: string, lookup: Outcome, expect: Evaluation['expect'], o: Options = {}): Evaluation {
  return {...replay(id, lookup, expect, o), mode: 'first-admission'}
}

/** First admission after an authoritative absence: a trusted context, then an append (or none). */
function admitAfterAbsence(
  id: string,
  trustedContext: AcceptanceContext,
  append: Outcome | null,
  expect: Evaluation['expect'],
  o: Options = {},
): Evaluation {
  return {...replay(id, bare('authoritative-absence'), expect, o), mode: 'first-admission', trustedContext, append}
}

const sha256 = (bytes: Buffer | string): string => 'sha256:' + createHash('sha256').update(bytes).digest('hex')

// ---------------------------------------------------------------------------------------------
// The bundle

/**
 * The admission bundle. `cryptography` is the generated cryptography bundle: its manifest is
 * pinned by digest and its documents and Registry are what the evaluations use.
 */
export function admissionBundle(docs: DocumentSet, cryptography: readonly GeneratedFile[]): GeneratedFile[] {
  const files = new Map<string, Buffer>()
  const add = (path: string, content: string | Buffer): string => {
    if (files.has(path)) throw new Error(`generated twice: ${path}`)
    files.set(path, typeof content === 'string' ? Buffer.from(content, 'utf8') : content)
    return path
  }
  const cryptoFile = (path: string): Buffer => {
    const f = cryptography.find((c) => c.path === path)
    if (!f) throw new Error(`admission: the cryptography bundle has no ${path}`)
    return f.bytes
  }
  const cryptoManifest = JSON.parse(cryptoFile(CRYPTO_MANIFEST).toString('utf8')) as {artifactDigest: string}
  for (const kind of DOCUMENT_KINDS) {
    if (!cryptoFile(documentPath(kind)).equals(Buffer.from(jsonText(docs.signed[kind].document))))
      throw new Error(`admission: ${documentPath(kind)} is not the development ${kind}`)
  }
  cryptoFile(REGISTRY_VALID)

  add(MANIFEST_SCHEMA_PATH, jsonText(admissionManifestSchema()))
  const expiryRegistry = add(`${REGISTRIES}/registry-later-expiry.json`, jsonText(laterExpiry()))
  const revocationRegistry = add(`${REGISTRIES}/registry-later-revocation.json`, jsonText(laterRevocation()))
  const record = (dir: string, name: string, content: RecordFields | JsonObject | string): string =>
    add(`${dir}/${name}.json`, typeof content === 'string' ? content : jsonText(content))

  const cases: {id: string; evaluations: Evaluation[]}[] = []

  // First admission of each of the nine kinds: absence → context → committed append.
  const matrix = DOCUMENT_KINDS.map((kind) => {
    const context = contextFor(docs, kind)
    const path = record(RECORDS_VALID, kind, recordFor(docs, kind, context))
    return admitAfterAbsence(`first-admission.${kind}`, context, stored('committed', path), complete(path), {kind})
  })
  cases.push({id: 'accept.first-admission.profile-matrix', evaluations: matrix})

  const commandContext = contextFor(docs, 'command')
  const commandRecord = `${RECORDS_VALID}/command.json`
  const command = recordFor(docs, 'command', commandContext)
  const commandText = jsonText(command)

  // Trusted-time boundaries that admit: validFrom itself (spelled with a +02:00 offset, which is
  // retained verbatim and compared as an instant), and one millisecond before a later expiry.
  const boundary = (name: string, trustedAcceptedAt: string, registry?: string): Evaluation => {
    const context = contextFor(docs, 'command', `command-${name}`, trustedAcceptedAt)
    const path = record(RECORDS_VALID, `command-${name}`, recordFor(docs, 'command', context))
    return admitAfterAbsence(
      `first-admission.${name}`,
      context,
      stored('committed', path),
      complete(path),
      registry ? {registry} : {},
    )
  }
  cases.push({
    id: 'accept.first-admission.trusted-time-boundaries',
    evaluations: [
      boundary('trusted-time-equal-valid-from-offset', '2026-07-01T02:00:00+02:00'),
      boundary('trusted-time-just-before-valid-until', '2026-07-04T23:59:59.999Z', expiryRegistry),
    ],
  })

  // Idempotent retry: the record is found; no context, no append (D6).
  cases.push({
    id: 'accept.first-admission.idempotent-retry',
    evaluations: [
      admitAfterLookup('first-admission.idempotent-retry', stored('found', commandRecord), complete(commandRecord)),
    ],
  })

  // A concurrent winner: append returns the existing record, whose admissionRecordId and
  // trustedAcceptedAt differ from this caller's candidate; it is validated and returned (§6.4).
  const loserContext = contextFor(
    docs,
    'command',
    'command-concurrent-candidate',
    after(commandContext.trustedAcceptedAt, 120),
  )
  cases.push({
    id: 'accept.first-admission.concurrent-winner',
    evaluations: [
      admitAfterAbsence(
        'first-admission.concurrent-winner',
        loserContext,
        stored('existing', commandRecord),
        complete(commandRecord),
      ),
    ],
  })

  // Historical replay of every kind, then after a later expiry and a later revocation (D14).
  cases.push({
    id: 'accept.historical-replay.profile-matrix',
    evaluations: DOCUMENT_KINDS.map((kind) =>
      replay(
        `historical-replay.${kind}`,
        stored('found', `${RECORDS_VALID}/${kind}.json`),
        complete(`${RECORDS_VALID}/${kind}.json`),
        {kind},
      ),
    ),
  })
  cases.push({
    id: 'accept.historical-replay.later-expiry',
    evaluations: [
      replay('historical-replay.later-expiry', stored('found', commandRecord), complete(commandRecord), {
        registry: expiryRegistry,
      }),
    ],
  })
  cases.push({
    id: 'accept.historical-replay.later-revocation',
    evaluations: [
      replay('historical-replay.later-revocation', stored('found', commandRecord), complete(commandRecord), {
        registry: revocationRegistry,
      }),
    ],
  })

  // ---- Failures

  // Lookup outcomes other than found / authoritative absence fail closed, in both modes (D7),
  // and historical replay requires a record (D13).
  const lookupFailures: [LookupStatus, Reason][] = [
    ['unauthenticated', 'log-authentication-failed'],
    ['integrity-failed', 'log-integrity-failed'],
    ['unavailable', 'log-unavailable'],
    ['indeterminate', 'log-indeterminate'],
  ]
  cases.push({
    id: 'reject.admission.lookup-matrix',
    evaluations: [
      replay('historical-record-missing', bare('authoritative-absence'), rejected('record-missing')),
      ...lookupFailures.map(([status, reason]) =>
        admitAfterLookup(`first-admission-lookup-${status}`, bare(status), rejected(reason)),
      ),
      ...lookupFailures.map(([status, reason]) =>
        replay(`historical-lookup-${status}`, bare(status), rejected(reason)),
      ),
    ],
  })

  // Records that fail validation (N6 order): parse, schema, binding, acceptedBy, interval.
  const invalid = (name: string, content: RecordFields | JsonObject | string): string =>
    record(RECORDS_INVALID, name, content)
  const mutated = (edit: Partial<RecordFields>): RecordFields => ({...command, ...edit})
  const {acceptedBy: _dropped, ...withoutAcceptedBy} = command
  const recordSignature = {
    algorithm: 'Ed25519',
    keyId: keyOf('admission').keyId,
    createdAt: command.trustedAcceptedAt,
    value: b64url(signEd25519(keyOf('admission').seed, canonicalBytes(command as unknown as JsonObject))),
  }
  const found = (path: string, service?: Principal) => stored('found', path, service)
  cases.push({
    id: 'reject.admission.record-matrix',
    evaluations: [
      // Exactly one strict JSON value (duplicate member with the same value; two values).
      replay(
        'record-duplicate-member',
        found(
          invalid(
            'duplicate-member',
            replaceOnce(
              commandText,
              '\n  "organizationId":',
              `\n  "organizationI\\u0064": ${JSON.stringify(ORG)},\n  "organizationId":`,
            ),
          ),
        ),
        rejected('record-unparseable'),
      ),
      replay(
        'record-trailing-data',
        found(invalid('trailing-data', commandText + commandText)),
        rejected('record-unparseable'),
      ),
      // The record schema: nine fields exactly, acceptedBy a service, no signature (D1, D2).
      replay(
        'accepted-by-non-service',
        found(invalid('accepted-by-non-service', mutated({acceptedBy: bindingPrincipal('mission-owner')}))),
        rejected('record-schema-invalid'),
      ),
      replay(
        'first-admission-record-with-signature',
        found(invalid('with-signature', {...command, signature: recordSignature} as unknown as JsonObject)),
        rejected('record-schema-invalid'),
      ),
      replay(
        'record-missing-accepted-by',
        found(invalid('missing-accepted-by', withoutAcceptedBy as unknown as JsonObject)),
        rejected('record-schema-invalid'),
      ),
      replay('command-as-own-record', found(documentPath('command')), rejected('record-schema-invalid')),
      // Exact binding equality with the six-stage evidence (D11).
      replay(
        'organization-mismatch',
        found(invalid('organization-mismatch', mutated({organizationId: 'urn:mwp:dev:org:other'}))),
        rejected('record-binding-mismatch'),
      ),
      replay(
        'document-kind-mismatch',
        found(invalid('document-kind-mismatch', mutated({documentKind: 'event'}))),
        rejected('record-binding-mismatch'),
      ),
      replay(
        'signing-hash-mismatch',
        found(invalid('signing-hash-mismatch', mutated({signingHash: docs.signed.event.signingHash}))),
        rejected('record-binding-mismatch'),
      ),
      replay(
        'key-id-mismatch',
        found(invalid('key-id-mismatch', mutated({keyId: 'urn:mwp:dev:key:coordinator-2'}))),
        rejected('record-binding-mismatch'),
      ),
      replay(
        'principal-mismatch',
        found(invalid('principal-mismatch', mutated({principal: bindingPrincipal('developer')}))),
        rejected('record-binding-mismatch'),
      ),
      admitAfterLookup(
        'first-admission-found-binding-mismatch',
        found(`${RECORDS_INVALID}/key-id-mismatch.json`),
        rejected('record-binding-mismatch'),
      ),
      // acceptedBy must be the service the adapter authenticated, not what the record claims (D12).
      replay(
        'accepted-by-other-service',
        found(invalid('accepted-by-other-service', mutated({acceptedBy: OTHER_SERVICE}))),
        rejected('accepted-by-mismatch'),
      ),
      replay('authenticated-service-differs', found(commandRecord, OTHER_SERVICE), rejected('accepted-by-mismatch')),
      // The record's own trusted time must lie inside the key interval, also on replay.
      replay(
        'record-accepted-at-valid-until',
        found(invalid('accepted-at-valid-until', mutated({trustedAcceptedAt: LATER_VALID_UNTIL}))),
        rejected('trusted-time-outside-key-interval'),
        {registry: expiryRegistry},
      ),
      replay(
        'record-accepted-at-revoked-at',
        found(invalid('accepted-at-revoked-at', mutated({trustedAcceptedAt: LATER_REVOKED_AT}))),
        rejected('trusted-time-outside-key-interval'),
        {registry: revocationRegistry},
      ),
      replay(
        'record-accepted-before-valid-from',
        found(invalid('accepted-before-valid-from', mutated({trustedAcceptedAt: after(VALID_FROM, -1)}))),
        rejected('trusted-time-outside-key-interval'),
      ),
    ],
  })

  // A Signed Event is never its own record: through lookup, through append, or re-serialized (D15).
  const eventDocument = documentPath('event')
  const event = {kind: 'event' as const}
  cases.push({
    id: 'reject.admission.event-self-anchoring',
    evaluations: [
      replay('event-self-anchoring', found(eventDocument), rejected('event-self-anchoring'), event),
      replay(
        'event-self-anchoring-reserialized',
        found(invalid('event-reserialized', `${JSON.stringify(reverseMembers(docs.signed.event.document))}\n`)),
        rejected('event-self-anchoring'),
        event,
      ),
      admitAfterLookup(
        'first-admission-event-self-anchoring-lookup',
        found(eventDocument),
        rejected('event-self-anchoring'),
        event,
      ),
      admitAfterAbsence(
        'first-admission-event-self-anchoring-append',
        contextFor(docs, 'event'),
        stored('existing', eventDocument),
        rejected('event-self-anchoring'),
        event,
      ),
    ],
  })

  // The trusted acceptance context, checked before any append (D8): append is never scripted.
  const at = (name: string, trustedAcceptedAt: string, reason: Reason, registry?: string) =>
    admitAfterAbsence(
      name,
      contextFor(docs, 'command', 'command', trustedAcceptedAt),
      null,
      rejected(reason),
      registry ? {registry} : {},
    )
  cases.push({
    id: 'reject.admission.trusted-time-matrix',
    evaluations: [
      at('trusted-time-before-valid-from', after(VALID_FROM, -1), 'trusted-time-outside-key-interval'),
      // 01:59:59+02:00 sorts after validFrom's text but is one second before it as an instant.
      at('trusted-time-before-valid-from-offset', '2026-07-01T01:59:59+02:00', 'trusted-time-outside-key-interval'),
      at('trusted-time-equal-valid-until', LATER_VALID_UNTIL, 'trusted-time-outside-key-interval', expiryRegistry),
      at(
        'trusted-time-equal-valid-until-fractional',
        LATER_VALID_UNTIL.replace('Z', '.000Z'),
        'trusted-time-outside-key-interval',
        expiryRegistry,
      ),
      at(
        'trusted-time-after-valid-until',
        after(LATER_VALID_UNTIL, 1),
        'trusted-time-outside-key-interval',
        expiryRegistry,
      ),
      at('trusted-time-equal-revoked-at', LATER_REVOKED_AT, 'trusted-time-outside-key-interval', revocationRegistry),
      at(
        'trusted-time-after-revoked-at',
        after(LATER_REVOKED_AT, 1),
        'trusted-time-outside-key-interval',
        revocationRegistry,
      ),
      at('malformed-trusted-time', 'not-a-timestamp', 'malformed-trusted-time'),
      at(
        'malformed-trusted-time-no-offset',
        commandContext.trustedAcceptedAt.replace('Z', ''),
        'malformed-trusted-time',
      ),
      at('malformed-trusted-time-leap-second', '2026-07-03T23:59:60Z', 'malformed-trusted-time'),
      admitAfterAbsence(
        'context-not-service',
        contextFor(docs, 'command', 'command', undefined, bindingPrincipal('mission-owner')),
        null,
        rejected('context-not-service'),
      ),
    ],
  })

  // Append-or-return-existing outcomes other than a valid committed / existing record (D9, D10).
  const appendFailures: [AppendStatus, Reason][] = [
    ['conflict', 'record-conflict'],
    ['integrity-failed', 'append-integrity-not-established'],
    ['unauthenticated', 'log-authentication-failed'],
    ['unavailable', 'log-unavailable'],
    ['indeterminate', 'log-indeterminate'],
    ['commit-failed', 'commit-failed'],
  ]
  cases.push({
    id: 'reject.admission.append-matrix',
    evaluations: [
      ...appendFailures.map(([status, reason]) =>
        admitAfterAbsence(`append-${status}`, commandContext, bare(status), rejected(reason)),
      ),
      // The returned record is validated, not the candidate: the committed bytes are the
      // candidate's, but the adapter authenticated another service.
      admitAfterAbsence(
        'append-committed-authenticated-other-service',
        commandContext,
        stored('committed', commandRecord, OTHER_SERVICE),
        rejected('accepted-by-mismatch'),
      ),
      // A concurrent "winner" that does not bind to this document, or was accepted out of interval.
      admitAfterAbsence(
        'append-existing-binding-mismatch',
        commandContext,
        stored('existing', `${RECORDS_INVALID}/principal-mismatch.json`),
        rejected('record-binding-mismatch'),
      ),
      admitAfterAbsence(
        'append-existing-accepted-at-valid-until',
        commandContext,
        stored('existing', `${RECORDS_INVALID}/accepted-at-valid-until.json`),
        rejected('trusted-time-outside-key-interval'),
        {registry: expiryRegistry},
      ),
      admitAfterAbsence(
        'append-existing-unparseable',
        commandContext,
        stored('existing', `${RECORDS_INVALID}/trailing-data.json`),
        rejected('record-unparseable'),
      ),
    ],
  })

  // Manifest: our files and the pinned schemas are artifacts; the cryptography bundle is pinned.
  const root = packageRoot()
  const artifactBytes = new Map<string, Buffer>(files)
  for (const path of PINNED_SCHEMAS) artifactBytes.set(path, readFileSync(join(root, path)))
  const artifacts = [...artifactBytes.keys()]
    .sort()
    .map((path) => ({path, byteLength: artifactBytes.get(path)!.length, sha256: sha256(artifactBytes.get(path)!)}))
  const body = {
    $schema: MANIFEST_SCHEMA_ID,
    manifestVersion: 1,
    protocolVersion: '0.1',
    profileId: PROFILE_ID,
    semanticStage: 'admission',
    wireCode: WIRE_CODE,
    cryptography: {manifest: CRYPTO_MANIFEST, artifactDigest: cryptoManifest.artifactDigest},
    fixtureSchemas: {record: RECORD_SCHEMA_PATH, registry: REGISTRY_FIXTURE_SCHEMA_PATH},
    artifacts,
    cases,
  }
  const {artifacts: _a, cases: _c, ...head} = body
  const manifest = {...head, artifactDigest: sha256(canonicalize(body as unknown as JsonObject)), artifacts, cases}
  add('admission/manifest.json', jsonText(manifest))
  return [...files].map(([path, bytes]) => ({path, bytes, mode: 0o644}))
}

// ---------------------------------------------------------------------------------------------
// Our manifest schema: the upstream layout (one runner reads both), our own `$id`, no fixed
// counts, every reason and adapter outcome our implementation distinguishes, and the call rules
// of N5 as structure: historical replay and any lookup other than authoritative absence carry no
// trusted context and no append; a first admission after absence carries a trusted context.

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'
const END = '$(?![\\s\\S])'
const ref = (name: string) => ({$ref: `#/$defs/${name}`})
const status = (values: readonly string[]) => ({properties: {status: {enum: [...values]}}, required: ['status']})
const noRecord = {not: {anyOf: [{required: ['record']}, {required: ['authenticatedService']}]}}

function outcome(statuses: readonly string[], storedStatuses: readonly string[]): object {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['status'],
    properties: {status: {enum: [...statuses]}, record: ref('repositoryPath'), authenticatedService: ref('principal')},
    allOf: [
      {if: status(storedStatuses), then: {required: ['record', 'authenticatedService']}},
      {if: status(statuses.filter((s) => !storedStatuses.includes(s))), then: noRecord},
    ],
  }
}

export function admissionManifestSchema(): object {
  return {
    $schema: DRAFT,
    $id: MANIFEST_SCHEMA_ID,
    title: 'mwp development admission conformance manifest',
    description: 'First admission and historical replay cases (spec §6.4), generated by scripts/make-fixtures.ts.',
    type: 'object',
    additionalProperties: false,
    required: [
      '$schema',
      'manifestVersion',
      'protocolVersion',
      'profileId',
      'semanticStage',
      'wireCode',
      'cryptography',
      'fixtureSchemas',
      'artifactDigest',
      'artifacts',
      'cases',
    ],
    properties: {
      $schema: {const: MANIFEST_SCHEMA_ID},
      manifestVersion: {const: 1},
      protocolVersion: {const: '0.1'},
      profileId: {const: PROFILE_ID},
      semanticStage: {const: 'admission'},
      wireCode: {const: WIRE_CODE},
      cryptography: {
        type: 'object',
        additionalProperties: false,
        required: ['manifest', 'artifactDigest'],
        properties: {manifest: {const: CRYPTO_MANIFEST}, artifactDigest: ref('sha256')},
      },
      fixtureSchemas: {
        type: 'object',
        additionalProperties: false,
        required: ['record', 'registry'],
        properties: {record: {const: RECORD_SCHEMA_PATH}, registry: {const: REGISTRY_FIXTURE_SCHEMA_PATH}},
      },
      artifactDigest: ref('sha256'),
      artifacts: {type: 'array', minItems: 1, items: ref('artifact')},
      cases: {type: 'array', minItems: 1, items: ref('case')},
    },
    $defs: {
      repositoryPath: {
        type: 'string',
        pattern: `^(?:[a-z0-9][a-z0-9._-]*/)*[a-z0-9][a-z0-9._-]*${END}`,
        maxLength: 512,
      },
      sha256: {type: 'string', pattern: `^sha256:[0-9a-f]{64}${END}`},
      id: {type: 'string', pattern: `^[a-z0-9]+(?:[.-][a-z0-9]+)*${END}`, maxLength: 160},
      absoluteId: {type: 'string', format: 'uri', pattern: `^[A-Za-z][A-Za-z0-9+.-]*:[^\\s]+${END}`, maxLength: 512},
      principal: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'id'],
        properties: {type: {enum: ['agent', 'human', 'service']}, id: ref('absoluteId')},
      },
      trustedContext: {
        type: 'object',
        additionalProperties: false,
        required: ['admissionRecordId', 'trustedAcceptedAt', 'acceptedBy'],
        description:
          'trustedAcceptedAt and acceptedBy are deliberately loose: a malformed time or a non-service acceptor is a scripted fault.',
        properties: {
          admissionRecordId: ref('absoluteId'),
          trustedAcceptedAt: {type: 'string', minLength: 1, maxLength: 128},
          acceptedBy: ref('principal'),
        },
      },
      lookupOutcome: outcome(LOOKUP_STATUSES, ['found']),
      appendOutcome: outcome(APPEND_STATUSES, ['committed', 'existing']),
      completeExpectation: {
        type: 'object',
        additionalProperties: false,
        required: ['stage', 'wireCode', 'record'],
        properties: {stage: {const: 'complete'}, wireCode: {type: 'null'}, record: ref('repositoryPath')},
      },
      rejectedExpectation: {
        type: 'object',
        additionalProperties: false,
        required: ['stage', 'wireCode', 'reason'],
        properties: {stage: {const: 'admission'}, wireCode: {const: WIRE_CODE}, reason: {enum: [...ADMISSION_REASONS]}},
      },
      evaluation: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'profileId', 'mode', 'document', 'registry', 'trustedContext', 'lookup', 'append', 'expect'],
        properties: {
          id: ref('id'),
          profileId: {enum: [...DOCUMENT_KINDS]},
          mode: {enum: ['first-admission', 'historical-replay']},
          document: ref('repositoryPath'),
          registry: ref('repositoryPath'),
          trustedContext: {oneOf: [ref('trustedContext'), {type: 'null'}]},
          lookup: ref('lookupOutcome'),
          append: {oneOf: [ref('appendOutcome'), {type: 'null'}]},
          expect: {oneOf: [ref('completeExpectation'), ref('rejectedExpectation')]},
        },
        allOf: [
          {
            if: {properties: {mode: {const: 'historical-replay'}}, required: ['mode']},
            then: {properties: {trustedContext: {type: 'null'}, append: {type: 'null'}}},
          },
          {
            if: {
              properties: {lookup: {properties: {status: {not: {const: 'authoritative-absence'}}}}},
              required: ['lookup'],
            },
            then: {properties: {trustedContext: {type: 'null'}, append: {type: 'null'}}},
          },
          {
            if: {
              properties: {
                mode: {const: 'first-admission'},
                lookup: {properties: {status: {const: 'authoritative-absence'}}},
              },
              required: ['mode', 'lookup'],
            },
            then: {properties: {trustedContext: ref('trustedContext')}},
          },
        ],
      },
      artifact: {
        type: 'object',
        additionalProperties: false,
        required: ['path', 'byteLength', 'sha256'],
        properties: {
          path: ref('repositoryPath'),
          byteLength: {type: 'integer', minimum: 0, maximum: 9007199254740991},
          sha256: ref('sha256'),
        },
      },
      case: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'evaluations'],
        properties: {id: ref('id'), evaluations: {type: 'array', minItems: 1, items: ref('evaluation')}},
      },
    },
  }
}
