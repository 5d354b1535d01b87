// The proof of concept's processes: the Group Authority (`mwp authority serve`) and every Agent
// (`mwp agent run`) are separate OS processes of this package's own command line, started by PID
// and stopped by PID. Each process's JSON log lines on stderr are parsed as they arrive and kept
// (bounded) for the trace and the checks.

import {type ChildProcess, spawn} from 'node:child_process'
import {createWriteStream, mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {packageRoot} from '../schema/catalog.js'

export interface LogLine {
  at?: string
  event?: string
  [field: string]: unknown
}

export interface PocProcess {
  name: string
  child: ChildProcess
  exited: Promise<number | null>
  /** Parsed JSON log lines (stderr), oldest first, at most MAX_LINES. */
  logs: LogLine[]
  /** The raw end of stderr, for a diagnosis. */
  tail(): string
  stdout(): string
}

const MAX_LINES = 20_000
const TAIL = 8_000

/** Starts `mwp ARGS` in `cwd`; its stderr also goes to cwd/logs/NAME.log. */
export function spawnMwp(name: string, args: string[], cwd: string, env: Record<string, string> = {}): PocProcess {
  mkdirSync(join(cwd, 'logs'), {recursive: true})
  const file = createWriteStream(join(cwd, 'logs', `${name}.log`), {flags: 'a'})
  const child = spawn(process.execPath, [join(packageRoot(), 'bin/run.js'), ...args], {
    cwd,
    env: {...process.env, ...env, NO_COLOR: '1'},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const logs: LogLine[] = []
  let partial = ''
  let tail = ''
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString('utf8')).slice(-TAIL)))
  child.stderr!.on('data', (d: Buffer) => {
    const text = d.toString('utf8')
    file.write(d)
    tail = (tail + text).slice(-TAIL)
    const lines = (partial + text).split('\n')
    partial = lines.pop()!
    for (const line of lines) {
      if (!line.startsWith('{')) continue
      try {
        logs.push(JSON.parse(line) as LogLine)
        if (logs.length > MAX_LINES) logs.shift()
      } catch {
        // not a log line
      }
    }
  })
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      file.end()
      resolve(code)
    }),
  )
  return {name, child, exited, logs, tail: () => tail, stdout: () => out}
}

/** Starts `mwp authority serve` and resolves once it listens, with its URL and development CA. */
export async function startAuthority(
  config: string,
  cwd: string,
  extra: string[] = [],
): Promise<{proc: PocProcess; url: string; ca: string}> {
  const proc = spawnMwp(
    'authority',
    ['authority', 'serve', '--config', config, '--dev-tls', '--port', '0', ...extra],
    cwd,
  )
  const {url, ca} = await new Promise<{url: string; ca: string}>((resolve, reject) => {
    const check = () => {
      const url = /listening on (\S+)/.exec(proc.stdout())?.[1]
      const ca = /CA file: (\S+)/.exec(proc.stdout())?.[1]
      if (url && ca) resolve({url, ca})
    }
    proc.child.stdout!.on('data', check)
    void proc.exited.then((code) => reject(new Error(`the authority exited (${code}): ${proc.tail()}`)))
  })
  return {proc, url, ca}
}

/** Stops a process: SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(p: PocProcess, graceMs = 5_000): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return
  p.child.kill('SIGTERM')
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs)
  await p.exited
  clearTimeout(timer)
}
