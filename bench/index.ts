// `npm run bench`: throughput and latency of the signed-document core, each figure printed next
// to the machine's own primitive measured in the same run:
//   verify            vs raw crypto.verify of the same signing bytes with a cached KeyObject
//   strict parse      vs JSON.parse of the same bytes (the golden command, then a 1 MB string of
//                     `\n\u00e9\"` escapes, then an array of 100,000 numbers)
//   JCS               vs JSON.stringify of the same object
//   schema validation vs JSON.stringify of the same object
// Input: the upstream golden command vector against the full upstream valid registry (7 keys)
// when ../shared/protocol exists, otherwise the project's own fixtures.

import {spawnSync} from 'node:child_process'
import {createPublicKey, verify as nodeVerify} from 'node:crypto'
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {canonicalize} from '../src/json/jcs.js'
import {decodeBase64url} from '../src/json/base64url.js'
import {type JsonObject, parseJsonBytes} from '../src/json/parse.js'
import {packageRoot} from '../src/schema/catalog.js'
import {schemaCatalog} from '../src/schema/catalog.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {verify} from '../src/signing/verify.js'
import {runIngressBench} from './ingress.js'
import {type Figure, benchSeconds, fmt, measure} from './measure.js'

const root = packageRoot()
const upstream = process.env.MWP_UPSTREAM_PROTOCOL ?? join(root, '..', 'shared', 'protocol')
const useUpstream = existsSync(join(upstream, 'PIN.json'))
const docPath = useUpstream
  ? join(upstream, 'cryptography/vectors/signed-documents/valid/command.json')
  : join(root, 'fixtures/documents/command.json')
const regPath = useUpstream
  ? join(upstream, 'cryptography/keys/registry-valid.json')
  : join(root, 'fixtures/registry.json')
const seconds = benchSeconds()

// MWP_BENCH_ONLY=ingress | wire | cold-start | wire-replay runs only the Group Authority ingress figures
// (bench/ingress.ts), only the WebSocket binding's (bench/wire.ts), only the cold start's
// (bench/cold-start.ts) or only the six concurrent replays (bench/wire-replay.ts).
if (process.env.MWP_BENCH_ONLY === 'ingress') {
  await runIngressBench()
  process.exit(0)
}
if (process.env.MWP_BENCH_ONLY === 'cold-start') {
  await (await import('./cold-start.js')).runColdStartBench()
  process.exit(0)
}
// MWP_BENCH_ONLY=wire-replay: six concurrent full replays of a long history (bench/wire-replay.ts).
if (process.env.MWP_BENCH_ONLY === 'wire-replay') {
  await (await import('./wire-replay.js')).runWireReplayBench()
  process.exit(0)
}
// MWP_BENCH_ONLY=scheduler: the Agent runtime's Scheduler decisions (bench/scheduler.ts).
if (process.env.MWP_BENCH_ONLY === 'scheduler') {
  ;(await import('./scheduler.js')).runSchedulerBench()
  process.exit(0)
}
// MWP_BENCH_ONLY=agent-preempt: yield request to slot release, 20 trials (bench/agent-preempt.ts).
if (process.env.MWP_BENCH_ONLY === 'agent-preempt') {
  await (await import('./agent-preempt.js')).runAgentPreemptBench()
  process.exit(0)
}
// MWP_BENCH_ONLY=agent-urgent: an urgent arrival to the running slot's release, end to end (bench/agent-urgent.ts).
if (process.env.MWP_BENCH_ONLY === 'agent-urgent') {
  await (await import('./agent-urgent.js')).runAgentUrgentBench()
  process.exit(0)
}
// MWP_BENCH_ONLY=agent-share: the 3:1 slot-time split over 60 s with real slots (bench/agent-share.ts).
if (process.env.MWP_BENCH_ONLY === 'agent-share') {
  await (await import('./agent-share.js')).runAgentShareBench()
  process.exit(0)
}

