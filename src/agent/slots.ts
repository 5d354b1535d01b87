// Execution slots (spec §11.1): every run of a WorkItem is its own OS process holding only that
// WorkItem's WorkSpec, so another Group's context, the Agent's signing key and other slots'
// tokens are out of its reach by construction. Two kinds, one interface:
//   module — a child Node process (slot-host.ts) running the user's AgentHandler
//   exec   — any program, speaking the NDJSON protocol of exec-protocol.ts
// The parent processes a slot's reports strictly in the order they were sent, so a checkpoint
// written just before a `yield` is durable before the yield is acted on.

import {type ChildProcess, fork, spawn} from 'node:child_process'
import {createInterface} from 'node:readline'
import {fileURLToPath} from 'node:url'
import type {UsageDelta} from '../authority/model/budget.js'
import type {ArtifactMeta, EvidenceClaim, Outcome, Progress, WorkSpec} from './handler.js'
import {parseExecLine, resolveInWorkDir} from './exec-protocol.js'
import type {FromSlot, StopReason, ToSlot} from './slot-protocol.js'

/** What the runtime does with a slot's reports (durably, under the current lease). */
export interface SlotReports {
  checkpoint(state: unknown): Promise<string>
  artifact(content: Buffer, meta: ArtifactMeta): Promise<string>
  progress(progress: Progress): void
  evidence(criterionIds: string[], claim: EvidenceClaim): void
  usage(delta: UsageDelta): void
  /** A line for the Agent's log (the handler's stderr, protocol problems). */
  log(line: string): void
}

export type HandlerSpec = {module: string} | {exec: string}

/** How a run ended: the handler's outcome, or the process died / was stopped without one. */
export type SlotResult = Outcome | {type: 'crashed'; reason: string} | {type: 'stopped'; reason: StopReason}

export interface SlotRun {
  readonly pid: number | undefined
  /** `yield` asks the handler to checkpoint and return; `lease-lost` kills the process at once (§11.3). */
  stop(reason: StopReason): void
  /** §12: hands the running handler the token of the renewed lease. */
  token(token: string): void
  readonly done: Promise<SlotResult>
}

/** The environment a slot gets: enough to run programs, nothing of the Agent's own (no MWP_* secrets). */
function slotEnv(workDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {HOME: workDir, MWP_WORK_DIR: workDir}
  for (const name of ['PATH', 'LANG', 'TZ', 'SYSTEMROOT', 'TMPDIR'])
    if (process.env[name]) env[name] = process.env[name]
  return env
}

export function startSlot(handler: HandlerSpec, spec: WorkSpec, workDir: string, reports: SlotReports): SlotRun {
  return 'module' in handler
    ? moduleSlot(handler.module, spec, workDir, reports)
    : execSlot(handler.exec, spec, workDir, reports)
}

/** Runs reports one after another; `settle` ends the run once every earlier report is handled. */
function ordered(reports: SlotReports) {
  let chain: Promise<unknown> = Promise.resolve()
  let result: SlotResult | null = null
  let resolveDone!: (r: SlotResult) => void
  const done = new Promise<SlotResult>((r) => (resolveDone = r))
  return {
    done,
    get ended() {
      return result !== null
    },
    then(step: () => unknown) {
      chain = chain.then(step).catch((e: Error) => {
        reports.log(`slot report failed: ${e.message}`)
        result ??= {type: 'crashed', reason: `a report could not be recorded: ${e.message}`}
      })
    },
    settle(r: SlotResult) {
      chain = chain.then(() => {
        result ??= r
        resolveDone(result)
      })
    },
  }
}

