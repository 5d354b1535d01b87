// Runs the built CLI (bin/run.js → dist/) as a real subprocess.

import {spawn, spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {PROJECT_ROOT} from './upstream.js'

export interface CliResult {
  status: number | null
  stdout: string
  stderr: string
}

const BIN = join(PROJECT_ROOT, 'bin/run.js')

export function mwp(
  args: string[],
  options: {input?: string | Buffer; cwd?: string; env?: NodeJS.ProcessEnv} = {},
): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? PROJECT_ROOT,
    input: options.input ?? '',
    env: {...process.env, NO_COLOR: '1', ...options.env},
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

export function mwpAsync(args: string[], options: {input?: string | Buffer; cwd?: string} = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? PROJECT_ROOT,
      env: {...process.env, NO_COLOR: '1'},
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (status) => resolve({status, stdout, stderr}))
    child.stdin.end(options.input ?? '')
  })
}

/**
 * Runs `mwp ARGS` on a pseudo-terminal (util-linux `script`), answers the prompt once it is on
 * screen, and returns the exit code and the screen output; `columns` sets the terminal's width.
 */
export async function onTerminal(
  args: string[],
  answer?: string,
  columns?: number,
): Promise<{status: number | null; screen: string}> {
  const cmd = [process.execPath, join(PROJECT_ROOT, 'bin/run.js'), ...args]
    .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
    .join(' ')
  const sized = columns === undefined ? cmd : `stty cols ${columns} && ${cmd}`
  const child = spawn('script', ['-qec', sized, '/dev/null'], {env: {...process.env, NO_COLOR: '1'}})
  let screen = ''
  let answered = false
  child.stdout.on('data', (d) => {
    screen += d
    if (answer !== undefined && !answered && screen.includes('(y/N)')) {
      answered = true
      child.stdin.write(answer)
    }
  })
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return {status, screen}
}

/** Runs tasks with bounded concurrency (the machine has two cores). */
export async function pool<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const workers = Array.from({length: Math.min(limit, items.length)}, async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await task(items[i])
    }
  })
  await Promise.all(workers)
  return results
}

/** Parses --json output: exactly one JSON object on stdout. */
export function json(r: CliResult): any {
  const lines = r.stdout.trim().split('\n')
  if (lines.length !== 1)
    throw new Error(`expected one JSON line on stdout, got ${lines.length}: ${r.stdout}\n${r.stderr}`)
  return JSON.parse(lines[0])
}
