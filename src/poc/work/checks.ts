// The real checks of the proof of concept's work, each over a directory laid out like the
// repository (src/, test/, requirements.json, …): what the Coordinator runs on a submission and
// the reviewer Agent runs before its verdict. Each measures what it decides on.

import {readFile} from 'node:fs/promises'
import {join} from 'node:path'
import ts from 'typescript'
import {contentHash} from '../../crypto/hash.js'
import type {CheckResult} from './check-result.js'
import {parseRequirements, requirementsProblems} from './requirements.js'
import {isRecord} from './stage.js'
import {INTEGRATION_PATH, README_PATH, REQUIREMENTS_PATH, REVIEW_PATH, type Files} from './stages.js'
import {listFiles, readFiles, runNodeTests, transpile, typecheck, type TestRun} from './toolchain.js'

export type Check = (dir: string) => Promise<CheckResult>

/** How many diagnostics or names a detail lists before it says how many more there are. */
const DETAIL_ITEMS = 5

function detailOf(items: readonly string[]): string | undefined {
  if (items.length === 0) return undefined
  const shown = items.slice(0, DETAIL_ITEMS).join('; ')
  return items.length > DETAIL_ITEMS ? `${shown}; and ${items.length - DETAIL_ITEMS} more` : shown
}

function result(check: string, passed: boolean, measured: CheckResult['measured'], items: string[] = []): CheckResult {
  const detail = detailOf(items)
  return detail === undefined ? {check, passed, measured} : {check, passed, measured, detail}
}

