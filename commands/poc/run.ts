import {Flags} from '@oclif/core'
import {resolve} from 'node:path'
import {exitCodesHelp, MwpCommand, type Outcome, environment} from '../../src/cli/base.js'
import {runPoc} from '../../src/poc/run.js'
import {selfTest} from '../../src/poc/self-test.js'
import {MUTANTS, type Mutant} from '../../src/mutants.js'
import {repeatable} from '../../src/cli/flags.js'
import {renderSummary} from '../../src/poc/report/terminal.js'
import {writeReport} from '../../src/poc/report/write.js'

export default class PocRun extends MwpCommand {
  static summary =
    'Run the two-Mission proof of concept: real Agent processes over wss, real software work, checks that can fail.'
  static description = `Starts a Group Authority, two Coordinators and three Workers — each its own OS process talking only over wss — and runs two concurrent software-development Missions to human Approval. Mission A (textkit) goes through requirements, tests, implementation, code review by another Agent, integration and a child Mission for its documentation; the Coordinator's review runs the real type-check, tests and code rule on each submission and sends a defective implementation back for rework; the human requests a change once and approves each exact submitted revision. Mission B (semver-lite) runs at the same time on the shared Worker.

Then every check runs (each records what it measured) and the summary is printed; progress goes to stderr. --report DIR writes report.json and a self-contained report.html (timeline of each Worker's slots, each Mission's WorkItem graph, the checks).

--self-test then runs the whole proof of concept again once per deliberately broken runtime (a Coordinator whose review accepts anything, an Agent that never acknowledges its Cursor, preemption that kills instead of checkpointing, …), two at a time, and shows which checks catch each one.

${exitCodesHelp({rejected: 'PROTOCOL_VIOLATION: at least one check failed, or a broken runtime passed every check', environment: 'a process could not start, or the run did not finish in time'})}`

  static examples = [
    '<%= config.bin %> poc run',
    '<%= config.bin %> poc run --seed 7 --report poc-report',
    '<%= config.bin %> poc run --store postgres://mwp@127.0.0.1:5432/mwp --json',
  ]

  static flags = {
    seed: Flags.integer({
      description: 'Deterministic variation of the work (same seed, same files).',
      default: 1,
      min: 0,
    }),
    store: Flags.string({
      description:
        "Store URL of the run's authority: sqlite:PATH or postgres://USER@HOST:PORT/DB (an empty database: the run makes its own Organization). Default: an embedded SQLite file in the run's directory.",
      env: 'MWP_STORE',
    }),
    report: Flags.string({
      description: 'Write report.json and report.html into this directory.',
      env: 'MWP_POC_REPORT',
    }),
    dir: Flags.string({
      description:
        "Keep the run's Organization, Agent state and logs in this directory (default: a temporary one, removed).",
    }),
    interactive: Flags.boolean({
      description:
        'Stop at each approval: approve or request changes yourself with mwp mission approve / request-changes.',
      default: false,
    }),
    faults: Flags.boolean({
      description:
        'Inject the failure suite (default). --no-faults: a fault-free run, whose approved Artifact hashes equal a faulted run with the same seed.',
      default: true,
      allowNo: true,
    }),
    'timeout-seconds': Flags.integer({description: 'Give up after this long.', default: 600, min: 30}),
    mutant: Flags.string({
      ...repeatable,
      description: `With --self-test: only this broken runtime (repeatable; default all): ${Object.keys(MUTANTS).join(', ')}.`,
      options: Object.keys(MUTANTS),
    }),
    'self-test': Flags.boolean({
      description:
        'Then run again against each deliberately broken runtime (src/mutants.ts) and show which checks catch it; fails when one is not caught.',
      default: false,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(PocRun)
    const json = this.jsonEnabled()
    let run
    try {
      run = await runPoc({
        seed: flags.seed,
        ...(flags.store ? {store: flags.store} : {}),
        ...(flags.dir ? {dir: resolve(flags.dir)} : {}),
        interactive: flags.interactive,
        faults: flags.faults,
        timeoutMs: flags['timeout-seconds'] * 1000,
        progress: (line) => process.stderr.write(`poc: ${line}\n`),
      })
    } catch (e) {
      throw environment(`the proof of concept did not finish: ${(e as Error).message}`, {cause: e})
    }
    if (flags['self-test']) {
      process.stderr.write('poc: self-test: the same run against each broken runtime\n')
      run.trace.selfTest = await selfTest({
        seed: flags.seed,
        ...(flags.mutant?.length ? {only: flags.mutant as Mutant[]} : {}),
        progress: (line) => process.stderr.write(`poc: ${line}\n`),
      })
    }
    const uncaught = (run.trace.selfTest ?? []).filter((m) => m.caughtBy.length === 0).map((m) => m.mutant)
    const paths = flags.report ? writeReport(resolve(flags.report), run.trace) : undefined
    const failed = run.trace.checks.filter((c) => !c.passed)
    const passed = run.passed && uncaught.length === 0
    const result = {
      passed,
      ...(run.trace.selfTest ? {uncaughtMutants: uncaught} : {}),
      checks: run.trace.checks.length,
      failed: failed.map((c) => c.id),
      ...(paths ? {report: paths} : {}),
      trace: run.trace,
    }
    const text =
      renderSummary(run.trace, {
        color: !json && process.stdout.isTTY && !process.env.NO_COLOR,
        width: process.stdout.columns ?? 100,
      }) + (paths ? `\nreport: ${paths.html}` : '')
    if (passed) return {status: 'ok', result, text}
    return {status: 'rejected', code: 'PROTOCOL_VIOLATION', text, extra: {result}}
  }
}
