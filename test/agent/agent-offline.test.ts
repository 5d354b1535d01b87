// Offline bounded execution over real processes (spec §11.3, §11.5; ACCEPTANCE F11-F14, B9): a
// real `mwp agent run` process reaches the authority process only through a real TCP proxy, and
// the test cuts the proxy from outside. Shorter than the grace, the reversible run goes on, its
// progress and usage are buffered durably, reconciled and charged once on reconnect, before the
// Agent does anything else, and the run continues under a new lease (the new session revoked the
// old one, B9). Past the lease but inside the grace, its checkpoint under the historical lease
// requeues it and it resumes; an overflowing reconciliation is refused whole. Longer than the
// grace, the work stops and nothing is buffered past the grace.

import {existsSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BOUNDED_OFFLINE_EXECUTION, type OfflineBinding} from '../../src/agent/offline-binding.js'
import type {EventDoc} from '../../src/operator/transport.js'
import {type AgentOrg, agentOrg, until} from '../support/agent-org.js'
import {type TcpProxy, tcpProxy} from '../../src/poc/faults/tcp-proxy.js'

const STEPS = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'steps-handler.mjs')
// Leases and grace short enough for a test, long enough that the client's reconnect backoff
// (at most ~3 s after a 10 s cut) lands where each test needs it. Each cut starts right after a
// renewal, so the lease has EXECUTION_SECONDS left.
const EXECUTION_SECONDS = 8
const GRACE_SECONDS = 8
const USAGE_RECORDED = 'ext.missionweaveprotocol.core.resource_usage_recorded'
const LEASE_REVOKED = 'ext.missionweaveprotocol.core.lease_revoked'

let o: AgentOrg
let proxy: TcpProxy
let worker: string
beforeAll(async () => {
  o = await agentOrg('agent-offline', {
    policy: {leases: {executionSeconds: EXECUTION_SECONDS, offlineGraceSeconds: GRACE_SECONDS}},
  })
  proxy = await tcpProxy(o.url)
  worker = `${o.org.organization}:agent:worker-1`
}, 120_000)
afterAll(async () => {
  await proxy?.close()
  await o?.close()
})

