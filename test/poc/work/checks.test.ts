// The real checks over real generated code: the correct implementation of each project passes, each
// catalogued defect fails the tests with a named failing test and its rework passes; `any`, console
// calls, missing doc comments and missing tests break the rule; tampering breaks the package.

import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {contentHash} from '../../../src/crypto/hash.js'
import {integrate, review} from '../../../src/poc/work/builds.js'
import {CHECKS} from '../../../src/poc/work/checks.js'
import {PROJECTS} from '../../../src/poc/work/projects.js'
import {INTEGRATION_PATH, README_PATH, reviewReport, sourcePath, testPath} from '../../../src/poc/work/stages.js'
import {runNodeTests, typecheck, writeFiles} from '../../../src/poc/work/toolchain.js'
import {catalogue, projectDir, requirementsOf, tempDir} from './layout.js'

const names = Object.keys(PROJECTS)
const SEED = 5

describe.each(names)('the checks on %s', (name) => {
  const p = catalogue(name)
  const criteria = requirementsOf(p, SEED).acceptanceCriteria.length

  it('pass the correct implementation: typecheck, tests, rule, requirements, docs', async () => {
    const dir = await projectDir(name, SEED)
    const types = await CHECKS.typecheck(dir)
    expect(types).toEqual({
      check: 'typecheck',
      passed: true,
      measured: {files: 2, errors: 0, nodeTypes: '@types/node'},
    })
    const tests = await CHECKS.tests(dir)
    expect(tests).toEqual({
      check: 'tests',
      passed: true,
      measured: {passed: criteria, failed: 0, total: criteria, timedOut: false},
    })
    const rule = await CHECKS.rule(dir)
    expect(rule.passed).toBe(true)
    expect(rule.measured).toMatchObject({files: 1, violations: 0, criteria})
    expect((await CHECKS.requirements(dir)).passed).toBe(true)
    expect((await CHECKS.docs(dir)).passed).toBe(true)
  })

  it.each(Object.keys(p.defects))('fail the tests of defect %s by name, and pass its rework', async (defect) => {
    const broken = await projectDir(name, SEED, {defect})
    const tests = await CHECKS.tests(broken)
    expect(tests.passed).toBe(false)
    expect(tests.measured.total).toBe(criteria)
    expect(tests.measured.failed).toBeGreaterThan(0)
    // A core example of the defect's function catches it, whatever the seed picked.
    const core = p.examples
      .filter((e) => e.core === true && e.function === p.defects[defect]!.function)
      .map((e) => e.id)
    expect(core.some((id) => tests.detail?.includes(`failing: ${id}`))).toBe(true)
    // The bug is in the behaviour only: it typechecks and keeps the rule.
    expect((await CHECKS.typecheck(broken)).passed).toBe(true)
    const fixed = await projectDir(name, SEED, {defect, rework: {round: 1, failures: ['tests']}})
    expect((await CHECKS.tests(fixed)).passed).toBe(true)
  })
})

describe('the typecheck check', () => {
  it('counts a type error and says where it is', async () => {
    const dir = await projectDir('textkit', SEED)
    const path = join(dir, sourcePath('textkit'))
    writeFileSync(path, readFileSync(path, 'utf8') + '\nexport const wrong: number = "text"\n')
    const result = await CHECKS.typecheck(dir)
    expect(result.passed).toBe(false)
    expect(result.measured).toEqual({files: 2, errors: 1, nodeTypes: '@types/node'})
    expect(result.detail).toMatch(/^src\/textkit\.ts:\d+:\d+ TS2322: /)
  })

  it('without @types/node, typechecks the tests against its shim of node:test and node:assert/strict', async () => {
    const dir = await projectDir('semver-lite', SEED)
    const paths = [sourcePath('semver-lite'), testPath('semver-lite')]
    expect(typecheck(dir, paths, 'shim')).toEqual({nodeTypes: 'shim', errors: 0, messages: []})
    const path = join(dir, testPath('semver-lite'))
    writeFileSync(path, readFileSync(path, 'utf8') + '\ntest("typo", () => assert.deepEqual(compare("1.0.0")))\n')
    const broken = typecheck(dir, paths, 'shim')
    expect(broken.errors).toBe(2) // compare's second argument and deepEqual's expected value are missing
    expect(broken.messages.every((m) => m.startsWith('test/semver-lite.test.ts:'))).toBe(true)
  })

  it('fails a directory with no TypeScript', async () => {
    expect((await CHECKS.typecheck(tempDir('empty'))).passed).toBe(false)
  })
})

