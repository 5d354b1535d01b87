// The behavior report reads what a real vitest run did, not what test titles promise: a fixture
// project's tagged tests — passing, in describe.skip, in describe.skipIf(true), failing, empty,
// asserting through node:assert, todo, it.fails, registered only conditionally — run with this
// project's vitest and recording options, then `mwp conformance behavior` over their results.

import {rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {RESULTS_FILE} from '../../src/conformance/behavior.js'
import {type CliResult, json, mwp} from '../support/cli.js'
import {fixtureProject, runFixture} from '../support/vitest-fixture.js'

const ROWS = ['pass', 'twice', 'skip', 'skipif', 'fail', 'empty', 'assert', 'todo', 'fails', 'unregistered'].map(
  (k) => ({
    id: `cmd:x.${k}`,
    category: 'command',
    section: '§15.1',
  }),
)

// Every row gets a passing positive test; its negative test is where the variants differ. Calls
// are spelled `it@(` so the project's own tag scan does not read them; `broken` false turns every
// variant into a passing, asserting test, so the same fixture must then be complete.
const suite = (broken: boolean) =>
  [
    "import {strict as assert} from 'node:assert'",
    "import {describe, expect, it} from 'vitest'",
    ...ROWS.map((r) => `it@('[+${r.id}] accepted', () => { expect(1).toBe(1) })`),
    "it@('[-cmd:x.pass] refused', () => { expect(2).toBe(2) })",
    "it@('[-cmd:x.twice] refused', () => { expect(2).toBe(2) })",
    `describe.skipIf(${broken})@('again', () => { it@('[-cmd:x.twice] refused', () => { expect(1).toBe(1) }) })`,
    `describe${broken ? '.skip' : ''}@('skipped', () => { it@('[-cmd:x.skip] refused', () => { expect(1).toBe(1) }) })`,
    `describe${broken ? '.skipIf(true)' : ''}@('skipped if', () => { it@('[-cmd:x.skipif] refused', () => { expect(1).toBe(1) }) })`,
    `it@('[-cmd:x.fail] refused', () => { expect(1).toBe(${broken ? 2 : 1}) })`,
    `it@('[-cmd:x.empty] refused', () => { ${broken ? '' : 'expect(1).toBe(1)'} })`,
    `it@('[-cmd:x.assert] refused', () => { ${broken ? 'assert.equal(1, 1)' : 'expect(1).toBe(1)'} })`,
    broken ? "it.todo@('[-cmd:x.todo] refused')" : "it@('[-cmd:x.todo] refused', () => { expect(1).toBe(1) })",
    `it${broken ? '.fails' : ''}@('[-cmd:x.fails] refused', () => { expect(1).toBe(${broken ? 2 : 1}) })`,
    `if (${!broken}) it@('[-cmd:x.unregistered] refused', () => { expect(1).toBe(1) })`,
  ]
    .join('\n')
    .replaceAll('@(', '(')

const dirs: string[] = []
let brokenRoot: string
let sound: CliResult
let broken: CliResult
let wholeRoot: string

beforeAll(async () => {
  brokenRoot = fixtureProject(ROWS, {'test/variants.test.ts': suite(true)})
  wholeRoot = fixtureProject(ROWS, {'test/variants.test.ts': suite(false)})
  dirs.push(brokenRoot, wholeRoot)
  const runs = await Promise.all([runFixture(brokenRoot), runFixture(wholeRoot)])
  broken = runs[0]
  sound = runs[1]
}, 180_000)
afterAll(() => dirs.forEach((d) => rmSync(d, {recursive: true, force: true})))

describe('mwp conformance behavior over a real run', () => {
  it('the fixture runs: its failing test fails the broken run, the sound run passes', () => {
    expect(broken.status, broken.stdout + broken.stderr).toBe(1)
    expect(broken.stdout).toMatch(/1 failed/)
    expect(sound.status, sound.stdout + sound.stderr).toBe(0)
  })

  it('a row counts only when every citing test ran, passed and asserted; the report says which test and why', () => {
    const r = mwp(['conformance', 'behavior', '--root', brokenRoot, '--json'])
    expect(r.status).toBe(1)
    const report = json(r).result
    const incomplete = report.rows
      .filter((row: {unproven: unknown[]}) => row.unproven.length > 0)
      .map((row: {id: string; unproven: {tag: string; test: string; verdict: string}[]}) => [
        row.id,
        row.unproven.map((u) => [u.tag, u.test, u.verdict]),
      ])
    const file = 'test/variants.test.ts'
    expect(incomplete).toEqual([
      ['cmd:x.twice', [['[-cmd:x.twice]', `${file} › again › [-cmd:x.twice] refused`, 'skipped']]],
      ['cmd:x.skip', [['[-cmd:x.skip]', `${file} › skipped › [-cmd:x.skip] refused`, 'skipped']]],
      ['cmd:x.skipif', [['[-cmd:x.skipif]', `${file} › skipped if › [-cmd:x.skipif] refused`, 'skipped']]],
      ['cmd:x.fail', [['[-cmd:x.fail]', `${file} › [-cmd:x.fail] refused`, 'failed']]],
      ['cmd:x.empty', [['[-cmd:x.empty]', `${file} › [-cmd:x.empty] refused`, 'empty']]],
      ['cmd:x.assert', [['[-cmd:x.assert]', `${file} › [-cmd:x.assert] refused`, 'empty']]],
      ['cmd:x.todo', [['[-cmd:x.todo]', `${file} › [-cmd:x.todo] refused`, 'todo']]],
      ['cmd:x.fails', [['[-cmd:x.fails]', `${file} › [-cmd:x.fails] refused`, 'expected-to-fail']]],
      ['cmd:x.unregistered', [['[-cmd:x.unregistered]', `${file} › [-cmd:x.unregistered] refused`, 'not-run']]],
    ])
    const fail = report.rows.find((row: {id: string}) => row.id === 'cmd:x.fail').unproven[0]
    expect(fail.reason).toMatch(/^failed: AssertionError: expected 1 to be 2/)
    expect(report.complete).toBe(false)
    // cmd:x.twice has a passing test of each case, but one citing test was skipped: incomplete all the same.
    expect(report.totals).toEqual({
      rows: 10,
      complete: 1,
      missingPositive: 0,
      missingNegative: 8,
      unproven: 9,
      taggedTests: 21,
    })
    expect(report.rows.find((row: {id: string}) => row.id === 'cmd:x.pass').negative).toEqual([
      `${file} › [-cmd:x.pass] refused`,
    ])
  })

  it('names each unproven test and its reason in the human report, and --missing keeps only those rows', () => {
    const r = mwp(['conformance', 'behavior', '--root', brokenRoot, '--missing'])
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/cmd:x\.skip .*MISSING/)
    expect(r.stdout).toMatch(/cmd:x\.twice .*INCOMPLETE/)
    expect(r.stdout).not.toMatch(/cmd:x\.pass /)
    expect(r.stdout).toContain('1/10 rows have both cases')
    expect(r.stdout).toContain(
      'unproven [-cmd:x.skip] test/variants.test.ts › skipped › [-cmd:x.skip] refused: was skipped',
    )
    expect(r.stdout).toContain(
      'unproven [-cmd:x.empty] test/variants.test.ts › [-cmd:x.empty] refused: ran no expect() assertion',
    )
    expect(r.stdout).toContain(
      'unproven [-cmd:x.assert] test/variants.test.ts › [-cmd:x.assert] refused: ran no expect() assertion',
    )
    expect(r.stdout).toContain(
      'unproven [-cmd:x.fail] test/variants.test.ts › [-cmd:x.fail] refused: failed: AssertionError',
    )
    expect(r.stdout).toContain('unproven [-cmd:x.todo] test/variants.test.ts › [-cmd:x.todo] refused: is a todo')
    expect(r.stdout).toContain(
      'unproven [-cmd:x.fails] test/variants.test.ts › [-cmd:x.fails] refused: is an it.fails test',
    )
    expect(r.stdout).toContain(
      'unproven [-cmd:x.unregistered] test/variants.test.ts › [-cmd:x.unregistered] refused: is tagged in the source but absent',
    )
  })

  it('the same fixture with every variant passing and asserting makes every row complete', () => {
    const r = mwp(['conformance', 'behavior', '--root', wholeRoot, '--json'])
    expect(r.status, r.stdout).toBe(0)
    const report = json(r).result
    expect(report.complete).toBe(true)
    expect(report.totals).toEqual({
      rows: 10,
      complete: 10,
      missingPositive: 0,
      missingNegative: 0,
      unproven: 0,
      taggedTests: 21,
    })
  })

  it('exits 3 when the results are absent or belong to another tree', () => {
    const absent = mwp([
      'conformance',
      'behavior',
      '--root',
      brokenRoot,
      '--results',
      join(brokenRoot, 'none.json'),
      '--json',
    ])
    expect(absent.status).toBe(3)
    expect(json(absent).error).toEqual({
      code: 'ENVIRONMENT',
      message: `no test results at ${join(brokenRoot, 'none.json')}: run npm test first (it records them there)`,
    })
    // The environment twin of --results, naming the other fixture's results.
    const foreign = mwp(['conformance', 'behavior', '--root', brokenRoot], {
      env: {MWP_BEHAVIOR_RESULTS: join(wholeRoot, RESULTS_FILE)},
    })
    expect(foreign.status).toBe(3)
    expect(foreign.stderr).toContain(
      `holds results of another tree: ${join(wholeRoot, 'test/variants.test.ts')} is not under ${brokenRoot}`,
    )
  })
})
