// The committed fixtures and conformance bundles are exactly what scripts/make-fixtures.ts
// generates, the signed samples verify, and our own bundles pass through the same runners.

import {mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {GENERATED_ROOTS, generateFixtures, listFiles, makeFixtures} from '../../scripts/fixtures-lib.js'
import {runAdmission} from '../../src/conformance/admission.js'
import {BundleRoot, manifestDigest} from '../../src/conformance/bundle.js'
import {runCryptography} from '../../src/conformance/cryptography.js'
import {runStructural} from '../../src/conformance/structural.js'
import {parseKeyFile} from '../../src/crypto/keyfile.js'
import {canonicalize} from '../../src/json/jcs.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import {DOCUMENT_KINDS, PROFILES, expectedSigner} from '../../src/signing/profiles.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {Rejection, verify} from '../../src/signing/verify.js'
import {HAVE_UPSTREAM, PROJECT_ROOT, UPSTREAM} from '../support/upstream.js'
import {ADMISSION_REASONS} from '../../src/admission/record.js'

const tmp = mkdtempSync(join(tmpdir(), 'mwp-fixtures-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))
const committed = (path: string) => readFileSync(join(PROJECT_ROOT, path))
const json = (path: string) => JSON.parse(committed(path).toString('utf8'))

describe('generator', () => {
  const {files} = makeFixtures(tmp)

  it('regenerates the committed files byte for byte, with nothing extra committed', () => {
    const generated = files.map((f) => f.path).sort()
    const onDisk = GENERATED_ROOTS.flatMap((root) =>
      listFiles(join(PROJECT_ROOT, root)).map((p) => `${root}/${p}`),
    ).sort()
    expect(onDisk).toEqual(generated)
    const differing = files.filter((f) => !readFileSync(join(tmp, f.path)).equals(committed(f.path))).map((f) => f.path)
    expect(differing, 'hand-edited or stale: run `npm run fixtures`').toEqual([])
  })

  it('is deterministic and writes private keys with mode 0600', () => {
    const again = generateFixtures()
    expect(again.map((f) => f.path)).toEqual(files.map((f) => f.path))
    again.forEach((f, i) => expect(f.bytes.equals(files[i]!.bytes), f.path).toBe(true))
    const keyFiles = files.filter((f) => f.path.startsWith('fixtures/keys/'))
    expect(keyFiles.length).toBeGreaterThanOrEqual(8)
    for (const f of keyFiles) expect(statSync(join(tmp, f.path)).mode & 0o777, f.path).toBe(0o600)
  })

  it('generates the admission bundle, byte-identical on regeneration, pinning the generated cryptography manifest', () => {
    const admission = files.filter((f) => f.path.startsWith('admission/'))
    expect(admission.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'admission/manifest.json',
        'admission/manifest.schema.json',
        'admission/records/valid/command.json',
        'admission/registries/registry-later-revocation.json',
      ]),
    )
    const again = new Map(generateFixtures().map((f) => [f.path, f.bytes]))
    for (const f of admission) expect(again.get(f.path)?.equals(f.bytes), f.path).toBe(true)
    const generated = (path: string) => JSON.parse(files.find((f) => f.path === path)!.bytes.toString('utf8'))
    const manifest = generated('admission/manifest.json')
    expect(manifest.cryptography).toEqual({
      manifest: 'cryptography/manifest.json',
      artifactDigest: manifestDigest(generated('cryptography/manifest.json')),
    })
    expect(manifest.artifactDigest).toBe(manifestDigest(manifest))
  })

  it('a second run into the same directory writes and removes nothing', () => {
    const second = makeFixtures(tmp)
    expect(second.written).toEqual([])
    expect(second.removed).toEqual([])
  })
})

describe('fixtures/', () => {
  const evidence = RegistryEvidence.fromBytes(committed('fixtures/registry.json'))

  it.each(DOCUMENT_KINDS)('documents/%s.json verifies against registry.json under its §6.4 signer', (kind) => {
    const result = verify(kind, committed(`fixtures/documents/${kind}.json`), evidence)
    if (result instanceof Rejection) throw new Error(`rejected: ${JSON.stringify(Rejection.diagnostic(result))}`)
    const signer = expectedSigner(PROFILES[kind], result.document)
    expect(result.principal.type).toBe(signer.type)
    if (signer.id !== null) expect(result.principal.id).toBe(signer.id)
    // the unsigned sample is the signed document without its signature
    const {signature: _omitted, ...content} = json(`fixtures/documents/${kind}.json`)
    expect(canonicalize(content)).toBe(canonicalize(json(`fixtures/unsigned/${kind}.json`)))
  })

  it('every key file loads, and its key is bound to its Principal in registry.json', () => {
    const registry = json('fixtures/registry.json') as {
      bindings: {keyId: string; principal: unknown; publicKey: string}[]
    }
    const keyFiles = listFiles(join(PROJECT_ROOT, 'fixtures/keys'))
    expect(keyFiles).toEqual(
      expect.arrayContaining([
        'service.key.json',
        'group-authority.key.json',
        'admission.key.json',
        'mission-owner.key.json',
        'security-owner.key.json',
        'coordinator.key.json',
        'developer.key.json',
        'reviewer.key.json',
      ]),
    )
    for (const file of keyFiles) {
      const key = parseKeyFile(committed(`fixtures/keys/${file}`).toString('utf8'))
      const binding = registry.bindings.find((b) => b.keyId === key.keyId)
      expect(binding, file).toBeDefined()
      expect(binding!.principal).toEqual(key.principal)
      expect(binding!.publicKey).toBe(key.publicKeyB64)
    }
  })
})

describe('our conformance bundles', () => {
  const root = new BundleRoot(PROJECT_ROOT)

  it('structural: every vector passes, every schema has a valid instance, 25+ invalid', () => {
    const report = runStructural(root)
    expect(report.cases.filter((c) => !c.pass)).toEqual([])
    const manifest = json('conformance/manifest.json') as {schema: string; valid: boolean}[]
    const coveredSchemas = new Set(manifest.filter((e) => e.valid).map((e) => e.schema))
    for (const name of schemaCatalog().names()) expect(coveredSchemas, name).toContain(`schemas/${name}.schema.json`)
    expect(manifest.filter((e) => !e.valid).length).toBeGreaterThanOrEqual(25)
  })

  it('cryptography: every evaluation passes, with complete cases and a failure at every stage', () => {
    const report = runCryptography(root)
    expect(report.cases.filter((c) => !c.pass)).toEqual([])
    const outcomes = new Set(report.cases.map((c) => c.expected))
    for (const stage of [
      'complete',
      'rejected:parse',
      'rejected:schema',
      'rejected:signature-envelope',
      'rejected:key-resolution',
      'rejected:canonicalization',
      'rejected:signature',
    ]) {
      expect(outcomes, stage).toContain(stage)
    }
    const manifest = json('cryptography/manifest.json') as {
      cases: {id: string; evaluations: {fault?: {basis: {caseId: string}} | null}[]}[]
    }
    const caseIds = new Set(manifest.cases.map((c) => c.id))
    for (const c of manifest.cases)
      for (const e of c.evaluations) if (e.fault) expect(caseIds, `${c.id} basis`).toContain(e.fault.basis.caseId)
  })

  it('admission: every evaluation passes, every protected reason is exercised, both modes cover all nine kinds', async () => {
    const report = await runAdmission(root)
    expect(report.cases.filter((c) => !c.pass)).toEqual([])
    const reasons = new Set(report.cases.filter((c) => c.expected === 'rejected:admission').map((c) => c.fault))
    for (const reason of ADMISSION_REASONS) expect(reasons, reason).toContain(reason)
    const manifest = json('admission/manifest.json') as {
      cases: {
        evaluations: {
          profileId: string
          mode: string
          expect: {stage: string}
          lookup: {status: string}
          append: {status: string} | null
        }[]
      }[]
    }
    const evaluations = manifest.cases.flatMap((c) => c.evaluations)
    for (const mode of ['first-admission', 'historical-replay']) {
      const admitted = new Set(
        evaluations.filter((e) => e.mode === mode && e.expect.stage === 'complete').map((e) => e.profileId),
      )
      expect([...admitted].sort(), mode).toEqual([...DOCUMENT_KINDS].sort())
    }
    // idempotent retry (found), a committed append, and a concurrent winner (existing) all complete
    const completed = evaluations.filter((e) => e.mode === 'first-admission' && e.expect.stage === 'complete')
    expect(new Set(completed.map((e) => e.append?.status ?? e.lookup.status))).toEqual(
      new Set(['found', 'committed', 'existing']),
    )
  })

  it.skipIf(!HAVE_UPSTREAM)('the upstream bundles still pass with the same runners', async () => {
    const upstream = new BundleRoot(UPSTREAM)
    const structural = runStructural(upstream)
    const cryptography = runCryptography(upstream)
    const admission = await runAdmission(upstream)
    expect(structural.cases.filter((c) => !c.pass)).toEqual([])
    expect(cryptography.cases.filter((c) => !c.pass)).toEqual([])
    expect(admission.cases.filter((c) => !c.pass)).toEqual([])
    expect([structural.cases.length, cryptography.cases.length, admission.cases.length]).toEqual([58, 62, 30])
  })
})
