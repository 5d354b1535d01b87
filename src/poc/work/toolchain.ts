// The real tools the checks and the build stages run: the TypeScript compiler API (one Program per
// use: a Program costs about a second) and `node --test` in a child process.

import {spawn} from 'node:child_process'
import {mkdir, mkdtemp, readFile, readdir, rm, writeFile} from 'node:fs/promises'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {dirname, join, relative, sep} from 'node:path'
import ts from 'typescript'
import type {Files} from './stages.js'

/** Repository paths (`/`-separated, sorted) of the files under `sub` of `dir` whose names end in `suffix`. */
export async function listFiles(dir: string, sub: string, suffix: string): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(join(dir, sub), {recursive: true})
  } catch {
    return [] // no such folder: nothing of that kind was submitted
  }
  return names
    .filter((n) => n.endsWith(suffix))
    .map((n) => `${sub}/${n.split(sep).join('/')}`)
    .sort()
}

export async function readFiles(dir: string, paths: readonly string[]): Promise<Files> {
  const out: Files = {}
  for (const p of paths) out[p] = await readFile(join(dir, p), 'utf8')
  return out
}

export async function writeFiles(dir: string, files: Files): Promise<void> {
  for (const [p, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, p)), {recursive: true})
    await writeFile(join(dir, p), text)
  }
}

export type NodeTypes = '@types/node' | 'shim'

/**
 * Where @types/node lives, so the generated tests' `node:test` and `node:assert/strict` imports
 * typecheck in a directory that has no node_modules of its own; undefined when it is not installed.
 */
function nodeTypeRoot(): string | undefined {
  try {
    return dirname(dirname(createRequire(import.meta.url).resolve('@types/node/package.json')))
  } catch {
    return undefined
  }
}

/**
 * Without @types/node (a deployment without dev dependencies), the two modules the generated tests
 * import are declared by this shim: as strict as the tests need, no more.
 */
const NODE_SHIM_PATH = '/__mwp_poc__/node-test-shim.d.ts'
const NODE_SHIM = `declare module 'node:test' {
  export function test(name: string, fn: () => void | Promise<void>): Promise<void>
  export function it(name: string, fn: () => void | Promise<void>): Promise<void>
}
declare module 'node:assert/strict' {
  interface Assert {
    deepEqual(actual: unknown, expected: unknown, message?: string): void
    equal(actual: unknown, expected: unknown, message?: string): void
    notEqual(actual: unknown, expected: unknown, message?: string): void
    ok(value: unknown, message?: string): void
    throws(fn: () => unknown, expected?: unknown, message?: string): void
  }
  const assert: Assert
  export default assert
}
`

/** The strict options every program here uses; with `nodeTypes` '@types/node', Node's types are loaded. */
function baseOptions(nodeTypes: NodeTypes): ts.CompilerOptions {
  const typeRoot = nodeTypes === '@types/node' ? nodeTypeRoot() : undefined
  return {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    // The generated code imports `../src/x.js` as Node's ESM resolution wants; Bundler resolution
    // maps that to x.ts without the directory needing a package.json.
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts'],
    types: typeRoot === undefined ? [] : ['node'],
    typeRoots: typeRoot === undefined ? [] : [typeRoot],
    skipLibCheck: true,
    noUnusedLocals: true,
    noUnusedParameters: true,
    newLine: ts.NewLineKind.LineFeed,
  }
}

/** A program over `roots`, with the node shim among them when @types/node is not used. */
function program(roots: string[], options: ts.CompilerOptions, nodeTypes: NodeTypes): ts.Program {
  if (nodeTypes === '@types/node') return ts.createProgram(roots, options)
  const host = ts.createCompilerHost(options)
  const {getSourceFile, fileExists, readFile} = host
  host.getSourceFile = (fileName, language, onError, shouldCreate) =>
    fileName === NODE_SHIM_PATH
      ? ts.createSourceFile(fileName, NODE_SHIM, language)
      : getSourceFile.call(host, fileName, language, onError, shouldCreate)
  host.fileExists = (fileName) => fileName === NODE_SHIM_PATH || fileExists.call(host, fileName)
  host.readFile = (fileName) => (fileName === NODE_SHIM_PATH ? NODE_SHIM : readFile.call(host, fileName))
  return ts.createProgram([...roots, NODE_SHIM_PATH], options, host)
}

/** @types/node when it is installed beside this toolkit, else the shim. */
export function defaultNodeTypes(): NodeTypes {
  return nodeTypeRoot() === undefined ? 'shim' : '@types/node'
}