function moduleSlot(module: string, spec: WorkSpec, workDir: string, reports: SlotReports): SlotRun {
  const ts = import.meta.url.endsWith('.ts')
  const entry = fileURLToPath(new URL(`./slot-host.${ts ? 'ts' : 'js'}`, import.meta.url))
  const child = fork(entry, [], {
    env: slotEnv(workDir),
    execArgv: ts ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  const run = ordered(reports)
  let outcome: SlotResult | null = null
  let stopped: StopReason | null = null
  const send = (m: ToSlot) => child.connected && child.send(m)
  forwardOutput(child, reports)
  child.on('message', (m: FromSlot) => {
    if (stopped === 'lease-lost') return
    switch (m.t) {
      case 'checkpoint':
        return run.then(async () => send({t: 'stored', id: m.id, hash: await reports.checkpoint(m.state)}))
      case 'artifact':
        return run.then(async () =>
          send({t: 'stored', id: m.id, hash: await reports.artifact(Buffer.from(m.content, 'base64'), m.meta)}),
        )
      case 'progress':
        return run.then(() => reports.progress(m.progress))
      case 'evidence':
        return run.then(() => reports.evidence(m.criterionIds, m.claim))
      case 'usage':
        return run.then(() => reports.usage(m.delta))
      case 'done':
        outcome = m.outcome
        return
      case 'error':
        outcome = {type: 'crashed', reason: m.message}
        return
    }
  })
  child.on('exit', (code, signal) => {
    if (stopped === 'lease-lost') return run.settle({type: 'stopped', reason: 'lease-lost'})
    run.settle(outcome ?? {type: 'crashed', reason: `the handler process exited (${signal ?? `code ${code}`})`})
  })
  send({t: 'run', spec, workDir, handler: module})
  return {
    pid: child.pid,
    done: run.done,
    stop(reason) {
      stopped = reason
      if (reason === 'lease-lost') child.kill('SIGKILL')
      else send({t: 'stop', reason})
    },
    token: (token) => send({t: 'token', token}),
  }
}

function execSlot(command: string, spec: WorkSpec, workDir: string, reports: SlotReports): SlotRun {
  const child = spawn('/bin/sh', ['-c', command], {
    cwd: workDir,
    env: slotEnv(workDir),
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const run = ordered(reports)
  let outcome: SlotResult | null = null
  let stopped: StopReason | null = null
  let lineNo = 0
  child.stdin.on('error', () => undefined) // the program may exit without reading its stdin
  child.stdin.write(JSON.stringify({work: spec}) + '\n')
  createInterface({input: child.stderr}).on('line', (l) => reports.log(l))
  createInterface({input: child.stdout}).on('line', (text) => {
    lineNo++
    if (stopped === 'lease-lost' || outcome !== null || text.trim() === '') return
    const line = parseExecLine(text)
    if ('error' in line) {
      outcome = {type: 'crashed', reason: `stdout line ${lineNo}: ${line.error}`}
      child.kill('SIGKILL')
      return
    }
    switch (line.type) {
      case 'checkpoint':
        return run.then(() => reports.checkpoint(line.state))
      case 'artifact':
        return run.then(async () => {
          const content =
            line.path !== undefined ? await resolveInWorkDir(workDir, line.path) : Buffer.from(line.content!)
          await reports.artifact(content, {mediaType: line.mediaType, ...(line.name ? {name: line.name} : {})})
        })
      case 'progress':
        return run.then(() => reports.progress(line.progress))
      case 'evidence':
        return run.then(() => reports.evidence(line.criterionIds, line.claim))
      case 'usage':
        return run.then(() => reports.usage(line.delta))
      default:
        outcome = line.outcome
    }
  })
  child.on('exit', (code, signal) => {
    if (stopped === 'lease-lost') return run.settle({type: 'stopped', reason: 'lease-lost'})
    run.settle(
      outcome ?? {type: 'crashed', reason: `the program exited (${signal ?? `code ${code}`}) without an outcome line`},
    )
  })
  return {
    pid: child.pid,
    done: run.done,
    stop(reason) {
      stopped = reason
      if (reason === 'lease-lost') child.kill('SIGKILL')
      else if (child.stdin.writable) child.stdin.write('yield\n')
    },
    token(token) {
      if (child.stdin.writable) child.stdin.write(`${JSON.stringify({token})}\n`)
    },
  }
}

function forwardOutput(child: ChildProcess, reports: SlotReports): void {
  for (const stream of [child.stdout, child.stderr])
    if (stream) createInterface({input: stream}).on('line', reports.log)
}