const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [])
const steps = (n: number, label: string) => Array.from({length: n}, (_, i) => `${label} ${i + 1}`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const about = (es: EventDoc[], workItemId: string) =>
  es.filter((e) => (e.payload as {workItemId?: string}).workItemId === workItemId)
const leaseOf = (e: EventDoc) => (e.payload as {lease: {leaseId: string; sessionEpoch: number}}).lease
const bindingOf = (e: EventDoc) =>
  ((e as {extensions?: Record<string, {data: OfflineBinding}>}).extensions?.[BOUNDED_OFFLINE_EXECUTION]?.data ??
    null) as OfflineBinding | null
const logged = (stderr: string, event: string) =>
  stderr
    .split('\n')
    .filter((l) => l.includes(`"event":"${event}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>)

const stepsContract = (data: Record<string, unknown>, toolCallLimit = 10_000) => ({
  budget: {currency: 'EUR', financialLimit: 10, toolCallLimit},
  extensions: {'urn:mwp:test:steps': {version: '1.0.0', critical: false, data: {stepMs: 50, ...data}}},
})

/** Starts worker-1 through the proxy on a steps WorkItem, and cuts the proxy right after its first renewal. */
async function cutAfterRenewal(label: string, data: Record<string, unknown>, toolCallLimit?: number) {
  const stepLog = join(o.dir, `${label}.log`)
  const agent = o.agent('worker-1', ['--handler', STEPS], proxy.url)
  const {groupId, missionId} = await o.mission(`Work through an outage (${label})`)
  const w = await o.offerWork(groupId, missionId, worker, stepsContract({stepLog, label, ...data}, toolCallLimit))
  const before = await until(
    () => o.events(groupId),
    (es) => about(es, w).some((e) => e.kind === 'work.progressed'),
    `the first renewal (agent stderr: ${agent.out().stderr.slice(-2000)})`,
  )
  proxy.cut()
  const firstLease = leaseOf(about(before, w).find((e) => e.kind === 'work.started')!)
  return {stepLog, agent, groupId, missionId, w, firstLease, atCut: lines(stepLog).length}
}

const charged = (es: EventDoc[], w: string) =>
  about(es, w)
    .filter((e) => e.kind === USAGE_RECORDED)
    .reduce((n, e) => n + ((e.payload as {delta: {toolCalls?: number}}).delta.toolCalls ?? 0), 0)

describe('mwp agent run: offline bounded execution through a cut TCP proxy (§11.5)', () => {
  it('a cut shorter than the lease: the run goes on, its progress and usage are reconciled and charged once before anything else, and it continues under a new lease (F11, F12, B9)', async () => {
    const {
      stepLog,
      agent,
      groupId,
      missionId,
      w: a,
      firstLease: first,
      atCut,
    } = await cutAfterRenewal('short', {
      steps: 300,
      usagePerStep: 1,
    })
    // Work offered while the Agent is away: it learns of it only after reconnecting and must not
    // act on it before its buffered progress is reconciled.
    const b = await o.offerWork(groupId, missionId, worker, stepsContract({steps: 5, stepLog, label: 'b'}))
    // The cut lasts until the Agent has buffered its progress: its next renewal falls due while it is
    // offline, at most half the lease after the renewal the cut followed, well inside the lease. (A
    // fixed 2.5 s cut raced that renewal: a reconnect before it left nothing to reconcile.)
    await sleep(1000)
    await until(
      async () => logged(agent.out().stderr, 'offline-buffered'),
      (buffered) => buffered.length > 0,
      `a progress buffered while offline (agent stderr: ${agent.out().stderr.slice(-2000)})`,
    )
    const atRestore = lines(stepLog).length
    proxy.restore()
    const events = await until(
      () => o.events(groupId),
      (es) =>
        about(es, a).some((e) => e.kind === 'work.submitted') && about(es, b).some((e) => e.kind === 'work.submitted'),
      `both submissions (agent stderr: ${agent.out().stderr.slice(-3000)})`,
      300,
    )
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    const stderr = agent.out().stderr

    // The reversible run went on while the service was unreachable, and no step ran twice or was lost.
    expect(atRestore).toBeGreaterThan(atCut + 10)
    expect(lines(stepLog).filter((l) => l.startsWith('short '))).toEqual(steps(300, 'short'))

    // The new session revoked the old lease; the same run went on under a new one.
    expect(about(events, a).filter((e) => e.kind === LEASE_REVOKED)).toHaveLength(1)
    const started = about(events, a).filter((e) => e.kind === 'work.started')
    expect(started).toHaveLength(2)
    const second = leaseOf(started[1]!)
    expect(second.leaseId).not.toBe(first.leaseId)
    expect(second.sessionEpoch).toBeGreaterThan(first.sessionEpoch)
    expect(logged(stderr, 'run-resumed')).toHaveLength(1)
    expect(logged(stderr, 'run-started')).toHaveLength(2) // a and b: a's slot was not started again

    // Buffered progress came back as Messages carrying the critical binding of the first lease,
    // each buffered inside that lease's window, re-signed under the new session.
    // (The charge Events of a reconciled Command carry its binding too.)
    const bound = events.filter((e) => bindingOf(e) !== null)
    expect(new Set(bound.map((e) => e.kind))).toEqual(new Set(['message.posted', USAGE_RECORDED]))
    const reconciled = bound.filter((e) => e.kind === 'message.posted')
    expect(reconciled.length).toBeGreaterThan(0)
    for (const e of reconciled) {
      const binding = bindingOf(e)!
      expect(binding).toMatchObject({
        agentId: worker,
        workItemId: a,
        leaseId: first.leaseId,
        sessionEpoch: first.sessionEpoch,
      })
      expect(binding.bufferedAt < binding.graceDeadline).toBe(true)
      expect(binding.bufferedAt >= binding.disconnectedAt).toBe(true)
    }
    expect(logged(stderr, 'reconciled').at(-1)).toMatchObject({refused: 0})

    // Charged exactly once: every step's tool call is in one usage Event, the offline deltas
    // naming both the historical and the reconciling session.
    expect(charged(events, a)).toBe(300)
    const offline = about(events, a).filter(
      (e) => e.kind === USAGE_RECORDED && (e.payload as {reconciliation?: unknown}).reconciliation !== undefined,
    )
    expect(offline.length).toBeGreaterThan(0)
    for (const e of offline)
      expect(e.payload).toMatchObject({
        sessionEpoch: first.sessionEpoch,
        reconciliation: {sessionEpoch: second.sessionEpoch},
      })

    // Reconciliation came before anything else the Agent did after reconnecting: the offer made
    // while it was away was answered only after the last reconciled Message.
    const offerAt = events.findIndex((e) => about([e], b).length > 0)
    const answered = events.findIndex((e, i) => i > offerAt && about([e], b).length > 0)
    expect(answered).toBeGreaterThan(events.indexOf(reconciled.at(-1)!))
    const submitted = about(events, a).find((e) => e.kind === 'work.submitted')!
    expect((submitted.payload as {leaseId: string}).leaseId).toBe(second.leaseId)
  }, 120_000)

  it('a cut too short to buffer anything: the run resumes under a new lease, renews that lease in time and finishes (B9)', async () => {
    // Regression: the renewal after the resume was scheduled against the grace end, and fell due
    // after the new lease had expired; the run lost its lease and never finished.
    const {stepLog, agent, groupId, w, firstLease} = await cutAfterRenewal('brief', {steps: 400})
    await sleep(300)
    proxy.restore()
    const events = await until(
      () => o.events(groupId),
      (es) => about(es, w).some((e) => e.kind === 'work.submitted'),
      `the submission (agent stderr: ${agent.out().stderr.slice(-3000)})`,
      400,
    )
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    const stderr = agent.out().stderr
    expect(logged(stderr, 'offline-buffered')).toEqual([])
    expect(logged(stderr, 'run-resumed')).toHaveLength(1)
    expect(logged(stderr, 'lease-lost')).toEqual([])
    const second = leaseOf(about(events, w).filter((e) => e.kind === 'work.started')[1]!)
    expect(second.leaseId).not.toBe(firstLease.leaseId)
    const renewedSecond = about(events, w).filter(
      (e) => e.kind === 'work.progressed' && (e.payload as {leaseId?: string}).leaseId === second.leaseId,
    )
    expect(renewedSecond.length).toBeGreaterThan(0)
    expect(lines(stepLog).filter((l) => l.startsWith('brief '))).toEqual(steps(400, 'brief'))
  })

  it('a cut past the lease but inside the grace: the checkpoint under the historical lease requeues the work, which resumes; an overflowing buffered Message is refused whole (F12, F13, F14)', async () => {
    // 1 tool call per step, and a burst of 500 at step 100 (offline) against a limit of 600.
    const {stepLog, agent, groupId, w, firstLease} = await cutAfterRenewal(
      'lapsed',
      {steps: 400, usagePerStep: 1, burst: 500, burstAt: 100},
      600,
    )
    await sleep((EXECUTION_SECONDS + 1.5) * 1000)
    proxy.restore()
    const events = await until(
      () => o.events(groupId),
      (es) => about(es, w).some((e) => e.kind === 'work.submitted'),
      `the submission (agent stderr: ${agent.out().stderr.slice(-3000)})`,
      300,
    )
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    const stderr = agent.out().stderr

    // The lease had lapsed: nothing to revoke; the run checkpointed under it and resumed from there.
    expect(about(events, w).filter((e) => e.kind === LEASE_REVOKED)).toHaveLength(0)
    const checkpointed = about(events, w).filter((e) => e.kind === 'work.checkpointed')
    expect(checkpointed).toHaveLength(1)
    expect(bindingOf(checkpointed[0]!)).toMatchObject({leaseId: firstLease.leaseId})
    expect(logged(stderr, 'run-rescued')).toMatchObject([{sent: 'accepted'}])
    const started = about(events, w).filter((e) => e.kind === 'work.started')
    expect(started).toHaveLength(2)
    expect(lines(stepLog)).toEqual(steps(400, 'lapsed'))

    // The Message carrying the burst overflowed the budget and left no Event at all (no charge,
    // no Message); everything else was charged once.
    expect(logged(stderr, 'offline-refused').map((r) => r.code)).toEqual(['BUDGET_EXCEEDED'])
    for (const e of events.filter((x) => bindingOf(x) !== null))
      expect(bindingOf(e)!.usageDelta.toolCalls ?? 0).toBeLessThan(500)
    expect(charged(events, w)).toBeLessThan(400)
    expect(charged(events, w)).toBeGreaterThan(0)
  }, 120_000)

  it('a cut longer than the grace: the work stops and nothing is buffered past the grace (F11, F13)', async () => {
    const {stepLog, agent, groupId, w, firstLease} = await cutAfterRenewal('long', {steps: 100_000})
    await sleep((EXECUTION_SECONDS + GRACE_SECONDS + 2) * 1000)
    const stoppedAt = lines(stepLog).length
    await sleep(1000)
    expect(lines(stepLog).length).toBe(stoppedAt)
    proxy.restore()
    await until(
      async () => logged(agent.out().stderr, 'reconciled'),
      (l) => l.length > 0,
      `the reconciliation (agent stderr: ${agent.out().stderr.slice(-3000)})`,
    )
    const events = await o.events(groupId)
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    const stderr = agent.out().stderr

    expect(logged(stderr, 'lease-lost').some((l) => /grace/.test(String(l.why)))).toBe(true)
    const reconciled = events.filter((e) => bindingOf(e) !== null)
    expect(reconciled.length).toBeGreaterThan(0)
    for (const e of reconciled) {
      expect(bindingOf(e)!.leaseId).toBe(firstLease.leaseId)
      expect(bindingOf(e)!.bufferedAt < bindingOf(e)!.graceDeadline).toBe(true)
    }
    // Not resumed: the lease and its grace are over, the WorkItem is the Coordinator's to reassign.
    expect(about(events, w).filter((e) => e.kind === 'work.started')).toHaveLength(1)
    expect(about(events, w).filter((e) => e.kind === 'work.submitted')).toHaveLength(0)
  }, 120_000)
})
