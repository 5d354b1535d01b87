// `mwp poc run`: the two-Mission proof of concept (spec §22), every part a real process over wss.
//
//   mwp authority serve ─┬─ coordinator    (Mission A: textkit, and the child Mission's owner)
//   (Artifact store,     ├─ coordinator-2  (Mission B: semver-lite, and A's child Mission)
//    token service)      ├─ worker-1       (shared by both Missions, 2 slots)
//                        ├─ worker-2       (Mission A)
//                        ├─ worker-3       (Mission B, the child Mission)
//                        └─ the human      (this process: the MissionOwner's own session)
//
// The human is scripted through the operator library the CLI uses: it creates both Missions,
// requests a change on A's first submission, and approves each exact submitted revision. With
// `interactive`, it waits for a person to approve or request changes (mwp mission approve /
// request-changes) instead. Then the checks (checks.ts) evaluate what happened, from the Events,
// the Agents' local stores and the authority's store, and the trace feeds the report.

import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createDevOrganization} from '../config/dev-org.js'
import {readKeyFile, type SigningKey} from '../crypto/keyfile.js'
import {buildCommand, buildFinalApproval} from '../operator/command-builder.js'
import {missionCreatePayload, newMissionIds} from '../operator/mission-payloads.js'
import type {Transport} from '../operator/transport.js'
import {openWireTransport} from '../operator/wire-transport.js'
import {RegistryEvidence} from '../signing/registry.js'
import {type PocProcess, spawnMwp, startAuthority, stop} from './cluster.js'
import {type TcpProxy, tcpProxy} from './faults/tcp-proxy.js'
import {type WsFaultProxy, wsFaultProxy} from './faults/ws-fault-proxy.js'
import {
  type FaultRecord,
  agentStateFiles,
  coordinatorReplacement,
  deliveryRecord,
  disconnection,
  highPriorityArrival,
  leaseExpiry,
  workerRestart,
} from './injections.js'
import {Observer} from './observe.js'
import {
  A_WORKER,
  B_WORKER,
  HANDLER_JS,
  OBJECTIVES,
  SHARED_WORKER,
  URGENT_POLICY,
  WORKER_SLOTS,
  pocPlans,
} from './plans.js'
import {type PocFacts, evaluate} from './checks.js'
import {buildTrace} from './trace-build.js'
import type {PocTrace} from './report/trace.js'
import {formatUtcSeconds} from '../json/timestamp.js'

export interface PocOptions {
  seed: number
  /** Store URL (default the embedded SQLite file in the run's directory). */
  store?: string
  /** Where the Organization, the Agents' state and the logs go (default a new temporary directory, removed after). */
  dir?: string
  /** Wait for a person at each approval instead of the scripted human. */
  interactive?: boolean
  /** Progress lines (stderr). */
  progress?: (line: string) => void
  /** How long the whole run may take before it gives up (default 10 minutes). */
  timeoutMs?: number
  /** Inject the failure suite (default true). */
  faults?: boolean
  /** Extra environment of every process started (the self-test's MWP_POC_MUTANT). */
  env?: Record<string, string>
}

export interface PocResult {
  trace: PocTrace
  passed: boolean
  dir: string
}

export const CHANGE_REQUEST = 'Add a usage example for every function to the README'

/**
 * Short leases, so that a stopped Worker or a dead Coordinator is noticed within seconds (the
 * defaults are minutes): Execution Leases of 8 s renewed while work runs, and Coordinator leases
 * of 10 s renewed at half-time.
 */
const LEASES = {executionSeconds: 8, ownershipSeconds: 60}
const COORDINATOR_LEASE_SECONDS = 10
/** A healthy run never goes this long without an Event (leases alone renew every few seconds). */
const STALL_MS = 30_000

