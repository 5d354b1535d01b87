// The WebSocket binding on loopback (TLS 1.3, SQLite store): delivered Events per second and
// Command→Event latency, for 1 Group × 100 subscribers and 100 Groups × 1 subscriber.
//
// Per scenario:
//   live   — message.post Commands at a fixed rate (MWP_BENCH_WIRE_RATE, default 500/s) for
//            MWP_BENCH_WIRE_SECONDS (default 3) through one client connection; every subscriber
//            receives every Event of its Group. Latency: from sending the COMMAND frame to the
//            Event's first arrival at a subscriber (sampled on one subscriber per Group); all
//            Commands must be accepted. Before it, a warm-up round of MWP_BENCH_WIRE_WARMUP
//            (default 5) seconds at the same rate, delivered in full before the measured window
//            opens: p50/p99 are a running server's, and the warm-up's own p99 (a server seconds
//            after start, V8 still compiling the hot paths: 3-4× the steady-state tail on a 2-core
//            machine, and at near-full load its backlog drains for seconds) is printed beside them.
//            After 2 s V8's compiler threads still took 0.1-0.2 cores of the live window; after 5 s,
//            under 0.1.
//   replay — every subscriber resubscribes from sequence 0: the server's top delivery rate.
// The server (authority, store, gateway) has the main thread to itself, as a server process
// would. Subscribers are raw authenticated sockets on a worker thread (bench/wire-subscribers.ts)
// that count EVENT frames and ACK every 256 Events (the server's per-Group window stays open);
// the Command sender is a raw socket on another worker thread (bench/wire-commander.ts). Neither
// verifies signatures (bench/raw-socket.ts): the figures are the server's, not the client
// library's, and on a 2-core machine the load generators' CPU would otherwise be the server's
// wait. The per-thread line shows what each thread used and how long it waited for a core.
// The server runs with its defaults (delivery batch window DEFAULT_DELIVERY_BATCH_MS; MWP_BENCH_WIRE_BATCH_MS overrides it)
// and with `mwp authority serve`'s V8 heap setting (src/wire/serving-heap.ts).
// MWP_BENCH_WIRE_ONLY=1x100 | 100x1 runs one scenario; MWP_BENCH_WIRE_TRACE=1 prints the worst
// latency per 100 ms of send time; MWP_BENCH_PROFILE=DIR (V8 CPU), MWP_BENCH_PERF=DIR (perf, every
// thread) and MWP_BENCH_HEAP=DIR (V8 allocations) profile each live phase (bench/profile.ts).
// Targets: ≥ 50,000 Events/s delivered; p99 < 25 ms at 500 Commands/s.

import {buildCommand} from '../src/operator/command-builder.js'
import {missionCreatePayload} from '../src/operator/mission-payloads.js'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {Worker} from 'node:worker_threads'
import {openAuthority} from '../src/authority/authority.js'
import {submit} from '../src/authority/ingress/command.js'
import {readKeyFile, type SigningKey} from '../src/crypto/keyfile.js'
import {packageRoot} from '../src/schema/catalog.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {DEFAULT_FRESHNESS, initStore, openStore} from '../src/store/index.js'
import {generateDevTls} from '../src/wire/dev-tls.js'
import {DEFAULT_DELIVERY_BATCH_MS, startServer} from '../src/wire/server.js'
import {tuneHeapForServing} from '../src/wire/serving-heap.js'
import {fmt, percentile} from './measure.js'
import {profiled} from './profile.js'
import {threadId, threadTimes, threadUse} from './threads.js'
import {baselineFanout} from './wire-baseline.js'
import {feedEvent} from '../src/wire/group-feed.js'

const root = packageRoot()
const key = (name: string): SigningKey => readKeyFile(join(root, 'fixtures/keys', `${name}.key.json`))
const owner = key('mission-owner')
const coordinator = key('coordinator')
const registry = RegistryEvidence.fromBytes(readFileSync(join(root, 'fixtures/registry.json')))

const RATE = Number(process.env.MWP_BENCH_WIRE_RATE ?? 500)
const SECONDS = Number(process.env.MWP_BENCH_WIRE_SECONDS ?? 3)
const WARMUP = Number(process.env.MWP_BENCH_WIRE_WARMUP ?? 5)
/** The server's delivery batch window (ServerOptions.deliveryBatchMs); unset: the server's default. */
const BATCH_MS =
  process.env.MWP_BENCH_WIRE_BATCH_MS === undefined ? undefined : Number(process.env.MWP_BENCH_WIRE_BATCH_MS)
