import {Args} from '@oclif/core'
import type {Outcome} from '../../src/cli/base.js'
import {operatorFlags} from '../../src/operator/cli-context.js'
import {OPERATOR_EXIT_CODES, OperatorCommand} from '../../src/operator/operator-command.js'
import {renderInspection} from '../../src/operator/render.js'
import {inspectFolded} from '../../src/operator/views.js'

export default class MissionInspect extends OperatorCommand {
  static summary =
    'Show a Mission: state, Coordinator, members, derived work progress, the Evidence WorkItems were submitted with and any submission awaiting approval.'
  static description = `Folded from the Group's verified Events, so it needs the whole history: a member whose visibility starts late (§8) is refused with AUTH_FORBIDDEN (exit 1) and can use \`mwp work list\` instead. Progress is derived from the WorkItem graph (counts, blockers, overdue items, critical path), never a percentage.

${OPERATOR_EXIT_CODES}`

  static examples = [
    '<%= config.bin %> mission inspect urn:mwp:dev:org:local:group:…',
    '<%= config.bin %> mission inspect G --json',
  ]
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {...operatorFlags}

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(MissionInspect)
    return this.withContext(flags, async (ctx) => {
      const {events, state} = await ctx.folded(args.group, 'mission inspect')
      const view = inspectFolded(state, events)
      return {status: 'ok', result: view, text: renderInspection(view)}
    })
  }
}
