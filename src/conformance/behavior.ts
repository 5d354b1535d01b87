// Behavior coverage for the full-conformance claim (spec §22, ACCEPTANCE): every core Command
// kind, Event kind and §7.1/§10.2 transition row needs a test proving its positive case and one
// proving its negative case. The rows live in behavior/rows.json; tests claim a row by
// carrying `[+ID]` or `[-ID]` in their it()/test() title. The scan is static (source text of
// test/**/*.test.ts), so the report runs from any checkout without executing the suite.

import {readdirSync, readFileSync, statSync} from 'node:fs'
import {join, relative, sep} from 'node:path'

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
  /** `file › title` of every test claiming the positive case. */
  positive: string[]
  negative: string[]
}

export interface TaggedTest {
  file: string
  title: string
  tags: {sign: '+' | '-'; id: string}[]
}

export interface BehaviorReport {
  complete: boolean
  totals: {rows: number; complete: number; missingPositive: number; missingNegative: number; taggedTests: number}
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
    const tags = [...title.matchAll(TAG)].map((t) => ({sign: t[1] as '+' | '-', id: t[2]!}))
    if (tags.length > 0) tests.push({file, title, tags})
  }
  return tests
}

export function scanTests(root: string): TaggedTest[] {
  return testFiles(root).flatMap((file) => scanSource(file, readFileSync(join(root, file), 'utf8')))
}

export function buildReport(rows: BehaviorRow[], tests: TaggedTest[]): BehaviorReport {
  const byId = new Map<string, RowCoverage>(rows.map((r) => [r.id, {...r, positive: [], negative: []}]))
  const unknownTags: BehaviorReport['unknownTags'] = []
  for (const t of tests) {
    const label = `${t.file} › ${t.title}`
    for (const tag of t.tags) {
      const row = byId.get(tag.id)
      if (!row) unknownTags.push({tag: `[${tag.sign}${tag.id}]`, test: label})
      else {
        const list = tag.sign === '+' ? row.positive : row.negative
        if (!list.includes(label)) list.push(label)
      }
    }
  }
  const covered = [...byId.values()]
  const missingPositive = covered.filter((r) => r.positive.length === 0).length
  const missingNegative = covered.filter((r) => r.negative.length === 0).length
  const completeRows = covered.filter((r) => r.positive.length > 0 && r.negative.length > 0).length
  return {
    complete: completeRows === covered.length,
    totals: {rows: covered.length, complete: completeRows, missingPositive, missingNegative, taggedTests: tests.length},
    rows: covered,
    unknownTags,
  }
}

export function behaviorReport(root: string): BehaviorReport {
  return buildReport(loadRows(root), scanTests(root))
}

/** The rows lacking a positive or a negative test, as `ID (+|-|+-)` strings. */
export function missingRows(report: BehaviorReport): string[] {
  return report.rows
    .filter((r) => r.positive.length === 0 || r.negative.length === 0)
    .map((r) => `${r.id} (missing ${r.positive.length === 0 ? '+' : ''}${r.negative.length === 0 ? '-' : ''})`)
}
