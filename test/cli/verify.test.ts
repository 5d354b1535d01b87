// `mwp verify`, `sign`, `canonicalize`, `hash`, `validate` as subprocesses: the acceptance lines
// of the signed-document issue that are about the command line.

import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {canonicalize} from '../../src/json/jcs.js'
import {json, mwp, mwpAsync, pool} from '../support/cli.js'
import {HAVE_UPSTREAM, PROJECT_ROOT, UPSTREAM} from '../support/upstream.js'

interface Evaluation {
  profileId?: string
  document?: string
  registry?: string
  expect?: {stage: string; wireCode: string | null}
}

describe.skipIf(!HAVE_UPSTREAM)('mwp verify on every upstream signed-document evaluation', () => {
  const manifest = HAVE_UPSTREAM
    ? JSON.parse(readFileSync(join(UPSTREAM, 'cryptography/manifest.json'), 'utf8'))
    : {cases: []}
  const evaluations: Evaluation[] = manifest.cases
    .flatMap((c: {evaluations: Evaluation[]}) => c.evaluations)
    .filter((e: Evaluation) => e.document)

  it('gives the manifest wire code (exit 1) or success (exit 0)', {timeout: 180_000}, async () => {
    expect(evaluations).toHaveLength(61)
    const results = await pool(evaluations, 2, (e) =>
      mwpAsync([
        'verify',
        '--document-kind',
        e.profileId!,
        '--registry',
        join(UPSTREAM, e.registry!),
        join(UPSTREAM, e.document!),
        '--json',
      ]),
    )
    evaluations.forEach((e, i) => {
      const r = results[i]
      const out = json(r)
      if (e.expect!.stage === 'complete') {
        expect(r.status, e.document).toBe(0)
        expect(out.status).toBe('ok')
      } else {
        expect(r.status, `${e.document} with ${e.registry}`).toBe(1)
        expect(out.status).toBe('rejected')
        expect(out.error.code).toBe(e.expect!.wireCode)
        // The wire output carries the code and nothing that says which check failed.
        expect(Object.keys(out).sort()).toEqual(['error', 'status'])
        expect(out.error.message).not.toMatch(/stage|reason|key-|alias|order/i)
      }
    })
  })

  it('--explain adds the protected stage and reason for the local operator', () => {
    const r = mwp([
      'verify',
      '--explain',
      '--registry',
      join(UPSTREAM, 'cryptography/keys/registry-key-alias.json'),
      join(UPSTREAM, 'cryptography/vectors/signed-documents/invalid/command-key-alias.json'),
    ])
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^AUTH_INVALID_SIGNATURE\n {2}stage: key-resolution\n {2}reason: key-alias/)
    const plain = mwp([
      'verify',
      '--registry',
      join(UPSTREAM, 'cryptography/keys/registry-key-alias.json'),
      join(UPSTREAM, 'cryptography/vectors/signed-documents/invalid/command-key-alias.json'),
    ])
    expect(plain.stdout).toBe('AUTH_INVALID_SIGNATURE\n')
  })

  it('batch mode verifies many files in one process', () => {
    const valid = ['command', 'event', 'approval'].map((k) =>
      join(UPSTREAM, `cryptography/vectors/signed-documents/valid/${k}.json`),
    )
    const ok = json(
      mwp(['verify', '--registry', join(UPSTREAM, 'cryptography/keys/registry-valid.json'), ...valid, '--json']),
    )
    expect(ok.result).toMatchObject({total: 3, verified: 3, rejected: 0})
    const mixed = mwp([
      'verify',
      '--registry',
      join(UPSTREAM, 'cryptography/keys/registry-valid.json'),
      ...valid,
      join(UPSTREAM, 'cryptography/vectors/signed-documents/invalid/command-payload-tamper.json'),
    ])
    expect(mixed.status).toBe(1)
    expect(mixed.stdout.trim().split('\n')).toHaveLength(4)
    expect(mixed.stdout).toMatch(/command-payload-tamper\.json: AUTH_INVALID_SIGNATURE/)
  })
})

