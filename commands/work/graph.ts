import {Args} from '@oclif/core'
import type {Outcome} from '../../src/cli/base.js'
import {operatorFlags} from '../../src/operator/cli-context.js'
import {OPERATOR_EXIT_CODES, OperatorCommand} from '../../src/operator/operator-command.js'
import {renderWorkGraph} from '../../src/operator/render.js'
import {workGraph} from '../../src/operator/views.js'

export default class WorkGraph extends OperatorCommand {
  static summary = 'Show the WorkItem dependency graph with the remaining critical path marked (*).'
  static description = `Folded from the Group's verified Events. Progress is derived from the graph — counts per state, blocked and failed items, overdue deadlines, pending execution approvals and the longest chain of unfinished work — never a percentage.

${OPERATOR_EXIT_CODES}`

  static examples = ['<%= config.bin %> work graph G', '<%= config.bin %> work graph G --json']
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {...operatorFlags}

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(WorkGraph)
    return this.withContext(flags, async (ctx) => {
      const graph = workGraph(await ctx.work(args.group))
      return {status: 'ok', result: graph, text: renderWorkGraph(graph)}
    })
  }
}
