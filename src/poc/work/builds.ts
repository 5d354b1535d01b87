// The stages that must run real programs on a working directory: review (the reviewer runs the
// checks) and integrate (compile to dist/, package, run the tests against the compiled code). What
// they write comes from the pure builders of stages.ts.

import {contentHash} from '../../crypto/hash.js'
import type {CheckResult} from './check-result.js'
import {CHECKS, runDistTests} from './checks.js'
import {integrationManifest, packageJson, reviewReport, type Files} from './stages.js'
import {compile, listFiles, readFiles, writeFiles, type TestRun} from './toolchain.js'

/** The checks a reviewer runs on an implementation and its tests, in the order review.json lists them. */
export const REVIEW_CHECKS = ['typecheck', 'tests', 'rule'] as const

export interface Review {
  files: Files
  checks: CheckResult[]
}

/** Runs the review checks on `dir` and writes review.json there (the handler runs them a step each). */
export async function review(dir: string): Promise<Review> {
  const checks: CheckResult[] = []
  for (const name of REVIEW_CHECKS) checks.push(await CHECKS[name](dir))
  const files = reviewReport(checks)
  await writeFiles(dir, files)
  return {files, checks}
}

export interface Integration {
  /** package.json, dist/<project>.js and .d.ts, and integration.json. */
  files: Files
  run: TestRun
  compileErrors: string[]
}

/**
 * Compiles src/ of `dir` to dist/, writes package.json, runs the tests against dist/ and writes
 * integration.json with the content hash of every packaged file (the compiled output, the manifest
 * and the sources and tests it was built from).
 */
export async function integrate(dir: string, project: string): Promise<Integration> {
  const sources = (await listFiles(dir, 'src', '.ts')).filter((p) => !p.endsWith('.d.ts'))
  const compiled = compile(dir, sources)
  const built: Files = {...compiled.files, ...packageJson(project)}
  await writeFiles(dir, built)
  const run = await runDistTests(dir)
  const inputs = await readFiles(dir, [...sources, ...(await listFiles(dir, 'test', '.test.ts'))])
  const hashes = Object.fromEntries(Object.entries({...inputs, ...built}).map(([p, text]) => [p, contentHash(text)]))
  const manifest = integrationManifest(project, hashes, {passed: run.passed, failed: run.failed})
  await writeFiles(dir, manifest)
  return {files: {...built, ...manifest}, run, compileErrors: compiled.errors}
}
