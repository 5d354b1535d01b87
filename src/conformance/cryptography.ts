// Cryptography bundle (`cryptography/manifest.json`, ACCEPTANCE N1, N2, N4).
//
// Order: manifest digest and artifact hashes; manifest against the bundle's manifest schema;
// every registry and signing-key fixture against the fixture schemas the manifest names (shape
// only — the verifier still performs every identifier and key check itself); then every case.
// A complete evaluation must match keyId, principal, protected-time text, signing bytes, signing
// hash, signature value and the hash of the JCS of the whole signed document, and the fixture
// seed must re-derive the public key and reproduce the signature.

import {publicKeyFromSeed, signEd25519} from '../crypto/ed25519.js'
import {decodeBase64url, encodeBase64url} from '../json/base64url.js'
import {canonicalHash, canonicalize} from '../json/jcs.js'
import type {JsonObject} from '../json/parse.js'
import {schemaCatalog} from '../schema/catalog.js'
import {type DocumentKind, isDocumentKind} from '../signing/profiles.js'
import {RegistryEvidence} from '../signing/registry.js'
import {Rejection, WIRE_CODE, verify} from '../signing/verify.js'
import {BundleError, type BundleRoot, requireDeclared, sha256, verifyIntegrity} from './bundle.js'
import {type BundleReport, type CaseResult, type Progress, summarize} from './report.js'

interface Verified {
  keyId: string
  principal: {type: string; id: string}
  protectedTime: string
  signingBytes: string
  signingHash: string
  signature: string
  signedDocumentHash: string
}

interface Evaluation {
  profileId?: string
  document?: string
  registry?: string
  signingKey?: string
  fault?: {id: string} | null
  expect?: {stage: string; wireCode: string | null; verified?: Verified}
  // canonicalization cases
  input?: string
  expectedJcs?: string
  sha256?: string
}

interface Case {
  id: string
  kind: string
  evaluations: Evaluation[]
}

const MANIFEST = 'cryptography/manifest.json'

/** Loads and checks the manifest, its schema and its fixtures; returns the cases to run. */
export function loadCryptographyManifest(root: BundleRoot): {manifest: JsonObject; cases: Case[]} {
  const manifest = root.json(MANIFEST) as JsonObject
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest))
    throw new BundleError(`${MANIFEST} is not an object`)
  verifyIntegrity(root, manifest, 'cryptography')
  const catalog = schemaCatalog()
  const check = (schemaPath: string, path: string, value: unknown): void => {
    const validate = catalog.compileExternal(root.json(schemaPath) as object)
    if (!validate(value)) {
      const first = validate.errors?.[0]
      throw new BundleError(
        `${path} does not match ${schemaPath}: ${first ? `${first.instancePath || '/'} ${first.message}` : 'invalid'}`,
      )
    }
  }
  check('cryptography/manifest.schema.json', MANIFEST, manifest)

  const cases = manifest.cases as unknown as Case[]
  const fixtureSchemas = manifest.fixtureSchemas as unknown as {registry: string; signingKey: string}
  const used = new Set<string>()
  for (const c of cases) {
    for (const e of c.evaluations) {
      for (const p of [e.document, e.registry, e.signingKey, e.input, e.expectedJcs, e.expect?.verified?.signingBytes])
        if (p) used.add(p)
      if (e.registry) check(fixtureSchemas.registry, e.registry, root.json(e.registry))
      if (e.signingKey) check(fixtureSchemas.signingKey, e.signingKey, root.json(e.signingKey))
    }
  }
  requireDeclared(manifest, used, 'cryptography')
  return {manifest, cases}
}

function expectedLabel(e: Evaluation, kind: string): string {
  if (kind === 'canonicalization') return 'complete'
  const x = e.expect!
  return x.stage === 'complete' ? 'complete' : `rejected:${x.stage}`
}

function runCanonicalization(root: BundleRoot, e: Evaluation): string[] {
  const problems: string[] = []
  let jcs: string
  try {
    jcs = canonicalize(root.json(e.input!))
  } catch (err) {
    return [`canonicalization failed: ${(err as Error).message}`]
  }
  if (jcs !== root.bytes(e.expectedJcs!).toString('utf8')) problems.push('JCS bytes differ from expectedJcs')
  if (sha256(jcs) !== e.sha256) problems.push(`JCS hash ${sha256(jcs)} differs from ${e.sha256}`)
  return problems
}