describe('key generate → registry → sign → verify pipeline', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-pipeline-'))
  const key = join(dir, 'alice.key.json')
  const registry = join(dir, 'registry.json')
  const unsigned = {
    protocolVersion: '0.1',
    actionId: 'urn:uuid:6a1f2d3e-4b5c-4d6e-8f70-8192a3b4c5d6',
    actor: {type: 'human', id: 'urn:mwp:e2e:human:alice'},
    groupId: 'urn:mwp:e2e:group:launch',
    kind: 'mission.create',
    correlationId: 'urn:uuid:6a1f2d3e-4b5c-4d6e-8f70-8192a3b4c5d7',
    issuedAt: '2026-08-01T12:00:00Z',
    payload: {
      title: 'Ship the launch checklist',
      budget: {modelTokenLimit: 500000},
      note: 'Résumé 東京 🚀',
      ratio: 0.25,
    },
  }

  it('sets up a key and a registry', () => {
    expect(
      mwp([
        'key',
        'generate',
        '--principal',
        'human:urn:mwp:e2e:human:alice',
        '--key-id',
        'urn:mwp:e2e:key:alice-1',
        '--out',
        key,
      ]).status,
    ).toBe(0)
    expect(mwp(['registry', 'init', '--organization', 'urn:mwp:e2e:org', '--out', registry]).status).toBe(0)
    expect(
      mwp(['registry', 'add', '--registry', registry, '--key', key, '--valid-from', '2026-07-01T00:00:00Z']).status,
    ).toBe(0)
  })

  it('sign | verify - exits 0, and the signed bytes carry createdAt = issuedAt', () => {
    const signed = mwp(['sign', '--document-kind', 'command', '--key', key, '-'], {input: JSON.stringify(unsigned)})
    expect(signed.status, signed.stderr).toBe(0)
    const doc = JSON.parse(signed.stdout)
    expect(doc.signature).toMatchObject({
      algorithm: 'Ed25519',
      keyId: 'urn:mwp:e2e:key:alice-1',
      createdAt: '2026-08-01T12:00:00Z',
    })
    const verified = mwp(['verify', '--registry', registry, '-'], {input: signed.stdout})
    expect(verified.status, verified.stdout + verified.stderr).toBe(0)
    writeFileSync(join(dir, 'signed.json'), signed.stdout)
  })

  it('changing any character of any signed value makes verification fail', () => {
    const doc = JSON.parse(readFileSync(join(dir, 'signed.json'), 'utf8'))
    const variants: string[] = []
    // Every string and number leaf outside the signature envelope, every character position.
    const visit = (value: unknown, set: (v: unknown) => void): void => {
      if (typeof value === 'string') {
        const chars = [...value] // code points: never split a surrogate pair
        chars.forEach((c, i) => {
          set([...chars.slice(0, i), c === 'a' ? 'b' : 'a', ...chars.slice(i + 1)].join(''))
          variants.push(JSON.stringify(doc))
        })
        set(value)
      } else if (typeof value === 'number') {
        set(value + 1)
        variants.push(JSON.stringify(doc))
        set(value)
      } else if (value && typeof value === 'object') {
        for (const k of Object.keys(value)) {
          if (value === doc && k === 'signature') continue
          visit((value as any)[k], (v) => ((value as any)[k] = v))
        }
      }
    }
    visit(doc, () => {})
    const distinct = variants.filter((v) => canonicalize(JSON.parse(v)) !== canonicalize(doc))
    expect(distinct.length).toBeGreaterThan(200)
    const r = mwp(['verify', '--ndjson', '--registry', registry, '--json', '-'], {input: distinct.join('\n') + '\n'})
    const out = json(r)
    expect(r.status).toBe(1)
    expect(out.result.total).toBe(distinct.length)
    expect(out.result.verified).toBe(0)
    // Direct single-file runs for a few of them too.
    for (const v of distinct.slice(0, 3))
      expect(mwp(['verify', '--registry', registry, '-'], {input: v}).status).toBe(1)
  })

  it('works in a real shell pipeline (regression: readFileSync(0) gave EAGAIN on a pipe)', () => {
    const bin = JSON.stringify(join(PROJECT_ROOT, 'bin/run.js'))
    const r = spawnSync(
      'sh',
      [
        '-c',
        `node ${bin} sign --document-kind command --key ${JSON.stringify(key)} - | node ${bin} verify --registry ${JSON.stringify(registry)} -`,
      ],
      {
        input: JSON.stringify(unsigned),
        encoding: 'utf8',
      },
    )
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^verified command/)
  })

  it('sign refuses a protected time that is not uppercase-Z UTC', () => {
    const r = mwp(['sign', '--document-kind', 'command', '--key', key, '-'], {
      input: JSON.stringify({...unsigned, issuedAt: '2026-08-01T14:00:00+02:00'}),
    })
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/uppercase Z/)
    expect(r.stdout).toBe('')
  })

  it('sign --now sets issuedAt and createdAt to the same current UTC time', () => {
    const r = mwp(['sign', '--document-kind', 'command', '--key', key, '--now', '-'], {input: JSON.stringify(unsigned)})
    expect(r.status).toBe(0)
    const doc = JSON.parse(r.stdout)
    expect(doc.issuedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
    expect(doc.signature.createdAt).toBe(doc.issuedAt)
  })

  it('canonicalize, hash and validate', () => {
    const signed = readFileSync(join(dir, 'signed.json'), 'utf8')
    const jcs = mwp(['canonicalize', '-'], {input: signed})
    expect(jcs.stdout).toBe(canonicalize(JSON.parse(signed)))
    const verified = json(mwp(['verify', '--registry', registry, '--json', '-'], {input: signed}))
    expect(json(mwp(['hash', '--json', '-'], {input: signed})).result).toEqual({
      hash: verified.result.signingHash,
      basis: 'signing',
      kind: 'command',
    })
    expect(mwp(['hash', '-'], {input: '{"b":1,"a":[1e30]}'}).stdout).toMatch(/^sha256:[0-9a-f]{64}\n$/)
    expect(mwp(['validate', '--schema', 'command', '-'], {input: signed}).status).toBe(0)
    const bad = mwp(['validate', '--schema', 'command', '-'], {
      input: JSON.stringify({...JSON.parse(signed), sessionEpoch: 3}),
    })
    expect(bad.status).toBe(1)
    expect(bad.stdout).toMatch(/^SCHEMA_VALIDATION_FAILED/)
  })

  it('bad input gets the protocol code and a documented exit code', () => {
    expect(mwp(['canonicalize', '-'], {input: '{"a":1,"a":2}'})).toMatchObject({
      status: 1,
      stdout: 'PROTOCOL_VIOLATION\n',
    })
    expect(mwp(['canonicalize', '-'], {input: '[1e400]'})).toMatchObject({status: 1, stdout: 'PROTOCOL_VIOLATION\n'})
    expect(mwp(['verify', '--registry', registry, join(dir, 'missing.json')]).status).toBe(3)
    expect(mwp(['verify', '--registry', registry]).status).toBe(2)
    expect(mwp(['validate', '--schema', 'nope', '-'], {input: '{}'}).status).toBe(2)
    const env = json(mwp(['verify', '--registry', registry, join(dir, 'missing.json'), '--json']))
    expect(env).toMatchObject({status: 'error', error: {code: 'ENVIRONMENT'}})
  })

  it('MWP_REGISTRY is the environment twin of --registry', () => {
    const r = mwp(['verify', join(dir, 'signed.json')], {env: {MWP_REGISTRY: registry}})
    expect(r.status).toBe(0)
  })
})
