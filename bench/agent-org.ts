// The Organization the Agent benches run against: a dev Organization, its authority on SQLite in
// this process serving wss, the Coordinator's wire session, and `mwp agent run` processes. Each
// bench adds its own Missions and WorkItems through `mission()` and `offer()`.

import {type ChildProcess, spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {submit} from '../src/authority/ingress/command.js'
import {createDevOrganization} from '../src/config/dev-org.js'
import {devTlsHook} from '../src/config/dev-tls-hook.js'
import {loadOrgConfig, openAuthorityFromConfig} from '../src/config/org-config.js'
import {readKeyFile} from '../src/crypto/keyfile.js'
import {buildCommand, newUrn} from '../src/operator/command-builder.js'
import {missionCreatePayload} from '../src/operator/mission-payloads.js'
import {packageRoot} from '../src/schema/catalog.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {WireClient} from '../src/wire/client.js'
import {startServer} from '../src/wire/server.js'

export interface BenchAgentOrg {
  dir: string
  worker: string
  authority: Awaited<ReturnType<typeof openAuthorityFromConfig>>['authority']
  /** A new root Mission; its Group ID. */
  mission(objective: string): Promise<string>
  /** Authorizes a WorkItem with `contract` and offers it to worker-1 just in time; its ID. */
  offer(groupId: string, contract: Record<string, unknown>): Promise<string>
  /** `mwp agent run` as worker-1 against this authority (stderr inherited with MWP_BENCH_AGENT_LOG). */
  agent(args: string[]): ChildProcess
  close(): Promise<void>
}

export async function benchAgentOrg(tag: string, policy: Record<string, unknown> = {}): Promise<BenchAgentOrg> {
  const dir = mkdtempSync(join(tmpdir(), `mwp-bench-${tag}-`))
  const org = await createDevOrganization(join(dir, 'org'), {port: 0, workers: 1, devTls: devTlsHook})
  const config = loadOrgConfig(org.config)
  config.policy = {...config.policy, ...policy}
  const opened = await openAuthorityFromConfig(config)
  const tls = config.server.tls!
  const server = await startServer({
    authority: opened.authority,
    host: '127.0.0.1',
    port: 0,
    tls: {cert: readFileSync(tls.cert), key: readFileSync(tls.key)},
  })
  const key = (name: string) => readKeyFile(join(org.dir, 'keys', `${name}.key.json`))
  const owner = key('owner')
  const coordinatorKey = key('coordinator')
  const coordinator = await WireClient.connect({
    url: server.url,
    key: coordinatorKey,
    registry: RegistryEvidence.fromBytes(readFileSync(org.registry)),
    ca: readFileSync(tls.ca!),
  })
  const worker = `${org.organization}:agent:worker-1`
  const agents: ChildProcess[] = []
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z')
  return {
    dir,
    worker,
    authority: opened.authority,
    async mission(objective) {
      const payload = missionCreatePayload({
        organization: org.organization,
        objective,
        coordinatorAgentId: `${org.organization}:agent:coordinator`,
      })
      const groupId = payload.groupId as string
      const made = await submit(opened.authority, buildCommand(owner, {kind: 'mission.create', groupId, payload}).bytes)
      if ('error' in made) throw new Error(`mission.create: ${made.error.code}`)
      return groupId
    },
    async offer(groupId, contract) {
      const epochs = {sessionEpoch: coordinator.sessionEpoch!, membershipEpoch: 1, coordinatorEpoch: 1}
      const workItemId = newUrn()
      const offer = {
        workItemId,
        candidates: [worker],
        expiresAt,
        contextPackageId: newUrn(),
        selectionBasis: {
          [worker]: {
            verifiedMatches: [{id: 'mwp.dev.general-work', version: '1.0.0'}],
            authorizationEligible: true,
            availabilityEstimate: expiresAt,
            expectedCost: 1,
            reliabilityEvidence: [],
            policyRulesApplied: ['bench'],
          },
        },
      }
      for (const [kind, payload] of [
        ['work.authorize', {workItemId, contract}],
        ['work.offer', offer],
      ] as const) {
        const r = await coordinator.submit(buildCommand(coordinatorKey, {kind, groupId, payload, ...epochs}).bytes)
        if ('error' in r) throw new Error(`${kind}: ${r.error.code}`)
      }
      return workItemId
    },
    agent(args) {
      const child = spawn(
        process.execPath,
        [
          join(packageRoot(), 'bin/run.js'),
          'agent',
          'run',
          '--config',
          org.config,
          '--agent',
          'worker-1',
          '--url',
          server.url,
          ...args,
        ],
        {stdio: ['ignore', 'ignore', process.env.MWP_BENCH_AGENT_LOG ? 'inherit' : 'ignore']},
      )
      agents.push(child)
      return child
    },
    async close() {
      await coordinator.close()
      for (const a of agents)
        if (a.exitCode === null && a.signalCode === null) {
          a.kill('SIGTERM')
          await new Promise((r) => a.once('close', r))
        }
      await server.close()
      await opened.close()
      rmSync(dir, {recursive: true, force: true})
    },
  }
}