/** Compares a complete verification with the manifest, including the seed round trip. */
function checkComplete(root: BundleRoot, e: Evaluation, got: Exclude<ReturnType<typeof verify>, Rejection>): string[] {
  const want = e.expect!.verified!
  const problems: string[] = []
  const differ = (what: string, a: unknown, b: unknown): void => {
    if (a !== b) problems.push(`${what}: got ${JSON.stringify(a)}, want ${JSON.stringify(b)}`)
  }
  differ('keyId', got.keyId, want.keyId)
  differ('principal', canonicalize(got.principal), canonicalize(want.principal))
  differ('protectedTime', got.protectedTime, want.protectedTime)
  if (!got.signingBytes.equals(root.bytes(want.signingBytes)))
    problems.push('signing bytes differ from the expected file')
  differ('signingHash', got.signingHash, want.signingHash)
  differ('signature', (got.document.signature as JsonObject).value, want.signature)
  differ('signedDocumentHash', canonicalHash(got.document), want.signedDocumentHash)
  if (e.signingKey) {
    const key = root.json(e.signingKey) as {keyId: string; seed: string; publicKey: string}
    const seed = decodeBase64url(key.seed)
    if (seed === null || seed.length !== 32) {
      problems.push('signing-key seed is not 32 bytes of canonical base64url')
    } else {
      differ('seed-derived public key', encodeBase64url(publicKeyFromSeed(seed)), key.publicKey)
      differ('signing key ID', key.keyId, want.keyId)
      differ('reproduced signature', encodeBase64url(signEd25519(seed, got.signingBytes)), want.signature)
    }
  }
  return problems
}

function runSignedDocument(root: BundleRoot, e: Evaluation): {actual: string; problems: string[]; reason?: string} {
  if (!e.profileId || !isDocumentKind(e.profileId))
    return {actual: 'error', problems: [`unknown profileId ${e.profileId}`]}
  const result = verify(
    e.profileId as DocumentKind,
    root.bytes(e.document!),
    RegistryEvidence.fromBytes(root.bytes(e.registry!)),
  )
  const x = e.expect!
  if (result instanceof Rejection) {
    const d = Rejection.diagnostic(result)
    const actual = `rejected:${d.stage}`
    const problems: string[] = []
    if (x.stage === 'complete') problems.push(`rejected at ${d.stage} (${d.reason}${d.detail ? `: ${d.detail}` : ''})`)
    else {
      if (d.stage !== x.stage) problems.push(`stage ${d.stage} (${d.reason}), want ${x.stage}`)
      if (result.code !== x.wireCode) problems.push(`wire code ${result.code}, want ${x.wireCode}`)
      if (WIRE_CODE[d.stage] !== result.code) problems.push('wire code does not match the stage')
    }
    return {actual, problems, reason: d.reason}
  }
  if (x.stage !== 'complete') return {actual: 'complete', problems: [`verified, want rejection at ${x.stage}`]}
  return {actual: 'complete', problems: checkComplete(root, e, result)}
}

export function runCryptography(root: BundleRoot, progress?: Progress): BundleReport {
  const {cases} = loadCryptographyManifest(root)
  const total = cases.reduce((n, c) => n + c.evaluations.length, 0)
  const results: CaseResult[] = []
  for (const c of cases) {
    c.evaluations.forEach((e, i) => {
      const expected = expectedLabel(e, c.kind)
      let actual: string
      let problems: string[]
      let reason: string | undefined
      if (c.kind === 'canonicalization') {
        problems = runCanonicalization(root, e)
        actual = problems.length === 0 ? 'complete' : 'mismatch'
      } else {
        ;({actual, problems, reason} = runSignedDocument(root, e))
      }
      const label = e.fault?.id ?? e.profileId
      const id = c.evaluations.length > 1 ? `${c.id}[${i}]${label ? ` ${label}` : ''}` : c.id
      const r: CaseResult = {bundle: 'cryptography', id, expected, actual, pass: problems.length === 0}
      if (e.fault) r.fault = e.fault.id
      if (reason) r.reason = reason
      if (problems.length > 0) r.detail = problems.join('; ')
      results.push(r)
      progress?.(r, results.length, total)
    })
  }
  return summarize('cryptography', root.dir, results)
}
