// Six concurrent full replays of a large Group history (issue #15): the server's RSS growth and its
// largest event-loop stall while half the subscribers read and half have stopped reading, each
// next to the same server's idle figure measured in the same run. MWP_BENCH_ONLY=wire-replay.
//
//   history    MWP_BENCH_REPLAY_MIB (default 77) MiB of message.posted Events of about
//              MWP_BENCH_REPLAY_EVENT_KIB (default 16) KiB each, appended through the Authority
//              library before the server starts; on SQLite, then on a throwaway PostgreSQL
//              cluster (fsync on; MWP_BENCH_POSTGRES_URL: a fresh database there instead;
//              MWP_BENCH_STORES=sqlite | postgres: one of them)
//   server     bench/wire-replay-server.ts in its own process (RSS from /proc/<pid>/status,
//              perf_hooks.monitorEventLoopDelay inside it)
//   readers    3 raw sockets replaying from 0, ACKing every 256 Events
//   paused     3 raw sockets that SUBSCRIBE from 0 and stop reading (socket paused) until the
//              readers are done; then they read everything
//   meanwhile  Commands to another Group over another connection, one after the other
// Goals: RSS growth under 128 MiB, largest loop stall under 50 ms.
//
// The same driver runs the bounded acceptance test (test/wire/replay-memory.test.ts).

import Database from 'better-sqlite3'
import {fork} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import type WebSocket from 'ws'
import {openAuthority} from '../src/authority/authority.js'
import {submit} from '../src/authority/ingress/command.js'
import {readKeyFile, type SigningKey} from '../src/crypto/keyfile.js'
import {buildCommand} from '../src/operator/command-builder.js'
import {missionCreatePayload} from '../src/operator/mission-payloads.js'
import {packageRoot} from '../src/schema/catalog.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {DEFAULT_FRESHNESS, initStore, openStore} from '../src/store/index.js'
import {WireClient} from '../src/wire/client.js'
import {generateDevTls} from '../src/wire/dev-tls.js'
import {postgresSupport, startPostgres} from '../scripts/postgres-cluster.js'
import {fmt} from './measure.js'
import {frameId, rawSession} from './raw-socket.js'
import type {ReplayServerReply, ReplayServerSetting} from './wire-replay-server.js'

const root = packageRoot()
const key = (name: string): SigningKey => readKeyFile(join(root, 'fixtures/keys', `${name}.key.json`))
const owner = key('mission-owner')
const coordinator = key('coordinator')
const registry = RegistryEvidence.fromBytes(readFileSync(join(root, 'fixtures/registry.json')))
const MIB = 1024 * 1024

const createFor = (groupId: string) =>
  buildCommand(owner, {
    kind: 'mission.create',
    groupId,
    payload: missionCreatePayload({
      groupId,
      objective: 'Replay a long history',
      coordinatorAgentId: coordinator.principal!.id,
      budget: {currency: 'EUR', financialLimit: 1},
    }),
  }).bytes
export const postTo = (groupId: string, text: string) =>
  buildCommand(owner, {kind: 'message.post', groupId, membershipEpoch: 1, payload: {text}}).bytes

export interface ReplayStore {
  dir: string
  storeUrl: string
  /** The Group with the long history, and its head. */
  history: string
  head: number
  /** Stored bytes of the long history's Events. */
  bytes: number
  /** Another Group, for Commands during the replay. */
  other: string
  remove(): void
}

/**
 * A store holding `mib` MiB of message.posted Events of about `eventKib` KiB in one Group, and one
 * more Group: at `url` (an uninitialized store, e.g. a new PostgreSQL database), else a new SQLite file.
 */
