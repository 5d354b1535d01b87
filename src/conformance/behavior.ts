// Behavior coverage for the full-conformance claim (spec §22, ACCEPTANCE): every core Command
// kind, Event kind and §7.1/§10.2 transition row needs a test proving its positive case and one
// proving its negative case. The rows live in behavior/rows.json; tests claim a row by
// carrying `[+ID]` or `[-ID]` in their it()/test() title. A title alone proves nothing: the report
// reads the results of the last recorded run (vitest's JSON reporter; `npm test` writes them to
// RESULTS_FILE, with each test's assertion count from test/support/record-assertions.ts), and a
// row is complete only when every test citing it ran, passed and made an assertion. The static
// scan of test/**/*.test.ts stays as a cross-check: a tag in the source that the run never
// reached (a conditionally registered test, a file left out, results older than the test) is a
// cited test that did not run.

import {readdirSync, readFileSync, statSync} from 'node:fs'
import {join, relative, sep} from 'node:path'
import {RESULTS_FILE, type TestResult, readResults} from './test-results.js'

export {RESULTS_FILE}

export type BehaviorCategory = 'command' | 'event' | 'transition'

export interface BehaviorRow {
  /** `cmd:KIND`, `evt:KIND` or `row:TAG`; the title tag is `[+ID]` / `[-ID]`. */
  id: string
  category: BehaviorCategory
  section: string
  kind?: string
  scope?: string
  text?: string
}

export interface RowCoverage extends BehaviorRow {
  /** `file › title` of every test proving the positive case: it ran, passed and asserted. */
  positive: string[]
  negative: string[]
  /** Tests citing the row that prove nothing; any one leaves the row incomplete. */
  unproven: UnprovenTest[]
}

export interface Tag {
  sign: '+' | '-'
  id: string
}

export interface TaggedTest {
  file: string
  title: string
  tags: Tag[]
}

/** What a tagged test is worth as evidence; only `passed` proves its rows. */
export const VERDICTS = {
  passed: 'ran and passed with an assertion',
  failed: 'failed',
  skipped: 'was skipped',
  todo: 'is a todo',
  pending: 'did not finish in the run',
  empty: 'ran no expect() assertion',
  'expected-to-fail': 'is an it.fails test, which passes by failing',
  unmeasured: 'passed with no assertion count recorded (the run lacked test/support/record-assertions.ts)',
  'not-run': 'is tagged in the source but absent from the test results',
} as const

export type Verdict = keyof typeof VERDICTS

/** A tagged test of the run (or of the source, when the run never reached it) and its verdict. */
export interface CitedTest extends TaggedTest {
  verdict: Verdict
  /** The failure's first line, for a failed test. */
  detail?: string
}

export interface UnprovenTest {
  tag: string
  /** `file › title`. */
  test: string
  verdict: Exclude<Verdict, 'passed'>
  /** Why it proves nothing, in words. */
  reason: string
}

export interface BehaviorReport {
  complete: boolean
  totals: {
    rows: number
    /** Rows with both cases and no unproven citing test. */
    complete: number
    missingPositive: number
    missingNegative: number
    /** Rows with at least one citing test that proves nothing. */
    unproven: number
    taggedTests: number
  }
  rows: RowCoverage[]
  /** Tags naming no row (a typo, or a kind outside the catalog): listed, never counted. */
  unknownTags: {tag: string; test: string}[]
}

export const ROWS_FILE = join('behavior', 'rows.json')

export function loadRows(root: string): BehaviorRow[] {
  const doc = JSON.parse(readFileSync(join(root, ROWS_FILE), 'utf8')) as {rows?: BehaviorRow[]}
  if (!Array.isArray(doc.rows)) throw new Error(`${ROWS_FILE} has no rows array`)
  return doc.rows
}

/** Every *.test.ts under `dir`, sorted, as paths relative to `root` with `/` separators. */
export function testFiles(root: string, dir = 'test'): string[] {
  const out: string[] = []
  const walk = (abs: string) => {
    for (const name of readdirSync(abs).sort()) {
      if (name === 'node_modules' || name.startsWith('.')) continue
      const path = join(abs, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.endsWith('.test.ts')) out.push(relative(root, path).split(sep).join('/'))
    }
  }
  walk(join(root, dir))
  return out
}

// it('…') / test("…") / it(`…`), optionally with modifiers that still run the test, and the
// table form it.each(rows)('…'). `.skip`, `.todo` and `.fails` are deliberately absent: a skipped
// or expected-to-fail test proves nothing.
const TEST_CALL = /(?<![\w.$])(?:it|test)(?:\.(?:only|concurrent|sequential))*(\.each)?\s*\(/g
const TITLE = /^\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/
const TAG = /\[([+-])((?:cmd|evt|row):[^\]\s]+)\]/g

/** Index just past the `)` closing the `(` before `from`, skipping string literals and comments. */
function skipCall(source: string, from: number): number {
  let depth = 1
  for (let i = from; i < source.length; i++) {
    const c = source[i]!
    if (c === "'" || c === '"' || c === '`') {
      for (i++; i < source.length && source[i] !== c; i++) if (source[i] === '\\') i++
    } else if (c === '/' && source[i + 1] === '/') {
      i = source.indexOf('\n', i)
      if (i < 0) return source.length
    } else if (c === '/' && source[i + 1] === '*') {
      i = source.indexOf('*/', i + 2) + 1
      if (i <= 0) return source.length
    } else if (c === '(') depth++
    else if (c === ')' && --depth === 0) return i + 1
  }
  return source.length
}

