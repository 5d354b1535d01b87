// The Agent runtime's recovery and preemption over real processes (spec §11.1, §11.3, §11.5, §16;
// ACCEPTANCE F1, F7): a real authority process, real `mwp agent run` processes killed with
// SIGKILL, their SQLite files deleted, and cooperative preemption between two Groups' WorkItems.

import {existsSync, readFileSync, rmSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BlobStore} from '../../src/agent/blobs.js'
import {AgentStore} from '../../src/agent/local-store.js'
import type {EventDoc} from '../../src/operator/transport.js'
import {type AgentOrg, agentOrg, until} from '../support/agent-org.js'

const STEPS = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'steps-handler.mjs')
// Execution Leases long enough that the crashed Agent's lease is still unexpired when its
// replacement session opens (B9 revokes an unexpired lease; an expired one is the Coordinator's to
// reassign, §11.5); the live Agent renews at half the remaining time.
const EXECUTION_SECONDS = 60

let o: AgentOrg
let worker: string
beforeAll(async () => {
  o = await agentOrg('agent-recovery', {policy: {leases: {executionSeconds: EXECUTION_SECONDS}}})
  worker = `${o.org.organization}:agent:worker-1`
}, 120_000)
afterAll(() => o?.close())

const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [])
const ofKind = (es: EventDoc[], kind: string) => es.filter((e) => e.kind === kind)
const leaseOf = (e: EventDoc) => (e.payload as {lease: {leaseId: string; expiresAt: string}}).lease
const steps = (n: number, label: string) => Array.from({length: n}, (_, i) => `${label} ${i + 1}`)

/** The runtime logs a pass that threw; none may (each would skip that pass's other intents and dispatch). */
const passFailures = (stderr: string) => stderr.split('\n').filter((l) => l.includes('"event":"pass-failed"'))

/** The contract extension steps-handler.mjs reads (a noncritical Extension Profile datum, §17). */
const stepsContract = (steps: number, stepLog: string, label: string) => ({
  extensions: {'urn:mwp:test:steps': {version: '1.0.0', critical: false, data: {steps, stepMs: 50, stepLog, label}}},
})

/** The latest boundary of the WorkItem's current Execution Lease in the log (work.started or a renewal). */
function leaseExpiry(es: EventDoc[]): number {
  const last = es.filter((e) => e.kind === 'work.started' || e.kind === 'work.progressed').at(-1)!
  return Date.parse(leaseOf(last).expiresAt)
}

