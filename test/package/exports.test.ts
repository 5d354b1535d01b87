// The package as a user installs it: `npm pack` of the built tree, extracted into a consumer
// project's node_modules with mwp's runtime dependencies linked beside it (no network install).
// Runtime: every export imports by package name and does real work (consumer/use.mjs). Types:
// tsc (NodeNext) over consumer/consumer.ts, while consumer/missing.ts must fail exactly as listed.

import {execFileSync, spawnSync} from 'node:child_process'
import {cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const manifest: {dependencies: Record<string, string>; exports: Record<string, unknown>} = JSON.parse(
  readFileSync(join(root, 'package.json'), 'utf8'),
)

interface PackEntry {
  filename: string
  files: {path: string}[]
}

let tmp: string
let consumer: string
let shipped: string[]

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'mwp-pack-'))
  const packed: PackEntry[] = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], {
      cwd: root,
      encoding: 'utf8',
    }),
  )
  const [entry] = packed
  if (entry === undefined) throw new Error('npm pack reported no tarball')
  shipped = entry.files.map((f) => f.path)
  consumer = join(tmp, 'consumer')
  const installed = join(consumer, 'node_modules', 'mwp')
  mkdirSync(installed, {recursive: true})
  execFileSync('tar', ['-xzf', join(tmp, entry.filename), '-C', installed, '--strip-components=1'])
  // @types/node: what any TypeScript consumer of a Node library has; the rest are mwp's own dependencies.
  for (const dependency of [...Object.keys(manifest.dependencies), '@types/node']) {
    const link = join(consumer, 'node_modules', dependency)
    mkdirSync(dirname(link), {recursive: true})
    symlinkSync(join(root, 'node_modules', dependency), link, 'dir')
  }
  cpSync(join(root, 'test', 'package', 'consumer'), consumer, {recursive: true})
}, 120_000)

afterAll(() => {
  if (tmp) rmSync(tmp, {recursive: true, force: true})
})

describe('the packed tarball', () => {
  it('ships the built library, the CLI and the schemas, and no tests, benches or build scripts', () => {
    for (const path of ['bin/run.js', 'oclif.manifest.json', 'dist/src/json/index.js', 'dist/src/json/index.d.ts']) {
      expect(shipped).toContain(path)
    }
    expect(shipped.some((p) => p.startsWith('schemas/'))).toBe(true)
    expect(shipped.some((p) => p.startsWith('dist/schemas/'))).toBe(true)
    expect(shipped.filter((p) => /^(test|bench|scripts|src|fixtures)\/|^dist\/(test|bench|scripts)\//.test(p))).toEqual(
      [],
    )
    // Every export's files are in the tarball.
    for (const [name, target] of Object.entries(manifest.exports)) {
      const paths = typeof target === 'string' ? [target] : Object.values(target as Record<string, string>)
      for (const path of paths) expect(shipped, name).toContain(path.replace(/^\.\//, ''))
    }
  })

  it('imports every export by package name and uses it: sign, verify, canonicalize, a store, an authority, a server, a capability token', () => {
    const out = execFileSync(process.execPath, ['use.mjs', join(root, 'fixtures')], {cwd: consumer, encoding: 'utf8'})
    expect(JSON.parse(out)).toEqual({
      package: 'mwp',
      json: {canonical: '{"a":true,"b":[1e+21,"é"]}', duplicate: 'duplicate-member', base64url: 'mwp', timestamp: true},
      signing: {
        verified: true,
        sameHash: true,
        matchesFixture: true,
        tampered: 'AUTH_INVALID_SIGNATURE',
        branded: true,
        strict: true,
      },
      authz: {verified: true, tampered: 'AUTH_INVALID_SIGNATURE', issue: 'function'},
      agent: {
        dispatched: 'urn:example:work:1',
        key: 'idem:',
        exec: {type: 'outcome', outcome: {type: 'submit'}},
        start: 'function',
      },
      errors: {code: 'GROUP_NOT_FOUND', listed: true},
      admission: {fresh: null, stale: 'AUTH_INVALID_SIGNATURE', acceptNew: 'function'},
      store: {organizationId: 'urn:mwp:dev:org:example', unknownScheme: 'unknown-scheme'},
      authority: {unknownGroup: null, garbage: 'PROTOCOL_VIOLATION'},
      wire: {url: true, sessions: [1], event: true},
    })
  })

  it('refuses a deep import past the exports map', () => {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', "await import('mwp/dist/src/json/jcs.js')"], {
      cwd: consumer,
      encoding: 'utf8',
    })
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED')
  })

  it('runs the CLI from the installed package', () => {
    const out = execFileSync(process.execPath, [join('node_modules', 'mwp', 'bin', 'run.js'), 'canonicalize', '-'], {
      cwd: consumer,
      input: '{"b":1,"a":[true]}',
      encoding: 'utf8',
    })
    expect(out).toBe('{"a":[true],"b":1}')
  })

  it('type-checks a consumer through the declarations; a missing name or a deep import fails', () => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
    const run = spawnSync(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], {cwd: consumer, encoding: 'utf8'})
    const errors = run.stdout
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith(' '))
      .map((line) => line.replace(/\(\d+,\d+\)/, '').replace(/: error (TS\d+):.*/, ' $1'))
    expect(errors).toEqual(['missing.ts TS2305', 'missing.ts TS2305', 'missing.ts TS2307'])
  })
})
