import {Args} from '@oclif/core'
import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags} from '../../src/operator/cli-context.js'
import {OperatorCommand, READING_CODES} from '../../src/operator/operator-command.js'
import {outputFlag, tableStyle} from '../../src/cli/output.js'
import {renderWorkList} from '../../src/operator/render.js'
import {workGraph} from '../../src/operator/views.js'

export default class WorkList extends OperatorCommand {
  static summary =
    'List the WorkItems of a Group with derived progress: state, owner, deadline, approval, blockers, critical path.'
  static description = `Folded from the Group's verified Events. Progress is derived from the graph — counts per state, blocked and failed items, overdue deadlines, pending execution approvals and the longest chain of unfinished work — never a percentage.

Boxed and fitted to the terminal on a TTY, tab-separated lines when piped (--output chooses; --output json is --json).

${exitCodesHelp(READING_CODES)}`

  static examples = ['<%= config.bin %> work list G', '<%= config.bin %> work list G --json']
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {...operatorFlags, output: outputFlag}

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(WorkList)
    return this.withContext(flags, async (ctx) => {
      const graph = workGraph(await ctx.work(args.group))
      return {status: 'ok', result: graph, text: renderWorkList(graph, tableStyle(flags.output))}
    })
  }
}
