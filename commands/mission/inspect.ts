import {Args} from '@oclif/core'
import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags} from '../../src/operator/cli-context.js'
import {OperatorCommand, READING_CODES} from '../../src/operator/operator-command.js'
import {nextStep} from '../../src/operator/next-step.js'
import {outputFlag, tableStyle} from '../../src/cli/output.js'
import {renderInspection} from '../../src/operator/render.js'
import {inspectFolded, workGraph} from '../../src/operator/views.js'

export default class MissionInspect extends OperatorCommand {
  static summary =
    'Show a Mission: state, Coordinator, members, derived work progress, the Evidence WorkItems were submitted with and any submission awaiting approval.'
  static description = `Folded from the Group's verified Events, so it needs the whole history: a member whose visibility starts late (§8) is refused with AUTH_FORBIDDEN (exit 1) and can use \`mwp work list\` instead. Progress is derived from the WorkItem graph (counts, blockers, overdue items, critical path), never a percentage. A replaced Coordinator is listed as former, with its fenced epoch; the approval line says where the final Approval stands (to come, awaited, given, or never for a cancelled or failed Mission); the last line says what comes next and the command for it (result.next with --json).

Boxed and fitted to the terminal on a TTY, tab-separated lines when piped (--output chooses; --output json is --json).

${exitCodesHelp(READING_CODES)}`

  static examples = [
    '<%= config.bin %> mission inspect urn:mwp:dev:org:local:group:…',
    '<%= config.bin %> mission inspect G --json',
  ]
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {...operatorFlags, output: outputFlag}

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(MissionInspect)
    return this.withContext(flags, async (ctx) => {
      const {events, state} = await ctx.folded(args.group, 'mission inspect')
      const view = inspectFolded(state, events)
      const next = nextStep(view, workGraph(state).items, ctx.principalId())
      return {status: 'ok', result: {...view, next}, text: renderInspection(view, tableStyle(flags.output), next)}
    })
  }
}