describe('mwp agent run: crash and rebuild (F1, B9, §11.3, §11.5)', () => {
  it('B9 F1: after SIGKILL and deleting its SQLite, the Agent rebuilds its queue by replay and, its new session having revoked the old lease, runs the WorkItem again by itself to one submission', async () => {
    const stepLog = join(o.dir, 'crash-steps.log')
    const args = ['--handler', STEPS]
    const first = o.agent('worker-1', args)
    const {groupId, missionId} = await o.mission('Survive a crash')
    await o.offerWork(groupId, missionId, worker, stepsContract(60, stepLog, 'run'))
    await until(
      async () => lines(stepLog),
      (l) => l.length >= 5,
      `the first run's steps (agent stderr: ${first.out().stderr.slice(-2000)})`,
    )
    first.child.kill('SIGKILL')
    await first.exited
    const db = join(o.org.dir, 'agents', 'worker-1.db')
    expect(existsSync(db)).toBe(true)
    for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, {force: true})

    const second = o.agent('worker-1', args)
    // §11.3 (ACCEPTANCE B9): the replacement session revokes the crashed session's lease and
    // returns the WorkItem to `queued` under the same ownership, so the restarted Agent starts it
    // again by itself under its new session — no lapse, no re-offer.
    const events = await until(
      () => o.events(groupId),
      (es) => es.some((e) => e.kind === 'work.submitted'),
      `work.submitted after the restart (agent stderr: ${second.out().stderr.slice(-3000)})`,
    )
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
    expect(passFailures(second.out().stderr)).toEqual([])

    const started = ofKind(events, 'work.started')
    expect(started).toHaveLength(2)
    const revoked = ofKind(events, 'ext.missionweaveprotocol.core.lease_revoked')
    expect(revoked).toHaveLength(1)
    expect(revoked[0]!.payload).toMatchObject({leaseId: leaseOf(started[0]!).leaseId, reason: 'session-replaced'})
    expect(revoked[0]!.sequence).toBeLessThan(started[1]!.sequence)
    // The second start is under the new session, same Ownership Epoch (no re-offer), a new Lease ID.
    const [firstLease, secondLease] = started.map(
      (e) => (e.payload as {lease: {leaseId: string; sessionEpoch: number; ownershipEpoch: number}}).lease,
    )
    expect(secondLease!.sessionEpoch).toBeGreaterThan(firstLease!.sessionEpoch)
    expect(secondLease!.ownershipEpoch).toBe(firstLease!.ownershipEpoch)
    expect(secondLease!.leaseId).not.toBe(firstLease!.leaseId)
    expect(ofKind(events, 'work.offer.created')).toHaveLength(1)
    const submitted = ofKind(events, 'work.submitted')
    expect(submitted).toHaveLength(1)
    expect((submitted[0]!.payload as {leaseId: string}).leaseId).toBe(leaseOf(started[1]!).leaseId)
    // No checkpoint reached the authority before the crash, so the new run starts from step 0;
    // the killed Agent's slot ran nothing alongside it (the log is the first run's prefix, then 1…60).
    const log = lines(stepLog)
    expect(log).toEqual([...steps(log.length - 60, 'run'), ...steps(60, 'run')])
    const blobs = new BlobStore(join(o.org.dir, 'agents', 'blobs'))
    const hashes = (submitted[0]!.payload as {artifactHashes: string[]}).artifactHashes
    expect(hashes).toHaveLength(1)
    expect(JSON.parse(blobs.get(hashes[0]!)!.toString())).toEqual({steps: 60, resumedFrom: []})

    // The rebuilt store equals a clean replay of the same Events.
    const rebuilt = AgentStore.open(db, {agentId: worker})
    const cursor = rebuilt.cursor(groupId)!
    expect(cursor).toBeGreaterThanOrEqual(submitted[0]!.sequence)
    const dump = rebuilt.dumpQueues()
    rebuilt.close()
    const clean = await o.replay('worker-1', groupId, join(o.dir, 'clean-replay.db'), cursor)
    expect(clean.dumpQueues()).toEqual(dump)
    clean.close()
  }, 180_000)
})

