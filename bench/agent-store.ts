// The Agent's local store (src/agent/local-store.ts): real signed Group Events applied per second,
// one transaction each on a real file (WAL, synchronous=FULL), next to raw SQLite commits per
// second of a trivial one-row INSERT transaction on the same kind of file, measured in the same
// run with the repeats interleaved. MWP_BENCH_ONLY=agent-store.
//
//   history   one Group driven through the Authority library: MWP_BENCH_AGENT_ITEMS (default 40)
//             WorkItems each authorized, offered, accepted, then started and checkpointed
//             MWP_BENCH_AGENT_ROUNDS (default 3) times — WorkItem Events, the ones the projection folds
//   repeats   MWP_BENCH_AGENT_REPEATS (default 5): each a fresh store file fed the whole history in
//             order, then a fresh raw file given as many one-row INSERT transactions

import Database from 'better-sqlite3'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {AgentStore} from '../src/agent/local-store.js'
import {openAuthority} from '../src/authority/authority.js'
import {submit} from '../src/authority/ingress/command.js'
import {readKeyFile, type SigningKey} from '../src/crypto/keyfile.js'
import {type JsonObject, parseJsonBytes} from '../src/json/parse.js'
import {buildCommand} from '../src/operator/command-builder.js'
import {missionCreatePayload} from '../src/operator/mission-payloads.js'
import {packageRoot} from '../src/schema/catalog.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {DEFAULT_FRESHNESS, initStore, openStore} from '../src/store/index.js'
import type {DeliveredEvent} from '../src/wire/client.js'
import {fmt} from './measure.js'
import {benchContract} from './contract.js'

const root = packageRoot()
const key = (name: string): SigningKey => readKeyFile(join(root, 'fixtures/keys', `${name}.key.json`))
const owner = key('mission-owner')
const coordinator = key('coordinator')
const worker = key('developer')
const registry = RegistryEvidence.fromBytes(readFileSync(join(root, 'fixtures/registry.json')))

const contract = benchContract()
const basis = {
  verifiedMatches: [{id: 'writing.release-notes', version: '1.0.0'}],
  authorizationEligible: true,
  availabilityEstimate: '2026-12-01T09:00:00Z',
  expectedCost: 2.5,
  reliabilityEvidence: [],
  policyRulesApplied: ['org.assignment.capability-match'],
}

