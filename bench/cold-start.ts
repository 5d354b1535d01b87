// MWP_BENCH_ONLY=cold-start (issue #15): cold start to the first accepted Command of a Group with
// 1k, 10k and 100k stored Events, on SQLite. Each size: a log built as a running Authority leaves
// it (bench/cold-start-log.ts, with its checkpoints), the store closed, then reopened with a new
// Authority and one message.post submitted; timed from the store open to the receipt, with the
// largest event-loop stall meanwhile (monitorEventLoopDelay). The same cold start without
// checkpoints (a full fold) is printed for the smaller sizes. Then the Group state's canonical
// size and the heap per 10,000 Messages. Every figure sits next to primitives measured in the
// same run: one raw Ed25519 verify and one six-stage verify of a stored Event, one head read.
//
// Goals: under 1 s at 100k, the 100k/1k ratio under 3, the largest stall under 50 ms, and a
// state that does not grow with the number of Messages.

import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {monitorEventLoopDelay} from 'node:perf_hooks'
import {fileURLToPath} from 'node:url'
import {type Authority, openAuthority} from '../src/authority/authority.js'
import {submit} from '../src/authority/ingress/command.js'
import {readKeyFile, type SigningKey} from '../src/crypto/keyfile.js'
import {strictVerify} from '../src/crypto/ed25519.js'
import {canonicalBytes} from '../src/json/jcs.js'
import {buildCommand} from '../src/operator/command-builder.js'
import {missionCreatePayload} from '../src/operator/mission-payloads.js'
import {packageRoot} from '../src/schema/catalog.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {verify} from '../src/signing/verify.js'
import {DEFAULT_FRESHNESS, initStore, openStore, type Store} from '../src/store/index.js'
import {appendPosts} from './cold-start-log.js'
import {fmt, measure} from './measure.js'

const root = packageRoot()
const key = (name: string): SigningKey => readKeyFile(join(root, 'fixtures/keys', `${name}.key.json`))
const owner = key('mission-owner')
const coordinator = key('coordinator')
const authorityKey = key('group-authority')
const admissionKey = key('admission')
const registry = RegistryEvidence.fromBytes(readFileSync(join(root, 'fixtures/registry.json')))

const SIZES = (process.env.MWP_BENCH_COLD_SIZES ?? '1000,10000,100000').split(',').map(Number)
/** Full folds (no checkpoints) only up to this size: they are the O(history) being replaced. */
const FULL_FOLD_UP_TO = Number(process.env.MWP_BENCH_COLD_FULL_UP_TO ?? 10_000)

const authorityOn = (store: Store): Authority =>
  openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}})

const post = (groupId: string, text: string) =>
  buildCommand(owner, {kind: 'message.post', groupId, membershipEpoch: 1, payload: {text}}).bytes

async function freshStore(dir: string, name: string): Promise<string> {
  const url = `sqlite:${join(dir, `${name}.db`)}`
  await initStore(url, {
    organizationId: 'urn:mwp:dev:org:example',
    admissionService: {
      principal: admissionKey.principal!,
      keyId: admissionKey.keyId,
      publicKey: admissionKey.publicKeyB64,
    },
    freshness: DEFAULT_FRESHNESS,
  })
  return url
}

/** A Group with `events` stored Events, built as a running Authority leaves it (with its checkpoints). */
async function build(url: string, events: number): Promise<{groupId: string; seconds: number}> {
  const store = await openStore(url, {admissionKey})
  const authority = authorityOn(store)
  const groupId = `urn:mwp:bench:group:cold-${events}-${process.pid}`
  const t0 = performance.now()
  const created = await submit(
    authority,
    buildCommand(owner, {
      kind: 'mission.create',
      groupId,
      payload: missionCreatePayload({groupId, objective: 'Cold start', coordinatorAgentId: coordinator.principal!.id}),
    }).bytes,
  )
  if ('error' in created) throw new Error(`mission.create: ${created.error.code}`)
  await appendPosts(authority, groupId, owner.principal!, events - created.receipt.lastSequence, {live: true})
  await authority.checkpointsWritten()
  const seconds = (performance.now() - t0) / 1000
  await store.close()
  return {groupId, seconds}
}

