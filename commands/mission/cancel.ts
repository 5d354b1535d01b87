import {Args, Flags} from '@oclif/core'
import type {Outcome} from '../../src/cli/base.js'
import {operatorFlags, sendToGroup} from '../../src/operator/cli-context.js'
import {OPERATOR_EXIT_CODES, OperatorCommand} from '../../src/operator/operator-command.js'

export default class MissionCancel extends OperatorCommand {
  static summary = 'Cancel a Mission (terminal).'
  static description = `Signs mission.cancel with your key (the MissionOwner's) and sends it, guarded by the revision you last saw (a concurrent change is REVISION_CONFLICT, exit 1).

${OPERATOR_EXIT_CODES}`

  static examples = ['<%= config.bin %> mission cancel G --reason "…"']
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {
    ...operatorFlags,
    reason: Flags.string({description: 'Why the Mission is cancelled.', required: true}),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(MissionCancel)
    return this.withContext(flags, (ctx) => sendToGroup(ctx, args.group, 'mission.cancel', {reason: flags.reason}))
  }
}
