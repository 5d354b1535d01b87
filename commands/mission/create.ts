import {Flags} from '@oclif/core'
import type {Outcome} from '../../src/cli/base.js'
import {agentId, operatorFlags, submissionOutcome} from '../../src/operator/cli-context.js'
import {missionCreatePayload} from '../../src/operator/mission-payloads.js'
import {OPERATOR_EXIT_CODES, OperatorCommand} from '../../src/operator/operator-command.js'

export default class MissionCreate extends OperatorCommand {
  static summary = 'Create a root Mission and its Group (you must be a root MissionOwner by Organization policy).'
  static description = `Signs mission.create with your key and sends it. The new Group ID is printed (and is result.groupId with --json): pass it to the other mission/work/group commands.

--coordinator takes an Agent ID, or a short name (coordinator, worker-1) resolved in the configured Organization. --criterion "ID: description" may be repeated; the default is one criterion restating the objective.

${OPERATOR_EXIT_CODES}`

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
    criterion: Flags.string({description: 'Acceptance criterion "ID: description" (repeatable).', multiple: true}),
    evidence: Flags.string({
      description: 'Evidence each criterion requires (repeatable; default human_review).',
      multiple: true,
    }),
    currency: Flags.string({description: 'Budget currency (ISO 4217).', default: 'EUR'}),
    'financial-limit': Flags.integer({description: 'Budget financial limit.', default: 100, min: 0}),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(MissionCreate)
    return this.withContext(flags, async (ctx) => {
      const payload = missionCreatePayload({
        organization: ctx.config?.organization,
        groupId: flags.group,
        objective: flags.objective,
        coordinatorAgentId: agentId(flags.coordinator, ctx.config),
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