describe('mwp agent run: preemption (F7, §11.1, §11.3)', () => {
  it('a checkpoint outlives the disk: after a graceful stop and the loss of the whole agent directory, the restarted Agent resumes from the checkpoint it fetches from the authority (§13.1)', async () => {
    const stepLog = join(o.dir, 'disk-loss-steps.log')
    const dir = join(o.dir, 'disk-loss')
    const args = ['--handler', STEPS, '--db', join(dir, 'worker-1.db')]
    const first = o.agent('worker-1', args)
    const {groupId, missionId} = await o.mission('Survive the loss of a disk')
    await o.offerWork(groupId, missionId, worker, stepsContract(60, stepLog, 'run'))
    await until(
      async () => lines(stepLog),
      (l) => l.length >= 5,
      `the first steps (${first.out().stderr.slice(-2000)})`,
    )
    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)
    const checkpointed = ofKind(await o.events(groupId), 'work.checkpointed')
    expect(checkpointed).toHaveLength(1)
    const [hash] = (checkpointed[0]!.payload as {checkpoint: {artifactHashes: string[]}}).checkpoint.artifactHashes
    const ran = lines(stepLog).length
    rmSync(dir, {recursive: true, force: true})

    const second = o.agent('worker-1', args)
    const events = await until(
      () => o.events(groupId),
      (es) => es.some((e) => e.kind === 'work.submitted'),
      `work.submitted after the restart (agent stderr: ${second.out().stderr.slice(-3000)})`,
    )
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
    expect(second.out().stderr).not.toContain('checkpoint-unavailable')
    // The second run started where the checkpoint left off: no step ran twice, none was lost.
    expect(lines(stepLog)).toEqual(steps(60, 'run'))
    const submitted = ofKind(events, 'work.submitted')[0]!
    const report = (submitted.payload as {artifactHashes: string[]}).artifactHashes[0]!
    const owner = await o.as('owner')
    expect(JSON.parse((await owner.artifacts!.get(groupId, report)).toString())).toEqual({
      steps: 60,
      resumedFrom: [ran],
    })
    expect(JSON.parse((await owner.artifacts!.get(groupId, hash!)).toString())).toMatchObject({step: ran})
  }, 120_000)

  it('with one slot, a waiting Group preempts a running preemptible WorkItem, which resumes from its checkpoint', async () => {
    const stepLog = join(o.dir, 'preempt-steps.log')
    const db = join(o.dir, 'preempt', 'worker-1.db')
    const agent = o.agent('worker-1', ['--handler', STEPS, '--slots', '1', '--max-wait-ms', '2000', '--db', db])
    const a = await o.mission('Long preemptible work')
    const b = await o.mission('Short work that must not starve')
    await o.offerWork(a.groupId, a.missionId, worker, stepsContract(120, stepLog, 'A'))
    await until(
      async () => lines(stepLog),
      (l) => l.length >= 3,
      `A's first steps (agent stderr: ${agent.out().stderr.slice(-2000)})`,
    )
    await o.offerWork(b.groupId, b.missionId, worker, stepsContract(5, stepLog, 'B'))
    const aEvents = await until(
      () => o.events(a.groupId),
      (es) => es.some((e) => e.kind === 'work.submitted'),
      `A's work.submitted (agent stderr: ${agent.out().stderr.slice(-3000)})`,
    )
    const bEvents = await o.events(b.groupId)
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    expect(passFailures(agent.out().stderr)).toEqual([])

    // B ran whole inside A's pause: A's steps before the checkpoint, B's five, then A's rest,
    // every step exactly once.
    const log = lines(stepLog)
    const paused = log.findIndex((l) => l.startsWith('B'))
    expect(paused).toBeGreaterThan(0)
    expect(paused).toBeLessThan(120)
    expect(log).toEqual([...steps(paused, 'A'), ...steps(5, 'B'), ...steps(120, 'A').slice(paused)])
    expect(ofKind(bEvents, 'work.submitted')).toHaveLength(1)

    const checkpointed = ofKind(aEvents, 'work.checkpointed')
    expect(checkpointed).toHaveLength(1)
    const checkpointHashes = (checkpointed[0]!.payload as {checkpoint: {artifactHashes: string[]}}).checkpoint
      .artifactHashes
    expect(checkpointHashes).toHaveLength(1)
    const blobs = new BlobStore(join(o.dir, 'preempt', 'blobs'))
    expect(JSON.parse(blobs.get(checkpointHashes[0]!)!.toString())).toEqual({step: paused, resumedFrom: []})
    expect(ofKind(aEvents, 'work.started')).toHaveLength(2)
    const submitted = ofKind(aEvents, 'work.submitted')
    expect(submitted).toHaveLength(1)
    const artifact = (submitted[0]!.payload as {artifactHashes: string[]}).artifactHashes[0]!
    // The resumed run saw work.resume.state: it started at the checkpoint's step.
    expect(JSON.parse(blobs.get(artifact)!.toString())).toEqual({steps: 120, resumedFrom: [paused]})
  }, 180_000)
})