export async function runPoc(o: PocOptions): Promise<PocResult> {
  const progress = o.progress ?? (() => undefined)
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'mwp-poc-'))
  mkdirSync(dir, {recursive: true})
  const startedAt = new Date().toISOString()
  const timeoutMs = o.timeoutMs ?? 10 * 60_000
  const procs: PocProcess[] = []
  let transport: Transport | null = null
  let delivery: WsFaultProxy | undefined
  let link: TcpProxy | undefined
  let observer: Observer | null = null
  try {
    progress(`organization in ${dir}`)
    const org = await createDevOrganization(join(dir, 'org'), {
      workers: 3,
      coordinators: 3,
      port: 0,
      ...(o.store ? {store: o.store} : {}),
    })
    const config = JSON.parse(readFileSync(org.config, 'utf8')) as {policy: Record<string, unknown>}
    config.policy.leases = LEASES
    writeFileSync(org.config, JSON.stringify(config, null, 2))
    const plans = pocPlans(o.seed)
    const planFiles = Object.entries(plans).map(([name, plan]) => {
      const file = join(dir, `plan-${name}.json`)
      writeFileSync(file, JSON.stringify(plan, null, 2))
      return file
    })
    // The Artifact store's bytes live in files: beside a SQLite store by default, in the run's
    // directory for PostgreSQL (one directory every server of that store would share).
    const artifacts = o.store?.startsWith('postgres') ? ['--artifact-dir', join(dir, 'artifacts')] : []
    const {proc: authority, url, ca} = await startAuthority(org.config, dir, artifacts)
    procs.push(authority)
    progress(`authority listening on ${url}`)
    // Faults from outside: the shared Worker and Mission B's Coordinator see every Event through
    // a proxy that duplicates and reorders delivery (§16); the third Worker reaches the authority
    // through a TCP proxy the suite cuts for a while (a temporary Group disconnection, §11.5).
    if (o.faults !== false) {
      delivery = await wsFaultProxy(url, {targetCa: readFileSync(ca), tlsDir: join(dir, 'proxy-tls'), seed: o.seed})
      link = await tcpProxy(url)
    }
    const via = (name: string): string[] =>
      delivery && (name === SHARED_WORKER || name === 'coordinator-2')
        ? ['--url', delivery.url, '--ca', delivery.caFile]
        : link && name === B_WORKER
          ? ['--url', link.url, '--ca', ca]
          : ['--url', url, '--ca', ca]
    const argsOf = new Map<string, string[]>()
    const agent = (name: string, args: string[]) => {
      argsOf.set(name, args)
      const p = spawnMwp(
        name,
        ['agent', 'run', '--config', org.config, '--agent', name, ...via(name), ...args],
        dir,
        o.env,
      )
      procs.push(p)
      return p
    }
    const planArgs = planFiles.flatMap((f) => ['--plan', f])
    // coordinator-3 is the standby the MissionOwner appoints when a Coordinator dies.
    for (const c of ['coordinator', 'coordinator-2', 'coordinator-3'])
      agent(c, ['--role', 'coordinator', '--coordinator-lease-seconds', String(COORDINATOR_LEASE_SECONDS), ...planArgs])
    // The shared Worker's scheduling policy is the Organization's (§11.1): the high-priority
    // arrival raises its Group's class here. A Group waiting 1 s with nothing running preempts.
    const policyFile = join(dir, 'scheduling-policy.json')
    writeFileSync(policyFile, JSON.stringify({default: {weight: 1, priorityClass: 0}}))
    const worker = (name: string, extra: string[] = []) =>
      agent(name, ['--handler', HANDLER_JS, '--slots', String(WORKER_SLOTS[name]), ...extra])
    worker(SHARED_WORKER, ['--scheduling-policy', policyFile, '--max-wait-ms', '1000'])
    for (const w of [A_WORKER, B_WORKER]) worker(w)
    progress('3 Coordinators (one standby) and 3 Workers started (one process each)')

    const owner = readKeyFile(join(org.dir, 'keys', 'owner.key.json'))
    transport = await openWireTransport({url, key: owner, ca, registry: org.registry, reconnect: {maxAttempts: 20}})
    observer = new Observer(transport, STALL_MS, RegistryEvidence.fromBytes(readFileSync(org.registry)))
    const human = new Human(owner, transport, observer)
    const a = await human.create(OBJECTIVES.a, `${org.organization}:agent:coordinator`)
    const b = await human.create(OBJECTIVES.b, `${org.organization}:agent:coordinator-2`)
    progress(`Missions created: A ${a}, B ${b}`)
    let urgent: string | undefined
    const awaiting = (g: string, n: number) => () =>
      observer!.state(g)?.mission.state === 'awaiting_approval' && observer!.groups.get(g)!.submissions.length >= n
    const deadline = Date.now() + timeoutMs
    const left = () => Math.max(1000, deadline - Date.now())
    const agentId = (name: string) => `${org.organization}:agent:${name}`
    const injecting = {
      observer,
      missions: {a, b},
      agentId,
      proc: (name: string) => [...procs].reverse().find((p) => p.name === name)!,
      restart: (name: string) => agent(name, argsOf.get(name)!),
      agentFiles: (name: string) => agentStateFiles(org.dir, name),
      assignCoordinator: (g: string, name: string) => human.assignCoordinator(g, agentId(name)),
      staleCommand: (g: string, name: string) =>
        staleCoordinatorCommand(readKeyFile(join(org.dir, 'keys', `${name}.key.json`)), g, observer!, {
          url,
          ca,
          registry: org.registry,
        }),
      link: () => link!,
      urgentMission: async () => {
        const {groupId} = newMissionIds(org.organization)
        const policy = {default: {weight: 1, priorityClass: 0}, groups: {[groupId]: URGENT_POLICY}}
        writeFileSync(policyFile, JSON.stringify(policy))
        const c = await human.create(OBJECTIVES.c, agentId('coordinator-2'), groupId)
        urgent = c
        await observer!.until(awaiting(c, 1), 'the urgent Mission submitted for approval', left())
        await human.approve(c)
        return c
      },
      timeoutMs,
    }
    const injected: FaultRecord[] = []
    const told = (r: FaultRecord) => {
      progress(`fault: ${r.label}${r.error ? ` — not injected: ${r.error}` : ''}`)
      injected.push(r)
      return r
    }
    const faults: Promise<FaultRecord>[] =
      o.faults === false
        ? []
        : [
            workerRestart(injecting, SHARED_WORKER).then(told),
            leaseExpiry(injecting, A_WORKER).then(told),
            coordinatorReplacement(injecting, 'coordinator', 'coordinator-3').then(told),
            highPriorityArrival(injecting, SHARED_WORKER).then(told),
            disconnection(injecting, B_WORKER).then(told),
          ]
    // A run that does not finish still gets its checks (they say what did not happen) and its report.
    let unfinished: string | undefined
    try {
      if (o.interactive) {
        // The person is the human MissionOwner: the configuration's operator key, this run's server.
        const as = `--config ${org.config} --url ${url} --ca ${ca}`
        progress(`interactive: you are the MissionOwner; approve or request changes from another terminal`)
        progress(`  or in a browser: mwp console ${as} --scheduling-policy ${policyFile}   (prints the URL to open)`)
        const told = new Set<string>()
        const announce = (g: string, name: string) => {
          const s = observer!.state(g)
          if (s?.mission.state !== 'awaiting_approval' || told.has(`${g}#${s.revision}`)) return
          told.add(`${g}#${s.revision}`)
          progress(`${name} awaits your approval: mwp mission approve ${g} ${as}`)
          progress(`  or: mwp mission request-changes ${g} ${as} --message "…"`)
        }
        await observer.until(
          () => {
            announce(a, 'Mission A')
            announce(b, 'Mission B')
            return human.approved(a) && human.approved(b)
          },
          'both Missions approved',
          left(),
        )
      } else {
        await observer.until(awaiting(a, 1), 'Mission A submitted for approval', left())
        progress('Mission A submitted; the human requests a change')
        await human.requestChanges(a, CHANGE_REQUEST)
        await observer.until(awaiting(b, 1), 'Mission B submitted for approval', left())
        await human.approve(b)
        progress('Mission B approved')
        await observer.until(awaiting(a, 2), 'Mission A submitted again after the change request', left())
        await human.approve(a)
        progress('Mission A approved')
      }
      await observer.until(() => human.approved(a) && human.approved(b), 'both approvals in the log', left())
      await Promise.all(faults)
      if (urgent !== undefined)
        await observer.until(() => human.approved(urgent!), 'the urgent Mission approved', left())
    } catch (e) {
      unfinished = (e as Error).message
      progress(`did not finish: ${unfinished}`)
    }
    // Quiesce: the Agents apply the last Events (Membership ends, Mission ends) before they stop.
    await new Promise((r) => setTimeout(r, 1500))
    for (const p of procs.slice(1).reverse()) await stop(p)
    await stop(authority)
    const facts: PocFacts = {
      dir,
      config: org.config,
      organization: org.organization,
      groups: observer.groups,
      missions: {a, b, ...(urgent !== undefined ? {c: urgent} : {})},
      procs,
      plans,
      seed: o.seed,
      changeRequest: CHANGE_REQUEST,
      faults: delivery ? [...injected, deliveryRecord(delivery)] : injected,
      faultsExpected: o.faults !== false,
      ...(unfinished !== undefined ? {unfinished} : {}),
    }
    const checks = await evaluate(facts)
    const trace = buildTrace(facts, checks, {
      seed: o.seed,
      store: o.store?.startsWith('postgres') ? 'postgres' : 'sqlite',
      startedAt,
    })
    return {trace, passed: checks.every((c) => c.passed), dir}
  } finally {
    await observer?.close().catch(() => undefined)
    await transport?.close().catch(() => undefined)
    await delivery?.close().catch(() => undefined)
    await link?.close().catch(() => undefined)
    for (const p of procs) await stop(p, 1000)
    if (o.dir === undefined && process.env.MWP_POC_KEEP !== '1') rmSync(dir, {recursive: true, force: true})
  }
}

