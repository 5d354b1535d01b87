import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags} from '../../src/operator/cli-context.js'
import {missionList} from '../../src/operator/mission-list.js'
import {OperatorCommand, READING_CODES} from '../../src/operator/operator-command.js'
import {outputFlag, tableStyle} from '../../src/cli/output.js'
import {renderMissionList} from '../../src/operator/render.js'

export default class MissionList extends OperatorCommand {
  static summary = 'List the Missions you can see: Group ID, state, objective, deadline and what each one awaits.'
  static description = `The Groups where your key's principal holds a live Membership (the store's membership index; over the wire, the directory the server announces), each followed by the child Missions reachable from it (a root MissionOwner reads those without a Membership, §14). The Group ID is what the other mission, work and group commands take. A Group whose history starts outside your visibility (§8: a just-in-time Worker) is listed as unavailable, saying why.

Boxed and fitted to the terminal on a TTY, tab-separated lines when piped (--output chooses; --output json is --json).

${exitCodesHelp(READING_CODES)}`

  static examples = [
    '<%= config.bin %> mission list',
    '<%= config.bin %> mission list --output tsv | cut -f1,5',
    '<%= config.bin %> mission list --json',
  ]
  static flags = {...operatorFlags, output: outputFlag}

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(MissionList)
    return this.withContext(flags, async (ctx) => {
      const groups = await ctx.groups()
      const rows = await missionList(groups, (g) => ctx.history(g, 'mission list'), ctx.principalId())
      return {status: 'ok', result: {missions: rows}, text: renderMissionList(rows, tableStyle(flags.output))}
    })
  }
}
