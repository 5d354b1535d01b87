// The results of one vitest run, as the behavior report reads them: the JSON reporter's output
// (`npm test` writes it to RESULTS_FILE, see vitest.config.ts), each test with its status and the
// assertion count test/support/record-assertions.ts stored in its meta.

import {readFileSync, realpathSync} from 'node:fs'
import {join, relative, resolve, sep} from 'node:path'
import {MwpError} from '../errors.js'

/** Where a recorded run writes its results, relative to the checkout root. */
export const RESULTS_FILE = join('test-results', 'vitest.json')

export const TEST_STATUSES = ['passed', 'failed', 'skipped', 'todo', 'pending'] as const
export type TestStatus = (typeof TEST_STATUSES)[number]

export interface TestResult {
  /** The test file relative to the root, with `/` separators. */
  file: string
  /** The enclosing describe() titles, outermost first. */
  ancestors: string[]
  title: string
  /** `pending`: the run ended before the test finished. */
  status: TestStatus
  /** The first line of the first failure message. */
  failure?: string
  /** expect() calls the test made; absent when it did not run or the run lacked the setup file. */
  assertionCalls?: number
  /** An it.fails test, which passes by failing. */
  expectedToFail: boolean
}

/** Results that cannot be read, are not vitest's, or belong to another tree: an environment fault. */
export class ResultsError extends MwpError<'results-invalid'> {
  constructor(message: string) {
    super('results-invalid', message)
  }
}

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string')
const isStatus = (v: unknown): v is TestStatus => TEST_STATUSES.some((s) => s === v)

/**
 * Reads vitest's JSON results at `path`. Every test file in them must lie under `root`: results
 * of another checkout (or of a fixture run elsewhere) say nothing about this one.
 */
export function readResults(path: string, root: string): TestResult[] {
  let doc: unknown
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'))
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message
    throw new ResultsError(`cannot read the test results ${path}: ${why}`)
  }
  if (!isObject(doc) || !Array.isArray(doc.testResults)) {
    throw new ResultsError(`${path} is not vitest JSON results (no testResults array)`)
  }
  // vitest reports real paths; the root may be reached through a symlink.
  const roots = [...new Set([resolve(root), realpathSync(root)])]
  const out: TestResult[] = []
  for (const file of doc.testResults) {
    if (!isObject(file) || typeof file.name !== 'string' || !Array.isArray(file.assertionResults)) {
      throw new ResultsError(`${path}: a testResults entry lacks its name or assertionResults`)
    }
    const name = file.name
    const base = roots.find((r) => name.startsWith(r + sep))
    if (base === undefined)
      throw new ResultsError(`${path} holds results of another tree: ${name} is not under ${roots[0]}`)
    const rel = relative(base, name).split(sep).join('/')
    for (const t of file.assertionResults) out.push(testResult(path, rel, t))
  }
  return out
}

function testResult(path: string, file: string, t: unknown): TestResult {
  if (!isObject(t) || typeof t.title !== 'string' || !isStrings(t.ancestorTitles) || !isStatus(t.status)) {
    throw new ResultsError(`${path}: a test of ${file} lacks its title, ancestorTitles or a known status`)
  }
  const result: TestResult = {
    file,
    ancestors: t.ancestorTitles,
    title: t.title,
    status: t.status,
    expectedToFail: false,
  }
  const failures = t.failureMessages
  if (isStrings(failures) && failures.length > 0) result.failure = failures[0]!.split('\n')[0]!
  const meta = t.meta
  if (isObject(meta)) {
    if (typeof meta.assertionCalls === 'number') result.assertionCalls = meta.assertionCalls
    if (meta.expectedToFail === true) result.expectedToFail = true
  }
  return result
}
