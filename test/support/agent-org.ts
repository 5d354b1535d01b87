// A development Organization served by a real `mwp authority serve` process (--dev-tls, port 0),
// with human and Coordinator sessions over wss, and `mwp agent run` processes started against it:
// the setting of the Agent runtime's end-to-end tests.

import {type ChildProcess, spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {AgentStore} from '../../src/agent/local-store.js'
import {createDevOrganization, type DevOrganization} from '../../src/config/dev-org.js'
import {readKeyFile, type SigningKey} from '../../src/crypto/keyfile.js'
import type {JsonObject} from '../../src/json/parse.js'
import {formatUtcNow} from '../../src/json/timestamp.js'
import {buildCommand, newUrn} from '../../src/operator/command-builder.js'
import {missionCreatePayload} from '../../src/operator/mission-payloads.js'
import type {EventDoc, Transport} from '../../src/operator/transport.js'
import {foldGroup} from '../../src/operator/views.js'
import {openWireTransport} from '../../src/operator/wire-transport.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {sign} from '../../src/signing/sign.js'
import {WireClient} from '../../src/wire/client.js'
import {devContract} from './operator-helpers.js'
import {PROJECT_ROOT} from './upstream.js'

const BIN = join(PROJECT_ROOT, 'bin/run.js')

export interface Proc {
  child: ChildProcess
  exited: Promise<number | null>
  out(): {stdout: string; stderr: string}
}

export function cli(args: string[], cwd = PROJECT_ROOT): Proc {
  const child = spawn(process.execPath, [BIN, ...args], {cwd, env: {...process.env, NO_COLOR: '1'}})
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d) => (stdout += d))
  child.stderr!.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  return {child, exited, out: () => ({stdout, stderr})}
}

export interface AgentOrg {
  dir: string
  org: DevOrganization
  url: string
  ca: string
  server: Proc
  key(name: string): SigningKey
  /** A wire session of `name` (owner, coordinator, worker-1 …). */
  as(name: string): Promise<Transport>
  /** Signs and submits a Command as `name` (epochs from the Group's Events); throws on a refusal. */
  command(name: string, kind: string, groupId: string, payload: Record<string, unknown>): Promise<void>
  events(groupId: string): Promise<EventDoc[]>
  /** Creates a Mission (owner) coordinated by `coordinator`; returns its Group ID. */
  mission(objective: string): Promise<{groupId: string; missionId: string}>
  /** A Context Package for a WorkItem, signed by the Coordinator (§13.3). */
  contextPackage(groupId: string, missionId: string, workItemId: string, unresolved?: string[]): JsonObject
  /** Authorizes a WorkItem (the dev contract plus `contractExtra`) and offers it to `worker`; returns its ID. */
  offerWork(
    groupId: string,
    missionId: string,
    worker: string,
    contractExtra?: Record<string, unknown>,
  ): Promise<string>
  /** Offers an existing WorkItem (again) to `worker`. */
  reoffer(groupId: string, missionId: string, workItemId: string, worker: string): Promise<void>
  /** `mwp agent run` as `name`, talking to the authority at `url` (default: directly; e.g. a tcpProxy's). */
  agent(name: string, args: string[], url?: string): Proc
  /**
   * A clean replay: a fresh AgentStore at `path`, fed over a new wss session of `name` exactly as
   * the runtime feeds its own (joined where the directory says its visibility starts, Events and
   * delivered-through markers), until its Cursor reaches `throughSequence`. Opening the session
   * replaces any other session of `name`: call it when that Agent's process is stopped.
   */
  replay(name: string, groupId: string, path: string, throughSequence: number): Promise<AgentStore>
  close(): Promise<void>
}

