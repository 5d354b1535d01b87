// MWP_BENCH_ONLY=agent-rss (issue #16): the memory of one `mwp agent run` process that is a Worker
// in 100 Groups, next to the same process idle with no Group (the primitive measured in the same
// run), and the time from the first offer until all 100 WorkItems are submitted. A real
// authority on SQLite (in this process, serving wss), a real Agent process running the README's
// exec handler, 100 Missions with one just-in-time offer each.

import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {benchAgentOrg} from './agent-org.js'
import {benchContract} from './contract.js'
import {fmt} from './measure.js'

const GROUPS = Number(process.env.MWP_BENCH_AGENT_GROUPS ?? 100)

/** Resident and peak resident set of a process, MiB (Linux /proc). */
function rss(pid: number): {rss: number; peak: number} {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0)
  return {rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024}
}

/** A Work Contract the dev Worker's card can do (capability mwp.dev.general-work), due tomorrow. */
const contract = benchContract({
  requiredCapabilities: [{id: 'mwp.dev.general-work', version: '1.0.0'}],
  deadline: new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const script = `read -r work
criteria=$(node -pe 'JSON.stringify(JSON.parse(process.argv[1]).work.contract.acceptanceCriteria.map(c => c.criterionId))' "$work")
echo "{\\"type\\":\\"evidence\\",\\"criteria\\":$criteria,\\"method\\":\\"bench\\",\\"result\\":\\"passed\\"}"
echo '{"type":"artifact","content":"done","mediaType":"text/plain"}'
echo '{"type":"submit"}'
`

export async function runAgentRssBench(): Promise<void> {
  const o = await benchAgentOrg('agent-rss')
  try {
    writeFileSync(join(o.dir, 'work.sh'), script)
    // Commit to every offer: the figure is the memory of 100 live Groups.
    const agent = o.agent(['--exec', `bash ${join(o.dir, 'work.sh')}`, '--capacity', String(GROUPS)])
    await sleep(3000) // connected, idle
    const idle = rss(agent.pid!)
    const items: {groupId: string; workItemId: string}[] = []
    const started = Date.now()
    for (let i = 0; i < GROUPS; i++) {
      const groupId = await o.mission(`Bench Mission ${i}`)
      items.push({groupId, workItemId: await o.offer(groupId, contract)})
    }
    let submitted = 0
    for (let t = 0; t < 1200 && submitted < GROUPS; t++) {
      await sleep(250)
      submitted = 0
      for (const {groupId, workItemId} of items) {
        const state = await o.authority.current(groupId)
        if (state?.workItems[workItemId]?.state === 'submitted') submitted++
      }
    }
    const seconds = (Date.now() - started) / 1000
    const busy = rss(agent.pid!)
    console.log(`\nAgent process (mwp agent run, one Worker, ${GROUPS} Groups, exec handler)`)
    console.log(`  idle, no Group:                RSS ${idle.rss.toFixed(1)} MiB (the primitive)`)
    console.log(
      `  after ${GROUPS} Groups:               RSS ${busy.rss.toFixed(1)} MiB, peak ${busy.peak.toFixed(1)} MiB ` +
        `(${((busy.rss - idle.rss) / GROUPS).toFixed(2)} MiB per Group; ratio ${(busy.rss / idle.rss).toFixed(2)})`,
    )
    console.log(
      `  ${submitted}/${GROUPS} WorkItems submitted in ${seconds.toFixed(1)} s ` +
        `(${fmt(submitted / seconds)}/s, offer to submission through the wire, one slot process each)`,
    )
  } finally {
    await o.close()
  }
}