interface ColdStart {
  /** Store open to the first Command's receipt. */
  ms: number
  /** Store open to the Group state in the Authority's cache. */
  stateMs: number
  /** The largest event-loop stall until then (the checkpoint and the tail fold). */
  stateStallMs: number
  maxStallMs: number
}

/**
 * A restart: a new process (this module, MWP_COLD_START_CHILD set) opens the store and a new
 * Authority and submits one message.post. Its modules are loaded before the clock starts; the
 * schemas compile and the writer thread starts inside the timed span, as after any restart.
 */
function restart(url: string, groupId: string, withCheckpoints: boolean): ColdStart {
  const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    env: {...process.env, MWP_COLD_START_CHILD: JSON.stringify({url, groupId, withCheckpoints})},
    encoding: 'utf8',
  })
  if (child.status !== 0) throw new Error(`the cold-start process failed: ${child.stderr}`)
  return JSON.parse(child.stdout.trim().split('\n').pop()!) as ColdStart
}

/** Opens the store, a new Authority, and submits one message.post: time to its receipt, and the largest stall. */
async function coldStart(url: string, groupId: string, withCheckpoints: boolean): Promise<ColdStart> {
  const stalls = monitorEventLoopDelay({resolution: 5})
  stalls.enable()
  const t0 = performance.now()
  const opened = await openStore(url, {admissionKey})
  const store: Store = withCheckpoints
    ? opened
    : new Proxy(opened, {
        get: (target, name, receiver) =>
          name === 'checkpoints'
            ? () => ({newest: async () => [], put: async () => {}})
            : (Reflect.get(target, name, receiver) as unknown),
      })
  const authority = authorityOn(store)
  // The state first (what the Authority needs before it decides), then the Command itself.
  await authority.current(groupId)
  const stateMs = performance.now() - t0
  const stateStallMs = stalls.max / 1e6
  const r = await submit(authority, post(groupId, 'first after restart'))
  const ms = performance.now() - t0
  stalls.disable()
  if ('error' in r) throw new Error(`first Command after restart: ${r.error.code}`)
  await opened.close()
  return {ms, stateMs, stateStallMs, maxStallMs: stalls.max / 1e6}
}

/** The primitives: one raw Ed25519 verify and one six-stage verify of a stored Event, one head read. */
async function primitives(url: string, groupId: string) {
  const store = await openStore(url)
  const [event] = (await store.read(groupId, 1, 1)).events
  const v = verify('event', event!.bytes, registry)
  if (!v.ok) throw new Error('stored Event does not verify')
  const signature = Buffer.from(
    String((v.document as {signature?: {value?: string}}).signature?.value ?? ''),
    'base64url',
  )
  const raw = measure('raw Ed25519 verify', () => strictVerify(authorityKey.publicKey, v.signingBytes, signature), 1)
  const six = measure('six-stage verify of a stored Event', () => verify('event', event!.bytes, registry), 1)
  const t0 = performance.now()
  const heads = 2_000
  for (let i = 0; i < heads; i++) await store.head(groupId)
  const headUs = ((performance.now() - t0) / heads) * 1000
  await store.close()
  return {rawUs: raw.p50us, sixUs: six.p50us, headUs}
}

/** Canonical state size and heap growth for 10,000 more Messages in one Group. */
async function perMessages(url: string): Promise<{before: number; after: number; heapKbPer10k: number | null}> {
  const store = await openStore(url, {admissionKey})
  const authority = authorityOn(store)
  const groupId = `urn:mwp:bench:group:heap-${process.pid}`
  const created = await submit(
    authority,
    buildCommand(owner, {
      kind: 'mission.create',
      groupId,
      payload: missionCreatePayload({groupId, objective: 'Heap', coordinatorAgentId: coordinator.principal!.id}),
    }).bytes,
  )
  if ('error' in created) throw new Error(`mission.create: ${created.error.code}`)
  const gc = (globalThis as {gc?: () => void}).gc
  const before = canonicalBytes(await authority.current(groupId)).length
  gc?.()
  const heap0 = process.memoryUsage().heapUsed
  await appendPosts(authority, groupId, owner.principal!, 10_000, {live: true})
  await authority.checkpointsWritten()
  gc?.()
  const heap1 = process.memoryUsage().heapUsed
  const after = canonicalBytes(await authority.current(groupId)).length
  await store.close()
  return {before, after, heapKbPer10k: gc ? (heap1 - heap0) / 1024 : null}
}