export async function agentOrg(
  tag: string,
  options: {workers?: number; policy?: Record<string, unknown>} = {},
): Promise<AgentOrg> {
  const dir = mkdtempSync(join(tmpdir(), `mwp-${tag}-`))
  const org = await createDevOrganization(join(dir, 'org'), {port: 0, workers: options.workers ?? 1})
  if (options.policy) {
    // Authority policy for the test (e.g. short leases), merged into the dev configuration.
    const config = JSON.parse(readFileSync(org.config, 'utf8')) as {policy: Record<string, unknown>}
    config.policy = {...config.policy, ...options.policy}
    writeFileSync(org.config, JSON.stringify(config, null, 2))
  }
  const server = cli(['authority', 'serve', '--config', org.config, '--dev-tls', '--port', '0'])
  const {url, ca} = await new Promise<{url: string; ca: string}>((resolve, reject) => {
    const check = () => {
      const {stdout} = server.out()
      const url = /listening on (\S+)/.exec(stdout)?.[1]
      const ca = /CA file: (\S+)/.exec(stdout)?.[1]
      if (url && ca) resolve({url, ca})
    }
    server.child.stdout!.on('data', check)
    void server.exited.then((code) => reject(new Error(`serve exited ${code}: ${server.out().stderr}`)))
  })
  const sessions = new Map<string, Transport>()
  const agents: Proc[] = []
  const key = (name: string) => readKeyFile(join(org.dir, 'keys', `${name}.key.json`))
  const as = async (name: string) => {
    let t = sessions.get(name)
    if (!t) {
      t = await openWireTransport({url, key: key(name), ca, registry: org.registry})
      sessions.set(name, t)
    }
    return t
  }
  const events = async (groupId: string) => (await (await as('owner')).events(groupId)) ?? []
  const self: AgentOrg = {
    dir,
    org,
    url,
    ca,
    server,
    key,
    as,
    events,
    async command(name, kind, groupId, payload) {
      const t = await as(name)
      const state = kind === 'mission.create' ? null : foldGroup(await events(groupId))
      const built = buildCommand(key(name), {
        kind,
        groupId,
        payload,
        state,
        ...(t.sessionEpoch !== undefined ? {sessionEpoch: t.sessionEpoch} : {}),
      })
      const r = await t.submit(built.bytes)
      if ('error' in r) throw new Error(`${kind} by ${name} refused: ${r.error.code} ${r.error.detail ?? ''}`)
    },
    async mission(objective) {
      const payload = missionCreatePayload({
        organization: org.organization,
        objective,
        coordinatorAgentId: `${org.organization}:agent:coordinator`,
      })
      await self.command('owner', 'mission.create', payload.groupId as string, payload)
      return {groupId: payload.groupId as string, missionId: payload.missionId as string}
    },
    contextPackage(groupId, missionId, workItemId, unresolved = []) {
      const unsigned = {
        contextPackageId: newUrn(),
        version: 1,
        missionId,
        groupId,
        workItemId,
        sourceEventRange: {fromSequence: 1, toSequence: 1, eventIds: [newUrn()]},
        artifactHashes: [],
        summary: 'What the Worker needs for this WorkItem.',
        decisions: [],
        constraints: [],
        unresolvedQuestions: unresolved,
        generatedBy: key('coordinator').principal!,
        generatedAt: formatUtcNow(),
      }
      return sign('context-package', unsigned, key('coordinator')).document
    },
    async offerWork(groupId, missionId, worker, contractExtra = {}) {
      const workItemId = `urn:uuid:${crypto.randomUUID()}`
      await self.command('coordinator', 'work.authorize', groupId, {
        workItemId,
        contract: devContract(contractExtra),
      })
      await self.reoffer(groupId, missionId, workItemId, worker)
      return workItemId
    },
    async reoffer(groupId, missionId, workItemId, worker) {
      await self.command('coordinator', 'work.offer', groupId, {
        workItemId,
        candidates: [worker],
        expiresAt: new Date(Date.now() + 120_000).toISOString(),
        selectionBasis: {
          [worker]: {
            verifiedMatches: [{id: 'mwp.dev.general-work', version: '1.0.0'}],
            authorizationEligible: true,
            availabilityEstimate: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
            expectedCost: 1,
            reliabilityEvidence: [],
            policyRulesApplied: ['dev: capability match'],
          },
        },
        contextPackage: self.contextPackage(groupId, missionId, workItemId),
      })
    },
    async replay(name, groupId, path, throughSequence) {
      const store = AgentStore.open(path, {agentId: key(name).principal!.id})
      const client = await WireClient.connect({
        url,
        key: key(name),
        registry: RegistryEvidence.fromBytes(readFileSync(org.registry)),
        ca: readFileSync(ca),
        autoAck: false,
      })
      try {
        let announced: number | undefined
        await client.watchGroups((g) => {
          if (g.groupId === groupId) announced ??= g.afterSequence
        })
        const afterSequence = (await until(
          async () => announced,
          (a) => a !== undefined,
          'the directory announcement',
        ))!
        store.join(groupId, afterSequence)
        await client.subscribe(
          groupId,
          {afterSequence, onDeliveredThrough: (sequence) => void store.deliveredThrough(groupId, sequence)},
          (e) => void store.apply(e),
        )
        await until(
          async () => store.cursor(groupId) ?? 0,
          (c) => c >= throughSequence,
          `the replay through ${throughSequence}`,
        )
      } finally {
        await client.close()
      }
      return store
    },
    agent(name, args, via = url) {
      const p = cli(['agent', 'run', '--config', org.config, '--agent', name, '--url', via, '--ca', ca, ...args], dir)
      agents.push(p)
      return p
    },
    async close() {
      for (const a of agents) if (a.child.exitCode === null) a.child.kill('SIGKILL')
      for (const t of sessions.values()) await t.close()
      server.child.kill('SIGTERM')
      await server.exited
      rmSync(dir, {recursive: true, force: true})
    },
  }
  return self
}

/** Polls `read` until `ready` holds (bounded by count, not by a timing assertion). */
export async function until<T>(
  read: () => Promise<T>,
  ready: (v: T) => boolean,
  what: string,
  tries = 600,
): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await read()
    if (ready(v)) return v
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`gave up waiting for ${what}`)
}

export const readText = (path: string) => readFileSync(path, 'utf8')