/** The scripted human MissionOwner: its own key, its own session, the operator library's Commands. */
class Human {
  constructor(
    private readonly key: SigningKey,
    private readonly transport: Transport,
    private readonly observer: Observer,
  ) {}

  async create(objective: string, coordinatorAgentId: string, chosenGroupId?: string): Promise<string> {
    const organization = this.key.principal!.id.split(':human:')[0]!
    const payload = missionCreatePayload({
      organization,
      objective,
      coordinatorAgentId,
      ...(chosenGroupId ? {groupId: chosenGroupId} : {}),
    })
    const groupId = payload.groupId as string
    await this.#send('mission.create', groupId, payload)
    await this.observer.watch(groupId)
    return groupId
  }

  async assignCoordinator(groupId: string, agentId: string): Promise<void> {
    await this.#send('mission.assign_coordinator', groupId, {agentId})
  }

  async requestChanges(groupId: string, reason: string): Promise<void> {
    await this.#send('mission.request_changes', groupId, {reason})
  }

  async approve(groupId: string): Promise<void> {
    const state = this.observer.state(groupId)!
    // §7.3: the Approval names the exact submitted revision and Artifact set, signed with this key.
    const approval = buildFinalApproval(this.key, state, {comments: 'Reviewed the submitted Artifacts and Evidence.'})
    await this.#send('mission.approve', groupId, {approval})
  }