export async function buildReplayStore(mib: number, eventKib: number, url?: string): Promise<ReplayStore> {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-replay-'))
  const storeUrl = url ?? `sqlite:${join(dir, 'authority.db')}`
  const admissionKey = key('admission')
  await initStore(storeUrl, {
    organizationId: 'urn:mwp:dev:org:example',
    admissionService: {
      principal: admissionKey.principal!,
      keyId: admissionKey.keyId,
      publicKey: admissionKey.publicKeyB64,
    },
    freshness: DEFAULT_FRESHNESS,
  })
  const store = await openStore(storeUrl, {admissionKey})
  const authority = openAuthority({
    store,
    registry,
    authorityKey: key('group-authority'),
    policy: {rootMissionOwners: [owner.principal!.id]},
  })
  const history = `urn:mwp:bench:group:replay-${process.pid}-${Date.now()}`
  const other = `${history}-other`
  const accepted = async (bytes: Buffer) => {
    const r = await submit(authority, bytes)
    if ('error' in r) throw new Error(`replay setup refused: ${r.error.code}`)
  }
  await accepted(createFor(history))
  await accepted(createFor(other))
  const text = 'x'.repeat(eventKib * 1024 - 1200) // the Event's envelope and signature are about 1.2 KB
  let bytes = 0
  let head = 0
  while (bytes < mib * MIB) {
    await accepted(postTo(history, text))
    const page = await store.read(history, head, 1)
    bytes += page.events[0]!.bytes.byteLength
    head = page.head
  }
  await store.close()
  if (storeUrl.startsWith('sqlite:')) {
    // The history's WAL goes into the database file now, not under the measured replay (a
    // checkpoint copying tens of MiB and fsyncing contends with every read and COMMIT on the disk).
    const db = new Database(storeUrl.slice('sqlite:'.length))
    db.pragma('wal_checkpoint(TRUNCATE)')
    db.close()
  }
  return {dir, storeUrl, history, head, bytes, other, remove: () => rmSync(dir, {recursive: true, force: true})}
}

export interface ReplayServer {
  url: string
  ca: string
  pid: number
  /** VmRSS of the server process, read from /proc/<pid>/status (bytes). */
  rss(): number
  /** The server's own figures: RSS and the event-loop delay since the last resetDelay(). */
  stats(): Promise<{rss: number; maxDelayMs: number; p99DelayMs: number; maxGcMs: number}>
  resetDelay(): Promise<void>
  stop(): Promise<void>
}