function describe(dir: string, d: ts.Diagnostic): string {
  const message = ts.flattenDiagnosticMessageText(d.messageText, ' ')
  if (d.file === undefined || d.start === undefined) return `TS${d.code}: ${message}`
  const {line, character} = d.file.getLineAndCharacterOfPosition(d.start)
  return `${relative(dir, d.file.fileName).split(sep).join('/')}:${line + 1}:${character + 1} TS${d.code}: ${message}`
}

export interface Typecheck {
  nodeTypes: NodeTypes
  errors: number
  /** The diagnostics, file paths relative to the directory. */
  messages: string[]
}

/** Type-checks `paths` of `dir` as one strict program and emits nothing. */
export function typecheck(dir: string, paths: readonly string[], nodeTypes = defaultNodeTypes()): Typecheck {
  const roots = paths.map((p) => join(dir, p))
  const diagnostics = ts.getPreEmitDiagnostics(program(roots, {...baseOptions(nodeTypes), noEmit: true}, nodeTypes))
  return {nodeTypes, errors: diagnostics.length, messages: diagnostics.map((d) => describe(dir, d))}
}

export interface Compiled {
  /** dist/<name>.js and dist/<name>.d.ts for each source under src/. */
  files: Files
  errors: string[]
}

/** Compiles the src/ files of `dir` to dist/ (JavaScript and declarations) in memory. */
export function compile(dir: string, sources: readonly string[]): Compiled {
  const built = ts.createProgram(
    sources.map((p) => join(dir, p)),
    {...baseOptions(defaultNodeTypes()), declaration: true, rootDir: join(dir, 'src'), outDir: join(dir, 'dist')},
  )
  const files: Files = {}
  const result = built.emit(undefined, (fileName, text) => {
    files[relative(dir, fileName).split(sep).join('/')] = text
  })
  const diagnostics = [...ts.getPreEmitDiagnostics(built), ...result.diagnostics]
  return {files, errors: diagnostics.map((d) => describe(dir, d))}
}

/** An ES module's JavaScript from TypeScript source (types erased, imports kept as written). */
export function transpile(source: string, fileName: string): string {
  return ts.transpileModule(source, {
    fileName,
    compilerOptions: {target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, newLine: ts.NewLineKind.LineFeed},
  }).outputText
}

export interface TestRun {
  passed: number
  failed: number
  total: number
  /** Each top-level test as node:test named it (a file that failed to load is named by its path). */
  results: {name: string; ok: boolean}[]
  timedOut: boolean
  exitCode: number | null
}

export const TEST_TIMEOUT_MS = 30_000

const TAP_RESULT = /^(not ok|ok) \d+ - (.*)$/
const TAP_COUNT = /^# (tests|pass|fail) (\d+)$/

/**
 * Runs `node --test` over `testFiles` in a fresh directory holding `modules` (path => JavaScript)
 * as an ES module package, killed after `timeoutMs`. Counts come from the TAP summary; a run that
 * did not finish counts every test it did not report as failed.
 */
export async function runNodeTests(
  modules: Files,
  testFiles: readonly string[],
  timeoutMs = TEST_TIMEOUT_MS,
): Promise<TestRun> {
  const root = await mkdtemp(join(tmpdir(), 'mwp-poc-tests-'))
  try {
    await writeFiles(root, {...modules, 'package.json': '{"type": "module"}\n'})
    // The library's tests are submitted code: they get a bare environment (no credentials of the
    // checker's, no NODE_OPTIONS loaders, and no NODE_TEST_CONTEXT, which would make a run inside
    // another node:test run report to its parent's channel instead of printing TAP).
    const env = {PATH: process.env.PATH ?? ''}
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', ...testFiles], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    let stdout = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => (stdout += chunk))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, timeoutMs)
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    clearTimeout(timer)
    const results: TestRun['results'] = []
    const counts: Record<string, number> = {}
    for (const line of stdout.split('\n')) {
      const result = TAP_RESULT.exec(line)
      if (result?.[1] !== undefined && result[2] !== undefined)
        results.push({name: result[2].replaceAll(`${root}${sep}`, ''), ok: result[1] === 'ok'})
      const count = TAP_COUNT.exec(line)
      if (count?.[1] !== undefined && count[2] !== undefined) counts[count[1]] = Number(count[2])
    }
    const passed = counts.pass ?? results.filter((r) => r.ok).length
    const total = counts.tests ?? results.length
    const failed = timedOut || counts.fail === undefined ? total - passed : counts.fail
    return {passed, failed, total, results, timedOut, exitCode}
  } finally {
    await rm(root, {recursive: true, force: true})
  }
}
