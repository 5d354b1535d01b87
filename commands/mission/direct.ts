import {Args} from '@oclif/core'
import {messageFlag} from '../../src/cli/flags.js'
import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {operatorFlags, sendToGroup} from '../../src/operator/cli-context.js'
import {OperatorCommand, SENDING_CODES} from '../../src/operator/operator-command.js'

export default class MissionDirect extends OperatorCommand {
  static summary = "Give the Mission's Agents a direction: a Message in the Group's planning Conversation."
  static description = `Signs message.post with your key and sends it. A Message is conversation, not a structured transition, so it carries no revision guard.

${exitCodesHelp(SENDING_CODES)}`

  static examples = ['<%= config.bin %> mission direct G --message "Prioritize the security review."']
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {...operatorFlags, message: messageFlag('The direction to give', 'payload.text', 'text')}

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(MissionDirect)
    return this.withContext(flags, (ctx) =>
      sendToGroup(ctx, args.group, 'message.post', {text: flags.message}, {guardRevision: false}),
    )
  }
}
