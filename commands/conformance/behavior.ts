import {Flags} from '@oclif/core'
import Table from 'cli-table3'
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {EXIT_CODES_HELP, MwpCommand, type Outcome, environment} from '../../src/cli/base.js'
import {type BehaviorReport, ROWS_FILE, behaviorReport} from '../../src/conformance/behavior.js'

export default class ConformanceBehavior extends MwpCommand {
  static summary = 'List every core Command kind, Event kind and §7.1/§10.2 transition row with the tests proving its positive and negative case.'
  static description = `Reads the rows from behavior/rows.json and scans test/**/*.test.ts for it()/test() titles tagged [+ID] (positive case) or [-ID] (negative case), e.g. [+cmd:work.offer], [-evt:work.started], [+row:t7.1:active->awaiting_approval:mission.submit_for_approval]. Exit 1 when any row lacks either case.

${EXIT_CODES_HELP}`

  static examples = ['<%= config.bin %> conformance behavior', '<%= config.bin %> conformance behavior --json --root .']

  static flags = {
    root: Flags.string({description: 'Checkout root holding behavior/rows.json and test/.', env: 'MWP_BEHAVIOR_ROOT', default: '.'}),
    missing: Flags.boolean({description: 'Show only rows lacking a positive or negative test.', default: false}),
    tests: Flags.boolean({description: 'Name the proving tests (file › title) instead of counting them.', default: false}),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(ConformanceBehavior)
    if (!existsSync(join(flags.root, ROWS_FILE))) throw environment(`${join(flags.root, ROWS_FILE)} does not exist`)
    if (!existsSync(join(flags.root, 'test'))) throw environment(`${join(flags.root, 'test')} does not exist`)
    let report: BehaviorReport
    try {
      report = behaviorReport(flags.root)
    } catch (e) {
      throw environment(`cannot build the behavior report: ${(e as Error).message}`)
    }
    const text = render(report, flags.missing, flags.tests)
    if (report.complete) return {status: 'ok', result: report, text}
    return {status: 'rejected', code: 'PROTOCOL_VIOLATION', text, extra: {result: report}}
  }
}

function render(report: BehaviorReport, onlyMissing: boolean, named: boolean): string {
  const table = new Table({head: ['row', '+ tests', '- tests', ''], style: {head: [], border: []}, chars: {mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': ''}})
  const cell = (tests: string[]) => (named ? tests.join('\n') || '-' : String(tests.length))
  for (const r of report.rows) {
    const ok = r.positive.length > 0 && r.negative.length > 0
    if (onlyMissing && ok) continue
    table.push([r.id, cell(r.positive), cell(r.negative), ok ? 'ok' : 'MISSING'])
  }
  const t = report.totals
  const lines = [
    table.toString(),
    `${t.complete}/${t.rows} rows have both cases; ${t.missingPositive} lack a positive test, ${t.missingNegative} lack a negative test (${t.taggedTests} tagged tests)`,
  ]
  for (const u of report.unknownTags) lines.push(`unknown tag ${u.tag} in ${u.test}`)
  return lines.join('\n')
}
