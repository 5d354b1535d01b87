import {Flags} from '@oclif/core'
import {join, resolve} from 'node:path'
import {exitCodesHelp, MwpCommand, type Outcome, environment, usage} from '../../src/cli/base.js'
import {DEFAULT_CONFIG_FILE, loadOrgConfig} from '../../src/config/org-config.js'
import {resolveAgent} from '../../src/agent/identity.js'
import {startAgent} from '../../src/agent/runtime.js'
import {leaseLengths} from '../../src/authority/model/work-leases.js'
import {readSchedulingPolicy, watchSchedulingPolicy} from '../../src/agent/scheduling-policy.js'
import {readAgentDirectory} from '../../src/agent/coordinator/candidates.js'
import {readPlan} from '../../src/agent/coordinator/plan.js'
import {startCoordinator} from '../../src/agent/coordinator/runtime.js'
import {repeatable} from '../../src/cli/flags.js'

export default class AgentRun extends MwpCommand {
  static summary =
    'Run an Agent: per-Group queues in local SQLite, a weighted-fair Scheduler, isolated execution slots.'
  static description = `One OS process per Agent. It connects to the Group Authority over wss (HELLO, Session Epochs, SUBSCRIBE from its durable Cursors, ACK), learns the Groups it is offered work in, accepts or declines each offer by admission control, schedules owned WorkItems fairly across Groups in slot-time, and runs each in its own child process through your handler:

  --handler MODULE   a JavaScript module exporting {onOffer?, execute(work, ctx)} (see the README)
  --exec "CMD …"     any program: the WorkItem as JSON on stdin, NDJSON lines on stdout (see the README)

  --role coordinator --plan FILE   plan Missions into WorkItems, offer, review and submit (see the README)

Local state (--db, default AGENTS_DIR/NAME.db beside the configuration) can be deleted: replay rebuilds it. Logs are JSON lines on stderr. SIGINT/SIGTERM: running work is asked to checkpoint, then the Agent disconnects.

${exitCodesHelp({environment: 'cannot read the configuration, a key, the handler or the local database; cannot reach the authority'})}`

  static examples = [
    '<%= config.bin %> agent run --config dev-org/mwp.config.json --agent worker-1 --exec "bash ./work.sh"',
    '<%= config.bin %> agent run --agent worker-2 --slots 2 --handler ./handler.mjs',
    '<%= config.bin %> agent run --agent coordinator --role coordinator --plan plan.yaml',
  ]

