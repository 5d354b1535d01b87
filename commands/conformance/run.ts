import {Flags} from '@oclif/core'
import Table from 'cli-table3'
import {existsSync} from 'node:fs'
import {exitCodesHelp, MwpCommand, type Outcome, environment, usage} from '../../src/cli/base.js'
import {BundleError} from '../../src/conformance/bundle.js'
import type {BundleName, BundleReport} from '../../src/conformance/report.js'
import {availableBundles, runBundle} from '../../src/conformance/run.js'

export default class ConformanceRun extends MwpCommand {
  static summary = 'Run conformance vector bundles (structural, cryptography, admission) against this implementation.'
  static description = `Checks each bundle's manifest digest and artifact hashes first, validates fixtures against the manifest's fixture schemas, then runs every case. Progress goes to stderr; stdout gets a per-case table and totals, or one JSON report with --json. Exit 1 when any case mismatches.

${exitCodesHelp({rejected: 'PROTOCOL_VIOLATION: a case did not give its expected result', environment: 'a bundle cannot be read or fails its integrity check'})}`

  static examples = [
    '<%= config.bin %> conformance run --root ../shared/protocol --bundle all',
    '<%= config.bin %> conformance run --root . --json',
  ]

  static flags = {
    root: Flags.string({
      description: 'Bundle root (holds conformance/, cryptography/, admission/).',
      env: 'MWP_CONFORMANCE_ROOT',
      default: '.',
    }),
    bundle: Flags.string({
      description: 'Which bundle to run.',
      options: ['structural', 'cryptography', 'admission', 'all'],
      default: 'all',
    }),
    quiet: Flags.boolean({
      char: 'q',
      description: 'No progress on stderr (there is none when stderr is not a terminal).',
      default: false,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(ConformanceRun)
    if (!existsSync(flags.root)) throw environment(`bundle root ${flags.root} does not exist`)
    const bundles = availableBundles(flags.root, flags.bundle as BundleName | 'all')
    if (bundles.length === 0) throw usage(`no runnable bundle found under ${flags.root}`)

    const reports: BundleReport[] = []
    for (const bundle of bundles) {
      // A live counter is for a terminal; in a log it would be one line of carriage returns.
      const progress =
        flags.quiet || !process.stderr.isTTY
          ? undefined
          : (r: {pass: boolean}, done: number, total: number) => {
              process.stderr.write(`\r${bundle}: ${done}/${total}${r.pass ? '' : ' (mismatch)'}   `)
              if (done === total) process.stderr.write('\n')
            }
      try {
        reports.push(await runBundle(flags.root, bundle, progress))
      } catch (e) {
        if (e instanceof BundleError) throw environment(`${bundle} bundle rejected before running: ${e.message}`)
        throw e
      }
    }

    const failed = reports.reduce((n, r) => n + r.failed, 0)
    const result = {
      root: flags.root,
      passed: failed === 0,
      totals: Object.fromEntries(
        reports.map((r) => [r.bundle, {total: r.total, passed: r.passed, failed: r.failed, breakdown: r.breakdown}]),
      ),
      bundles: reports,
    }
    const text = render(reports)
    if (failed === 0) return {status: 'ok', result, text}
    return {status: 'rejected', code: 'PROTOCOL_VIOLATION', text, extra: {result}}
  }
}

function render(reports: BundleReport[]): string {
  const table = new Table({
    head: ['bundle', 'case', 'expected', 'actual', ''],
    style: {head: [], border: []},
    chars: {mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': ''},
  })
  for (const r of reports)
    for (const c of r.cases)
      table.push([
        c.bundle,
        c.detail ? `${c.id}\n  ${c.detail}` : c.id,
        c.expected,
        c.reason ? `${c.actual}\n  (${c.reason})` : c.actual,
        c.pass ? 'ok' : 'FAIL',
      ])
  const totals = reports.map((r) => {
    const parts = Object.entries(r.breakdown)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')
    return `${r.bundle}: ${r.passed}/${r.total} passed (${parts})${r.failed ? `, ${r.failed} FAILED` : ''}`
  })
  return `${table.toString()}\n${totals.join('\n')}`
}
