import {Flags} from '@oclif/core'
import Table from 'cli-table3'
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {exitCodesHelp, MwpCommand, type Outcome, environment} from '../../src/cli/base.js'
import {
  type BehaviorReport,
  RESULTS_FILE,
  ROWS_FILE,
  behaviorReport,
  rowComplete,
} from '../../src/conformance/behavior.js'

export default class ConformanceBehavior extends MwpCommand {
  static summary =
    'List every core Command kind, Event kind and §7.1/§10.2 transition row with the tests proving its positive and negative case.'
  static description = `Reads the rows from behavior/rows.json and the results of the last recorded test run (${RESULTS_FILE}, written by npm test), and finds the tests whose it()/test() titles are tagged [+ID] (positive case) or [-ID] (negative case), e.g. [+cmd:work.offer], [-evt:work.started], [+row:t7.1:active->awaiting_approval:mission.submit_for_approval]. A test proves its rows only when it ran, passed and made an expect() assertion; a skipped, todo, failing, it.fails or empty test citing a row, or a tag in test/**/*.test.ts the run never reached, leaves the row incomplete, and the report names the test and why. Exit 1 when any row lacks either case or is incomplete; exit 3 when the results are absent or belong to another tree.

${exitCodesHelp({rejected: 'PROTOCOL_VIOLATION: a row lacks its positive or negative case, or a test citing it did not prove it', environment: 'the recorded test results are absent or belong to another tree'})}`

  static examples = ['<%= config.bin %> conformance behavior', '<%= config.bin %> conformance behavior --json --root .']

  static flags = {
    root: Flags.string({
      description: 'Checkout root holding behavior/rows.json and test/.',
      env: 'MWP_BEHAVIOR_ROOT',
      default: '.',
    }),
    results: Flags.string({
      description: `vitest JSON results of the run to read (default: ROOT/${RESULTS_FILE}, written by npm test).`,
      env: 'MWP_BEHAVIOR_RESULTS',
    }),
    missing: Flags.boolean({
      description: 'Show only rows lacking a positive or negative test, or citing a test that proves nothing.',
      default: false,
    }),
    tests: Flags.boolean({
      description: 'Name the proving tests (file › title) instead of counting them.',
      default: false,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(ConformanceBehavior)
    if (!existsSync(join(flags.root, ROWS_FILE))) throw environment(`${join(flags.root, ROWS_FILE)} does not exist`)
    if (!existsSync(join(flags.root, 'test'))) throw environment(`${join(flags.root, 'test')} does not exist`)
    const results = flags.results ?? join(flags.root, RESULTS_FILE)
    if (!existsSync(results))
      throw environment(`no test results at ${results}: run npm test first (it records them there)`)
    let report: BehaviorReport
    try {
      report = behaviorReport(flags.root, results)
    } catch (e) {
      throw environment(`cannot build the behavior report: ${(e as Error).message}`)
    }
    const text = render(report, flags.missing, flags.tests)
    if (report.complete) return {status: 'ok', result: report, text}
    return {status: 'rejected', code: 'PROTOCOL_VIOLATION', text, extra: {result: report}}
  }
}

function render(report: BehaviorReport, onlyMissing: boolean, named: boolean): string {
  const table = new Table({
    head: ['row', '+ tests', '- tests', ''],
    style: {head: [], border: []},
    chars: {mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': ''},
  })
  const cell = (tests: string[]) => (named ? tests.join('\n') || '-' : String(tests.length))
  const unproven: string[] = []
  for (const r of report.rows) {
    const ok = rowComplete(r)
    if (onlyMissing && ok) continue
    const status = ok ? 'ok' : r.positive.length === 0 || r.negative.length === 0 ? 'MISSING' : 'INCOMPLETE'
    table.push([r.id, cell(r.positive), cell(r.negative), status])
    for (const u of r.unproven) unproven.push(`${u.tag} ${u.test}: ${u.reason}`)
  }
  const t = report.totals
  const lines = [
    table.toString(),
    `${t.complete}/${t.rows} rows have both cases, proven by passing tests; ${t.missingPositive} lack a positive test, ` +
      `${t.missingNegative} lack a negative test, ${t.unproven} cite a test that proves nothing (${t.taggedTests} tagged tests)`,
  ]
  for (const u of unproven) lines.push(`unproven ${u}`)
  for (const u of report.unknownTags) lines.push(`unknown tag ${u.tag} in ${u.test}`)
  return lines.join('\n')
}
