// MWP_BENCH_ONLY=agent-share (issue #16): the weighted-fair split in real time with real slots.
// One `mwp agent run` process with 2 slots is the Worker in two Groups whose queues stay
// saturated: Group A at weight 3 with 1 s WorkItems, Group B at weight 1 with 10 s WorkItems
// (the Organization's policy file). Over a 60 s window the bench measures the slot time each
// Group's handlers actually ran (their own start/end stamps, clipped to the window), next to the
// ideal split 75/25 and the slots' utilization. Slot-time fairness gives A 75 %; counting
// dispatches instead would give A 3 × 1 s per 10 s of B, 23 %.

import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {benchAgentOrg} from './agent-org.js'
import {benchContract} from './contract.js'

const WINDOW_S = Number(process.env.MWP_BENCH_SHARE_SECONDS ?? 60)
const SLOTS = 2
const A = {weight: 3, itemMs: 1000}
const B = {weight: 1, itemMs: 10_000}

/** A handler busy for `ms`, stamping its start and end (ms since the epoch) into `log`. */
const handler = `import {appendFileSync} from 'node:fs'
export default {
  async execute(work, ctx) {
    const {label, ms, log} = work.contract.extensions['urn:mwp:bench:share'].data
    const start = Date.now()
    await new Promise((r) => setTimeout(r, ms))
    appendFileSync(log, label + ' ' + start + ' ' + Date.now() + '\\n')
    const report = await ctx.artifact(label + ' ' + start, {mediaType: 'text/plain'})
    const criteria = work.contract.acceptanceCriteria.map((c) => c.criterionId)
    ctx.evidence(criteria, {method: 'bench', result: 'passed', artifactHashes: [report]})
  },
}
`

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export async function runAgentShareBench(): Promise<void> {
  const o = await benchAgentOrg('agent-share')
  try {
    const log = join(o.dir, 'runs.log')
    writeFileSync(join(o.dir, 'handler.mjs'), handler)
    const a = await o.mission('Group A, weight 3')
    const b = await o.mission('Group B, weight 1')
    const policy = join(o.dir, 'policy.json')
    writeFileSync(policy, JSON.stringify({groups: {[a]: {weight: A.weight}, [b]: {weight: B.weight}}}))
    const contract = (label: string, ms: number) =>
      benchContract({
        requiredCapabilities: [{id: 'mwp.dev.general-work', version: '1.0.0'}],
        deadline: new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        extensions: {'urn:mwp:bench:share': {version: '1.0.0', critical: false, data: {label, ms, log}}},
      })
    // Enough of each for the whole window and more: neither queue runs dry.
    const needA = Math.ceil(((WINDOW_S * 1000 * SLOTS * 0.75) / A.itemMs) * 1.5)
    const needB = Math.ceil((WINDOW_S * 1000 * SLOTS * 0.25) / B.itemMs) * 2 + 2
    const agent = o.agent([
      '--handler',
      join(o.dir, 'handler.mjs'),
      '--slots',
      String(SLOTS),
      '--capacity',
      String(needA + needB),
      '--scheduling-policy',
      policy,
    ])
    // A just-in-time offer scopes the Worker's provisional Membership to that one WorkItem (§8),
    // so the first offer in each Group is accepted (the Worker is then a member) before the rest.
    const first = [await o.offer(b, contract('B', B.itemMs)), await o.offer(a, contract('A', A.itemMs))]
    const accepted = async (groupId: string, w: string) =>
      (await o.authority.current(groupId))?.workItems[w]?.owner !== null
    for (let t = 0; t < 600 && !((await accepted(b, first[0]!)) && (await accepted(a, first[1]!))); t++) await sleep(50)
    for (let i = 1; i < needB; i++) await o.offer(b, contract('B', B.itemMs))
    for (let i = 1; i < needA; i++) await o.offer(a, contract('A', A.itemMs))
    // The window opens when the first item has finished: both slots are busy by then, each Group's
    // queue saturated.
    const ran = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [])
    for (let t = 0; t < 600 && ran().length === 0 && agent.exitCode === null; t++) await sleep(100)
    if (ran().length === 0) throw new Error(`no WorkItem ran (the Agent exited ${agent.exitCode ?? 'no'})`)
    const from = Date.now()
    await sleep(WINDOW_S * 1000)
    const to = Date.now()
    agent.kill('SIGTERM')
    await new Promise((r) => agent.once('close', r))
    const used = {A: 0, B: 0}
    for (const line of ran()) {
      const [label, start, end] = line.split(' ') as ['A' | 'B', string, string]
      used[label] += Math.max(0, Math.min(Number(end), to) - Math.max(Number(start), from))
    }
    const total = used.A + used.B
    const share = (100 * used.A) / total
    console.log(`\nWeighted-fair split in real time (mwp agent run, ${SLOTS} slots, ${WINDOW_S} s window)`)
    console.log(
      `  Group A (weight ${A.weight}, ${A.itemMs / 1000} s items): ${share.toFixed(1)} % of slot time — ideal 75.0 % ` +
        `(goal ±10 %: ${share >= 67.5 && share <= 82.5 ? 'met' : 'MISSED'}); by dispatch count it would be 23 %`,
    )
    console.log(`  Group B (weight ${B.weight}, ${B.itemMs / 1000} s items): ${(100 - share).toFixed(1)} %`)
    console.log(
      `  slots busy ${((100 * total) / (SLOTS * (to - from))).toFixed(1)} % of the window ` +
        `(the rest: start/submit round trips through the wire between items)`,
    )
  } finally {
    await o.close()
  }
}
