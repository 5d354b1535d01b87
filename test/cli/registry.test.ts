// `mwp key generate` and `mwp registry *` run as real subprocesses of the BUILT CLI (dist/, built
// by test/global-setup.ts): exit codes 0/1/2/3, the --json envelope, key file modes, and that a
// refused edit leaves the registry file byte-for-byte unchanged.

import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parseKeyFile} from '../../src/crypto/keyfile.js'
import {HAVE_UPSTREAM, PROJECT_ROOT, UPSTREAM} from '../support/upstream.js'

const dir = mkdtempSync(join(tmpdir(), 'mwp-cli-registry-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

// The subprocesses must not pick up MWP_* settings of the developer's shell.
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MWP_')))

interface Run {
  status: number | null
  stdout: string
  stderr: string
}

function mwp(args: string[], options: {input?: string | Buffer; env?: Record<string, string>} = {}): Run {
  const r = spawnSync(process.execPath, ['bin/run.js', ...args], {
    cwd: PROJECT_ROOT,
    input: options.input ?? '',
    env: {...cleanEnv, NO_COLOR: '1', ...options.env},
    encoding: 'utf8',
    timeout: 30_000,
  })
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

/** --json output: exactly one JSON object on stdout, nothing else. */
function envelope(r: Run): {status: string; result?: any; error?: any; refusal?: any} {
  const lines = r.stdout.split('\n').filter((l) => l.trim() !== '')
  expect(lines, r.stdout + r.stderr).toHaveLength(1)
  const value = JSON.parse(r.stdout)
  expect(typeof value).toBe('object')
  expect(Array.isArray(value)).toBe(false)
  return value
}

const p = (name: string) => join(dir, name)
const ORG = 'urn:example:organization:acme'
const T0 = '2026-07-01T00:00:00Z'
const T1 = '2026-08-01T00:00:00Z'
const T2 = '2026-09-01T00:00:00Z'
const T3 = '2026-10-01T00:00:00Z'

beforeAll(() => {
  if (!existsSync(join(PROJECT_ROOT, 'dist', 'commands', 'registry', 'add.js')))
    throw new Error('dist/ is not built: run `npx tsc -p tsconfig.json`')
})

describe('mwp key generate', {timeout: 180_000}, () => {
  it('writes a 0600 key file and prints the public binding', () => {
    const r = mwp([
      'key',
      'generate',
      '--principal',
      'agent:urn:example:agent:alice',
      '--key-id',
      'urn:example:key:alice-1',
      '--out',
      p('alice.key.json'),
    ])
    expect(r.status, r.stderr).toBe(0)
    expect(statSync(p('alice.key.json')).mode & 0o777).toBe(0o600)
    const key = parseKeyFile(readFileSync(p('alice.key.json'), 'utf8'))
    expect(JSON.parse(r.stdout)).toEqual({
      keyId: 'urn:example:key:alice-1',
      principal: {type: 'agent', id: 'urn:example:agent:alice'},
      algorithm: 'Ed25519',
      publicKey: key.publicKeyB64,
    })
    expect(r.stdout).not.toContain('seed')
  })

  it('--json: {status, result: {binding, keyFile}} with a default urn:uuid key ID', () => {
    const r = mwp([
      'key',
      'generate',
      '--principal',
      'human:urn:example:human:bob',
      '--out',
      p('bob.key.json'),
      '--json',
    ])
    expect(r.status).toBe(0)
    const e = envelope(r)
    expect(e.status).toBe('ok')
    expect(e.result.keyFile).toBe(p('bob.key.json'))
    expect(e.result.binding.keyId).toMatch(
      /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    )
    expect(e.result.binding.principal).toEqual({type: 'human', id: 'urn:example:human:bob'})
    expect(statSync(p('bob.key.json')).mode & 0o777).toBe(0o600)
    expect(JSON.stringify(e)).not.toContain('seed')
  })

  it('refuses to overwrite an existing key file (exit 3), leaving it unchanged', () => {
    const before = readFileSync(p('alice.key.json'))
    const r = mwp(['key', 'generate', '--principal', 'agent:urn:example:agent:alice', '--out', p('alice.key.json')])
    expect(r.status).toBe(3)
    expect(r.stderr).toMatch(/already exists/)
    expect(r.stdout).toBe('')
    expect(readFileSync(p('alice.key.json')).equals(before)).toBe(true)
    const j = mwp([
      'key',
      'generate',
      '--principal',
      'agent:urn:example:agent:alice',
      '--out',
      p('alice.key.json'),
      '--json',
    ])
    expect(j.status).toBe(3)
    expect(envelope(j)).toMatchObject({status: 'error', error: {code: 'ENVIRONMENT'}})
  })

  it('rejects a malformed --principal or --key-id (exit 2)', () => {
    for (const args of [
      ['--principal', 'robot:urn:example:x'],
      ['--principal', 'urn'],
      ['--principal', 'agent:not a uri'],
      ['--principal', 'agent:urn:example:agent:a', '--key-id', 'relative/key'],
    ]) {
      const r = mwp(['key', 'generate', ...args, '--out', p('never.key.json')])
      expect(r.status, args.join(' ')).toBe(2)
      expect(existsSync(p('never.key.json'))).toBe(false)
    }
    const r = mwp(['key', 'generate', '--principal', 'nope', '--json'])
    expect(r.status).toBe(2)
    expect(envelope(r)).toMatchObject({status: 'error', error: {code: 'USAGE'}})
  })

  it('without --out prints the key file on stdout (not a terminal) and the binding on stderr', () => {
    const r = mwp(['key', 'generate', '--principal', 'service:urn:example:service:authority'])
    expect(r.status).toBe(0)
    const key = parseKeyFile(r.stdout)
    expect(key.principal).toEqual({type: 'service', id: 'urn:example:service:authority'})
    // The binding is a pretty-printed JSON block on stderr (which may also carry oclif warnings).
    const block = r.stderr.slice(r.stderr.indexOf('{\n'), r.stderr.indexOf('\n}') + 2)
    expect(JSON.parse(block)).toMatchObject({keyId: key.keyId, publicKey: key.publicKeyB64})
    const j = mwp(['key', 'generate', '--principal', 'service:urn:example:service:authority', '--json'])
    const e = envelope(j)
    expect(e.result.keyFile).toBeNull()
    expect(parseKeyFile(JSON.stringify(e.result.privateKey)).publicKeyB64).toBe(e.result.binding.publicKey)
  })

  it('takes --out from MWP_KEY_OUT', () => {
    const r = mwp(['key', 'generate', '--principal', 'agent:urn:example:agent:env'], {
      env: {MWP_KEY_OUT: p('env.key.json')},
    })
    expect(r.status).toBe(0)
    expect(statSync(p('env.key.json')).mode & 0o777).toBe(0o600)
  })
})

describe('mwp registry init / add / expire / revoke / show / check', {timeout: 180_000}, () => {
  const REG = p('registry.json')
  const bytes = () => readFileSync(REG)
  let aliceKey: string
  let bobKey: string

  /** Runs an edit that must be refused, checking the exit code and that the file did not change. */
  function refused(args: string[], exit: number, reason?: string): Run {
    const before = bytes()
    const r = mwp(args)
    expect(r.status, `${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe(exit)
    expect(bytes().equals(before), 'registry file changed').toBe(true)
    if (reason) {
      expect(r.stdout).toContain(`refused (${reason})`)
      const j = mwp([...args, '--json'])
      expect(j.status).toBe(exit)
      const e = envelope(j)
      expect(e).toMatchObject({status: 'rejected', error: {code: 'INVALID_COMMAND'}, refusal: {reason}})
      expect(bytes().equals(before)).toBe(true)
    }
    return r
  }

  it('init creates an empty registry, refuses to overwrite without --force', () => {
    const r = mwp(['registry', 'init', '--organization', ORG, '--out', REG])
    expect(r.status, r.stderr).toBe(0)
    expect(readFileSync(REG, 'utf8')).toBe(`{\n  "organizationId": "${ORG}",\n  "bindings": []\n}\n`)
    refused(['registry', 'init', '--organization', 'urn:example:organization:other', '--out', REG], 3)
    expect(mwp(['registry', 'init', '--organization', 'relative/org', '--out', p('other.json')]).status).toBe(2)
    expect(existsSync(p('other.json'))).toBe(false)
    const f = mwp([
      'registry',
      'init',
      '--organization',
      'urn:example:organization:other',
      '--out',
      p('other.json'),
      '--json',
    ])
    expect(envelope(f)).toMatchObject({
      status: 'ok',
      result: {file: p('other.json'), registry: {organizationId: 'urn:example:organization:other', bindings: []}},
    })
    expect(mwp(['registry', 'init', '--organization', ORG, '--out', p('other.json'), '--force']).status).toBe(0)
    expect(JSON.parse(readFileSync(p('other.json'), 'utf8')).organizationId).toBe(ORG)
  })

  it('check reports an empty registry as not yet usable (exit 1)', () => {
    const r = mwp(['registry', 'check', REG])
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/registry-empty/)
    const j = envelope(mwp(['registry', 'check', REG, '--json']))
    expect(j).toMatchObject({status: 'rejected', result: {valid: false, fault: {reason: 'registry-empty'}}})
  })

  it('add --key adds the binding from a key file', () => {
    aliceKey = parseKeyFile(readFileSync(p('alice.key.json'), 'utf8')).publicKeyB64
    bobKey = parseKeyFile(readFileSync(p('bob.key.json'), 'utf8')).publicKeyB64
    const r = mwp(['registry', 'add', '--registry', REG, '--key', p('alice.key.json'), '--valid-from', T0])
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({
      keyId: 'urn:example:key:alice-1',
      principal: {type: 'agent', id: 'urn:example:agent:alice'},
      algorithm: 'Ed25519',
      publicKey: aliceKey,
      validFrom: T0,
      validityHistory: [],
    })
    const reg = JSON.parse(readFileSync(REG, 'utf8'))
    expect(reg.bindings).toHaveLength(1)
    expect(readFileSync(REG, 'utf8')).toBe(JSON.stringify(reg, null, 2) + '\n')
    expect(mwp(['registry', 'check', REG]).status).toBe(0)
  })

  it('add --public-key with --key-id and --principal; --valid-from defaults to now (UTC Z); MWP_REGISTRY works', () => {
    const r = mwp(
      [
        'registry',
        'add',
        '--public-key',
        bobKey,
        '--key-id',
        'urn:example:key:bob-1',
        '--principal',
        'human:urn:example:human:bob',
        '--json',
      ],
      {env: {MWP_REGISTRY: REG}},
    )
    expect(r.status, r.stdout + r.stderr).toBe(0)
    const e = envelope(r)
    expect(e.status).toBe('ok')
    expect(e.result.binding.validFrom).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(JSON.parse(readFileSync(REG, 'utf8')).bindings).toHaveLength(2)
  })

  it('refused adds leave the file byte-identical (exit 1)', () => {
    const add = (...args: string[]) => ['registry', 'add', '--registry', REG, ...args]
    // C17 on the edit path: identical re-add is a no-op refusal.
    refused(add('--key', p('alice.key.json'), '--valid-from', T0), 1, 'binding-exists')
    refused(add('--key', p('alice.key.json'), '--valid-from', T1), 1, 'valid-from-changed')
    // C16 alias, C15 reuse, C14 rebinding.
    refused(
      add(
        '--public-key',
        aliceKey,
        '--key-id',
        'urn:example:key:alice-alias',
        '--principal',
        'agent:urn:example:agent:alice',
        '--valid-from',
        T0,
      ),
      1,
      'key-alias',
    )
    refused(
      add(
        '--public-key',
        aliceKey,
        '--key-id',
        'urn:example:key:carol-1',
        '--principal',
        'agent:urn:example:agent:carol',
        '--valid-from',
        T0,
      ),
      1,
      'public-key-reuse',
    )
    refused(
      add(
        '--public-key',
        'rKDfsWAggf0Q_zwHuO06-LedcEVvT7piBxZkPAXqD98',
        '--key-id',
        'urn:example:key:alice-1',
        '--principal',
        'agent:urn:example:agent:alice',
        '--valid-from',
        T0,
      ),
      1,
      'key-id-rebinding',
    )
    refused(
      add(
        '--public-key',
        '7P_______________________________________38',
        '--key-id',
        'urn:example:key:weak',
        '--principal',
        'agent:urn:example:agent:weak',
        '--valid-from',
        T0,
      ),
      1,
      'public-key-small-order',
    )
  })

  it('malformed add arguments are usage errors (exit 2); a missing file is exit 3', () => {
    const add = (...args: string[]) => ['registry', 'add', '--registry', REG, ...args]
    const K = 'rKDfsWAggf0Q_zwHuO06-LedcEVvT7piBxZkPAXqD98'
    refused(
      add('--public-key', K + '=', '--key-id', 'urn:example:key:x', '--principal', 'agent:urn:example:agent:x'),
      2,
    )
    refused(
      add(
        '--public-key',
        K,
        '--key-id',
        'urn:example:key:x',
        '--principal',
        'agent:urn:example:agent:x',
        '--valid-from',
        'yesterday',
      ),
      2,
    )
    refused(add('--public-key', K, '--key-id', 'key x', '--principal', 'agent:urn:example:agent:x'), 2)
    refused(add('--public-key', K, '--key-id', 'urn:example:key:x'), 2) // no --principal
    refused(add('--key', p('alice.key.json'), '--public-key', K), 2)
    refused(add(), 2)
    refused(add('--key', p('alice.key.json'), '--key-id', 'urn:example:key:other'), 2)
    refused(add('--key', p('missing.key.json')), 3)
    expect(mwp(['registry', 'add', '--registry', p('missing.json'), '--key', p('alice.key.json')]).status).toBe(3)
    expect(existsSync(p('missing.json'))).toBe(false)
  })

  it('expire and revoke append validity records', () => {
    const r = mwp([
      'registry',
      'expire',
      '--yes',
      '--registry',
      REG,
      '--key-id',
      'urn:example:key:alice-1',
      '--valid-until',
      T3,
      '--recorded-at',
      T1,
    ])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/effective validUntil: 2026-10-01T00:00:00Z/)
    const j = mwp([
      'registry',
      'revoke',
      '--yes',
      '--registry',
      REG,
      '--key-id',
      'urn:example:key:alice-1',
      '--revoked-at',
      T2,
      '--recorded-at',
      T1,
      '--json',
    ])
    expect(j.status).toBe(0)
    expect(envelope(j)).toMatchObject({
      status: 'ok',
      result: {
        keyId: 'urn:example:key:alice-1',
        record: {sequence: 2, recordedAt: T1, revokedAt: T2},
        binding: {validUntil: T3, revokedAt: T2},
      },
    })
    expect(JSON.parse(readFileSync(REG, 'utf8')).bindings[0].validityHistory).toEqual([
      {sequence: 1, recordedAt: T1, validUntil: T3},
      {sequence: 2, recordedAt: T1, revokedAt: T2},
    ])
    // Moving earlier is allowed, and the earliest is effective.
    expect(
      mwp([
        'registry',
        'expire',
        '--yes',
        '--registry',
        REG,
        '--key-id',
        'urn:example:key:alice-1',
        '--valid-until',
        '2026-09-15T00:00:00Z',
        '--recorded-at',
        T2,
      ]).status,
    ).toBe(0)
  })

  it('refused expire/revoke leave the file byte-identical', () => {
    const exp = (...args: string[]) => [
      'registry',
      'expire',
      '--yes',
      '--registry',
      REG,
      '--key-id',
      'urn:example:key:alice-1',
      ...args,
    ]
    const rev = (...args: string[]) => [
      'registry',
      'revoke',
      '--yes',
      '--registry',
      REG,
      '--key-id',
      'urn:example:key:alice-1',
      ...args,
    ]
    refused(exp('--valid-until', T3, '--recorded-at', T2), 1, 'history-boundary-moved-later')
    refused(rev('--revoked-at', T3, '--recorded-at', T2), 1, 'history-boundary-moved-later')
    refused(exp('--valid-until', '2026-09-15T00:00:00Z', '--recorded-at', T2), 1, 'boundary-unchanged')
    refused(rev('--revoked-at', '2026-09-01T02:00:00+02:00', '--recorded-at', T2), 1, 'boundary-unchanged')
    refused(exp('--valid-until', T1, '--recorded-at', T0), 1, 'history-recorded-at-decreasing')
    refused(
      ['registry', 'revoke', '--yes', '--registry', REG, '--key-id', 'urn:example:key:nobody', '--revoked-at', T1],
      1,
      'key-unknown',
    )
    refused(exp('--valid-until', 'soon'), 2)
    refused(rev('--revoked-at', T1, '--recorded-at', '2026-13-01T00:00:00Z'), 2)
    refused(['registry', 'revoke', '--yes', '--registry', REG, '--revoked-at', T1], 2) // missing --key-id
  })

  it('refuses to edit while the lock file exists (exit 3)', () => {
    writeFileSync(`${REG}.lock`, '1\n')
    try {
      refused(
        ['registry', 'revoke', '--yes', '--registry', REG, '--key-id', 'urn:example:key:bob-1', '--revoked-at', T1],
        3,
      )
    } finally {
      rmSync(`${REG}.lock`)
    }
  })

  it('show lists bindings with effective boundaries and status', () => {
    const r = mwp(['registry', 'show', '--registry', REG, '--at', '2026-08-15T00:00:00Z'])
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('urn:example:key:alice-1')
    expect(r.stdout).toContain('2026-09-15T00:00:00Z')
    expect(r.stdout).toMatch(/valid/)
    const at = (t: string) => {
      const e = envelope(
        mwp(['registry', 'show', '--registry', REG, '--key-id', 'urn:example:key:alice-1', '--at', t, '--json']),
      )
      expect(e.status).toBe('ok')
      expect(e.result.bindings).toHaveLength(1)
      return e.result.bindings[0]
    }
    expect(at('2026-06-01T00:00:00Z')).toMatchObject({
      status: 'not-yet-valid',
      validFrom: T0,
      validUntil: '2026-09-15T00:00:00Z',
      revokedAt: T2,
      historyRecords: 3,
    })
    expect(at(T1).status).toBe('valid')
    expect(at(T2).status).toBe('revoked')
    const all = envelope(mwp(['registry', 'show', '--registry', '-', '--json'], {input: readFileSync(REG)}))
    expect(all.result.bindings.map((b: {keyId: string}) => b.keyId)).toEqual([
      'urn:example:key:alice-1',
      'urn:example:key:bob-1',
    ])
    const unknown = mwp(['registry', 'show', '--registry', REG, '--key-id', 'urn:example:key:nobody'])
    expect(unknown.status).toBe(1)
    expect(mwp(['registry', 'show', '--registry', p('missing.json')]).status).toBe(3)
    expect(mwp(['registry', 'show', '--registry', REG, '--at', 'later']).status).toBe(2)
  })

  it('check: valid with warnings is exit 0; stdin works; an invalid snapshot is exit 1 with the reason', () => {
    const r = mwp(['registry', 'check', REG, '--at', '2026-12-01T00:00:00Z'])
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/valid registry/)
    expect(r.stdout).toMatch(/warning key-revoked/)
    const j = envelope(mwp(['registry', 'check', '-', '--json'], {input: readFileSync(REG)}))
    expect(j).toMatchObject({status: 'ok', result: {valid: true, organizationId: ORG, bindings: 2}})

    const reg = JSON.parse(readFileSync(REG, 'utf8'))
    reg.bindings[1].publicKey = reg.bindings[0].publicKey
    const bad = mwp(['registry', 'check', '-'], {input: JSON.stringify(reg)})
    expect(bad.status).toBe(1)
    expect(bad.stdout).toMatch(/INVALID \(public-key-reuse\)/)
    const dup = mwp(['registry', 'check', '-', '--json'], {
      input: '{"organizationId":"urn:a:b","organizationId":"urn:a:c","bindings":[]}',
    })
    expect(dup.status).toBe(1)
    expect(envelope(dup)).toMatchObject({
      status: 'rejected',
      result: {valid: false, fault: {reason: 'evidence-malformed'}},
    })
    expect(mwp(['registry', 'check', p('missing.json')]).status).toBe(3)
    expect(mwp(['registry', 'check']).status).toBe(2)
    expect(mwp(['registry', 'check'], {env: {MWP_REGISTRY: REG}}).status).toBe(0)

    // Editing an invalid file is refused and leaves it unchanged.
    writeFileSync(p('broken.json'), JSON.stringify(reg, null, 2))
    const before = readFileSync(p('broken.json'))
    const e = mwp([
      'registry',
      'revoke',
      '--yes',
      '--registry',
      p('broken.json'),
      '--key-id',
      'urn:example:key:bob-1',
      '--revoked-at',
      T1,
    ])
    expect(e.status).toBe(1)
    expect(e.stdout).toMatch(/refused \(registry-invalid\)/)
    expect(readFileSync(p('broken.json')).equals(before)).toBe(true)
  })
})

describe.skipIf(!HAVE_UPSTREAM)('mwp registry check on the upstream registry fixtures', () => {
  it('registry add takes an upstream test-only key file with --principal; stdin cannot be edited', () => {
    const reg = p('upstream.json')
    expect(mwp(['registry', 'init', '--organization', ORG, '--out', reg]).status).toBe(0)
    const key = join(UPSTREAM, 'cryptography', 'keys', 'signing-developer-one.json')
    expect(mwp(['registry', 'add', '--registry', reg, '--key', key, '--valid-from', T0]).status).toBe(2) // names no principal
    const r = mwp([
      'registry',
      'add',
      '--registry',
      reg,
      '--key',
      key,
      '--principal',
      'agent:urn:missionweaveprotocol:agent:developer-one',
      '--valid-from',
      T0,
      '--json',
    ])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(envelope(r).result.binding).toMatchObject({
      keyId: 'urn:missionweaveprotocol:key:crypto-vector-developer-one',
      publicKey: '7D-keB5WWULuPx53Zwf9j2JVLLTq4btqsJE1ubL66Vk',
    })
    expect(
      mwp(['registry', 'add', '--registry', '-', '--key', key, '--principal', 'agent:urn:x:y'], {
        input: readFileSync(reg),
      }).status,
    ).toBe(2)
  })

  const keys = join(UPSTREAM, 'cryptography', 'keys')
  const cases: Array<[string, number, string?]> = [
    ['registry-valid.json', 0],
    ['registry-key-not-yet-valid.json', 0],
    ['registry-revoked-at-equality.json', 0],
    ['registry-wrong-principal.json', 0],
    ['registry-key-alias.json', 1, 'key-alias'],
    ['registry-public-key-rebinding.json', 1, 'key-id-rebinding'],
    ['registry-public-key-cross-principal-reuse.json', 1, 'public-key-reuse'],
    ['registry-public-key-mixed-order.json', 1, 'public-key-mixed-order'],
    ['registry-organization-id-relative-reference.json', 1, 'organization-id-invalid'],
    ['registry-unrelated-key-id-trailing-line-feed.json', 1, 'key-id-invalid'],
  ]
  it.each(cases)('%s → exit %i', (file, exit, reason) => {
    const r = mwp(['registry', 'check', join(keys, file), '--json'])
    expect(r.status).toBe(exit)
    const e = envelope(r)
    expect(e.result.valid).toBe(exit === 0)
    if (reason) expect(e.result.fault.reason).toBe(reason)
  })
})
