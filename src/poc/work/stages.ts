// The pure, deterministic generators of the proof of concept's software work: strings in, files
// (repository path => text) out, no I/O. The same inputs give the same bytes; only the seed varies
// the work. The stages that must run programs (review: the checks; integrate: builds.ts) use the
// pure builders at the end of this module for what they write.

import type {CheckResult} from './check-result.js'
import type {Project} from './projects.js'
import type {Requirements} from './requirements.js'

export type Files = Record<string, string>

/** JSON as the stages write it: two-space indentation and a final newline, so diffs read well. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n'
}

/** mulberry32: a small, well-mixed 32-bit generator; the seed is the only source of variation. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function shuffled<T>(items: readonly T[], next: () => number): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    const kept = out[i]
    const moved = out[j]
    if (kept === undefined || moved === undefined) continue
    out[i] = moved
    out[j] = kept
  }
  return out
}

export const REQUIREMENTS_PATH = 'requirements.json'
export const testPath = (project: string): string => `test/${project}.test.ts`
export const sourcePath = (project: string): string => `src/${project}.ts`
export const README_PATH = 'README.md'
export const REVIEW_PATH = 'review.json'
export const INTEGRATION_PATH = 'integration.json'
export const PACKAGE_PATH = 'package.json'

/**
 * requirements.json: every function, and as acceptance criteria each function's core examples plus
 * `optionalPerFunction` of its other examples picked by the seed, in an order the seed permutes.
 */
export function requirements(project: Project, seed: number): Files {
  const next = random(seed)
  const acceptanceCriteria = project.functions.flatMap((f) => {
    const examples = project.examples.filter((e) => e.function === f.name)
    const optional = shuffled(
      examples.filter((e) => e.core !== true),
      next,
    ).slice(0, project.optionalPerFunction)
    const picked = examples.filter((e) => e.core === true || optional.includes(e))
    return shuffled(picked, next).map((e) => ({
      criterionId: e.id,
      function: e.function,
      args: e.args,
      expected: e.expected,
    }))
  })
  const doc: Requirements = {
    project: project.name,
    seed,
    functions: project.functions.map(({name, signature, doc}) => ({name, signature, doc})),
    acceptanceCriteria,
  }
  return {[REQUIREMENTS_PATH]: jsonText(doc)}
}

function literal(value: unknown): string {
  return JSON.stringify(value)
}

/** test/<project>.test.ts: one node:test test per acceptance criterion, named by its criterionId. */
export function tests(req: Requirements): Files {
  const used = req.functions.map((f) => f.name).filter((n) => req.acceptanceCriteria.some((c) => c.function === n))
  const lines = [
    `// Acceptance tests of ${req.project}, generated from requirements.json (seed ${req.seed}).`,
    "import {test} from 'node:test'",
    "import assert from 'node:assert/strict'",
    `import {${used.join(', ')}} from '../src/${req.project}.js'`,
    '',
  ]
  for (const c of req.acceptanceCriteria) {
    lines.push(
      `test(${literal(c.criterionId)}, () => {`,
      `  assert.deepEqual(${c.function}(${c.args.map(literal).join(', ')}), ${literal(c.expected)})`,
      '})',
      '',
    )
  }
  return {[testPath(req.project)]: lines.join('\n')}
}

function docComment(text: string): string {
  return `/** ${text.replaceAll('*/', '*\\/')} */`
}

export interface ImplementOptions {
  /** A key of project.defects: the first attempt carries this bug. */
  defect?: string
  /** A rejected submission sent back: the work is redone without the defect. */
  rework?: {round: number; failures: string[]}
}

/**
 * src/<project>.ts: the required functions, each with its doc comment. A named defect replaces its
 * function's source only on a first attempt (no rework): the rework is the fix.
 */
export function implement(req: Requirements, project: Project, options: ImplementOptions = {}): Files {
  const defect =
    options.defect !== undefined && options.rework === undefined && Object.hasOwn(project.defects, options.defect)
      ? project.defects[options.defect]
      : undefined
  const parts = [`// ${project.name}: ${project.description}`]
  if (project.preamble !== '') parts.push(project.preamble)
  for (const f of req.functions) {
    const source = defect?.function === f.name ? defect.source : project.sources[f.name]
    if (source === undefined) continue // not in the catalogue: the typecheck and the tests say so
    parts.push(`${docComment(f.doc)}\n${source}`)
  }
  if (project.support !== '') parts.push(project.support)
  return {[sourcePath(project.name)]: parts.join('\n\n') + '\n'}
}

/** README.md: what the library is for, and each function with its signature, doc and examples. */
export function docs(req: Requirements, project: Project): Files {
  const names = req.functions.map((f) => f.name).join(', ')
  const lines = [`# ${req.project}`, '', project.description, '', '## Usage', '', '```ts']
  lines.push(`import {${names}} from '${req.project}'`, '```', '', '## Functions', '')
  for (const f of req.functions) {
    lines.push(`### \`${f.name}\``, '', '```ts', f.signature, '```', '', f.doc, '')
    const examples = req.acceptanceCriteria.filter((c) => c.function === f.name)
    if (examples.length > 0) {
      lines.push('Examples:', '', '```ts')
      for (const c of examples) lines.push(`${f.name}(${c.args.map(literal).join(', ')}) // => ${literal(c.expected)}`)
      lines.push('```', '')
    }
  }
  return {[README_PATH]: lines.join('\n')}
}

export interface ReviewReport {
  verdict: 'approve' | 'changes-requested'
  checks: {check: string; passed: boolean; measured: CheckResult['measured']}[]
}

/** review.json from the checks the reviewer ran: it approves only when every check passed. */
export function reviewReport(results: readonly CheckResult[]): Files {
  const report: ReviewReport = {
    verdict: results.length > 0 && results.every((r) => r.passed) ? 'approve' : 'changes-requested',
    checks: results.map(({check, passed, measured}) => ({check, passed, measured})),
  }
  return {[REVIEW_PATH]: jsonText(report)}
}

export interface IntegrationManifest {
  project: string
  /** Each packaged file's content hash (`sha256:<hex>`). */
  files: Record<string, string>
  tests: {passed: number; failed: number}
}

/** package.json of the integrated library: an ES module with its compiled entry point and types. */
export function packageJson(project: string): Files {
  const manifest = {
    name: project,
    version: '0.1.0',
    type: 'module',
    main: `dist/${project}.js`,
    types: `dist/${project}.d.ts`,
    exports: {'.': {types: `./dist/${project}.d.ts`, default: `./dist/${project}.js`}},
    files: ['dist'],
  }
  return {[PACKAGE_PATH]: jsonText(manifest)}
}

/** integration.json: what was packaged (by content hash) and what the tests against dist/ said. */
export function integrationManifest(
  project: string,
  hashes: Record<string, string>,
  tests: {passed: number; failed: number},
): Files {
  const files = Object.fromEntries(Object.entries(hashes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  const manifest: IntegrationManifest = {project, files, tests}
  return {[INTEGRATION_PATH]: jsonText(manifest)}
}