describe('mwp agent run: a stale owner (F10, §11.5)', () => {
  let o2: AgentOrg
  beforeAll(async () => {
    // Short start-by deadlines too (ownershipSeconds) for the refused work.start case below.
    o2 = await agentOrg('agent-stale', {workers: 2, policy: {leases: {executionSeconds: 4, ownershipSeconds: 2}}})
  }, 120_000)
  afterAll(() => o2?.close())

  it('a Worker stopped past its lease gets no result accepted: the re-offered Worker’s is the only one', async () => {
    const stepLog = join(o2.dir, 'stale-steps.log')
    const w1 = o2.agent('worker-1', ['--handler', STEPS])
    const w2 = o2.agent('worker-2', ['--handler', STEPS])
    const [worker1, worker2] = [1, 2].map((n) => `${o2.org.organization}:agent:worker-${n}`) as [string, string]
    const {groupId, missionId} = await o2.mission('Outlive a stalled Worker')
    const workItemId = await o2.offerWork(groupId, missionId, worker1, stepsContract(60, stepLog, 'run'))
    await until(
      async () => lines(stepLog),
      (l) => l.length >= 3,
      `worker-1's first steps (stderr: ${w1.out().stderr.slice(-2000)})`,
    )
    // Its slot blocks too: each step waits for the stopped Agent to store its checkpoint.
    w1.child.kill('SIGSTOP')
    try {
      await until(
        () => o2.events(groupId),
        (es) => Date.now() > leaseExpiry(es) + 1000,
        'worker-1’s lease to lapse',
        150,
      )
      await o2.reoffer(groupId, missionId, workItemId, worker2)
      await until(
        () => o2.events(groupId),
        (es) => es.some((e) => e.kind === 'work.submitted'),
        `worker-2's work.submitted (stderr: ${w2.out().stderr.slice(-2000)})`,
      )
    } finally {
      w1.child.kill('SIGCONT')
    }
    // Resumed, worker-1 learns its lease is gone (a refused renewal, its lease past expiry, or the
    // new ownership's Events) and stops its slot.
    await until(
      async () => w1.out().stderr,
      (s) => s.includes('"event":"lease-lost"'),
      `worker-1 to stop its run (stderr: ${w1.out().stderr.slice(-2000)})`,
    )
    await o2.command('coordinator', 'work.accept_result', groupId, {workItemId})
    const events = await until(
      () => o2.events(groupId),
      (es) => es.some((e) => e.kind === 'work.result.accepted'),
      'work.result.accepted',
    )
    for (const w of [w1, w2]) w.child.kill('SIGTERM')
    expect(await w1.exited).toBe(0)
    expect(await w2.exited).toBe(0)
    // The 'stop' intent for the running item used to throw in every pass until its slot ended.
    expect(passFailures(w1.out().stderr)).toEqual([])

    const submitted = ofKind(events, 'work.submitted')
    expect(submitted.map((e) => e.actor.id)).toEqual([worker2])
    const started = ofKind(events, 'work.started')
    expect(started.map((e) => e.actor.id)).toEqual([worker1, worker2])
    expect((submitted[0]!.payload as {leaseId: string}).leaseId).toBe(leaseOf(started[1]!).leaseId)
    expect(ofKind(events, 'work.result.accepted')).toHaveLength(1)
    // Whatever worker-1 sent after waking was refused: nothing else of its ownership was appended
    // (a late submission would only be kept as a non-authoritative record).
    const after = events.slice(events.indexOf(started[1]!) + 1)
    for (const e of after.filter((x) => x.actor.id === worker1))
      expect(e.kind).toBe('ext.missionweaveprotocol.core.late_result_recorded')
  }, 180_000)

  it('a WorkItem whose start-by deadline passed while the slot was busy is dropped, and the Agent goes on', async () => {
    const stepLog = join(o2.dir, 'refused-steps.log')
    const worker1 = `${o2.org.organization}:agent:worker-1`
    const agent = o2.agent('worker-1', ['--handler', STEPS, '--slots', '1', '--db', join(o2.dir, 'refused', 'w1.db')])
    const {groupId, missionId} = await o2.mission('Miss a start-by deadline')
    await o2.offerWork(groupId, missionId, worker1, stepsContract(60, stepLog, 'A'))
    await until(
      async () => lines(stepLog),
      (l) => l.length >= 1,
      `A's first step (stderr: ${agent.out().stderr.slice(-2000)})`,
    )
    // B waits for the one slot longer than its 2 s start-by deadline: its work.start is refused.
    await o2.offerWork(groupId, missionId, worker1, stepsContract(3, stepLog, 'B'))
    await until(
      async () => agent.out().stderr,
      (s) => s.includes('"what":"start"'),
      `the refused work.start (stderr: ${agent.out().stderr.slice(-2000)})`,
    )
    const c = await o2.offerWork(groupId, missionId, worker1, stepsContract(3, stepLog, 'C'))
    const events = await until(
      () => o2.events(groupId),
      (es) => es.some((e) => e.kind === 'work.submitted' && (e.payload as {workItemId: string}).workItemId === c),
      `C's work.submitted (exit ${agent.child.exitCode}, stderr: ${agent.out().stderr.slice(-2000)})`,
    )
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    expect(ofKind(events, 'work.submitted')).toHaveLength(2)
    expect(lines(stepLog).filter((l) => l.startsWith('B'))).toEqual([])
    expect(passFailures(agent.out().stderr)).toEqual([])
  }, 180_000)
})
