import {Args, Flags} from '@oclif/core'
import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags, registeredAgent, sendToGroup} from '../../src/operator/cli-context.js'
import {OperatorCommand, SENDING_CODES} from '../../src/operator/operator-command.js'

export default class MissionReplaceCoordinator extends OperatorCommand {
  static summary = 'Give the Coordinator lease to another Agent (mission.assign_coordinator, Coordinator Epoch + 1).'
  static description = `The previous Coordinator is fenced: its Commands with the old Coordinator Epoch are refused (AUTH_STALE_COORDINATOR). --agent takes an Agent ID or a short name in the configured Organization; it must be an Agent of the Organization registry.

${exitCodesHelp(SENDING_CODES)}`

  static examples = ['<%= config.bin %> mission replace-coordinator G --agent worker-1']
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {
    ...operatorFlags,
    agent: Flags.string({description: 'The new Coordinator Agent (ID or short name).', required: true}),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(MissionReplaceCoordinator)
    return this.withContext(flags, (ctx) =>
      sendToGroup(ctx, args.group, 'mission.assign_coordinator', {
        agentId: registeredAgent(flags.agent, flags, ctx.config, '--agent'),
      }),
    )
  }
}