  static flags = {
    config: Flags.string({
      char: 'c',
      description: 'Organization configuration file.',
      env: 'MWP_CONFIG',
      default: DEFAULT_CONFIG_FILE,
    }),
    agent: Flags.string({description: 'The Agent: its name (cards/NAME.card.json) or its Agent ID.', required: true}),
    key: Flags.string({description: "The Agent's private key file (default keys/NAME.key.json).", env: 'MWP_KEY'}),
    db: Flags.string({description: 'Local state file (SQLite).', env: 'MWP_AGENT_DB'}),
    url: Flags.string({description: "Authority URL (default: the configuration's server).", env: 'MWP_URL'}),
    ca: Flags.string({description: 'CA certificate file to trust.', env: 'MWP_CA'}),
    role: Flags.string({
      description:
        'worker: run offered WorkItems through the handler. coordinator: plan the Missions it coordinates (--plan), offer, review, submit.',
      options: ['worker', 'coordinator'],
      default: 'worker',
    }),
    plan: Flags.string({
      ...repeatable,
      description:
        'Coordinator plan file (JSON or YAML, schemas/config/plan.schema.json); a Mission uses the plan naming its Mission ID or objective. Repeatable.',
      env: 'MWP_PLAN',
    }),
    'coordinator-lease-seconds': Flags.integer({
      description: 'Coordinator: the Coordinator lease asked for at each renewal (renewed at half-time).',
      min: 10,
      max: 3600,
    }),
    slots: Flags.integer({description: "Execution slots (capped by the Agent Card's maxConcurrency).", min: 1}),
    handler: Flags.string({description: 'Handler module (JavaScript).', exclusive: ['exec']}),
    exec: Flags.string({description: 'Handler program, run with /bin/sh -c.', exclusive: ['handler']}),
    capacity: Flags.integer({
      description:
        'Owned, unfinished WorkItems it commits to at most; offers beyond are declined (capacity). Default: 4 per slot.',
      min: 1,
    }),
    'lease-seconds': Flags.integer({description: 'Requested lease length at each renewal.', min: 30, max: 3600}),
    'scheduling-policy': Flags.string({
      description:
        'Organization scheduling policy (JSON): per Group its weight, priorityClass and quota, and a default. Re-read when it changes.',
      env: 'MWP_SCHEDULING_POLICY',
    }),
    'max-wait-ms': Flags.integer({
      description:
        'Longest wait of a Group with ready work and nothing running before a preemptible run is asked to checkpoint for it (default 600000).',
      min: 0,
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {flags} = await this.parse(AgentRun)
    if (flags.role === 'coordinator') return this.#coordinate(flags)
    if (!flags.handler && !flags.exec) throw usage('give --handler MODULE or --exec "CMD …"')
    // A policy that cannot be read is a usage error before anything starts (SchedulingPolicyError).
    const policyFile = flags['scheduling-policy'] ? resolve(flags['scheduling-policy']) : undefined
    const groupPolicy = policyFile ? readSchedulingPolicy(policyFile) : undefined
    const config = loadOrgConfig(flags.config)
    const id = resolveAgent(config, {
      agent: flags.agent,
      ...(flags.key ? {key: flags.key} : {}),
      ...(flags.db ? {db: resolve(flags.db)} : {}),
      ...(flags.url ? {url: flags.url} : {}),
      ...(flags.ca ? {ca: flags.ca} : {}),
    })
    let agent
    try {
      agent = await startAgent({
        url: id.url,
        ...(id.ca ? {ca: id.ca} : {}),
        key: id.key,
        registry: id.registry,
        card: id.card,
        db: id.db,
        ...(flags.slots ? {slots: flags.slots} : {}),
        handler: flags.handler ? {module: resolve(flags.handler)} : {exec: flags.exec!},
        ...(flags['lease-seconds'] ? {leaseSeconds: flags['lease-seconds']} : {}),
        ...(flags['max-wait-ms'] !== undefined ? {scheduler: {maxWaitMs: flags['max-wait-ms']}} : {}),
        ...(flags.capacity ? {capacity: flags.capacity} : {}),
        ...(groupPolicy ? {groupPolicy} : {}),
        // §11.5: how long active work may go on past its lease while the service is unreachable.
        offlineGraceSeconds: leaseLengths(config.policy.leases).offlineGraceSeconds,
      })
    } catch (e) {
      throw environment(`cannot start ${id.name}: ${(e as Error).message}`, {cause: e})
    }
    // A broken edit of the policy is logged and the last good policy stays.
    const unwatch = policyFile
      ? watchSchedulingPolicy(policyFile, (p) => agent.setGroupPolicy(p), logPolicyUnreadable)
      : undefined
    const signal = await stopSignal()
    unwatch?.()
    await agent.stop()
    return {status: 'ok', result: {agentId: agent.agentId, stoppedBy: signal}, text: `stopped (${signal})`}
  }

  async #coordinate(flags: {
    config: string
    agent: string
    key?: string
    url?: string
    ca?: string
    plan?: string[]
    'coordinator-lease-seconds'?: number
  }): Promise<Outcome> {
    if (!flags.plan?.length) throw usage('a coordinator needs at least one --plan FILE')
    // An unusable plan is a usage error before anything connects (PlanError).
    const plans = flags.plan.map((f) => readPlan(resolve(f)))
    const config = loadOrgConfig(flags.config)
    const id = resolveAgent(config, {
      agent: flags.agent,
      ...(flags.key ? {key: flags.key} : {}),
      ...(flags.url ? {url: flags.url} : {}),
      ...(flags.ca ? {ca: flags.ca} : {}),
    })
    let coordinator
    try {
      coordinator = await startCoordinator({
        url: id.url,
        ...(id.ca ? {ca: id.ca} : {}),
        key: id.key,
        registry: id.registry,
        plans,
        agents: readAgentDirectory(join(config.dir, 'cards'), id.registry),
        ...(flags['coordinator-lease-seconds'] ? {leaseSeconds: flags['coordinator-lease-seconds']} : {}),
      })
    } catch (e) {
      throw environment(`cannot start ${id.name}: ${(e as Error).message}`, {cause: e})
    }
    const signal = await stopSignal()
    await coordinator.stop()
    return {
      status: 'ok',
      result: {agentId: coordinator.agentId, role: 'coordinator', stoppedBy: signal},
      text: `stopped (${signal})`,
    }
  }
}

const logPolicyUnreadable = (why: string) =>
  process.stderr.write(
    JSON.stringify({at: new Date().toISOString(), level: 'warn', event: 'policy-unreadable', why}) + '\n',
  )

const stopSignal = () =>
  new Promise<string>((r) => {
    process.once('SIGINT', () => r('SIGINT'))
    process.once('SIGTERM', () => r('SIGTERM'))
  })