/** The signed Events of one Group whose WorkItems run the offer → accept → (start → checkpoint)* path. */
async function buildHistory(dir: string, items: number, rounds: number): Promise<DeliveredEvent[]> {
  const url = `sqlite:${join(dir, 'authority.db')}`
  const admissionKey = key('admission')
  await initStore(url, {
    organizationId: 'urn:mwp:dev:org:example',
    admissionService: {
      principal: admissionKey.principal!,
      keyId: admissionKey.keyId,
      publicKey: admissionKey.publicKeyB64,
    },
    freshness: DEFAULT_FRESHNESS,
  })
  const store = await openStore(url, {admissionKey})
  const authority = openAuthority({
    store,
    registry,
    authorityKey: key('group-authority'),
    policy: {rootMissionOwners: [owner.principal!.id]},
  })
  const g = `urn:mwp:bench:group:agent-store-${process.pid}-${Date.now()}`
  const run = async (signer: SigningKey, kind: string, payload: Record<string, unknown>, epochs = {}) => {
    const r = await submit(authority, buildCommand(signer, {kind, groupId: g, payload, ...epochs}).bytes)
    if ('error' in r) throw new Error(`agent-store bench setup refused ${kind}: ${r.error.code}`)
  }
  await run(owner, 'mission.create', {
    ...missionCreatePayload({
      groupId: g,
      objective: 'Benchmark the Agent store',
      coordinatorAgentId: coordinator.principal!.id,
      budget: {currency: 'EUR', financialLimit: 1000},
    }),
  })
  await run(owner, 'membership.change', {member: worker.principal, role: 'worker'}, {membershipEpoch: 1})
  const asCoordinator = {membershipEpoch: 1, coordinatorEpoch: 1}
  const asWorker = {membershipEpoch: 1, sessionEpoch: 1}
  const item = async (w: string) => (await authority.current(g))!.workItems[w]!
  for (let i = 0; i < items; i++) {
    const w = `urn:uuid:00000007-0000-4000-8000-${String(i + 1).padStart(12, '0')}`
    await run(coordinator, 'work.authorize', {workItemId: w, contract}, asCoordinator)
    const candidates = [worker.principal!.id]
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
    await run(
      coordinator,
      'work.offer',
      {workItemId: w, candidates, expiresAt, selectionBasis: {[candidates[0]!]: basis}},
      asCoordinator,
    )
    await run(worker, 'work.accept_offer', {workItemId: w, offerId: (await item(w)).offer!.offerId}, asWorker)
    for (let r = 0; r < rounds; r++) {
      await run(worker, 'work.start', {workItemId: w, ownershipEpoch: 1}, asWorker)
      const leaseId = (await item(w)).lease!.leaseId
      await run(
        worker,
        'work.checkpoint',
        {workItemId: w, ownershipEpoch: 1, leaseId, progress: `Round ${r + 1} drafted.`, artifactHashes: []},
        asWorker,
      )
    }
  }
  const {events} = await store.read(g, 0, 1_000_000)
  await store.close()
  return events.map((e) => ({
    groupId: g,
    sequence: e.sequence,
    eventId: e.eventId,
    kind: e.kind,
    document: parseJsonBytes(e.bytes) as JsonObject,
    bytes: e.bytes,
  }))
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

export interface AgentStoreFigures {
  events: number
  eventsPerSec: number
  rawCommitsPerSec: number
}

export async function runAgentStoreBench(): Promise<AgentStoreFigures> {
  const items = Number(process.env.MWP_BENCH_AGENT_ITEMS ?? 40)
  const rounds = Number(process.env.MWP_BENCH_AGENT_ROUNDS ?? 3)
  const repeats = Number(process.env.MWP_BENCH_AGENT_REPEATS ?? 5)
  const dir = mkdtempSync(join(tmpdir(), 'mwp-bench-agent-'))
  try {
    process.stderr.write(`agent-store: building a history of ${items} WorkItems …\n`)
    const events = await buildHistory(dir, items, rounds)
    const agentId = worker.principal!.id
    const applied: number[] = []
    const raw: number[] = []
    for (let r = 0; r < repeats; r++) {
      const store = AgentStore.open(join(dir, `agent-${r}.db`), {agentId})
      store.join(events[0]!.groupId, 0)
      let t0 = process.hrtime.bigint()
      for (const e of events) store.apply(e)
      applied.push(events.length / (Number(process.hrtime.bigint() - t0) / 1e9))
      store.close()

      const db = new Database(join(dir, `raw-${r}.db`))
      db.pragma('journal_mode = WAL')
      db.pragma('synchronous = FULL')
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL) STRICT')
      const insert = db.prepare('INSERT INTO t (v) VALUES (?)')
      const commit = db.transaction((v: string) => insert.run(v))
      t0 = process.hrtime.bigint()
      for (let i = 0; i < events.length; i++) commit('x')
      raw.push(events.length / (Number(process.hrtime.bigint() - t0) / 1e9))
      db.close()
    }
    const figures = {events: events.length, eventsPerSec: median(applied), rawCommitsPerSec: median(raw)}
    console.log(
      `\nAgent local store (${figures.events} WorkItem Events, one transaction each, synchronous=FULL, median of ${repeats})`,
    )
    console.log(`  Events applied/s          ${fmt(figures.eventsPerSec)}`)
    console.log(`  raw one-row commits/s     ${fmt(figures.rawCommitsPerSec)}`)
    console.log(`  ratio                     ${(figures.eventsPerSec / figures.rawCommitsPerSec).toFixed(2)}`)
    return figures
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}
