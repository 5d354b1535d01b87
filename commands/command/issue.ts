import {Flags} from '@oclif/core'
import {type Outcome, exitCodesHelp} from '../../src/cli/base.js'
import {GROUP_CREATING_KINDS} from '../../src/operator/command-builder.js'
import {operatorFlags, submissionOutcome} from '../../src/operator/cli-context.js'
import {OperatorCommand, SENDING_CODES} from '../../src/operator/operator-command.js'

export default class CommandIssue extends OperatorCommand {
  static summary = 'Build, sign (locally, with your key) and send a Command of any kind; print the receipt.'
  static description = `The envelope is filled for your principal type: a fresh actionId and correlationId, issuedAt now, and the epochs (membership, coordinator) looked up from the Group as you see it — a member whose visibility starts late (§8) finds its Membership Epoch in the Events it sees; --membership-epoch / --coordinator-epoch / --session-epoch override them. The payload is a JSON object from a file or - (stdin).

Prints the receipt; a refusal exits 1 with the wire code (spec §19).

${exitCodesHelp(SENDING_CODES)}`

  static examples = [
    '<%= config.bin %> command issue --kind message.post --group urn:mwp:dev:org:local:group:g1 --payload - <<< \'{"text":"status?"}\'',
    '<%= config.bin %> command issue --kind mission.cancel --group G --payload cancel.json --key owner.key.json --store sqlite:authority.db --config mwp.config.json',
  ]

  static flags = {
    ...operatorFlags,
    kind: Flags.string({description: 'Command kind, e.g. message.post.', required: true}),
    group: Flags.string({description: 'Group ID.', required: true}),
    payload: Flags.string({description: 'Payload JSON file, or - for stdin.', env: 'MWP_PAYLOAD', required: true}),
    'action-id': Flags.string({description: 'Action ID (default: a fresh urn:uuid); reuse one to retry idempotently.'}),
    'expected-revision': Flags.integer({
      description: '§15.3 optimistic-concurrency guard: the aggregate revision you decided on.',
    }),
    'work-item': Flags.string({description: 'workItemId envelope member.'}),
    'membership-epoch': Flags.integer({description: 'Override the looked-up Membership Epoch.', min: 1}),
    'coordinator-epoch': Flags.integer({description: 'Override the looked-up Coordinator Epoch.', min: 1}),
    'session-epoch': Flags.integer({description: 'Override the Session Epoch (Agent keys).', min: 1}),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(CommandIssue)
    const payload = await this.readJsonObject(flags.payload, '--payload')
    return this.withContext(flags, async (ctx) => {
      const state = GROUP_CREATING_KINDS.has(flags.kind) ? null : await ctx.signing(flags.group)
      const built = ctx.build({
        kind: flags.kind,
        groupId: flags.group,
        payload,
        state,
        ...(flags['action-id'] ? {actionId: flags['action-id']} : {}),
        ...(flags['expected-revision'] !== undefined ? {expectedRevision: flags['expected-revision']} : {}),
        ...(flags['work-item'] ? {workItemId: flags['work-item']} : {}),
        ...(flags['membership-epoch'] !== undefined ? {membershipEpoch: flags['membership-epoch']} : {}),
        ...(flags['coordinator-epoch'] !== undefined ? {coordinatorEpoch: flags['coordinator-epoch']} : {}),
        ...(flags['session-epoch'] !== undefined ? {sessionEpoch: flags['session-epoch']} : {}),
      })
      return submissionOutcome(await ctx.send(built.bytes), {actionId: built.actionId})
    })
  }
}