async function readOptional(dir: string, path: string): Promise<string | undefined> {
  try {
    return await readFile(join(dir, path), 'utf8')
  } catch {
    return undefined
  }
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const sources = async (dir: string): Promise<string[]> =>
  (await listFiles(dir, 'src', '.ts')).filter((p) => !p.endsWith('.d.ts'))
const testFiles = (dir: string): Promise<string[]> => listFiles(dir, 'test', '.test.ts')
const jsPath = (tsPath: string): string => tsPath.replace(/\.ts$/, '.js')

async function transpiled(dir: string, paths: readonly string[]): Promise<Files> {
  const files = await readFiles(dir, paths)
  return Object.fromEntries(Object.entries(files).map(([p, text]) => [jsPath(p), transpile(text, p)]))
}

/** The tests of test/ run against the src/ of `dir`, both transpiled. */
export async function runSourceTests(dir: string): Promise<TestRun> {
  const tests = await testFiles(dir)
  const modules = {...(await transpiled(dir, await sources(dir))), ...(await transpiled(dir, tests))}
  return runNodeTests(modules, tests.map(jsPath))
}

/**
 * The tests of test/ run against the compiled dist/ of `dir`: each dist/<name>.js is run where the
 * tests import the library from (src/<name>.js), so the bytes that execute are the packaged ones.
 */
export async function runDistTests(dir: string): Promise<TestRun> {
  const tests = await testFiles(dir)
  const dist = await readFiles(dir, await listFiles(dir, 'dist', '.js'))
  const placed = Object.fromEntries(Object.entries(dist).map(([p, text]) => [p.replace(/^dist\//, 'src/'), text]))
  return runNodeTests({...placed, ...(await transpiled(dir, tests))}, tests.map(jsPath))
}

/** A test run as the CheckResult `check` (passed: tests ran, none failed, in time). */
export function testRunResult(check: string, run: TestRun, extra: CheckResult['measured'] = {}): CheckResult {
  const failing = run.results.filter((r) => !r.ok).map((r) => r.name)
  const passed = run.total > 0 && run.failed === 0 && !run.timedOut && run.exitCode === 0
  const items = run.timedOut ? ['timed out', ...failing] : failing.map((n) => `failing: ${n}`)
  return result(
    check,
    passed,
    {passed: run.passed, failed: run.failed, total: run.total, timedOut: run.timedOut, ...extra},
    items,
  )
}

export const typecheckCheck: Check = async (dir) => {
  const paths = [...(await listFiles(dir, 'src', '.ts')), ...(await listFiles(dir, 'test', '.ts'))]
  if (paths.length === 0) return result('typecheck', false, {files: 0, errors: 0}, ['no src/ or test/ TypeScript'])
  const {nodeTypes, errors, messages} = typecheck(dir, paths)
  return result('typecheck', errors === 0, {files: paths.length, errors, nodeTypes}, messages)
}

export const testsCheck: Check = async (dir) => testRunResult('tests', await runSourceTests(dir))

/** The names of the node:test tests a test file declares: `test('name', …)` or `it('name', …)`. */
function declaredTests(path: string, text: string): string[] {
  const names: string[] = []
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      (node.expression.text === 'test' || node.expression.text === 'it')
    ) {
      const first = node.arguments[0]
      if (first !== undefined && ts.isStringLiteralLike(first)) names.push(first.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true))
  return names
}

function hasDocComment(file: ts.SourceFile, node: ts.Node): boolean {
  const ranges = ts.getLeadingCommentRanges(file.text, node.getFullStart()) ?? []
  return ranges.some((r) => r.kind === ts.SyntaxKind.MultiLineCommentTrivia && file.text.startsWith('/**', r.pos))
}

function isExported(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
}

/** The rule violations of one source file: `any`, console calls, exported functions without a doc comment. */
function sourceViolations(path: string, text: string): {any: string[]; console: string[]; undocumented: string[]} {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true)
  const out = {any: [] as string[], console: [] as string[], undocumented: [] as string[]}
  const where = (node: ts.Node): string => `${path}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) out.any.push(`${where(node)} uses any`)
    if (
      (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'console'
    )
      out.console.push(`${where(node)} uses console`)
    ts.forEachChild(node, visit)
  }
  visit(file)
  for (const statement of file.statements) {
    if (!isExported(statement)) continue
    const functions = ts.isFunctionDeclaration(statement)
      ? [statement.name?.text ?? 'default']
      : ts.isVariableStatement(statement)
        ? statement.declarationList.declarations
            .filter((d) => d.initializer !== undefined && ts.isFunctionLike(d.initializer))
            .map((d) => d.name.getText(file))
        : []
    if (!hasDocComment(file, statement))
      for (const name of functions) out.undocumented.push(`${where(statement)} exports ${name} without a /** doc */`)
  }
  return out
}

/** The test names test/ of `dir` declares. */
export async function declaredTestNames(dir: string): Promise<string[]> {
  const tests = await readFiles(dir, await listFiles(dir, 'test', '.ts'))
  return Object.entries(tests).flatMap(([p, text]) => declaredTests(p, text))
}

export const ruleCheck: Check = async (dir) => {
  const src = await readFiles(dir, await sources(dir))
  const found = {any: [] as string[], console: [] as string[], undocumented: [] as string[]}
  for (const [path, text] of Object.entries(src)) {
    const v = sourceViolations(path, text)
    found.any.push(...v.any)
    found.console.push(...v.console)
    found.undocumented.push(...v.undocumented)
  }
  // Every acceptance criterion needs a test of its name (when the directory has requirements.json).
  const req = parseRequirements((await readOptional(dir, REQUIREMENTS_PATH)) ?? '')
  const names = new Set(await declaredTestNames(dir))
  const missing = (req?.acceptanceCriteria ?? [])
    .filter((c) => !names.has(c.criterionId))
    .map((c) => `no test named ${c.criterionId}`)
  const violations = [...found.any, ...found.console, ...found.undocumented, ...missing]
  return result(
    'rule',
    violations.length === 0,
    {
      files: Object.keys(src).length,
      anyTypes: found.any.length,
      consoleCalls: found.console.length,
      undocumented: found.undocumented.length,
      criteria: req?.acceptanceCriteria.length ?? 0,
      missingTests: missing.length,
      violations: violations.length,
    },
    violations,
  )
}

export const requirementsCheck: Check = async (dir) => {
  const text = await readOptional(dir, REQUIREMENTS_PATH)
  if (text === undefined) return result('requirements', false, {present: false}, [`no ${REQUIREMENTS_PATH}`])
  const value = parseJson(text)
  const problems = value === undefined ? [`${REQUIREMENTS_PATH} is not JSON`] : requirementsProblems(value)
  const functions = isRecord(value) && Array.isArray(value.functions) ? value.functions.length : 0
  const criteria = isRecord(value) && Array.isArray(value.acceptanceCriteria) ? value.acceptanceCriteria.length : 0
  return result(
    'requirements',
    problems.length === 0,
    {present: true, functions, criteria, problems: problems.length},
    problems,
  )
}

export const reviewVerdictCheck: Check = async (dir) => {
  const value = parseJson(await readOptional(dir, REVIEW_PATH))
  if (!isRecord(value)) return result('review-verdict', false, {present: false}, [`no readable ${REVIEW_PATH}`])
  const checks = Array.isArray(value.checks) ? value.checks : []
  const failed = checks
    .filter((c: unknown) => !isRecord(c) || c.passed !== true)
    .map((c: unknown) => (isRecord(c) && typeof c.check === 'string' ? `check ${c.check} failed` : 'a malformed check'))
  const verdict = typeof value.verdict === 'string' ? value.verdict : ''
  const items = verdict === 'approve' ? failed : [`verdict is ${verdict || 'missing'}`, ...failed]
  return result(
    'review-verdict',
    verdict === 'approve' && checks.length > 0 && failed.length === 0,
    {present: true, verdict, checks: checks.length, failedChecks: failed.length},
    checks.length === 0 ? ['review.json lists no checks', ...items] : items,
  )
}

function isHashMap(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string')
}

export const packageCheck: Check = async (dir) => {
  const value = parseJson(await readOptional(dir, INTEGRATION_PATH))
  if (!isRecord(value) || !isHashMap(value.files) || !isRecord(value.tests))
    return result('package', false, {present: false}, [`no well-formed ${INTEGRATION_PATH}`])
  const mismatches: string[] = []
  for (const [path, hash] of Object.entries(value.files)) {
    const bytes = await readFile(join(dir, path)).catch(() => undefined)
    if (bytes === undefined) mismatches.push(`${path} is missing`)
    else if (contentHash(bytes) !== hash) mismatches.push(`${path} does not match its hash`)
  }
  const recordedPassed = typeof value.tests.passed === 'number' ? value.tests.passed : -1
  const recordedFailed = typeof value.tests.failed === 'number' ? value.tests.failed : -1
  const recordOk = recordedPassed > 0 && recordedFailed === 0
  const files = Object.keys(value.files).length
  const hasDist = Object.keys(value.files).some((p) => p.startsWith('dist/') && p.endsWith('.js'))
  // Re-run only what the manifest vouches for: tampered bytes are already a failure.
  const rerun = mismatches.length === 0 && hasDist ? await runDistTests(dir) : undefined
  const rerunOk = rerun !== undefined && testRunResult('package', rerun).passed && rerun.passed === recordedPassed
  const items = [
    ...mismatches,
    ...(recordOk ? [] : [`recorded tests: ${recordedPassed} passed, ${recordedFailed} failed`]),
    ...(hasDist ? [] : ['no dist/ JavaScript packaged']),
    ...(rerun === undefined || rerunOk
      ? []
      : [
          `re-run against dist: ${rerun.passed} passed, ${rerun.failed} failed`,
          ...rerun.results.filter((r) => !r.ok).map((r) => `failing: ${r.name}`),
        ]),
  ]
  return result(
    'package',
    files > 0 && mismatches.length === 0 && recordOk && rerunOk,
    {
      files,
      mismatches: mismatches.length,
      recordedPassed,
      recordedFailed,
      rerunPassed: rerun?.passed ?? 0,
      rerunFailed: rerun?.failed ?? 0,
      rerunTotal: rerun?.total ?? 0,
    },
    items,
  )
}

export const docsCheck: Check = async (dir) => {
  const readme = await readOptional(dir, README_PATH)
  const req = parseRequirements((await readOptional(dir, REQUIREMENTS_PATH)) ?? '')
  if (readme === undefined || req === null)
    return result('docs', false, {present: readme !== undefined, requirements: req !== null}, [
      readme === undefined ? `no ${README_PATH}` : `no well-formed ${REQUIREMENTS_PATH}`,
    ])
  const missing = req.functions
    .filter((f) => !new RegExp(`\\b${f.name.replace(/\$/g, '\\$')}\\b`).test(readme))
    .map((f) => `${README_PATH} does not name ${f.name}`)
  return result(
    'docs',
    missing.length === 0,
    {present: true, requirements: true, functions: req.functions.length, missing: missing.length},
    missing,
  )
}

export const CHECKS = {
  typecheck: typecheckCheck,
  tests: testsCheck,
  rule: ruleCheck,
  requirements: requirementsCheck,
  'review-verdict': reviewVerdictCheck,
  package: packageCheck,
  docs: docsCheck,
} as const satisfies Record<string, Check>

export type CheckName = keyof typeof CHECKS

export function isCheckName(name: string): name is CheckName {
  return Object.hasOwn(CHECKS, name)
}
