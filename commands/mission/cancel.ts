import {Args} from '@oclif/core'
import {messageFlag} from '../../src/cli/flags.js'
import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags, sendToGroup} from '../../src/operator/cli-context.js'
import {OperatorCommand, SENDING_CODES} from '../../src/operator/operator-command.js'
import {confirmed, requireConfirmation, yesFlag} from '../../src/cli/prompt.js'

export default class MissionCancel extends OperatorCommand {
  static summary = 'Cancel a Mission (terminal).'
  static description = `Signs mission.cancel with your key (the MissionOwner's) and sends it, guarded by the revision you last saw (a concurrent change is REVISION_CONFLICT, exit 1).

A cancelled Mission cannot be resumed, so this asks for confirmation first; the prompt appears only on a terminal without --json, and scripts pass --yes (without it, a non-interactive run is a usage error, exit 2).

${exitCodesHelp({...SENDING_CODES, usage: 'not on a terminal (or with --json) without --yes', cancelled: true})}`

  static examples = [
    '<%= config.bin %> mission cancel G --message "…"',
    '<%= config.bin %> mission cancel G --message "…" --yes --json',
  ]
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {
    ...operatorFlags,
    message: messageFlag('Why the Mission is cancelled', 'payload.reason', 'reason'),
    yes: yesFlag('Cancel'),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(MissionCancel)
    requireConfirmation(flags, 'cancelling a Mission')
    return this.withContext(flags, async (ctx) => {
      if (!(await confirmed(flags, `Cancel the Mission of ${args.group}? This cannot be undone.`)))
        return {status: 'ok', result: {cancelled: false, groupId: args.group}, text: 'not cancelled'}
      return sendToGroup(ctx, args.group, 'mission.cancel', {reason: flags.message})
    })
  }
}