describe('the rule check', () => {
  it('counts any, console calls and exported functions without a doc comment', async () => {
    const dir = await projectDir('textkit', SEED)
    await writeFiles(dir, {
      'src/extra.ts': [
        '/** Documented, but loose. */',
        'export function loose(x: any): string {',
        '  console.log(x)',
        "  console['warn'](x)",
        '  return String(x)',
        '}',
        'export const bare = (n: number): number => n',
        '',
      ].join('\n'),
    })
    const result = await CHECKS.rule(dir)
    expect(result.passed).toBe(false)
    expect(result.measured).toMatchObject({anyTypes: 1, consoleCalls: 2, undocumented: 1, violations: 4})
    expect(result.detail).toContain('src/extra.ts:2 uses any')
    expect(result.detail).toContain('exports bare without a /** doc */')
  })

  it('fails when an acceptance criterion has no test of its name', async () => {
    const dir = await projectDir('semver-lite', SEED)
    const path = join(dir, testPath('semver-lite'))
    writeFileSync(path, readFileSync(path, 'utf8').replace('test("compare-patch"', 'test("renamed"'))
    const result = await CHECKS.rule(dir)
    expect(result.measured).toMatchObject({missingTests: 1, violations: 1})
    expect(result.detail).toBe('no test named compare-patch')
  })
})

describe('the requirements, docs and review-verdict checks', () => {
  it('fail a requirements.json that is not JSON or names an undeclared function', async () => {
    const dir = await projectDir('textkit', SEED)
    const path = join(dir, 'requirements.json')
    const req = JSON.parse(readFileSync(path, 'utf8'))
    req.acceptanceCriteria[0].function = 'missing'
    writeFileSync(path, JSON.stringify(req))
    expect((await CHECKS.requirements(dir)).measured).toMatchObject({problems: 1})
    writeFileSync(path, '{')
    expect((await CHECKS.requirements(dir)).passed).toBe(false)
    rmSync(path)
    expect((await CHECKS.requirements(dir)).measured).toEqual({present: false})
  })

  it('fail a README that does not name every function', async () => {
    const dir = await projectDir('textkit', SEED)
    const path = join(dir, README_PATH)
    writeFileSync(path, readFileSync(path, 'utf8').replaceAll('wordCount', 'countWords'))
    const result = await CHECKS.docs(dir)
    expect(result.measured).toMatchObject({functions: 4, missing: 1})
    expect(result.detail).toBe('README.md does not name wordCount')
  })

  it('pass an approving review only when every listed check passed', async () => {
    const dir = tempDir('review')
    const ok = {check: 'tests', passed: true, measured: {passed: 3}}
    await writeFiles(dir, reviewReport([ok]))
    expect((await CHECKS['review-verdict'](dir)).passed).toBe(true)
    await writeFiles(dir, reviewReport([ok, {...ok, check: 'rule', passed: false}]))
    const rejected = await CHECKS['review-verdict'](dir)
    expect(rejected.measured).toEqual({present: true, verdict: 'changes-requested', checks: 2, failedChecks: 1})
    // An "approve" whose checks did not all pass is not an approval.
    const forged = JSON.parse(readFileSync(join(dir, 'review.json'), 'utf8'))
    writeFileSync(join(dir, 'review.json'), JSON.stringify({...forged, verdict: 'approve'}))
    expect((await CHECKS['review-verdict'](dir)).passed).toBe(false)
  })
})

