// The conformance runners on the upstream bundles (spec §22, ACCEPTANCE N1-N4), including the
// integrity checks that must stop a run before any case executes.

import {cpSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {BundleError, BundleRoot, manifestDigest, sha256} from '../../src/conformance/bundle.js'
import {runCryptography} from '../../src/conformance/cryptography.js'
import {runStructural} from '../../src/conformance/structural.js'
import {mwp} from '../support/cli.js'
import {HAVE_UPSTREAM, PROJECT_ROOT, UPSTREAM} from '../support/upstream.js'

// Each upstream fault ID and the protected reason our verifier must give for it: the right stage
// for the wrong reason would be a silent bug.
const REASON_FOR_FAULT: Record<string, string> = {
  'invalid-utf8': 'invalid-utf8',
  'trailing-data': 'trailing-data',
  'utf8-bom': 'utf8-bom',
  'duplicate-decoded-member': 'duplicate-member',
  'padded-signature-base64url': 'schema-invalid',
  'timestamp-leap-second': 'schema-invalid',
  'timestamp-unknown-local-offset': 'schema-invalid',
  'timestamp-year-zero': 'schema-invalid',
  'unsupported-algorithm': 'schema-invalid',
  'protected-time-created-at-mismatch': 'created-at-mismatch',
  'protected-time-not-utc-z': 'protected-time-not-utc-z',
  'signature-nonzero-unused-pad-bits': 'signature-noncanonical-base64url',
  'signature-r-mixed-order': 'r-mixed-order',
  'signature-r-negative-zero': 'r-negative-zero',
  'signature-r-noncanonical': 'r-noncanonical',
  'signature-r-off-curve': 'r-off-curve',
  'signature-r-small-order': 'r-small-order',
  'signature-r-y-equals-p': 'r-y-equals-p',
  'signature-s-out-of-range': 's-out-of-range',
  'signature-wrong-length': 'signature-wrong-length',
  'key-id-alias': 'key-alias',
  'agent-card-signer-not-service': 'signer-not-service',
  'artifact-signer-not-producer': 'principal-mismatch',
  'cross-principal-public-key-reuse': 'public-key-reuse',
  'key-not-yet-valid': 'key-not-yet-valid',
  'public-key-identity': 'public-key-identity',
  'public-key-mixed-order': 'public-key-mixed-order',
  'public-key-negative-zero': 'public-key-negative-zero',
  'public-key-noncanonical-encoding': 'public-key-noncanonical',
  'public-key-nonzero-unused-pad-bits': 'public-key-noncanonical-base64url',
  'public-key-off-curve': 'public-key-off-curve',
  'public-key-padded-base64url': 'public-key-noncanonical-base64url',
  'public-key-small-order': 'public-key-small-order',
  'public-key-y-equals-p': 'public-key-y-equals-p',
  'public-key-rebinding': 'key-id-rebinding',
  'public-key-wrong-length': 'public-key-wrong-length',
  'registry-organization-id-relative-reference': 'organization-id-invalid',
  'registry-selected-service-principal-id-iri-only': 'principal-id-invalid',
  'registry-unrelated-key-id-trailing-line-feed': 'key-id-invalid',
  'registry-unrelated-principal-id-malformed-percent': 'principal-id-invalid',
  'revoked-at-equality': 'key-revoked',
  'valid-until-equality': 'key-expired',
  'unknown-key': 'unknown-key',
  'wrong-principal-binding': 'principal-mismatch',
  'number-outside-finite-binary64': 'non-finite-number',
  'unpaired-unicode-surrogate': 'unpaired-surrogate',
  'identity-r-equation-mismatch': 'equation-mismatch',
  'payload-tamper': 'equation-mismatch',
  'extension-nested-signature-tamper': 'equation-mismatch',
  'payload-nested-signature-tamper': 'equation-mismatch',
}

/** A writable copy of the upstream bundle for tampering. */
function copyUpstream(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-bundle-'))
  for (const part of ['conformance', 'cryptography', 'schemas'])
    cpSync(join(UPSTREAM, part), join(dir, part), {recursive: true})
  return dir
}

function rewriteManifest(dir: string, edit: (m: Record<string, any>) => void): void {
  const path = join(dir, 'cryptography/manifest.json')
  const m = JSON.parse(readFileSync(path, 'utf8'))
  edit(m)
  writeFileSync(path, JSON.stringify(m, null, 2))
}

describe.skipIf(!HAVE_UPSTREAM)('upstream bundles', () => {
  it('N3: structural 58 of 58 (27 valid, 31 invalid)', () => {
    const report = runStructural(new BundleRoot(UPSTREAM))
    expect(report.cases.filter((c) => !c.pass)).toEqual([])
    expect(report).toMatchObject({total: 58, passed: 58, failed: 0, breakdown: {valid: 27, invalid: 31}})
  })

  it('N4: cryptography 62 of 62 with the exact stage counts and reasons', () => {
    const report = runCryptography(new BundleRoot(UPSTREAM))
    expect(report.cases.filter((c) => !c.pass)).toEqual([])
    expect(report).toMatchObject({total: 62, passed: 62})
    expect(report.breakdown).toEqual({
      complete: 12,
      'rejected:parse': 4,
      'rejected:schema': 5,
      'rejected:signature-envelope': 11,
      'rejected:key-resolution': 24,
      'rejected:canonicalization': 2,
      'rejected:signature': 4,
    })
    const rejected = report.cases.filter((c) => c.expected !== 'complete')
    expect(rejected).toHaveLength(50)
    for (const c of rejected) expect(c.reason, `${c.id} (${c.fault})`).toBe(REASON_FOR_FAULT[c.fault!])
  })

  it('N1: a changed artifact byte stops the run before any case', () => {
    const dir = copyUpstream()
    const path = join(dir, 'cryptography/keys/registry-valid.json')
    writeFileSync(path, readFileSync(path, 'utf8').replace('acme', 'acmf'))
    expect(() => runCryptography(new BundleRoot(dir))).toThrow(/registry-valid\.json hashes to/)
  })

  it('N1: a changed manifest fails the artifactDigest check', () => {
    const dir = copyUpstream()
    rewriteManifest(dir, (m) => {
      m.cases[1].evaluations[0].expect.stage = 'parse'
    })
    expect(() => runCryptography(new BundleRoot(dir))).toThrow(/artifactDigest mismatch/)
  })

  it('N1: a wrong declared byte length is caught', () => {
    const dir = copyUpstream()
    rewriteManifest(dir, (m) => {
      m.artifacts[0].byteLength += 1
      m.artifactDigest = manifestDigest(m)
    })
    expect(() => runCryptography(new BundleRoot(dir))).toThrow(BundleError)
  })

  it('N2: a fixture that breaks its fixture schema stops the run, even with correct hashes', () => {
    const dir = copyUpstream()
    const rel = 'cryptography/keys/registry-valid.json'
    const reg = JSON.parse(readFileSync(join(dir, rel), 'utf8'))
    reg.bindings[0].comment = 'not allowed by the fixture schema'
    const text = JSON.stringify(reg, null, 2)
    writeFileSync(join(dir, rel), text)
    rewriteManifest(dir, (m) => {
      const a = m.artifacts.find((x: {path: string}) => x.path === rel)
      a.byteLength = Buffer.byteLength(text)
      a.sha256 = sha256(text)
      m.artifactDigest = manifestDigest(m)
    })
    expect(() => runCryptography(new BundleRoot(dir))).toThrow(
      /does not match cryptography\/registry-fixture\.schema\.json/,
    )
  })

  it('N1: the upstream digest is the one pinned by the admission bundle', () => {
    const admission = JSON.parse(readFileSync(join(UPSTREAM, 'admission/manifest.json'), 'utf8'))
    const crypto = JSON.parse(readFileSync(join(UPSTREAM, 'cryptography/manifest.json'), 'utf8'))
    expect(manifestDigest(crypto)).toBe(crypto.artifactDigest)
    expect(admission.cryptography.artifactDigest).toBe(crypto.artifactDigest)
  })
})

describe('the project bundles', () => {
  it('structural and cryptography vectors of our own pass', () => {
    const root = new BundleRoot(PROJECT_ROOT)
    const structural = runStructural(root)
    expect(structural.cases.filter((c) => !c.pass)).toEqual([])
    expect(structural.total).toBeGreaterThan(40)
    const crypto = runCryptography(root)
    expect(crypto.cases.filter((c) => !c.pass)).toEqual([])
    expect(crypto.total).toBeGreaterThan(30)
  })

  it('mwp conformance run prints one JSON report; no progress counter when stderr is not a terminal (a log would get a line of carriage returns)', () => {
    const r = mwp(['conformance', 'run', '--root', PROJECT_ROOT, '--bundle', 'structural', '--json'])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).result.totals.structural).toMatchObject({failed: 0})
    expect(r.stderr).toBe('')
  })
})
