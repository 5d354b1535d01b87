// MWP_BENCH_ONLY=agent-preempt (issue #16): cooperative preemption latency of an execution slot —
// from the runtime's `yield` request to the slot's release (the handler reached its next safe
// point, checkpointed, returned) — over 20 trials with a module handler that checkpoints every
// N ms, next to N itself and to the start-to-first-checkpoint time of the same slot process (the
// primitive: what one run of a slot costs before it does anything).

import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {WorkSpec} from '../src/agent/handler.js'
import {type SlotReports, startSlot} from '../src/agent/slots.js'
import type {WorkContract} from '../src/authority/model/payloads.generated.js'
import {contentHash} from '../src/crypto/hash.js'
import {percentile} from './measure.js'

const TRIALS = Number(process.env.MWP_BENCH_PREEMPT_TRIALS ?? 20)
const EVERY_MS = Number(process.env.MWP_BENCH_PREEMPT_EVERY_MS ?? 20)

const handler = `export default {
  async execute(work, ctx) {
    for (let step = 0; ; step++) {
      if (ctx.signal.aborted) return {type: 'yield'}
      await new Promise((r) => setTimeout(r, ${EVERY_MS}))
      await ctx.checkpoint({step})
    }
  },
}
`

const spec: WorkSpec = {
  groupId: 'urn:mwp:bench:group',
  missionId: 'urn:mwp:bench:mission',
  workItemId: 'urn:mwp:bench:work',
  conversationId: 'urn:mwp:bench:conversation',
  ownershipEpoch: 1,
  leaseId: 'urn:mwp:bench:lease',
  // The handler reads nothing of its contract.
  contract: {} as WorkContract,
  resume: null,
  attempt: 1,
}

export async function runAgentPreemptBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-bench-preempt-'))
  try {
    const module = join(dir, 'handler.mjs')
    writeFileSync(module, handler)
    const latencies: number[] = []
    const startups: number[] = []
    for (let i = 0; i < TRIALS; i++) {
      let checkpoints = 0
      let first: () => void = () => undefined
      const firstCheckpoint = new Promise<void>((r) => (first = r))
      const reports: SlotReports = {
        checkpoint: async (state) => {
          if (++checkpoints === 1) first()
          return contentHash(JSON.stringify(state))
        },
        artifact: async (content) => contentHash(content),
        progress: () => undefined,
        evidence: () => undefined,
        usage: () => undefined,
        log: () => undefined,
      }
      const t0 = performance.now()
      const run = startSlot({module}, spec, dir, reports)
      await firstCheckpoint
      startups.push(performance.now() - t0)
      // Ask at a random point between two safe points, as an urgent arrival would.
      await new Promise((r) => setTimeout(r, Math.random() * EVERY_MS * 3))
      const asked = performance.now()
      run.stop('yield')
      const result = await run.done
      if (result.type !== 'yield') throw new Error(`trial ${i}: the slot ended with ${result.type}`)
      latencies.push(performance.now() - asked)
    }
    latencies.sort((a, b) => a - b)
    startups.sort((a, b) => a - b)
    const ms = (v: number) => `${v.toFixed(1)} ms`
    console.log(
      `\nPreemption of an execution slot (module handler checkpointing every ${EVERY_MS} ms, ${TRIALS} trials)`,
    )
    console.log(
      `  yield requested → slot released:   p50 ${ms(percentile(latencies, 0.5))}, p99 ${ms(percentile(latencies, 0.99))}` +
        ` (checkpoint interval ${EVERY_MS} ms)`,
    )
    console.log(
      `  slot start → first checkpoint:     p50 ${ms(percentile(startups, 0.5))}, p99 ${ms(percentile(startups, 0.99))}` +
        ' (the primitive: one slot process starting)',
    )
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}