/** MWP_BENCH_WIRE_TRACE=1: also print the worst latency per 100 ms of send time. */
const TRACE = process.env.MWP_BENCH_WIRE_TRACE === '1'
/** MWP_BENCH_WIRE_ONLY=1x100 | 100x1: run one scenario. */
const ONLY = process.env.MWP_BENCH_WIRE_ONLY

const now = () => performance.timeOrigin + performance.now()
const createFor = (groupId: string) =>
  buildCommand(owner, {
    kind: 'mission.create',
    groupId,
    payload: missionCreatePayload({
      groupId,
      objective: 'Bench the wire',
      coordinatorAgentId: coordinator.principal!.id,
      budget: {currency: 'EUR', financialLimit: 1},
    }),
  }).bytes
const postTo = (groupId: string) =>
  buildCommand(owner, {kind: 'message.post', groupId, membershipEpoch: 1, payload: {text: 'bench'}}).bytes

interface WireFigure {
  scenario: string
  commands: number
  commandRate: number
  liveDeliveredPerSec: number
  p50ms: number
  p99ms: number
  /** p99 of the warm-up Commands (the first MWP_BENCH_WIRE_WARMUP seconds after the server started). */
  warmupP99ms: number
  replayDeliveredPerSec: number
  /** Event loop utilization (0..1) of the server thread during the live phase. */
  serverBusy: number
  /** CPU time of the whole bench process (server, subscriber and Command threads) per second of the live phase, in cores. */
  processCores: number
  /** Per thread of the live phase (Linux): cores used, and cores' worth of time spent runnable but waiting for a CPU. */
  threads: string
}