// MWP_BENCH_ONLY=agent-rss: one Agent process in 100 Groups next to the same process idle (bench/agent-rss.ts).
if (process.env.MWP_BENCH_ONLY === 'agent-rss') {
  await (await import('./agent-rss.js')).runAgentRssBench()
  process.exit(0)
}
// MWP_BENCH_ONLY=agent-store: the Agent's local store next to raw SQLite commits (bench/agent-store.ts).
if (process.env.MWP_BENCH_ONLY === 'agent-store') {
  await (await import('./agent-store.js')).runAgentStoreBench()
  process.exit(0)
}
// MWP_BENCH_ONLY=startup: the CPU cost of starting `mwp` next to `node -e 0` (bench/startup.ts).
if (process.env.MWP_BENCH_ONLY === 'startup') {
  ;(await import('./startup.js')).runStartupBench()
  process.exit(0)
}
if (process.env.MWP_BENCH_ONLY === 'wire') {
  await (await import('./wire.js')).runWireBench()
  process.exit(0)
}

const bytes = readFileSync(docPath)
const registryBytes = readFileSync(regPath)
const doc = parseJsonBytes(bytes) as JsonObject
const {signature: sig, ...unsigned} = doc
const signingBytes = Buffer.from(canonicalize(unsigned))
const first = verify('command', bytes, RegistryEvidence.fromBytes(registryBytes))
if (!first.ok) throw new Error('the benchmark document does not verify')
const keyObject = createPublicKey({
  key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), first.binding.key.raw]),
  format: 'der',
  type: 'spki',
})
const signature = decodeBase64url((sig as JsonObject).value as string)!
const validateCommand = schemaCatalog().validator('command')
const plain = JSON.parse(bytes.toString('utf8'))
// Escape-dense (issue #15: such strings parsed 15-25x slower than JSON.parse): one JSON string of
// about 1 MB, every character an escape.
const escapeDense = Buffer.from('"' + '\\n\\u00e9\\"'.repeat(100_000) + '"')
const numbers = Buffer.from(JSON.stringify(Array.from({length: 100_000}, (_, i) => (i * 7919) / 8)))

// A verifier holds the evidence of the current registry revision and verifies many documents
// against it (as `mwp verify` batch mode and the authority do). The second figure rebuilds the
// evidence from the registry bytes on every call: the validated snapshot then comes from the
// content-hash cache, so the 7 keys are still proven only once.
const shared = RegistryEvidence.fromBytes(registryBytes)
const raw = measure('raw crypto.verify, cached KeyObject', () => nodeVerify(null, signingBytes, keyObject, signature))
const pairs: [Figure, Figure, string][] = [
  [measure('verify (six stages, 7-key registry)', () => verify('command', bytes, shared)), raw, 'verify'],
  [
    measure('verify, evidence rebuilt from bytes per call', () =>
      verify('command', bytes, RegistryEvidence.fromBytes(registryBytes)),
    ),
    raw,
    'verify-evidence-per-call',
  ],
  [
    measure('strict parse', () => parseJsonBytes(bytes)),
    measure('JSON.parse', () => JSON.parse(bytes.toString('utf8'))),
    'parse',
  ],
  [
    measure(`strict parse, ${escapeDense.length} B escape-dense string`, () => parseJsonBytes(escapeDense)),
    measure('JSON.parse', () => JSON.parse(escapeDense.toString('utf8'))),
    'parse-escapes',
  ],
  [
    measure(`strict parse, ${numbers.length} B array of 100,000 numbers`, () => parseJsonBytes(numbers)),
    measure('JSON.parse', () => JSON.parse(numbers.toString('utf8'))),
    'parse-numbers',
  ],
  [measure('JCS canonicalize', () => canonicalize(doc)), measure('JSON.stringify', () => JSON.stringify(plain)), 'jcs'],
  [
    measure('schema validation (command)', () => validateCommand(doc)),
    measure('JSON.stringify', () => JSON.stringify(plain)),
    'schema',
  ],
]

