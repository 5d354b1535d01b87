// One meaning per flag name across every command (issue #18), read from the oclif manifest the
// build writes; the renamed flags' earlier names still work through the real CLI and warn; and
// `registry revoke|expire`, which cannot be undone, confirm like `mission cancel`.
// Build first: npx tsc -p tsconfig.json && node dist/scripts/oclif-manifest.js

import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {mwp, onTerminal} from '../support/cli.js'
import {type OperatorOrg, givenMission, logged, operatorOrg, opOn} from '../support/operator-helpers.js'
import {PROJECT_ROOT} from '../support/upstream.js'

interface ManifestFlag {
  name: string
  description?: string
  aliases?: string[]
  deprecateAliases?: boolean
}
const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, {flags: Record<string, ManifestFlag>}>
}
const commands = Object.entries(manifest.commands)

/** Every command (by id) declaring the flag `name`, with its description. */
function uses(name: string): Map<string, string> {
  return new Map(commands.flatMap(([id, c]) => (c.flags[name] ? [[id, c.flags[name].description ?? '']] : [])))
}

/**
 * The one meaning of each flag name whose description is worded per command; every description
 * must say it. A flag name shared by several commands and missing here must read the same in each.
 */
const MEANING: Record<string, RegExp> = {
  registry: /^Organization registry (snapshot )?file/,
  store: /sqlite:PATH.*postgres:\/\//,
  key: /key file/i,
  config: /^Organization configuration file/,
  agent: /Agent/,
  url: /^Authority (server )?URL/,
  'scheduling-policy': /^Organization scheduling policy \(JSON\)/,
  ca: /^CA certificate file to trust/,
  group: /^Group ID/,
  out: /file to (write|create)/i,
  host: /host|address/i,
  port: /port/i,
  root: /root/,
  principal: /TYPE:URI/,
  'key-id': /key ID/i,
  force: /replac/i,
  yes: /^\w+ without asking \(for scripts; needed off a terminal\)\.$/,
  message: /\(your words, sent as /,
  at: /^Instant for .* Default: now\.$/,
  output: /Default: \w+ on a terminal, \w+ when piped/, // the format of stdout; values per command
}

describe('one meaning per flag name (oclif manifest)', () => {
  it('every flag name used by more than one command means one thing in all of them', () => {
    const shared = [...new Set(commands.flatMap(([, c]) => Object.keys(c.flags)))].filter((n) => uses(n).size > 1)
    expect(shared.length).toBeGreaterThan(10)
    for (const name of shared) {
      const descriptions = uses(name)
      if (MEANING[name]) {
        for (const [id, d] of descriptions) expect(d, `${id} --${name}`).toMatch(MEANING[name])
      } else {
        expect(new Set(descriptions.values()).size, `--${name} is worded differently: add it to MEANING`).toBe(1)
      }
    }
  })

  it('--kind is the Command kind, only on command issue; --at is an evaluation instant, only on show and check', () => {
    expect([...uses('kind').keys()]).toEqual(['command:issue'])
    expect([...uses('at').keys()].sort()).toEqual(['registry:check', 'registry:show'])
    expect([...uses('document-kind').keys()].sort()).toEqual(['admit', 'hash', 'sign', 'verify'])
    expect([...uses('event-kind').keys()]).toEqual(['group:tail'])
    expect([...uses('valid-until').keys()]).toEqual(['registry:expire'])
    expect([...uses('revoked-at').keys()]).toEqual(['registry:revoke'])
  })

  it('every alias is a deprecated earlier name, never a flag of its own command', () => {
    const aliases: string[] = []
    for (const [id, c] of commands)
      for (const f of Object.values(c.flags))
        for (const a of f.aliases ?? []) {
          aliases.push(`${id} --${a} → --${f.name}`)
          expect(f.deprecateAliases, `${id} --${a}`).toBe(true)
          expect(c.flags[a], `${id} --${a} is both a flag and an alias`).toBeUndefined()
        }
    expect(aliases.sort()).toEqual(
      [
        'admit --kind → --document-kind',
        'group:tail --kind → --event-kind',
        'hash --kind → --document-kind',
        'mission:approve --comments → --message',
        'mission:cancel --reason → --message',
        'mission:direct --text → --message',
        'mission:request-changes --reason → --message',
        'registry:expire --at → --valid-until',
        'registry:revoke --at → --revoked-at',
        'sign --kind → --document-kind',
        'verify --kind → --document-kind',
      ].sort(),
    )
  })
})

const deprecated = (old: string, now: string) => `The "--${old}" flag has been deprecated. Use "--${now}`

describe('the earlier names still work and warn (real CLI)', () => {
  const UNSIGNED = join(PROJECT_ROOT, 'fixtures/unsigned/command.json')
  const KEY = join(PROJECT_ROOT, 'fixtures/keys/coordinator.key.json')

  it('sign / hash / verify --kind is --document-kind, with a warning on stderr', () => {
    const old = mwp(['sign', '--kind', 'command', '--key', KEY, UNSIGNED])
    expect(old.status, old.stderr).toBe(0)
    expect(old.stderr).toContain(deprecated('kind', 'document-kind'))
    const now = mwp(['sign', '--document-kind', 'command', '--key', KEY, UNSIGNED])
    expect(now.status, now.stderr).toBe(0)
    expect(now.stderr).toBe('')
    expect(old.stdout).toBe(now.stdout)
    // the alias carries the value: an unknown kind is refused by its options
    expect(mwp(['sign', '--kind', 'nonsense', '--key', KEY, UNSIGNED]).status).toBe(2)
    const doc = join(PROJECT_ROOT, 'fixtures/documents/command.json')
    const hash = mwp(['hash', '--kind', 'command', doc])
    expect(hash.status).toBe(0)
    expect(hash.stderr).toContain(deprecated('kind', 'document-kind'))
    const verify = mwp(['verify', '--kind', 'command', '--registry', join(PROJECT_ROOT, 'fixtures/registry.json'), doc])
    expect(verify.status, verify.stdout + verify.stderr).toBe(0)
    expect(verify.stderr).toContain(deprecated('kind', 'document-kind'))
  })

  describe('operator commands', () => {
    let o: OperatorOrg
    let op: ReturnType<typeof opOn>
    beforeAll(async () => {
      o = await operatorOrg('flag-names')
      op = opOn(o)
    }, 60_000)
    afterAll(() => o?.close())

    it('mission direct --text, group tail --kind, mission cancel --reason', async () => {
      const g = await givenMission(o)
      const direct = op(['mission', 'direct', g, '--text', 'old words'])
      expect(direct.status, direct.stderr).toBe(0)
      expect(direct.stderr).toContain(deprecated('text', 'message'))
      const tail = op(['group', 'tail', g, '--kind', 'message.posted'])
      expect(tail.status, tail.stderr).toBe(0)
      expect(tail.stderr).toContain(deprecated('kind', 'event-kind'))
      const posted = tail.stdout.trim().split('\n')
      expect(posted).toHaveLength(1)
      expect(posted[0]).toContain('old words')
      const cancel = op(['mission', 'cancel', g, '--reason', 'Superseded.', '--yes'])
      expect(cancel.status, cancel.stderr).toBe(0)
      expect(cancel.stderr).toContain(deprecated('reason', 'message'))
      expect((await logged(o, g, 'mission.cancelled')).at(-1)!.payload).toMatchObject({reason: 'Superseded.'})
    })

    it('mission request-changes --reason and mission approve --comments parse (the state refuses them)', async () => {
      const g = await givenMission(o)
      for (const [args, old] of [
        [['mission', 'request-changes', g, '--reason', 'x'], 'reason'],
        [['mission', 'approve', g, '--yes', '--comments', 'x'], 'comments'],
      ] as const) {
        const r = op([...args])
        expect(r.stderr).toContain(deprecated(old, 'message'))
        expect(r.stderr + r.stdout).not.toMatch(/Nonexistent flag/)
      }
      // the new name with a wrong flag still fails as a usage error: the check above can fail
      expect(op(['mission', 'request-changes', g, '--reasons', 'x']).stderr).toMatch(/Nonexistent flag/)
    })
  })
})

describe('registry revoke and expire confirm like mission cancel', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-flag-names-'))
  const REG = join(dir, 'registry.json')
  const KEY_ID = 'urn:example:key:alice-1'
  const edit = (verb: 'revoke' | 'expire', ...rest: string[]) => [
    'registry',
    verb,
    '--registry',
    REG,
    '--key-id',
    KEY_ID,
    ...rest,
  ]
  beforeAll(() => {
    const key = join(dir, 'alice.key.json')
    for (const args of [
      ['key', 'generate', '--principal', 'agent:urn:example:agent:alice', '--key-id', KEY_ID, '--out', key],
      ['registry', 'init', '--organization', 'urn:example:org', '--out', REG],
      ['registry', 'add', '--registry', REG, '--key', key],
    ]) {
      const r = mwp(args)
      expect(r.status, r.stderr).toBe(0)
    }
  })
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('off a terminal without --yes: a usage error (exit 2) saying to pass --yes, and the file is untouched', () => {
    const before = readFileSync(REG)
    for (const args of [
      edit('revoke', '--revoked-at', '2026-08-01T00:00:00Z'),
      edit('expire', '--valid-until', '2026-09-01T00:00:00Z', '--json'),
    ]) {
      const r = mwp(args)
      expect(r.status, r.stdout + r.stderr).toBe(2)
      expect(r.stdout + r.stderr).toContain('pass --yes')
    }
    expect(readFileSync(REG).equals(before)).toBe(true)
  })

  it('on a terminal: No records nothing (exit 0); Yes records it', async () => {
    const before = readFileSync(REG)
    const no = await onTerminal(edit('revoke', '--revoked-at', '2026-08-01T00:00:00Z'), 'n\r')
    expect(no.screen).toContain('This cannot be undone.')
    expect(no.status, no.screen).toBe(0)
    expect(no.screen).toContain('not recorded')
    expect(readFileSync(REG).equals(before)).toBe(true)
    const yes = await onTerminal(edit('expire', '--valid-until', '2026-09-01T00:00:00Z'), 'y\r')
    expect(yes.status, yes.screen).toBe(0)
    expect(yes.screen).toContain(`recorded ${KEY_ID} validUntil 2026-09-01T00:00:00Z`)
    expect(JSON.parse(readFileSync(REG, 'utf8')).bindings[0].validityHistory).toEqual([
      expect.objectContaining({sequence: 1, validUntil: '2026-09-01T00:00:00Z'}),
    ])
  }, 30_000)

  it('with --yes (and the earlier --at, which warns): recorded', () => {
    const r = mwp([...edit('revoke', '--at', '2026-08-01T00:00:00Z', '--yes'), '--json'])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stderr).toContain(deprecated('at', 'revoked-at'))
    expect(JSON.parse(r.stdout).result.record).toMatchObject({sequence: 2, revokedAt: '2026-08-01T00:00:00Z'})
    const shown = JSON.parse(mwp(['registry', 'show', '--registry', REG, '--json']).stdout)
    expect(shown.result.bindings[0]).toMatchObject({
      validUntil: '2026-09-01T00:00:00Z',
      revokedAt: '2026-08-01T00:00:00Z',
    })
  })
})