async function scenario(name: string, groupCount: number, subscribersPerGroup: number): Promise<WireFigure> {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-bench-wire-'))
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
  phase = `${name}: setup`
  const store = await openStore(url, {admissionKey})
  const authority = openAuthority({
    store,
    registry,
    authorityKey: key('group-authority'),
    policy: {rootMissionOwners: [owner.principal!.id]},
  })
  const tls = generateDevTls()
  const server = await startServer({
    authority,
    host: '127.0.0.1',
    port: 0,
    tls: {cert: tls.cert, key: tls.key},
    log: () => undefined,
    sendWindow: 4096,
    pollMs: 1000,
    ...(BATCH_MS === undefined ? {} : {deliveryBatchMs: BATCH_MS}),
  })
  try {
    const groups = Array.from({length: groupCount}, (_, i) => `urn:mwp:bench:group:wire-${i}-${process.pid}`)
    for (const g of groups)
      if ('error' in (await submit(authority, createFor(g)))) throw new Error('bench create failed')
    const heads = new Map<string, number>()
    for (const g of groups) heads.set(g, (await store.head(g))!.sequence)

    // Subscribers on their own thread (bench/wire-subscribers.ts).
    let received = 0
    let subscriberTid = ''
    let commanderTid = ''
    const worker = new Worker(new URL('./wire-subscribers.js', import.meta.url), {
      workerData: {
        url: server.url,
        ca: tls.ca,
        groups,
        perGroup: subscribersPerGroup,
        after: Object.fromEntries(heads),
      },
    })
    await new Promise<void>((resolve, reject) => {
      worker.on('error', reject)
      worker.on('message', (m: {ready?: boolean; tid?: string; received?: number}) => {
        if (m.ready) {
          subscriberTid = m.tid ?? ''
          resolve()
        }
        if (m.received !== undefined) received = m.received
      })
    })
    const delivered = async (target: number) => {
      while (received < target) await new Promise((r) => setTimeout(r, 5))
    }

    // Live phase: Commands at RATE/s through one client connection, on its own thread
    // (bench/wire-commander.ts), as a client process would be.
    const warm = Math.round(RATE * WARMUP)
    const total = warm + Math.round(RATE * SECONDS)
    const commands = Array.from({length: total}, (_, i) => postTo(groups[i % groupCount]!).toString())
    let refused = 0
    let roundDone = () => {}
    const commander = new Worker(new URL('./wire-commander.js', import.meta.url), {
      workerData: {url: server.url, ca: tls.ca, rate: RATE, commands},
    })
    await new Promise<void>((resolve, reject) => {
      commander.on('error', reject)
      commander.on('message', (m: {ready?: boolean; tid?: string; done?: boolean; refused?: number}) => {
        if (m.ready) {
          commanderTid = m.tid ?? ''
          resolve()
        }
        if (m.done) {
          refused = m.refused!
          roundDone()
        }
      })
    })
    /** Sends commands[from, to) at RATE and waits until every subscriber has their Events. */
    const round = async (from: number, to: number) => {
      const answered = new Promise<void>((resolve) => (roundDone = resolve))
      commander.postMessage({from, to})
      await answered
      await delivered(to * subscribersPerGroup)
    }
    phase = `${name}: warm-up`
    await round(0, warm)
    const expected = (total - warm) * subscribersPerGroup
    // How busy the server's event loop was in the live phase: near 100 % it queues work, and the
    // latency then measures that queue (on a machine with fewer free cores than busy threads, the
    // time the thread waits for a core counts as busy too).
    const loopBefore = performance.eventLoopUtilization()
    const cpuBefore = process.cpuUsage()
    const threadsBefore = threadTimes()
    const start = now()
    phase = `${name}: live`
    await profiled(name, () => round(warm, total))
    const liveSeconds = (now() - start) / 1000
    const serverBusy = performance.eventLoopUtilization(loopBefore).utilization
    const cpu = process.cpuUsage(cpuBefore)
    const processCores = (cpu.user + cpu.system) / 1e6 / liveSeconds
    const threads = threadUse(threadsBefore, threadTimes(), liveSeconds, {
      [threadId()]: 'server',
      [subscriberTid]: 'subscribers',
      [commanderTid]: 'commander',
    })
    // Send and arrival times, kept by the load generators until now. Only a live delivery is a
    // Command→Event latency: the first arrival of each Command's Event at its Group's sampling
    // subscriber (the replay phase below redelivers the same Events seconds later, unrecorded).
    const [sent, arrivals] = await Promise.all([collect(commander, 'sentAt'), collect(worker, 'arrivals')])
    await commander.terminate()
    const sentAt = new Map(sent)
    const arrivedAt = new Map<string, number>()
    for (const [cause, at] of arrivals) if (!arrivedAt.has(cause)) arrivedAt.set(cause, at)
    if (refused > 0) throw new Error(`bench: ${refused} of ${total} Commands were refused`)
    const latencies: number[] = []
    const warmup: number[] = []
    const trace: [number, number][] = []
    for (const [actionId, t0] of sentAt) {
      const at = arrivedAt.get(actionId)
      if (at === undefined) throw new Error(`bench: no delivery seen for Command ${actionId}`)
      // The warm-up round was delivered in full before the measured window opened at `start`.
      ;(t0 < start ? warmup : latencies).push(at - t0)
      if (TRACE) trace.push([t0, at - t0])
    }

    // Replay phase: every subscriber from 0.
    phase = `${name}: replay`
    const before = received
    let replayExpected = 0
    for (let i = 0; i < groupCount * subscribersPerGroup; i++)
      replayExpected += (await store.head(groups[i % groupCount]!))!.sequence
    const replayStart = now()
    worker.postMessage({replay: true})
    await delivered(before + replayExpected)
    const replaySeconds = (now() - replayStart) / 1000
    // The baseline's frame: the exact EVENT frame the gateway sent for this scenario's last Event.
    const head = (await store.head(groups[0]!))!.sequence
    const last = (await store.read(groups[0]!, head - 1, 1)).events[0]!
    sampleFrame = feedEvent(last).frame
    await worker.terminate()

    if (TRACE) {
      // Worst latency per 100 ms of send time: shows where in the window slow deliveries sit.
      const buckets = new Map<number, number>()
      for (const [t0, l] of trace)
        buckets.set(Math.floor((t0 - start) / 100), Math.max(buckets.get(Math.floor((t0 - start) / 100)) ?? 0, l))
      console.log(
        name,
        [...buckets]
          .sort((a, b) => a[0] - b[0])
          .map(([b, l]) => `${b}:${l.toFixed(0)}`)
          .join(' '),
      )
    }
    latencies.sort((a, b) => a - b)
    warmup.sort((a, b) => a - b)
    return {
      scenario: name,
      commands: total - warm,
      commandRate: (total - warm) / liveSeconds,
      liveDeliveredPerSec: expected / liveSeconds,
      p50ms: percentile(latencies, 0.5),
      p99ms: percentile(latencies, 0.99),
      warmupP99ms: warmup.length > 0 ? percentile(warmup, 0.99) : NaN,
      replayDeliveredPerSec: replayExpected / replaySeconds,
      serverBusy,
      processCores,
      threads,
    }
  } finally {
    phase = `${name}: server close`
    await server.close()
    phase = `${name}: store close`
    await store.close()
    rmSync(dir, {recursive: true, force: true})
  }
}

