// The behavior coverage report (spec §22 full-conformance evidence): the catalog, the static
// scan of tagged test titles and `mwp conformance behavior`. What a real run's results make of
// skipped, failing and empty tests: behavior-results.test.ts; the gate over this project's own
// run: behavior-evidence.test.ts.

import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {
  type BehaviorRow,
  type CitedTest,
  type TaggedTest,
  buildReport,
  loadRows,
  missingRows,
  scanSource,
} from '../../src/conformance/behavior.js'
import {mwp} from '../support/cli.js'
import {PROJECT_ROOT} from '../support/upstream.js'
import {fixtureProject, runFixture} from '../support/vitest-fixture.js'

// Fixture test sources spell calls `it@(` so this file's own scan does not read them as real
// tagged tests; fixture() turns them back into `it(` before scanning.
const fixture = (source: string) => source.replaceAll('@(', '(')

// The scan's tests as if each had run and passed with an assertion, to report on them.
const ran = (tests: TaggedTest[]): CitedTest[] => tests.map((t) => ({...t, verdict: 'passed'}))

const schemaEnum = (file: string, def: string): string[] =>
  JSON.parse(readFileSync(join(PROJECT_ROOT, 'schemas', file), 'utf8')).$defs[def].enum as string[]

describe('behavior catalog', () => {
  const rows = loadRows(PROJECT_ROOT)
  const ids = rows.map((r) => r.id)

  it('has unique row IDs', () => {
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('lists every core Command kind of the command schema (§15.1) and the seven reference ext Commands', () => {
    for (const kind of schemaEnum('command.schema.json', 'coreKind')) expect(ids).toContain(`cmd:${kind}`)
    const ext = rows.filter((r) => r.category === 'command' && r.scope === 'reference-extension').map((r) => r.kind)
    expect(ext.sort()).toEqual(
      [
        'ext.missionweaveprotocol.core.dependency_insert',
        'ext.missionweaveprotocol.core.group_archive',
        'ext.missionweaveprotocol.core.lease_renew',
        'ext.missionweaveprotocol.core.lease_revoke',
        'ext.missionweaveprotocol.core.resource_usage_record',
        'ext.missionweaveprotocol.identity.session_open',
        'ext.missionweaveprotocol.registry.agent_card_register',
      ].sort(),
    )
  })

  it('lists every core Event kind of the event schema (§15.2) and the Organization-scoped facts', () => {
    for (const kind of schemaEnum('event.schema.json', 'coreKind')) expect(ids).toContain(`evt:${kind}`)
    for (const kind of schemaEnum('event.schema.json', 'organizationScopedKind')) expect(ids).toContain(`evt:${kind}`)
  })

  it('has one row per line of the §7.1 and §10.2 tables, each quoting its table line from the spec', () => {
    const spec = readFileSync('/work/shared/protocol/spec/PROTOCOL.md', 'utf8')
    const table = (heading: string, next: string) => {
      const body = spec.slice(spec.indexOf(heading), spec.indexOf(next))
      return body
        .split('\n')
        .filter((l) => l.startsWith('| ') && !l.startsWith('| Current state') && !l.startsWith('| ---'))
    }
    const t71 = table('### 7.1 Creation', '### 7.2')
    const t102 = table('### 10.2 WorkItem state machine', '### 10.3')
    const rowText = (section: string) =>
      rows.filter((r) => r.category === 'transition' && r.section === section).map((r) => r.text)
    expect(rowText('§7.1')).toEqual(t71)
    expect(rowText('§10.2')).toEqual(t102)
  })
})

describe('tag scan', () => {
  const rows: BehaviorRow[] = [
    {id: 'cmd:work.offer', category: 'command', section: '§15.1', kind: 'work.offer'},
    {id: 'row:t10.2:offered->queued:work.accept_offer', category: 'transition', section: '§10.2'},
  ]

  it('reads tags from it() and test() titles in any quote style, and ignores skipped tests', () => {
    const source = [
      "it@('[+cmd:work.offer] an offer is accepted', () => {})",
      'test@("[-cmd:work.offer] a stale offer is rejected", () => {})',
      'it.concurrent@(`[+row:t10.2:offered->queued:work.accept_offer] ${backend} accept`, async () => {})',
      "it.skip@('[-row:t10.2:offered->queued:work.accept_offer] not evidence', () => {})",
      "it.todo@('[-row:t10.2:offered->queued:work.accept_offer] not evidence either')",
      "describe@('[-row:t10.2:offered->queued:work.accept_offer] a describe title is not a test', () => {})",
    ].join('\n')
    const tests = scanSource('test/x.test.ts', fixture(source))
    expect(tests.map((t) => t.tags)).toEqual([
      [{sign: '+', id: 'cmd:work.offer'}],
      [{sign: '-', id: 'cmd:work.offer'}],
      [{sign: '+', id: 'row:t10.2:offered->queued:work.accept_offer'}],
    ])
    const report = buildReport(rows, ran(tests))
    expect(report.rows[0]!.positive).toEqual(['test/x.test.ts › [+cmd:work.offer] an offer is accepted'])
    expect(report.rows[0]!.negative).toEqual(['test/x.test.ts › [-cmd:work.offer] a stale offer is rejected'])
    expect(report.rows[1]!.negative).toEqual([])
    expect(report.complete).toBe(false)
    expect(missingRows(report)).toEqual(['row:t10.2:offered->queued:work.accept_offer (missing -)'])
  })

  it('reads the title of the table form it.each(rows)(title), past parentheses in strings and comments', () => {
    const source = [
      'it.each@([',
      "  ['a (paren', (g: string) => f(g, ')')], // a comment with ) in it",
      "  /* ( */ ['b', () => g(1)],",
      "])@('[-row:t10.2:offered->queued:work.accept_offer] %s is refused', async (_n, make) => {})",
      "test.each@`a | b`@('[+cmd:work.offer] not a call form we read', () => {})",
    ].join('\n')
    const tests = scanSource('test/z.test.ts', fixture(source))
    expect(tests.map((t) => [t.title, t.tags])).toEqual([
      [
        '[-row:t10.2:offered->queued:work.accept_offer] %s is refused',
        [{sign: '-', id: 'row:t10.2:offered->queued:work.accept_offer'}],
      ],
    ])
  })

  it('is complete only when every row has both cases, and lists unknown tags without counting them', () => {
    const source = [
      "it@('[+cmd:work.offer] [-cmd:work.offer] [+row:t10.2:offered->queued:work.accept_offer] a', () => {})",
      "it@('[-row:t10.2:offered->queued:work.accept_offer] [+cmd:work.ofer] b', () => {})",
    ].join('\n')
    const report = buildReport(rows, ran(scanSource('test/y.test.ts', fixture(source))))
    expect(report.complete).toBe(true)
    expect(report.totals).toMatchObject({rows: 2, complete: 2, missingPositive: 0, missingNegative: 0, taggedTests: 2})
    expect(report.unknownTags).toEqual([
      {
        tag: '[+cmd:work.ofer]',
        test: 'test/y.test.ts › [-row:t10.2:offered->queued:work.accept_offer] [+cmd:work.ofer] b',
      },
    ])
  })
})

describe('mwp conformance behavior', () => {
  const dirs: string[] = []
  afterAll(() => dirs.forEach((d) => rmSync(d, {recursive: true, force: true})))

  // A checkout whose one test file ran: the report reads that run's results.
  const checkout = async (tests: string) => {
    const rows: BehaviorRow[] = [
      {id: 'cmd:message.post', category: 'command', section: '§15.1', kind: 'message.post'},
      {id: 'evt:message.posted', category: 'event', section: '§15.2', kind: 'message.posted'},
    ]
    const dir = fixtureProject(rows, {'test/nested/a.test.ts': "import {expect, it} from 'vitest'\n" + fixture(tests)})
    dirs.push(dir)
    const run = await runFixture(dir)
    expect(run.status, run.stdout + run.stderr).toBe(0)
    return dir
  }

  it('exits 0 with a JSON report when every row has both cases', async () => {
    const dir = await checkout(
      "it@('[+cmd:message.post] [+evt:message.posted] posts', () => { expect(1).toBe(1) })\nit@('[-cmd:message.post] [-evt:message.posted] refuses', () => { expect(1).toBe(1) })\n",
    )
    const r = mwp(['conformance', 'behavior', '--root', dir, '--json'])
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.status).toBe('ok')
    expect(out.result.complete).toBe(true)
    expect(out.result.rows[0].positive).toEqual([
      'test/nested/a.test.ts › [+cmd:message.post] [+evt:message.posted] posts',
    ])
  })

  it('exits 1 and marks the row MISSING when a case lacks a test', async () => {
    const dir = await checkout(
      "it@('[+cmd:message.post] [+evt:message.posted] posts', () => { expect(1).toBe(1) })\nit@('[-cmd:message.post] refuses', () => { expect(1).toBe(1) })\n",
    )
    const human = mwp(['conformance', 'behavior', '--root', dir])
    expect(human.status).toBe(1)
    expect(human.stdout).toMatch(/evt:message\.posted.*MISSING/)
    expect(human.stdout).toContain('1/2 rows have both cases')
    // --tests names the proving tests instead of counting them.
    const named = mwp(['conformance', 'behavior', '--root', dir, '--tests'])
    expect(named.stdout).toMatch(/cmd:message\.post.*a\.test\.ts › \[\+cmd:message\.post\]/)
    const json = mwp(['conformance', 'behavior', '--root', dir, '--json'])
    expect(json.status).toBe(1)
    expect(JSON.parse(json.stdout).result.totals.missingNegative).toBe(1)
  })

  it('exits 3 when the root has no catalog', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mwp-behavior-empty-'))
    dirs.push(dir)
    expect(mwp(['conformance', 'behavior', '--root', dir]).status).toBe(3)
  })
})