export async function runColdStartBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-cold-start-'))
  try {
    console.log(
      '\nCold start to the first accepted Command (SQLite, one Group; a new process opens the store and an Authority)',
    )
    const rows: {events: number; build: number; cold: ColdStart; full: ColdStart | null}[] = []
    let prim: Awaited<ReturnType<typeof primitives>> | undefined
    for (const events of SIZES) {
      const url = await freshStore(dir, `cold-${events}`)
      const {groupId, seconds} = await build(url, events)
      prim ??= await primitives(url, groupId)
      const cold = restart(url, groupId, true)
      const full = events <= FULL_FOLD_UP_TO ? restart(url, groupId, false) : null
      rows.push({events, build: seconds, cold, full})
      console.log(
        `  ${fmt(events).padStart(8)} Events: state ${cold.stateMs.toFixed(0).padStart(4)} ms (stall ${cold.stateStallMs.toFixed(1)} ms), first Command ${cold.ms.toFixed(0).padStart(4)} ms (stall ${cold.maxStallMs.toFixed(1)} ms)` +
          (full
            ? `   | without checkpoints: state ${full.stateMs.toFixed(0).padStart(5)} ms (stall ${full.stateStallMs.toFixed(1)} ms), first Command ${full.ms.toFixed(0).padStart(5)} ms`
            : '') +
          `   (log built in ${seconds.toFixed(1)} s)`,
      )
    }
    console.log(
      `  primitives: raw Ed25519 verify ${prim!.rawUs.toFixed(1)} µs, six-stage verify of a stored Event ${prim!.sixUs.toFixed(1)} µs, head read ${prim!.headUs.toFixed(1)} µs`,
    )
    const small = rows[0]!
    const large = rows[rows.length - 1]!
    const ratio = large.cold.ms / small.cold.ms
    const stall = Math.max(...rows.map((r) => r.cold.stateStallMs))
    console.log(
      `  goals: ${fmt(large.events)} Events under 1 s → ${large.cold.ms.toFixed(0)} ms: ${large.cold.ms < 1000 ? 'met' : 'NOT met'}; ` +
        `${fmt(large.events)}/${fmt(small.events)} ratio under 3 → ${ratio.toFixed(2)}: ${ratio < 3 ? 'met' : 'NOT met'}; ` +
        `largest stall while the state is restored under 50 ms → ${stall.toFixed(1)} ms: ${stall < 50 ? 'met' : 'NOT met'}`,
    )
    console.log(
      "  (the first Command's own stall is the new process's one-time warm-up — schema validators, key proofs — the same at every size)",
    )

    const heap = await perMessages(await freshStore(dir, 'heap'))
    console.log(
      `  state per 10,000 Messages in one Group: canonical state ${fmt(heap.before)} B before, ${fmt(heap.after)} B after` +
        (heap.heapKbPer10k !== null
          ? `; heap ${fmt(heap.heapKbPer10k)} KB more`
          : ' (run node --expose-gc for the heap figure)') +
        // the rate buckets' counts and the sequence numbers gain digits; nothing is kept per Message
        ` → ${((heap.after - heap.before) / 10_000).toFixed(2)} B per Message: ${heap.after - heap.before < 1024 ? 'flat' : 'NOT flat'}`,
    )
    console.log(
      JSON.stringify({
        bench: 'cold-start',
        results: rows.map((r) => ({
          events: r.events,
          firstCommandMs: r.cold.ms,
          maxStallMs: r.cold.maxStallMs,
          fullFoldMs: r.full?.ms ?? null,
        })),
        primitives: prim,
        stateBytes: {before: heap.before, after10kMessages: heap.after},
      }),
    )
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

// The restarted process of restart().
const childTask = process.env.MWP_COLD_START_CHILD
if (childTask !== undefined) {
  const {url, groupId, withCheckpoints} = JSON.parse(childTask) as {
    url: string
    groupId: string
    withCheckpoints: boolean
  }
  console.log(JSON.stringify(await coldStart(url, groupId, withCheckpoints)))
  process.exit(0)
}
