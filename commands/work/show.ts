import {Args} from '@oclif/core'
import {type Outcome, usage, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags} from '../../src/operator/cli-context.js'
import {OperatorCommand, READING_CODES} from '../../src/operator/operator-command.js'
import {outputFlag, tableStyle} from '../../src/cli/output.js'
import {renderWorkItem} from '../../src/operator/render.js'
import {outsideVisibility, workEvidence, workGraph} from '../../src/operator/views.js'

export default class WorkShow extends OperatorCommand {
  static summary =
    'Show one WorkItem: contract goal, state, owner, dependencies, blockers, deadline, approval, submitted Evidence.'
  static description = `With --json the result also carries the WorkItem as the authority folds it (contract, lease, submission, checkpoint).

Boxed and fitted to the terminal on a TTY, tab-separated lines when piped (--output chooses; --output json is --json).

${exitCodesHelp(READING_CODES)}`

  static examples = ['<%= config.bin %> work show G W']
  static args = {
    group: Args.string({description: 'Group ID.', required: true}),
    workItem: Args.string({description: 'WorkItem ID.', required: true}),
  }
  static flags = {...operatorFlags, output: outputFlag}

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(WorkShow)
    return this.withContext(flags, async (ctx) => {
      const state = await ctx.work(args.group)
      const node = workGraph(state).items.find((n) => n.workItemId === args.workItem)
      if (!node) {
        const unseen = state.visibleFrom === undefined ? '' : ` (${outsideVisibility(state.visibleFrom)})`
        throw usage(`no WorkItem ${args.workItem} in ${args.group}${unseen}`)
      }
      const evidence = workEvidence(state).find((w) => w.workItemId === args.workItem)
      return {
        status: 'ok',
        result: {
          ...node,
          workItem: state.workItems[args.workItem],
          ...(state.visibleFrom !== undefined ? {visibleFrom: state.visibleFrom} : {}),
        },
        text: renderWorkItem(node, evidence, state.visibleFrom, tableStyle(flags.output)),
      }
    })
  }
}