/** bench/wire-replay-server.ts in a child process over `storeUrl` (its compiled sibling under dist/, or through tsx). */
export async function startReplayServer(storeUrl: string, warm: string[]): Promise<ReplayServer> {
  const tls = generateDevTls()
  const here = fileURLToPath(import.meta.url)
  const compiled = here.endsWith('.js')
  const script = compiled
    ? join(here, '..', 'wire-replay-server.js')
    : join(root, 'dist', 'bench', 'wire-replay-server.js')
  const setting: ReplayServerSetting = {storeUrl, cert: tls.cert, key: tls.key, warm}
  const child = fork(script, [], {
    env: {...process.env, MWP_REPLAY_SERVER: JSON.stringify(setting)},
    // MWP_BENCH_REPLAY_NODE_ARGS: node options for the server process (e.g. --trace-gc, --cpu-prof).
    execArgv: (process.env.MWP_BENCH_REPLAY_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const replies: ((r: ReplayServerReply) => void)[] = []
  child.on('message', (r: ReplayServerReply) => replies.shift()?.(r))
  const reply = () => new Promise<ReplayServerReply>((resolve) => replies.push(resolve))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const ready = await Promise.race([reply(), exited.then((code) => ({type: 'exited', code}) as const)])
  if (ready.type !== 'ready') throw new Error(`the replay server did not start: ${JSON.stringify(ready)}`)
  const pid = child.pid!
  return {
    url: ready.url,
    ca: tls.ca,
    pid,
    rss: () => {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024
    },
    async stats() {
      const r = reply()
      child.send({type: 'stats'})
      const s = await r
      if (s.type !== 'stats') throw new Error('unexpected reply')
      return s
    },
    async resetDelay() {
      const r = reply()
      child.send({type: 'reset-delay'})
      await r
    },
    async stop() {
      if (child.exitCode !== null) return
      child.send({type: 'stop'})
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}

export interface ReplaySubscriber {
  ws: WebSocket
  /** Sequences received in order so far (the first out-of-order one, if any, is in `disorder`). */
  received: number
  disorder: string | null
  backpressure: number
  /** Resolves once every Event through `head` arrived. */
  done: Promise<void>
  resume(): void
}

/**
 * A raw MissionOwner socket replaying `groupId` from 0 through `head`: checks that Events arrive
 * once each, in sequence order, ACKs every 256 Events and at every BACKPRESSURE. `paused`: it
 * stops reading right after its SUBSCRIBE, until resume().
 */
export async function replaySubscriber(
  url: string,
  ca: string,
  groupId: string,
  head: number,
  paused: boolean,
): Promise<ReplaySubscriber> {
  const ws = await rawSession(url, ca)
  let finish!: () => void
  const done = new Promise<void>((resolve) => (finish = resolve))
  const ack = (sequence: number) =>
    ws.send(
      JSON.stringify({
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'ACK',
        acknowledgements: [{groupId, sequence}],
        sentAt: new Date().toISOString(),
      }),
    )
  const socket = (ws as unknown as {_socket: {pause(): void; resume(): void}})._socket
  const s: ReplaySubscriber = {
    ws,
    received: 0,
    disorder: null,
    backpressure: 0,
    done,
    resume: () => socket.resume(),
  }
  ws.on('message', (d: Buffer) => {
    const f = JSON.parse(d.toString('utf8')) as {
      frameType: string
      event?: {groupId: string; sequence: number}
      error?: {code: string; groupId?: string}
    }
    if (f.frameType === 'ERROR' && f.error?.code === 'BACKPRESSURE' && f.error.groupId === groupId) {
      s.backpressure++
      return ack(s.received)
    }
    if (f.frameType !== 'EVENT' || f.event?.groupId !== groupId) return
    if (f.event.sequence !== s.received + 1) {
      s.disorder ??= `expected ${s.received + 1}, got ${f.event.sequence}`
      return
    }
    s.received = f.event.sequence
    if (s.received % 256 === 0) ack(s.received)
    if (s.received === head) finish()
  })
  ws.send(
    JSON.stringify({
      protocolVersion: '0.1',
      frameId: frameId(),
      frameType: 'SUBSCRIBE',
      subscriptionId: frameId(),
      groups: [{groupId, afterSequence: 0}],
    }),
  )
  if (paused) socket.pause()
  return s
}

export interface ReplayRun {
  historyMib: number
  events: number
  idleRss: number
  /** Largest server RSS sampled during the replays. */
  peakRss: number
  /** The server's largest event-loop delay while idle for as long as the replays took, and during them. */
  idleMaxDelayMs: number
  replayMaxDelayMs: number
  replayP99DelayMs: number
  /** The longest GC pause of the server while idle, and during the replays. */
  idleMaxGcMs: number
  replayMaxGcMs: number
  /** Commands to the other Group accepted during the replays (all must be). */
  otherCommands: number
  /** The slowest PING round trip and Command to the other Group on another connection: idle, and during the replays (ms). */
  idleMaxPingMs: number
  idleMaxCommandMs: number
  replayMaxPingMs: number
  replayMaxCommandMs: number
  seconds: number
  backpressureNotices: number
  /** Per subscriber, readers first: the last sequence received in order, and the first disorder seen. */
  subscribers: {paused: boolean; received: number; disorder: string | null}[]
}

/**
 * The whole scenario on a built store: start the server, measure it idle, run the six replays with
 * Commands to the other Group meanwhile, resume the paused subscribers once the readers are done,
 * and wait for all six to have everything (each reports what it received in order).
 */
export async function runReplay(built: ReplayStore, idleMs: number): Promise<ReplayRun> {
  const server = await startReplayServer(built.storeUrl, [built.history, built.other])
  const sockets: WebSocket[] = []
  let commander: WireClient | undefined
  try {
    // Idle: as long as the replays will roughly take, at least idleMs.
    await server.resetDelay()
    await new Promise((r) => setTimeout(r, idleMs))
    const idle = await server.stats()
    const idleRss = server.rss()
    commander = await WireClient.connect({url: server.url, key: owner, registry, ca: server.ca, reconnect: false})
    const c = commander
    const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
      const t0 = performance.now()
      const r = await f()
      return [r, performance.now() - t0]
    }
    let otherCommands = 0
    /** One Command to the other Group and one PING, each timed; a refused Command ends the run. */
    const probe = async () => {
      const [r, commandMs] = await timed(() => c.submit(postTo(built.other, `meanwhile ${otherCommands}`)))
      if ('error' in r) throw new Error(`a Command to the other Group was refused: ${r.error.code}`)
      const [, pingMs] = await timed(() => c.ping())
      return {commandMs, pingMs}
    }
    let idleMaxPingMs = 0
    let idleMaxCommandMs = 0
    for (let i = 0; i < 5; i++) await probe() // the first Commands of a fresh server compile its paths
    for (let i = 0; i < 20; i++) {
      const t = await probe()
      idleMaxPingMs = Math.max(idleMaxPingMs, t.pingMs)
      idleMaxCommandMs = Math.max(idleMaxCommandMs, t.commandMs)
    }
    await server.resetDelay()
    const started = performance.now()
    let peakRss = idleRss
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, server.rss())), 25)
    const subs: ReplaySubscriber[] = []
    for (let i = 0; i < 6; i++)
      subs.push(await replaySubscriber(server.url, server.ca, built.history, built.head, i % 2 === 1))
    sockets.push(...subs.map((s) => s.ws))
    const readers = subs.filter((_, i) => i % 2 === 0)
    const paused = subs.filter((_, i) => i % 2 === 1)
    let readersDone = false
    const allRead = Promise.all(readers.map((s) => s.done)).then(() => (readersDone = true))
    let replayMaxPingMs = 0
    let replayMaxCommandMs = 0
    while (!readersDone) {
      const t = await probe()
      replayMaxPingMs = Math.max(replayMaxPingMs, t.pingMs)
      replayMaxCommandMs = Math.max(replayMaxCommandMs, t.commandMs)
      otherCommands++
      await Promise.race([allRead, new Promise((res) => setTimeout(res, 20))])
    }
    // The paused subscribers have held their bounded buffers all along; now they read everything.
    peakRss = Math.max(peakRss, server.rss())
    for (const s of paused) s.resume()
    await Promise.all(paused.map((s) => s.done))
    clearInterval(sampler)
    peakRss = Math.max(peakRss, server.rss())
    const seconds = (performance.now() - started) / 1000
    const during = await server.stats()
    return {
      subscribers: subs.map((s, i) => ({paused: i % 2 === 1, received: s.received, disorder: s.disorder})),
      historyMib: built.bytes / MIB,
      events: built.head,
      idleRss,
      peakRss,
      idleMaxDelayMs: idle.maxDelayMs,
      replayMaxDelayMs: during.maxDelayMs,
      replayP99DelayMs: during.p99DelayMs,
      idleMaxGcMs: idle.maxGcMs,
      replayMaxGcMs: during.maxGcMs,
      otherCommands,
      idleMaxPingMs,
      idleMaxCommandMs,
      replayMaxPingMs,
      replayMaxCommandMs,
      seconds,
      backpressureNotices: subs.reduce((n, s) => n + s.backpressure, 0),
    }
  } finally {
    for (const ws of sockets) ws.terminate()
    await commander?.close()
    await server.stop()
  }
}

export async function runWireReplayBench(): Promise<ReplayRun[]> {
  const runs: ReplayRun[] = []
  if (process.env.MWP_BENCH_STORES !== 'postgres') runs.push(await benchOn('sqlite'))
  const external = process.env.MWP_BENCH_POSTGRES_URL
  const support = postgresSupport(external)
  if (process.env.MWP_BENCH_STORES === 'sqlite') return runs
  if (!support.available) {
    console.log(`wire replay on postgres: SKIPPED (${support.reason})`)
    return runs
  }
  const pg = await startPostgres({external, durable: true})
  try {
    runs.push(await benchOn('postgres', await pg.newDatabase()))
  } finally {
    await pg.stop()
  }
  return runs
}

async function benchOn(storeName: string, url?: string): Promise<ReplayRun> {
  const mib = Number(process.env.MWP_BENCH_REPLAY_MIB ?? 77)
  const eventKib = Number(process.env.MWP_BENCH_REPLAY_EVENT_KIB ?? 16)
  const built = await buildReplayStore(mib, eventKib, url)
  try {
    const run = await runReplay(built, 3000)
    const short = run.subscribers.find((s) => s.received !== run.events || s.disorder !== null)
    if (short) throw new Error(`a subscriber missed Events: ${JSON.stringify(short)}`)
    const m = (n: number) => `${fmt(n / MIB)} MiB`
    console.log(
      `wire replay: 6 subscribers (3 reading, 3 paused until the readers finished) of ${run.historyMib.toFixed(1)} MiB / ${fmt(run.events)} Events, ${storeName}, server in its own process`,
    )
    console.log(
      `  server RSS growth ${m(run.peakRss - run.idleRss)} (peak ${m(run.peakRss)}; idle server ${m(run.idleRss)}) — goal < 128 MiB`,
    )
    console.log(
      `  largest event-loop stall ${run.replayMaxDelayMs.toFixed(1)} ms, p99 ${run.replayP99DelayMs.toFixed(1)} ms (idle server, 3 s: ${run.idleMaxDelayMs.toFixed(1)} ms); longest GC pause ${run.replayMaxGcMs.toFixed(1)} ms (idle: ${run.idleMaxGcMs.toFixed(1)} ms) — goal < 50 ms`,
    )
    console.log(
      `  another connection: slowest PING ${run.replayMaxPingMs.toFixed(1)} ms, slowest Command to another Group ${run.replayMaxCommandMs.toFixed(1)} ms (${fmt(run.otherCommands)}, all accepted; idle server: ${run.idleMaxPingMs.toFixed(1)} ms, ${run.idleMaxCommandMs.toFixed(1)} ms)`,
    )
    console.log(
      `  ${run.seconds.toFixed(1)} s for all six (the paused ones resumed once the readers were done); ${fmt(run.backpressureNotices)} BACKPRESSURE notices`,
    )
    return run
  } finally {
    built.remove()
  }
}