describe('the review stage', () => {
  it('requests changes for a defect, naming the failing check, and approves the rework', async () => {
    const broken = await review(await projectDir('textkit', SEED, {defect: 'capitalize-lowercases-rest'}))
    const report = JSON.parse(broken.files['review.json']!)
    expect(report.verdict).toBe('changes-requested')
    expect(report.checks.map((c: {check: string; passed: boolean}) => [c.check, c.passed])).toEqual([
      ['typecheck', true],
      ['tests', false],
      ['rule', true],
    ])
    const fixedDir = await projectDir('textkit', SEED, {
      defect: 'capitalize-lowercases-rest',
      rework: {round: 1, failures: []},
    })
    expect(JSON.parse((await review(fixedDir)).files['review.json']!).verdict).toBe('approve')
    expect((await CHECKS['review-verdict'](fixedDir)).passed).toBe(true)
  })
})

describe('the package check', () => {
  it('passes a real integration, and fails a tampered manifest, a tampered dist file and recorded failures', async () => {
    const dir = await projectDir('semver-lite', SEED)
    const built = await integrate(dir, 'semver-lite')
    expect(built.compileErrors).toEqual([])
    expect(Object.keys(built.files).sort()).toEqual([
      'dist/semver-lite.d.ts',
      'dist/semver-lite.js',
      'integration.json',
      'package.json',
    ])
    expect(built.files['dist/semver-lite.d.ts']).toContain('export declare function compare(a: string, b: string)')
    const criteria = requirementsOf(catalogue('semver-lite'), SEED).acceptanceCriteria.length
    expect(built.run).toMatchObject({passed: criteria, failed: 0})
    const good = await CHECKS.package(dir)
    expect(good).toEqual({
      check: 'package',
      passed: true,
      measured: {
        files: 5,
        mismatches: 0,
        recordedPassed: criteria,
        recordedFailed: 0,
        rerunPassed: criteria,
        rerunFailed: 0,
        rerunTotal: criteria,
      },
    })

    const manifestPath = join(dir, INTEGRATION_PATH)
    const manifest = readFileSync(manifestPath, 'utf8')
    const tampered = JSON.parse(manifest)
    tampered.files['src/semver-lite.ts'] = `sha256:${'0'.repeat(64)}`
    writeFileSync(manifestPath, JSON.stringify(tampered))
    const bad = await CHECKS.package(dir)
    expect(bad.passed).toBe(false)
    expect(bad.measured).toMatchObject({mismatches: 1})
    expect(bad.detail).toBe('src/semver-lite.ts does not match its hash')

    writeFileSync(manifestPath, JSON.stringify({...JSON.parse(manifest), tests: {passed: criteria, failed: 1}}))
    expect((await CHECKS.package(dir)).passed).toBe(false)

    writeFileSync(manifestPath, manifest)
    const distPath = join(dir, 'dist/semver-lite.js')
    writeFileSync(distPath, readFileSync(distPath, 'utf8').replace('patch + 1', 'patch + 2'))
    expect((await CHECKS.package(dir)).measured).toMatchObject({mismatches: 1})
  })

  it('re-runs the tests against dist: a broken dist with a matching manifest fails the re-run', async () => {
    const dir = await projectDir('textkit', SEED)
    await integrate(dir, 'textkit')
    const distPath = join(dir, 'dist/textkit.js')
    writeFileSync(distPath, readFileSync(distPath, 'utf8').replace('slice(0, max - 1)', 'slice(0, max)'))
    // Re-hash so the manifest vouches for the broken bytes: only the re-run can catch it.
    const manifest = JSON.parse(readFileSync(join(dir, INTEGRATION_PATH), 'utf8'))
    manifest.files['dist/textkit.js'] = contentHash(readFileSync(distPath))
    writeFileSync(join(dir, INTEGRATION_PATH), JSON.stringify(manifest))
    const result = await CHECKS.package(dir)
    expect(result.passed).toBe(false)
    expect(result.measured).toMatchObject({mismatches: 0})
    expect(result.measured.rerunFailed).toBeGreaterThan(0)
    expect(result.detail).toContain('failing: truncate-cuts-with-ellipsis')
  })
})

describe('the test runner', () => {
  it('kills a run that does not finish and counts it failed', async () => {
    const run = await runNodeTests(
      {
        'test/hang.test.js':
          "import {test} from 'node:test'\ntest('hangs', () => new Promise(() => setInterval(() => {}, 1000)))\n",
      },
      ['test/hang.test.js'],
      1500,
    )
    expect(run.timedOut).toBe(true)
    expect(run.passed).toBe(0)
  })
})
