// MWP_BENCH_ONLY=agent-rss (issue #16): the memory of one `mwp agent run` process that is a Worker
// in 100 Groups, next to the same process idle with no Group (the primitive measured in the same
// run), and the time from the first offer until all 100 WorkItems are submitted. A real
// authority on SQLite (in this process, serving wss), a real Agent process running the README's
// exec handler, 100 Missions with one just-in-time offer each.

import {type ChildProcess, spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createDevOrganization} from '../src/config/dev-org.js'
import {devTlsHook} from '../src/config/dev-tls-hook.js'
import {loadOrgConfig, openAuthorityFromConfig} from '../src/config/org-config.js'
import {submit} from '../src/authority/ingress/command.js'
import {readKeyFile} from '../src/crypto/keyfile.js'
import {buildCommand, newUrn} from '../src/operator/command-builder.js'
import {missionCreatePayload} from '../src/operator/mission-payloads.js'
import {packageRoot} from '../src/schema/catalog.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {WireClient} from '../src/wire/client.js'
import {startServer} from '../src/wire/server.js'
import {benchContract} from './contract.js'
import {fmt} from './measure.js'

const GROUPS = Number(process.env.MWP_BENCH_AGENT_GROUPS ?? 100)
const root = packageRoot()

/** Resident and peak resident set of a process, MiB (Linux /proc). */
function rss(pid: number): {rss: number; peak: number} {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0)
  return {rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024}
}

/** A Work Contract the dev Worker's card can do (capability mwp.dev.general-work), due tomorrow. */
const contract = benchContract({
  requiredCapabilities: [{id: 'mwp.dev.general-work', version: '1.0.0'}],
  deadline: new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const script = `read -r work
criteria=$(node -pe 'JSON.stringify(JSON.parse(process.argv[1]).work.contract.acceptanceCriteria.map(c => c.criterionId))' "$work")
echo "{\\"type\\":\\"evidence\\",\\"criteria\\":$criteria,\\"method\\":\\"bench\\",\\"result\\":\\"passed\\"}"
echo '{"type":"artifact","content":"done","mediaType":"text/plain"}'
echo '{"type":"submit"}'
`

export async function runAgentRssBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-bench-agent-'))
  let agent: ChildProcess | undefined
  try {
    const org = await createDevOrganization(join(dir, 'org'), {port: 0, workers: 1, devTls: devTlsHook})
    const config = loadOrgConfig(org.config)
    const opened = await openAuthorityFromConfig(config)
    const tls = config.server.tls!
    const server = await startServer({
      authority: opened.authority,
      host: '127.0.0.1',
      port: 0,
      tls: {cert: readFileSync(tls.cert), key: readFileSync(tls.key)},
    })
    writeFileSync(join(dir, 'work.sh'), script)
    agent = spawn(
      process.execPath,
      [
        join(root, 'bin/run.js'),
        'agent',
        'run',
        '--config',
        org.config,
        '--agent',
        'worker-1',
        '--url',
        server.url,
        '--exec',
        `bash ${join(dir, 'work.sh')}`,
        '--capacity',
        String(GROUPS), // commit to every offer: the figure is the memory of 100 live Groups
      ],
      {stdio: ['ignore', 'ignore', process.env.MWP_BENCH_AGENT_LOG ? 'inherit' : 'ignore']},
    )
    await sleep(3000) // connected, idle
    const idle = rss(agent.pid!)

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
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z')
    const items: {groupId: string; workItemId: string}[] = []
    const started = Date.now()
    for (let i = 0; i < GROUPS; i++) {
      const payload = missionCreatePayload({
        organization: org.organization,
        objective: `Bench Mission ${i}`,
        coordinatorAgentId: `${org.organization}:agent:coordinator`,
      })
      const groupId = payload.groupId as string
      const made = await submit(opened.authority, buildCommand(owner, {kind: 'mission.create', groupId, payload}).bytes)
      if ('error' in made) throw new Error(`mission.create: ${made.error.code}`)
      const epochs = {sessionEpoch: coordinator.sessionEpoch!, membershipEpoch: 1, coordinatorEpoch: 1}
      const workItemId = newUrn()
      for (const [kind, body] of [
        ['work.authorize', {workItemId, contract}],
        [
          'work.offer',
          {
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
          },
        ],
      ] as const) {
        const r = await coordinator.submit(
          buildCommand(coordinatorKey, {kind, groupId, payload: body as Record<string, unknown>, ...epochs}).bytes,
        )
        if ('error' in r) throw new Error(`${kind}: ${r.error.code}`)
      }
      items.push({groupId, workItemId})
    }
    let submitted = 0
    for (let t = 0; t < 1200 && submitted < GROUPS; t++) {
      await sleep(250)
      submitted = 0
      for (const {groupId, workItemId} of items) {
        const state = await opened.authority.current(groupId)
        if (state?.workItems[workItemId]?.state === 'submitted') submitted++
      }
    }
    const seconds = (Date.now() - started) / 1000
    const busy = rss(agent.pid!)
    console.log(`\nAgent process (mwp agent run, one Worker, ${GROUPS} Groups, exec handler)`)
    console.log(`  idle, no Group:                RSS ${idle.rss.toFixed(1)} MiB (the primitive)`)
    console.log(
      `  after ${GROUPS} Groups:               RSS ${busy.rss.toFixed(1)} MiB, peak ${busy.peak.toFixed(1)} MiB ` +
        `(${((busy.rss - idle.rss) / GROUPS).toFixed(2)} MiB per Group; ratio ${(busy.rss / idle.rss).toFixed(2)})`,
    )
    console.log(
      `  ${submitted}/${GROUPS} WorkItems submitted in ${seconds.toFixed(1)} s ` +
        `(${fmt(submitted / seconds)}/s, offer to submission through the wire, one slot process each)`,
    )
    await coordinator.close()
    agent.kill('SIGTERM')
    await new Promise((r) => agent!.once('close', r))
    await server.close()
    await opened.close()
  } finally {
    if (agent && agent.exitCode === null) agent.kill('SIGKILL')
    rmSync(dir, {recursive: true, force: true})
  }
}
