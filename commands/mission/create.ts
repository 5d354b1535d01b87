import {Flags} from '@oclif/core'
import {repeatable} from '../../src/cli/flags.js'
import {type Outcome, exitCodesHelp, usage} from '../../src/cli/base.js'
import {operatorFlags, registeredAgent, submissionOutcome} from '../../src/operator/cli-context.js'
import {deadlineProblem, missionCreatePayload} from '../../src/operator/mission-payloads.js'
import {OperatorCommand, SENDING_CODES} from '../../src/operator/operator-command.js'

export default class MissionCreate extends OperatorCommand {
  static summary = 'Create a root Mission and its Group (you must be a root MissionOwner by Organization policy).'
  static description = `Signs mission.create with your key and sends it. The new Group ID is printed (and is result.groupId with --json): pass it to the other mission/work/group commands.

--coordinator takes an Agent ID, or a short name (coordinator, worker-1) resolved in the configured Organization; it must be an Agent of the Organization registry. --deadline must be an RFC 3339 timestamp in the future. --criterion "ID: description" may be repeated; the default is one criterion restating the objective.

${exitCodesHelp({
  ...SENDING_CODES,
  usage:
    '--coordinator is not an Agent of the Organization registry, --deadline is not a future RFC 3339 timestamp, or --objective is empty',
})}`

  static examples = [
    '<%= config.bin %> mission create --objective "Ship the release notes" --coordinator coordinator',
    '<%= config.bin %> mission create --objective "Audit the API" --coordinator urn:example:agent:c1 --criterion "report: audit report delivered" --deadline 2027-01-31T00:00:00Z --json',
  ]

  static flags = {
    ...operatorFlags,
    objective: Flags.string({description: 'The Mission objective.', required: true}),
    coordinator: Flags.string({description: 'Coordinator Agent (ID or short name).', required: true}),
    group: Flags.string({description: 'Group ID to create (default: a fresh ID in the Organization).'}),
    deadline: Flags.string({description: 'Mission deadline (RFC 3339 UTC; default 30 days from now).'}),
    criterion: Flags.string({...repeatable, description: 'Acceptance criterion "ID: description" (repeatable).'}),
    evidence: Flags.string({
      ...repeatable,
      description: 'Evidence each criterion requires (repeatable; default human_review).',
    }),
    currency: Flags.string({description: 'Budget currency (ISO 4217).', default: 'EUR'}),
    'financial-limit': Flags.integer({description: 'Budget financial limit.', default: 100, min: 0}),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(MissionCreate)
    // Checked here, naming the flag, rather than signed, sent and refused as SCHEMA_VALIDATION_FAILED.
    if (flags.objective.trim() === '') throw usage('--objective must say what the Mission is for: it is empty')
    const late = flags.deadline === undefined ? null : deadlineProblem(flags.deadline, new Date())
    if (late) throw usage(`--deadline ${flags.deadline}: ${late}`)
    return this.withContext(flags, async (ctx) => {
      const payload = missionCreatePayload({
        organization: ctx.config?.organization,
        groupId: flags.group,
        objective: flags.objective,
        coordinatorAgentId: registeredAgent(flags.coordinator, flags, ctx.config, '--coordinator'),
        deadline: flags.deadline,
        criteria: flags.criterion,
        evidenceRequired: flags.evidence,
        budget: {currency: flags.currency, financialLimit: flags['financial-limit']},
      })
      const groupId = payload.groupId as string
      const built = ctx.build({kind: 'mission.create', groupId, payload})
      return submissionOutcome(await ctx.send(built.bytes), {groupId, missionId: payload.missionId}, () => groupId)
    })
  }
}
