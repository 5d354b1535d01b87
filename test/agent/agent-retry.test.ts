// Retries within the Work Contract's retryPolicy over real processes (spec §11.4; ACCEPTANCE
// F9): a retryable failure class is retried from the last checkpoint after the policy's backoff,
// each attempt under its own deterministic attempt key; exhaustion, or a failure class the
// policy does not list, ends in work.failed with failure Evidence.

import {existsSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {attemptKey, idempotencyKey} from '../../src/agent/idempotency.js'
import type {EventDoc} from '../../src/operator/transport.js'
import {type AgentOrg, agentOrg, until} from '../support/agent-org.js'

const FLAKY = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'flaky-handler.mjs')

let o: AgentOrg
let worker: string
beforeAll(async () => {
  o = await agentOrg('agent-retry')
  worker = `${o.org.organization}:agent:worker-1`
}, 120_000)
afterAll(() => o?.close())

const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [])
const about = (es: EventDoc[], workItemId: string, kind: string) =>
  es.filter((e) => e.kind === kind && (e.payload as {workItemId?: string}).workItemId === workItemId)

const flaky = (keyLog: string, failTimes: number, code: string, maxAttempts: number) => ({
  retryPolicy: {maxAttempts, backoff: 'fixed', maxDelay: 'PT1S', retryableFailures: ['FLAKY']},
  extensions: {'urn:mwp:test:flaky': {version: '1.0.0', critical: false, data: {failTimes, code, keyLog}}},
})

describe('mwp agent run: retries within the retry policy (§11.4)', () => {
  it('retries a retryable failure after the backoff under a new attempt key, fails on exhaustion or a non-retryable class', async () => {
    const agent = o.agent('worker-1', ['--handler', FLAKY])
    const {groupId, missionId} = await o.mission('Retry what is flaky')
    const logs = {
      retried: join(o.dir, 'retried.log'),
      exhausted: join(o.dir, 'exhausted.log'),
      fatal: join(o.dir, 'fatal.log'),
    }
    const retried = await o.offerWork(groupId, missionId, worker, flaky(logs.retried, 2, 'FLAKY', 3))
    const exhausted = await o.offerWork(groupId, missionId, worker, flaky(logs.exhausted, 5, 'FLAKY', 2))
    const fatal = await o.offerWork(groupId, missionId, worker, flaky(logs.fatal, 5, 'FATAL', 3))
    const events = await until(
      () => o.events(groupId),
      (es) =>
        about(es, retried, 'work.submitted').length === 1 &&
        about(es, exhausted, 'work.failed').length === 1 &&
        about(es, fatal, 'work.failed').length === 1,
      `the three outcomes (agent stderr: ${agent.out().stderr.slice(-3000)})`,
      300,
    )
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)

    // Retried twice, then submitted: three starts, the two failures checkpointed (not failed),
    // each retry started no earlier than the fixed backoff after its checkpoint.
    expect(about(events, retried, 'work.started')).toHaveLength(3)
    const checkpoints = about(events, retried, 'work.checkpointed')
    expect(checkpoints.map((e) => (e.payload as {checkpoint: {progress: string}}).checkpoint.progress)).toEqual([
      'retry 2 after FLAKY',
      'retry 3 after FLAKY',
    ])
    expect(about(events, retried, 'work.failed')).toHaveLength(0)
    const starts = about(events, retried, 'work.started')
    for (const [i, c] of checkpoints.entries())
      expect(Date.parse(starts[i + 1]!.occurredAt) - Date.parse(c.occurredAt)).toBeGreaterThanOrEqual(900)
    // One attempt key per attempt, derived from (Mission, WorkItem, Ownership Epoch, operation,
    // attempt); the operation's idempotency key is the same across them.
    const epoch = (starts[0]!.payload as {lease: {ownershipEpoch: number}}).lease.ownershipEpoch
    expect(lines(logs.retried)).toEqual(
      [1, 2, 3].map(
        (a) =>
          `${a} ${attemptKey(missionId, retried, epoch, 'charge', a)} ${idempotencyKey(missionId, retried, epoch, 'charge')}`,
      ),
    )

    // Exhausted after maxAttempts (2) runs; not retryable (FATAL is not listed) after one. Both
    // fail with a failure report as Evidence.
    expect(lines(logs.exhausted).map((l) => l.split(' ')[0])).toEqual(['1', '2'])
    expect(lines(logs.fatal).map((l) => l.split(' ')[0])).toEqual(['1'])
    for (const w of [exhausted, fatal]) {
      const failed = about(events, w, 'work.failed')[0]!
      expect((failed.payload as {evidenceHashes: string[]}).evidenceHashes).toHaveLength(1)
    }
  }, 120_000)
})
