import {Args} from '@oclif/core'
import {messageFlag} from '../../src/cli/flags.js'
import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags, sendToGroup} from '../../src/operator/cli-context.js'
import {OperatorCommand, SENDING_CODES} from '../../src/operator/operator-command.js'

export default class MissionRequestChanges extends OperatorCommand {
  static summary = 'Send a Mission awaiting approval back to active, with the changes you want.'
  static description = `Signs mission.request_changes with your key (the MissionOwner's) and sends it, guarded by the revision you last saw (a concurrent change is REVISION_CONFLICT, exit 1).

${exitCodesHelp(SENDING_CODES)}`

  static examples = ['<%= config.bin %> mission request-changes G --message "…"']
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {...operatorFlags, message: messageFlag('What must change', 'payload.reason', 'reason')}

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(MissionRequestChanges)
    return this.withContext(flags, (ctx) =>
      sendToGroup(ctx, args.group, 'mission.request_changes', {reason: flags.message}),
    )
  }
}
