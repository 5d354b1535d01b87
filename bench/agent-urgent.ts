// MWP_BENCH_ONLY=agent-urgent (issue #16): preemption on an urgent arrival, end to end through the
// Scheduler. One `mwp agent run` process with one slot runs a long preemptible WorkItem that
// checkpoints every N ms; 20 times, a WorkItem of another Group arrives (`--max-wait-ms 0`: a
// Group with ready work and nothing running is owed a slot at once). The figure is the time from
// the arrival's acceptance (work.offer.accepted appended: the WorkItem is queued) to the long run's
// work.checkpoint appended (its slot is free), both stamped by this process as the authority
// commits them — next to N, the handler's own checkpoint interval.

import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {benchAgentOrg} from './agent-org.js'
import {benchContract} from './contract.js'
import {percentile} from './measure.js'

const TRIALS = Number(process.env.MWP_BENCH_PREEMPT_TRIALS ?? 20)
const EVERY_MS = Number(process.env.MWP_BENCH_PREEMPT_EVERY_MS ?? 20)

const handler = `export default {
  async execute(work, ctx) {
    const {long} = work.contract.extensions['urn:mwp:bench:urgent'].data
    let step = work.resume?.state?.step ?? 0
    while (long) {
      if (ctx.signal.aborted) return {type: 'yield'}
      await new Promise((r) => setTimeout(r, ${EVERY_MS}))
      await ctx.checkpoint({step: ++step})
    }
    const report = await ctx.artifact('urgent done', {mediaType: 'text/plain'})
    ctx.evidence(work.contract.acceptanceCriteria.map((c) => c.criterionId), {method: 'bench', result: 'passed', artifactHashes: [report]})
  },
}
`

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export async function runAgentUrgentBench(): Promise<void> {
  const o = await benchAgentOrg('agent-urgent')
  try {
    writeFileSync(join(o.dir, 'handler.mjs'), handler)
    // When each WorkItem's Events of interest were committed (performance.now()).
    const seen = new Map<string, {kind: string; at: number}[]>()
    o.authority.onAppended((_, events) => {
      const at = performance.now()
      for (const e of events) {
        const w = (JSON.parse(Buffer.from(e.bytes).toString('utf8')) as {payload: {workItemId?: string}}).payload
          .workItemId
        if (w !== undefined) seen.set(w, [...(seen.get(w) ?? []), {kind: e.kind, at}])
      }
    })
    const count = (w: string, kind: string) => (seen.get(w) ?? []).filter((e) => e.kind === kind)
    const until = async (ready: () => boolean, what: string) => {
      for (let t = 0; t < 600 && !ready(); t++) await sleep(50)
      if (!ready()) throw new Error(`gave up waiting for ${what}`)
    }
    const contract = (long: boolean) =>
      benchContract({
        requiredCapabilities: [{id: 'mwp.dev.general-work', version: '1.0.0'}],
        deadline: new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        extensions: {'urn:mwp:bench:urgent': {version: '1.0.0', critical: false, data: {long}}},
      })
    o.agent(['--handler', join(o.dir, 'handler.mjs'), '--slots', '1', '--max-wait-ms', '0', '--capacity', '50'])
    const long = await o.offer(await o.mission('Long preemptible work'), contract(true))
    await until(() => count(long, 'work.started').length === 1, 'the long run to start')
    const latencies: number[] = []
    for (let i = 0; i < TRIALS; i++) {
      const checkpoints = count(long, 'work.checkpointed').length
      const starts = count(long, 'work.started').length
      await sleep(200) // the long run is well into its steps
      const urgent = await o.offer(await o.mission(`Urgent arrival ${i}`), contract(false))
      await until(() => count(long, 'work.checkpointed').length > checkpoints, `the long run's checkpoint (${i})`)
      const arrived = count(urgent, 'work.offer.accepted')[0]!.at
      latencies.push(count(long, 'work.checkpointed').at(-1)!.at - arrived)
      await until(() => count(urgent, 'work.submitted').length === 1, `the urgent submission (${i})`)
      await until(() => count(long, 'work.started').length > starts, `the long run to resume (${i})`)
    }
    latencies.sort((a, b) => a - b)
    console.log(
      `\nPreemption on an urgent arrival (mwp agent run, 1 slot, through the Scheduler and the wire, ${TRIALS} trials)`,
    )
    console.log(
      `  arrival queued → slot freed (checkpoint appended): p50 ${percentile(latencies, 0.5).toFixed(1)} ms, ` +
        `p99 ${percentile(latencies, 0.99).toFixed(1)} ms; the handler checkpoints every ${EVERY_MS} ms (the primitive)`,
    )
  } finally {
    await o.close()
  }
}