  approved(groupId: string): boolean {
    return this.observer.state(groupId)?.mission.state === 'approved'
  }

  async #send(kind: string, groupId: string, payload: Record<string, unknown>): Promise<void> {
    const state = kind === 'mission.create' ? null : this.observer.state(groupId)
    const built = buildCommand(this.key, {kind, groupId, payload, state})
    const r = await this.transport.submit(built.bytes)
    if ('error' in r) throw new Error(`${kind} was refused: ${r.error.code} ${r.error.detail ?? ''}`)
  }
}

/**
 * After a replacement, the old Coordinator's identity (a new session with its key) tries to renew
 * the lease under its old epoch: the authority must refuse it as stale (§7.2). Returns the code.
 */
async function staleCoordinatorCommand(
  key: SigningKey,
  groupId: string,
  observer: Observer,
  target: {url: string; ca: string; registry: string},
): Promise<string> {
  const t = await openWireTransport({...target, key, reconnect: {maxAttempts: 1}})
  try {
    const state = observer.state(groupId)!
    const built = buildCommand(key, {
      kind: 'mission.renew_coordinator',
      groupId,
      payload: {leaseExpiresAt: formatUtcSeconds(Date.now() + 60_000)},
      state,
      coordinatorEpoch: state.mission.coordinator!.coordinatorEpoch - 1,
      ...(t.sessionEpoch !== undefined ? {sessionEpoch: t.sessionEpoch} : {}),
    })
    const r = await t.submit(built.bytes)
    return 'error' in r ? r.error.code : 'accepted'
  } finally {
    await t.close()
  }
}
