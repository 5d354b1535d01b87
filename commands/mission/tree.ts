import {Args} from '@oclif/core'
import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags} from '../../src/operator/cli-context.js'
import {OperatorCommand, READING_CODES} from '../../src/operator/operator-command.js'
import {renderTree} from '../../src/operator/render.js'
import {missionTree} from '../../src/operator/views.js'

export default class MissionTree extends OperatorCommand {
  static summary =
    'Show the Mission tree: the Mission and every child Mission reachable from it, each by its Group ID, state and objective.'
  static description = `Follows mission.child.created links Group by Group; a child Group that cannot be read, or whose history starts outside your visibility (§8), is shown as unavailable.

${exitCodesHelp(READING_CODES)}`

  static examples = ['<%= config.bin %> mission tree G']
  static args = {group: Args.string({description: 'Root Group ID.', required: true})}
  static flags = {...operatorFlags}

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(MissionTree)
    return this.withContext(flags, async (ctx) => {
      // GROUP_NOT_FOUND for an unknown root, AUTH_FORBIDDEN for a root whose history starts outside
      // your visibility (§8); such a child is shown as unavailable, saying so.
      const tree = await missionTree(args.group, (g) => ctx.history(g, 'mission tree'))
      return {status: 'ok', result: tree, text: renderTree(tree)}
    })
  }
}
