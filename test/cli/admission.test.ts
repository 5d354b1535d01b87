// `mwp store init`, `mwp admit`, `mwp verify --historical`, `mwp audit list` end to end, on a real
// SQLite file and a real PostgreSQL server: idempotent first admission, backdating refused,
// historical replay after a later revocation, protected audit entries, and 8 separate processes
// first-admitting the same document at once.

import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {json, mwp, mwpAsync} from '../support/cli.js'
import {type PostgresInstance, shouldRunPostgres, startPostgres} from '../support/postgres-harness.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const ADMISSION_KEY = join(PROJECT_ROOT, 'fixtures/keys/admission.key.json')
const ORG = 'urn:mwp:dev:org:example'

/** A fresh dev Organization: agent key + registry in a temp dir, and an initialized store. */
function organization(store: string) {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-admission-'))
  const key = join(dir, 'agent.key.json')
  const registry = join(dir, 'registry.json')
  const ok = (r: ReturnType<typeof mwp>) => expect(r.status, r.stdout + r.stderr).toBe(0)
  ok(
    mwp([
      'key',
      'generate',
      '--principal',
      'agent:urn:mwp:test:agent:ada',
      '--key-id',
      'urn:mwp:test:key:ada-1',
      '--out',
      key,
    ]),
  )
  ok(mwp(['registry', 'init', '--organization', ORG, '--out', registry]))
  ok(mwp(['registry', 'add', '--registry', registry, '--key', key, '--valid-from', '2026-01-01T00:00:00Z']))
  ok(mwp(['store', 'init', '--store', store, '--organization', ORG, '--admission-key', ADMISSION_KEY]))
  let n = 0
  /** Signs a fresh Command (issuedAt = now unless given). */
  const command = (issuedAt?: string): string => {
    n++
    const unsigned = {
      protocolVersion: '0.1',
      actionId: `urn:uuid:00000000-0000-4000-8000-${String(n).padStart(12, '0')}${Date.now() % 10}`.slice(0, 45),
      actor: {type: 'agent', id: 'urn:mwp:test:agent:ada'},
      sessionEpoch: 1,
      membershipEpoch: 1,
      groupId: 'urn:mwp:test:group:g',
      kind: 'message.post',
      correlationId: `urn:uuid:10000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      issuedAt: issuedAt ?? '2026-01-01T00:00:00Z',
      payload: {text: `message ${n} ${Math.random()}`},
    }
    const args = ['sign', '--document-kind', 'command', '--key', key, ...(issuedAt ? [] : ['--now']), '-']
    const r = mwp(args, {input: JSON.stringify(unsigned)})
    ok(r)
    const file = join(dir, `cmd-${n}.json`)
    writeFileSync(file, r.stdout)
    return file
  }
  const admit = (file: string, extra: string[] = []) =>
    mwp(['admit', '--registry', registry, '--store', store, '--admission-key', ADMISSION_KEY, ...extra, file])
  return {dir, key, registry, command, admit}
}

const stores: [string, () => Promise<{url: string; stop: () => Promise<void>}>][] = [
  [
    'SQLite',
    async () => ({url: `sqlite:${join(mkdtempSync(join(tmpdir(), 'mwp-sqlite-')), 'mwp.db')}`, stop: async () => {}}),
  ],
]
if (shouldRunPostgres('cli-admission')) {
  let pg: PostgresInstance | undefined
  stores.push([
    'PostgreSQL',
    async () => {
      pg ??= await startPostgres()
      return {url: await pg.newDatabase(), stop: async () => {}}
    },
  ])
  afterAll(async () => pg?.stop())
}

describe.each(stores)('first admission on %s', (_name, open) => {
  let store: string
  beforeAll(async () => {
    store = (await open()).url
  }, 120_000)

  it('admits once and returns the same record on retry', () => {
    const org = organization(store)
    const file = org.command()
    const first = json(org.admit(file, ['--json']))
    expect(first).toMatchObject({status: 'ok', result: {outcome: 'committed'}})
    const again = json(org.admit(file, ['--json']))
    expect(again.result).toEqual({...first.result, outcome: 'found'})
    expect(first.result.record).toMatchObject({
      organizationId: ORG,
      documentKind: 'command',
      keyId: 'urn:mwp:test:key:ada-1',
      acceptedBy: {type: 'service', id: 'urn:mwp:dev:service:admission'},
    })
  })

  it('refuses a backdated document presented after the revocation, and replays one admitted before it', async () => {
    const org = organization(store)
    const early = org.command()
    expect(org.admit(early).status).toBe(0)
    // Revoke two seconds from now: after `early` was admitted, and after `late`'s protected time.
    const revokedAt = new Date(Date.now() + 2000).toISOString()
    const late = org.command()
    expect(
      mwp([
        'registry',
        'revoke',
        '--registry',
        org.registry,
        '--key-id',
        'urn:mwp:test:key:ada-1',
        '--revoked-at',
        revokedAt,
        '--yes',
      ]).status,
    ).toBe(0)
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(revokedAt) - Date.now()) + 200))

    // `late` is signed before the revocation (six stages pass) but first presented after it.
    const refused = org.admit(late, ['--json'])
    expect(refused.status).toBe(1)
    expect(json(refused)).toEqual({
      status: 'rejected',
      error: expect.objectContaining({code: 'AUTH_INVALID_SIGNATURE'}),
    })
    expect(refused.stdout).not.toMatch(/stage|reason|interval|revoked|trusted-time/)
    const verifiedNow = mwp(['verify', '--registry', org.registry, late])
    expect(verifiedNow.status).toBe(0) // cryptographically valid at its protected time

    // `early` was admitted before the revocation: historical replay still passes.
    const replay = json(mwp(['verify', '--historical', '--store', store, '--registry', org.registry, '--json', early]))
    expect(replay).toMatchObject({status: 'ok', result: {admission: {trustedAcceptedAt: expect.any(String)}}})
    // `late` has no record: historical replay refuses it.
    expect(mwp(['verify', '--historical', '--store', store, '--registry', org.registry, late]).stdout).toBe(
      'AUTH_INVALID_SIGNATURE\n',
    )

    const audit = json(mwp(['audit', 'list', '--store', store, '--json'])).result.entries
    expect(audit).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          stage: 'admission',
          reason: 'trusted-time-outside-key-interval',
          documentKind: 'command',
          subject: late,
        }),
        expect.objectContaining({stage: 'admission', reason: 'record-missing', subject: late}),
      ]),
    )
  }, 60_000)

  it('uses the admission key file the store configuration names when --admission-key is omitted', () => {
    const org = organization(store)
    const file = org.command()
    const r = mwp(['admit', '--registry', org.registry, '--store', store, '--json', file])
    expect(r.status, r.stderr).toBe(0)
    expect(json(r).result.outcome).toBe('committed')
  })

  it('refuses a stale Command at the freshness stage and says only AUTH_INVALID_SIGNATURE', () => {
    const org = organization(store)
    const stale = org.command('2026-01-02T00:00:00Z')
    const r = org.admit(stale)
    expect(r).toMatchObject({status: 1, stdout: 'AUTH_INVALID_SIGNATURE\n'})
    expect(org.admit(stale, ['--explain']).stdout).toMatch(/stage: freshness\n {2}reason: issued-too-old/)
    const since = json(mwp(['audit', 'list', '--store', store, '--json', '--since', '2026-01-01T00:00:00Z'])).result
      .entries
    expect(since.some((e: {stage: string; subject: string}) => e.stage === 'freshness' && e.subject === stale)).toBe(
      true,
    )
  })

  it('8 separate processes first-admit the same document: one record, the same answer for all', async () => {
    const org = organization(store)
    const file = org.command()
    const results = await Promise.all(
      Array.from({length: 8}, () =>
        mwpAsync([
          'admit',
          '--registry',
          org.registry,
          '--store',
          store,
          '--admission-key',
          ADMISSION_KEY,
          '--json',
          file,
        ]),
      ),
    )
    for (const r of results) expect(r.status, r.stderr).toBe(0)
    const outs = results.map((r) => json(r).result)
    const records = new Set(outs.map((o) => JSON.stringify(o.record)))
    expect(records.size).toBe(1)
    const outcomes = outs.map((o) => o.outcome).sort()
    expect(outcomes.filter((o) => o === 'committed')).toHaveLength(1)
    expect(outcomes.every((o) => ['committed', 'existing', 'found'].includes(o))).toBe(true)
    // And the store holds exactly that record.
    const replay = json(mwp(['verify', '--historical', '--store', store, '--registry', org.registry, '--json', file]))
    expect(replay.result.admission.admissionRecordId).toBe(JSON.parse([...records][0]).admissionRecordId)
  }, 120_000)
})

it('a document that fails verification leaves an audit entry with its stage', () => {
  const store = `sqlite:${join(mkdtempSync(join(tmpdir(), 'mwp-sqlite-')), 'mwp.db')}`
  const org = organization(store)
  const file = org.command()
  const tampered = readFileSync(file, 'utf8').replace('"message ', '"massage ')
  writeFileSync(file, tampered)
  expect(mwp(['verify', '--store', store, '--registry', org.registry, file]).stdout).toBe('AUTH_INVALID_SIGNATURE\n')
  const entries = json(mwp(['audit', 'list', '--store', store, '--json'])).result.entries
  expect(entries).toEqual([
    expect.objectContaining({
      stage: 'signature',
      reason: 'equation-mismatch',
      documentKind: 'command',
      signingHash: expect.stringMatching(/^sha256:/),
    }),
  ])
})