/** Asks a load generator for what it recorded: its reply's `key` member (Action ID, time pairs). */
function collect(worker: Worker, key: 'sentAt' | 'arrivals'): Promise<[string, number][]> {
  return new Promise((resolve) => {
    const reply = (m: Record<string, unknown>) => {
      if (!(key in m)) return
      worker.off('message', reply)
      resolve(m[key] as [string, number][])
    }
    worker.on('message', reply)
    worker.postMessage({collect: true})
  })
}

/** An EVENT frame of the last scenario run (for the baseline). */
let sampleFrame: Buffer | undefined

/** Where the bench is, for the exit report below. */
let phase = 'start'
// A bench that stops early says where: an exit with an await still pending prints nothing and
// sets exit code 13 only after the 'exit' handlers ran (they see 0).
process.on('exit', (code) => {
  if (phase !== 'done') console.error(`mwp bench wire: exited (code ${code}) during ${phase}`)
})

const pct = (u: number) => `${(u * 100).toFixed(0)}%`

export async function runWireBench(): Promise<WireFigure[]> {
  // Other processes on the machine take the CPU this bench measures with: the load is printed with it.
  console.log(
    `\nmwp bench wire: TLS 1.3 loopback, SQLite, delivery batch window ${BATCH_MS ?? DEFAULT_DELIVERY_BATCH_MS} ms, ${RATE} Commands/s for ${WARMUP}s warm-up + ${SECONDS}s per scenario (load average ${loadavg()[0]!.toFixed(2)} on ${availableParallelism()} cores)`,
  )
  const heap = tuneHeapForServing()
  console.log(`  V8 heap as mwp authority serve runs it: ${heap}`)
  const figures: WireFigure[] = []
  if (ONLY !== '100x1') figures.push(await scenario('1 Group x 100 subscribers', 1, 100))
  if (ONLY !== '1x100') figures.push(await scenario('100 Groups x 1 subscriber', 100, 1))
  for (const f of figures) {
    console.log(
      `${f.scenario.padEnd(28)} live ${fmt(f.liveDeliveredPerSec).padStart(8)} Events/s delivered (${fmt(f.commandRate)} Commands/s)   p50 ${f.p50ms.toFixed(1)} ms   p99 ${f.p99ms.toFixed(1)} ms (warm-up p99 ${f.warmupP99ms.toFixed(0)} ms)   replay ${fmt(f.replayDeliveredPerSec).padStart(8)} Events/s   server busy ${pct(f.serverBusy)}   CPU ${f.processCores.toFixed(2)} cores`,
    )
    if (f.threads) console.log(`${''.padEnd(28)} threads, cores used / waiting for a core: ${f.threads}`)
  }
  if (sampleFrame) {
    const raw = await baselineFanout(sampleFrame, 100)
    const replay = Math.max(...figures.map((f) => f.replayDeliveredPerSec))
    console.log(
      `  baseline: bare ws over TLS 1.3, the same ${sampleFrame.length}-byte EVENT frame to 100 sockets   ${fmt(raw).padStart(8)} frames/s   (best replay ${Math.round((100 * replay) / raw)}% of it)`,
    )
  }
  const best = Math.max(...figures.map((f) => f.replayDeliveredPerSec), ...figures.map((f) => f.liveDeliveredPerSec))
  const worstP99 = Math.max(...figures.map((f) => f.p99ms))
  console.log(
    `target: ≥ 50,000 Events/s delivered → ${fmt(best)}/s: ${best >= 50_000 ? 'met' : 'NOT met'}; p99 < 25 ms at ${RATE} Commands/s → ${worstP99.toFixed(1)} ms: ${worstP99 < 25 ? 'met' : 'NOT met'}`,
  )
  console.log(JSON.stringify({bench: 'wire', results: figures}))
  phase = 'done'
  return figures
}