/** The tagged test titles of one source text. */
export function scanSource(file: string, source: string): TaggedTest[] {
  const tests: TaggedTest[] = []
  for (const m of source.matchAll(TEST_CALL)) {
    let at = m.index! + m[0].length
    if (m[1] !== undefined) {
      // it.each(table)(title, fn): the title is the first argument of the second call.
      at = skipCall(source, at)
      const open = /^\s*\(/.exec(source.slice(at))
      if (!open) continue
      at += open[0].length
    }
    const title = TITLE.exec(source.slice(at, at + 4096))?.[2]
    if (title === undefined) continue
    const tags = titleTags(title)
    if (tags.length > 0) tests.push({file, title, tags})
  }
  return tests
}

export function scanTests(root: string): TaggedTest[] {
  return testFiles(root).flatMap((file) => scanSource(file, readFileSync(join(root, file), 'utf8')))
}

/** The tags `[+ID]` / `[-ID]` of one test title. */
export function titleTags(title: string): Tag[] {
  return [...title.matchAll(TAG)].map((t) => ({sign: t[1] === '+' ? '+' : '-', id: t[2]!}))
}

function verdictOf(r: TestResult): Verdict {
  if (r.status !== 'passed') return r.status
  if (r.expectedToFail) return 'expected-to-fail'
  if (r.assertionCalls === undefined) return 'unmeasured'
  return r.assertionCalls > 0 ? 'passed' : 'empty'
}

/**
 * The tagged tests of a run, judged, plus a `not-run` entry for every tag of the source scan
 * that no test of the same file carries in the results.
 */
export function citedTests(results: TestResult[], source: TaggedTest[]): CitedTest[] {
  const cited: CitedTest[] = []
  const ran = new Set<string>()
  for (const r of results) {
    const tags = titleTags(r.title)
    if (tags.length === 0) continue
    const test: CitedTest = {file: r.file, title: [...r.ancestors, r.title].join(' › '), tags, verdict: verdictOf(r)}
    if (r.failure !== undefined) test.detail = r.failure
    cited.push(test)
    for (const t of tags) ran.add(`${r.file} ${t.sign}${t.id}`)
  }
  for (const t of source) {
    const absent = t.tags.filter((tag) => !ran.has(`${t.file} ${tag.sign}${tag.id}`))
    if (absent.length > 0) cited.push({file: t.file, title: t.title, tags: absent, verdict: 'not-run'})
  }
  return cited
}

export function buildReport(rows: BehaviorRow[], tests: CitedTest[]): BehaviorReport {
  const byId = new Map<string, RowCoverage>(rows.map((r) => [r.id, {...r, positive: [], negative: [], unproven: []}]))
  const unknownTags: BehaviorReport['unknownTags'] = []
  for (const t of tests) {
    const label = `${t.file} › ${t.title}`
    for (const tag of t.tags) {
      const row = byId.get(tag.id)
      const spelled = `[${tag.sign}${tag.id}]`
      if (!row) unknownTags.push({tag: spelled, test: label})
      else if (t.verdict === 'passed') {
        const list = tag.sign === '+' ? row.positive : row.negative
        if (!list.includes(label)) list.push(label)
      } else {
        const reason = VERDICTS[t.verdict] + (t.detail ? `: ${t.detail}` : '')
        row.unproven.push({tag: spelled, test: label, verdict: t.verdict, reason})
      }
    }
  }
  const covered = [...byId.values()]
  const missingPositive = covered.filter((r) => r.positive.length === 0).length
  const missingNegative = covered.filter((r) => r.negative.length === 0).length
  const unproven = covered.filter((r) => r.unproven.length > 0).length
  const completeRows = covered.filter(rowComplete).length
  return {
    complete: completeRows === covered.length,
    totals: {
      rows: covered.length,
      complete: completeRows,
      missingPositive,
      missingNegative,
      unproven,
      taggedTests: tests.length,
    },
    rows: covered,
    unknownTags,
  }
}

export const rowComplete = (r: RowCoverage): boolean =>
  r.positive.length > 0 && r.negative.length > 0 && r.unproven.length === 0

/** The report over the run whose results are at `results` (default: the root's RESULTS_FILE). */
export function behaviorReport(root: string, results = join(root, RESULTS_FILE)): BehaviorReport {
  return buildReport(loadRows(root), citedTests(readResults(results, root), scanTests(root)))
}

/** The rows lacking a positive or a negative test, as `ID (+|-|+-)` strings. */
export function missingRows(report: BehaviorReport): string[] {
  return report.rows
    .filter((r) => r.positive.length === 0 || r.negative.length === 0)
    .map((r) => `${r.id} (missing ${r.positive.length === 0 ? '+' : ''}${r.negative.length === 0 ? '-' : ''})`)
}

/** Every citing test that proves nothing, as `[±ID] file › title: reason` strings. */
export function unprovenTests(report: BehaviorReport): string[] {
  return report.rows.flatMap((r) => r.unproven.map((u) => `${u.tag} ${u.test}: ${u.reason}`))
}