console.log(
  `mwp bench: ${useUpstream ? 'upstream golden command + registry-valid (7 keys)' : 'project fixtures'}, ${bytes.length} bytes, ~${seconds}s per figure, one core`,
)
console.log(`node ${process.version}\n`)
const rows = pairs.map(([ours, base, id]) => ({id, ours, base, ratio: ours.opsPerSec / base.opsPerSec}))
for (const {ours, base, ratio} of rows) {
  console.log(
    `${ours.name.padEnd(48)} ${fmt(ours.opsPerSec).padStart(10)} /s   p50 ${ours.p50us.toFixed(1).padStart(7)} µs   p99 ${ours.p99us.toFixed(1).padStart(7)} µs`,
  )
  console.log(
    `  baseline: ${base.name.padEnd(38)} ${fmt(base.opsPerSec).padStart(10)} /s   p50 ${base.p50us.toFixed(1).padStart(7)} µs   ratio ${(ratio * 100).toFixed(0)}%`,
  )
}
const v = rows[0]
console.log(
  `\ntarget: ≥ 3,000 verifications/s and ≥ 50% of the bare primitive → ${fmt(v.ours.opsPerSec)}/s at ${(v.ratio * 100).toFixed(0)}%: ${v.ours.opsPerSec >= 3000 && v.ratio >= 0.5 ? 'met' : 'NOT met'}`,
)
console.log(
  JSON.stringify({
    bench: 'signed-document-core',
    results: rows.map((r) => ({id: r.id, ours: r.ours, baseline: r.base, ratio: r.ratio})),
  }),
)

// The Group Authority ingress on both stores (bench/ingress.ts; MWP_BENCH_INGRESS=0 skips it) and
// the WebSocket binding on loopback (bench/wire.ts; MWP_BENCH_WIRE=0 skips it), each in a process
// of its own, as a server runs: the heap, thread pool and threads one section leaves behind (the
// ingress section fills stores to 100,000 Events) do not weigh on the next one's figures.
// The cold start to the first Command at 1k, 10k and 100k stored Events (bench/cold-start.ts;
// MWP_BENCH_COLD_START=0 skips it) and six concurrent full replays of a 77 MiB history
// (bench/wire-replay.ts; MWP_BENCH_WIRE_REPLAY=0 skips it) follow, each in a process of its own too,
// then the Agent Scheduler's decisions on 10,000 queued items (bench/scheduler.ts; MWP_BENCH_SCHEDULER=0
// skips it), the Agent's local store (bench/agent-store.ts; MWP_BENCH_AGENT_STORE=0 skips it) and one
// Agent process in 100 Groups (bench/agent-rss.ts; MWP_BENCH_AGENT_RSS=0 skips it) and the slot
// preemption latency (bench/agent-preempt.ts; MWP_BENCH_AGENT_PREEMPT=0 skips it), and the 3:1 split
// over 60 s with real slots (bench/agent-share.ts; MWP_BENCH_AGENT_SHARE=0 skips it) and preemption on
// an urgent arrival end to end (bench/agent-urgent.ts; MWP_BENCH_AGENT_URGENT=0 skips it), and the
// CLI's start-up cost (bench/startup.ts; MWP_BENCH_STARTUP=0 skips it).
for (const [only, skip] of [
  ['ingress', 'MWP_BENCH_INGRESS'],
  ['wire', 'MWP_BENCH_WIRE'],
  ['cold-start', 'MWP_BENCH_COLD_START'],
  ['wire-replay', 'MWP_BENCH_WIRE_REPLAY'],
  ['scheduler', 'MWP_BENCH_SCHEDULER'],
  ['agent-store', 'MWP_BENCH_AGENT_STORE'],
  ['agent-rss', 'MWP_BENCH_AGENT_RSS'],
  ['agent-preempt', 'MWP_BENCH_AGENT_PREEMPT'],
  ['agent-share', 'MWP_BENCH_AGENT_SHARE'],
  ['agent-urgent', 'MWP_BENCH_AGENT_URGENT'],
  ['startup', 'MWP_BENCH_STARTUP'],
] as const) {
  if (process.env[skip] === '0') continue
  const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], {
    stdio: 'inherit',
    env: {...process.env, MWP_BENCH_ONLY: only},
  })
  if (run.status !== 0) throw new Error(`the ${only} bench failed (exit ${run.status ?? run.signal})`)
}
