// Offline bounded execution over real processes (spec §11.3, §11.5; ACCEPTANCE F11-F14, B9): a
// real `mwp agent run` process reaches the authority process only through a real TCP proxy, and
// the test cuts the proxy from outside. Shorter than the grace, the reversible run goes on, its
// progress and usage are buffered durably, reconciled and charged once on reconnect, before the
// Agent does anything else, and the run continues under a new lease. Longer than the grace, the
// work stops, nothing is buffered past the grace, and an overflowing reconciliation is refused
// whole.

import {existsSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BOUNDED_OFFLINE_EXECUTION, type OfflineBinding} from '../../src/agent/offline-binding.js'
import type {EventDoc} from '../../src/operator/transport.js'
import {type AgentOrg, agentOrg, until} from '../support/agent-org.js'
import {type TcpProxy, tcpProxy} from '../support/tcp-proxy.js'

const STEPS = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'steps-handler.mjs')
// Short leases and grace so both regimes fit in a test: a run that last renewed at most half a
// lease before the cut may go on offline for 2-4 s of lease and 3 s of grace.
const EXECUTION_SECONDS = 4
const GRACE_SECONDS = 3
const USAGE_RECORDED = 'ext.missionweaveprotocol.core.resource_usage_recorded'

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

describe('mwp agent run: offline bounded execution through a cut TCP proxy (§11.5)', () => {
  it('a cut shorter than the grace: the run goes on, its progress and usage are reconciled and charged once before anything else, and it continues under a new lease (F11, F12, B9)', async () => {
    const stepLog = join(o.dir, 'short-cut.log')
    const agent = o.agent('worker-1', ['--handler', STEPS], proxy.url)
    const {groupId, missionId} = await o.mission('Work through a short outage')
    const a = await o.offerWork(
      groupId,
      missionId,
      worker,
      stepsContract({steps: 160, stepLog, label: 'a', usagePerStep: 1}),
    )
    await until(
      async () => lines(stepLog),
      (l) => l.length >= 10,
      `the first steps (${agent.out().stderr.slice(-2000)})`,
    )
    proxy.cut()
    const atCut = lines(stepLog).length
    // Work offered while the Agent is away: it learns of it only after reconnecting and must not
    // act on it before its buffered progress is reconciled.
    const b = await o.offerWork(groupId, missionId, worker, stepsContract({steps: 5, stepLog, label: 'b'}))
    await sleep(2500)
    const atRestore = lines(stepLog).length
    proxy.restore()
    const events = await until(
      () => o.events(groupId),
      (es) =>
        about(es, a).some((e) => e.kind === 'work.submitted') && about(es, b).some((e) => e.kind === 'work.submitted'),
      `both submissions (agent stderr: ${agent.out().stderr.slice(-6000)})`,
      300,
    )
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    const stderr = agent.out().stderr

    // The reversible run went on while the service was unreachable, and no step ran twice or was lost.
    expect(atRestore).toBeGreaterThan(atCut + 10)
    expect(lines(stepLog).filter((l) => l.startsWith('a '))).toEqual(steps(160, 'a'))

    // Buffered progress came back as Messages carrying the critical binding of the first lease,
    // each buffered inside that lease's grace, re-signed under the new session.
    const started = about(events, a).filter((e) => e.kind === 'work.started')
    expect(started).toHaveLength(2)
    const [first, second] = started.map(leaseOf)
    expect(second!.leaseId).not.toBe(first!.leaseId)
    expect(second!.sessionEpoch).toBeGreaterThan(first!.sessionEpoch)
    const reconciled = events.filter((e) => bindingOf(e) !== null)
    expect(reconciled.length).toBeGreaterThan(0)
    for (const e of reconciled) {
      const binding = bindingOf(e)!
      expect(e.kind).toBe('message.posted')
      expect(binding).toMatchObject({
        agentId: worker,
        workItemId: a,
        leaseId: first!.leaseId,
        sessionEpoch: first!.sessionEpoch,
      })
      expect(binding.bufferedAt < binding.graceDeadline).toBe(true)
      expect(binding.bufferedAt >= binding.disconnectedAt).toBe(true)
    }
    expect(logged(stderr, 'reconciled').at(-1)).toMatchObject({refused: 0})

    // Charged exactly once: every step's tool call appears in one usage Event, offline deltas
    // naming both the historical and the reconciling session.
    const usage = about(events, a).filter((e) => e.kind === USAGE_RECORDED)
    const charged = usage.reduce((n, e) => n + ((e.payload as {delta: {toolCalls?: number}}).delta.toolCalls ?? 0), 0)
    expect(charged).toBe(160)
    const offline = usage.filter((e) => (e.payload as {reconciliation?: unknown}).reconciliation !== undefined)
    expect(offline.length).toBeGreaterThan(0)
    for (const e of offline)
      expect(e.payload).toMatchObject({
        sessionEpoch: first!.sessionEpoch,
        reconciliation: {sessionEpoch: second!.sessionEpoch},
      })

    // Reconciliation came before anything else the Agent did after reconnecting: the offer made
    // while it was away was answered only after the last reconciled Message.
    const offerAt = events.findIndex((e) => about([e], b).length > 0)
    const answered = events.findIndex((e, i) => i > offerAt && about([e], b).length > 0)
    expect(answered).toBeGreaterThan(events.indexOf(reconciled.at(-1)!))
    const submitted = about(events, a).find((e) => e.kind === 'work.submitted')!
    expect((submitted.payload as {leaseId: string}).leaseId).toBe(second!.leaseId)
  }, 120_000)

  it('a cut longer than the grace: the work stops, nothing is buffered past the grace, and an overflowing reconciliation is refused whole (F11, F13, F14)', async () => {
    const stepLog = join(o.dir, 'long-cut.log')
    const agent = o.agent('worker-1', ['--handler', STEPS], proxy.url)
    const {groupId, missionId} = await o.mission('Outlive the grace')
    // 1 tool call per step, and a burst of 500 at step 30 (offline) against a limit of 400.
    const c = await o.offerWork(
      groupId,
      missionId,
      worker,
      stepsContract({steps: 100_000, stepLog, label: 'c', usagePerStep: 1, burst: 500, burstAt: 30}, 400),
    )
    await until(
      async () => lines(stepLog),
      (l) => l.length >= 10,
      `the first steps (${agent.out().stderr.slice(-2000)})`,
    )
    proxy.cut()
    const before = await o.events(groupId)
    const firstLease = leaseOf(about(before, c).find((e) => e.kind === 'work.started')!)
    // The lease ends at most EXECUTION_SECONDS after the cut, the grace GRACE_SECONDS later.
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

    expect(
      logged(stderr, 'lease-lost').some((l) => l.why === 'the offline grace ended' || /grace/.test(String(l.why))),
    ).toBe(true)
    // What was buffered inside the grace reconciled; the Message carrying the burst overflowed
    // the budget and left no Event at all (no charge, no Message).
    const reconciled = events.filter((e) => bindingOf(e) !== null)
    for (const e of reconciled) {
      const binding = bindingOf(e)!
      expect(binding.leaseId).toBe(firstLease.leaseId)
      expect(binding.bufferedAt < binding.graceDeadline).toBe(true)
      expect(binding.usageDelta.toolCalls ?? 0).toBeLessThan(500)
    }
    const refused = logged(stderr, 'offline-refused')
    expect(refused.map((r) => r.code)).toContain('BUDGET_EXCEEDED')
    const charged = about(events, c)
      .filter((e) => e.kind === USAGE_RECORDED)
      .reduce((n, e) => n + ((e.payload as {delta: {toolCalls?: number}}).delta.toolCalls ?? 0), 0)
    expect(charged).toBeLessThanOrEqual(400)
  }, 120_000)
})
