// At-least-once delivery over real processes (spec §16, §17.2; ACCEPTANCE: "every EVENT delivered
// two to three times and reordered within a window: the projection equals a clean run's; the
// Cursor never passes a withheld sequence and advances once it arrives"). A real `mwp agent run`
// process reaches the real authority process only through a fault-injecting WebSocket proxy
// (src/poc/faults/ws-fault-proxy.ts) that terminates TLS itself: every delivery EVENT frame comes two to
// three times, shuffled within a window of four, some copies late; one chosen Group sequence can
// be withheld and released. The faults are injected from outside: the Agent is an unchanged binary.

import {randomBytes, randomUUID} from 'node:crypto'
import {existsSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import WebSocket from 'ws'
import {AgentStore} from '../../src/agent/local-store.js'
import {signEd25519} from '../../src/crypto/ed25519.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {encodeBase64url} from '../../src/json/base64url.js'
import type {EventDoc} from '../../src/operator/transport.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {type DeliveredEvent, WireClient} from '../../src/wire/client.js'
import {PROTOCOL_VERSION, frame} from '../../src/wire/frames.js'
import {transcriptBytes} from '../../src/wire/hello.js'
import {type AgentOrg, type Proc, agentOrg, cli, until} from '../support/agent-org.js'
import {type WsFaultProxy, wsFaultProxy} from '../../src/poc/faults/ws-fault-proxy.js'

const STEPS = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'steps-handler.mjs')
const SEED = 0x5eed16

let o: AgentOrg
let proxy: WsFaultProxy
let worker: string
let db: string
const agents: Proc[] = []
/** The two Missions of the flow, and every WorkItem offered in them (with its steps label). */
const groups: {groupId: string; missionId: string}[] = []
const items: {groupId: string; workItemId: string; label: string}[] = []

beforeAll(async () => {
  o = await agentOrg('agent-delivery')
  proxy = await wsFaultProxy(o.url, {targetCa: readFileSync(o.ca), tlsDir: join(o.dir, 'proxy-tls'), seed: SEED})
  worker = `${o.org.organization}:agent:worker-1`
  db = join(o.dir, 'worker-1', 'worker-1.db')
}, 120_000)
afterAll(async () => {
  for (const a of agents) if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL')
  await Promise.all(agents.map((a) => a.exited))
  await proxy?.close()
  await o?.close()
})

/** `mwp agent run` as worker-1 through the proxy, trusting the proxy's CA only. */
function agentThroughProxy(): Proc {
  const p = cli(
    [
      'agent',
      'run',
      '--config',
      o.org.config,
      '--agent',
      'worker-1',
      '--url',
      proxy.url,
      '--ca',
      proxy.caFile,
      '--db',
      db,
      '--handler',
      STEPS,
      '--slots',
      '2',
    ],
    o.dir,
  )
  agents.push(p)
  return p
}

const stepLog = () => join(o.dir, 'steps.log')
const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [])
const steps = (n: number, label: string) => Array.from({length: n}, (_, i) => `${label} ${i + 1}`)
const about = (es: EventDoc[], workItemId: string) =>
  es.filter((e) => (e.payload as {workItemId?: string}).workItemId === workItemId)
const passFailures = (stderr: string) => stderr.split('\n').filter((l) => l.includes('"event":"pass-failed"'))
const STEP_COUNT = 3
const stepsContract = (label: string) => ({
  extensions: {
    'urn:mwp:test:steps': {
      version: '1.0.0',
      critical: false,
      data: {steps: STEP_COUNT, stepMs: 30, stepLog: stepLog(), label},
    },
  },
})

/** The highest Cursor the Agent ACKed for the Group through the proxy (on connections from `connection` on). */
const ackedThrough = (groupId: string, connection = 0) =>
  Math.max(0, ...proxy.acks.filter((a) => a.groupId === groupId && a.connection >= connection).map((a) => a.sequence))
const head = async (groupId: string) => (await o.events(groupId)).at(-1)!.sequence

async function offer(g: {groupId: string; missionId: string}, label: string): Promise<string> {
  const workItemId = await o.offerWork(g.groupId, g.missionId, worker, stepsContract(label))
  items.push({groupId: g.groupId, workItemId, label})
  return workItemId
}

async function allSubmitted(agent: Proc, which = items): Promise<void> {
  for (const g of new Set(which.map((i) => i.groupId)))
    await until(
      () => o.events(g),
      (es) =>
        which
          .filter((i) => i.groupId === g)
          .every((i) => about(es, i.workItemId).some((e) => e.kind === 'work.submitted')),
      `every submission in ${g} (agent stderr: ${agent.out().stderr.slice(-3000)})`,
      300,
    )
}

/** Stops the Agent once it has ACKed every Group's head; returns its store's dump and Cursors. */
async function stopCaughtUp(agent: Proc, connection: number): Promise<{dump: string; cursors: Map<string, number>}> {
  for (const g of groups) {
    const h = await head(g.groupId)
    await until(
      async () => ackedThrough(g.groupId, connection),
      (c) => c >= h,
      `the Agent's ACK of ${g.groupId} through ${h} (its ACKs: ${ackedThrough(g.groupId, connection)})`,
      100,
    )
  }
  agent.child.kill('SIGTERM')
  expect(await agent.exited).toBe(0)
  expect(passFailures(agent.out().stderr)).toEqual([])
  const store = AgentStore.open(db, {agentId: worker})
  try {
    const cursors = new Map(store.groups().map((g) => [g.groupId, g.cursor]))
    for (const g of store.groups()) expect(store.buffered(g.groupId)).toEqual([])
    return {dump: store.dumpQueues(), cursors}
  } finally {
    store.close()
  }
}

/** A clean replay of every Group of the Agent over a direct connection, into one fresh store: its dump. */
async function cleanDump(cursors: Map<string, number>, name: string): Promise<string> {
  const path = join(o.dir, `${name}.db`)
  for (const [groupId, cursor] of cursors) (await o.replay('worker-1', groupId, path, cursor)).close()
  const clean = AgentStore.open(path, {agentId: worker})
  try {
    return clean.dumpQueues()
  } finally {
    clean.close()
  }
}

describe('mwp agent run behind a duplicating, reordering WebSocket proxy (§16)', () => {
  it('every EVENT two to three times and reordered: the local store equals a clean replay byte for byte, and no WorkItem started or was submitted twice', async () => {
    const t0 = Date.now()
    const agent = agentThroughProxy()
    for (const objective of ['Deliver twice, apply once (A)', 'Deliver twice, apply once (B)'])
      groups.push(await o.mission(objective))
    for (let i = 1; i <= 3; i++) for (const [n, g] of groups.entries()) await offer(g, `${'AB'[n]}${i}`)
    await allSubmitted(agent)
    const {dump, cursors} = await stopCaughtUp(agent, 1)
    const flowMs = Date.now() - t0

    // (b) Duplicates changed nothing the Agent did: one slot run, one start and one submission
    // per WorkItem, each handler step once.
    const runs = agent
      .out()
      .stderr.split('\n')
      .filter((l) => l.includes('"event":"run-started"'))
    expect(runs).toHaveLength(items.length)
    for (const i of items) {
      const es = about(await o.events(i.groupId), i.workItemId)
      expect(es.filter((e) => e.kind === 'work.offer.accepted')).toHaveLength(1)
      expect(es.filter((e) => e.kind === 'work.started')).toHaveLength(1)
      expect(es.filter((e) => e.kind === 'work.submitted')).toHaveLength(1)
      expect(lines(stepLog()).filter((l) => l.startsWith(`${i.label} `))).toEqual(steps(STEP_COUNT, i.label))
    }

    // (a) The projection equals a clean run's: every Group at its head, byte-identical dump.
    for (const g of groups) expect(cursors.get(g.groupId)).toBe(await head(g.groupId))
    expect([...cursors.keys()].sort()).toEqual(groups.map((g) => g.groupId).sort())
    expect(await cleanDump(cursors, 'clean-1')).toBe(dump)

    // The proxy really injected: duplicates (some after later Events), and overtaken Events.
    const s = proxy.stats
    expect(s.duplicated).toBeGreaterThan(0)
    expect(s.lateDuplicates).toBeGreaterThan(0)
    expect(s.reordered).toBeGreaterThan(0)
    // Every Event reached the Agent's socket two or three times (one connection: no replay).
    expect(s.connections).toBe(1)
    const copies = new Map<string, number>()
    for (const x of proxy.sent)
      copies.set(`${x.groupId} ${x.sequence}`, (copies.get(`${x.groupId} ${x.sequence}`) ?? 0) + 1)
    expect(copies.size).toBe(s.deliveryIn)
    for (const n of copies.values()) expect([2, 3]).toContain(n)
    expect(s.receiptOut).toBeGreaterThanOrEqual(2 * s.receiptIn)
    console.log(JSON.stringify({test: 'duplicates', flowMs, events: [...cursors.values()], ...s}))
  }, 60_000)

  it('one sequence withheld: the Cursor never passes it while later Events of its Group arrive, another Group goes on, and once released the Cursor advances past it', async () => {
    const [a, b] = groups as [{groupId: string; missionId: string}, {groupId: string; missionId: string}]
    // Four Events in A after the Agent's Cursor; the proxy withholds the second.
    const first = (await head(a.groupId)) + 1
    const withheld = first + 1
    const last = first + 3
    proxy.withhold(a.groupId, withheld)
    const from = proxy.stats.connections + 1
    const agent = agentThroughProxy()
    for (let i = 1; i <= 4; i++) await o.command('owner', 'message.post', a.groupId, {text: `note ${i} around a gap`})
    const posted = (await o.events(a.groupId)).filter((e) => e.sequence >= first)
    expect(posted.map((e) => [e.sequence, e.kind])).toEqual([0, 1, 2, 3].map((i) => [first + i, 'message.posted']))
    // Meanwhile B's work goes on: a gap in one Group holds up no other (§17.2 routing by Group).
    const b4 = await offer(b, 'B4')
    await allSubmitted(agent, [items.at(-1)!])
    await until(
      async () => proxy.sent.filter((x) => x.connection >= from && x.groupId === a.groupId && x.sequence > withheld),
      (later) => later.some((x) => x.sequence === last),
      'the Events behind the withheld one reaching the Agent',
    )
    const bHead = await head(b.groupId)
    await until(
      async () => ackedThrough(b.groupId, from),
      (c) => c >= bHead,
      `the Agent's ACK of B through ${bHead}`,
      100,
    )
    await new Promise((r) => setTimeout(r, 500)) // time for a wrong ACK of A to show
    expect(proxy.stats.withheld).toBeGreaterThan(0)
    const releasedAt = Date.now()
    const whileWithheld = proxy.acks.filter((x) => x.connection >= from && x.groupId === a.groupId)
    proxy.release()
    await until(
      async () => ackedThrough(a.groupId, from),
      (c) => c >= last,
      `the Agent's ACK of A through ${last} after the release`,
      100,
    )
    const {dump, cursors} = await stopCaughtUp(agent, from)

    // (c) While withheld, the Agent ACKed A up to the gap and not one sequence further, though A's
    // later Events were at its socket; after the release its Cursor went past it, to A's head.
    expect(whileWithheld.length).toBeGreaterThan(0)
    expect(Math.max(...whileWithheld.map((x) => x.sequence))).toBe(withheld - 1)
    const after = proxy.acks.filter((x) => x.connection >= from && x.groupId === a.groupId && x.at >= releasedAt)
    expect(after.length).toBeGreaterThan(0)
    expect(Math.max(...after.map((x) => x.sequence))).toBe(last)
    expect(cursors.get(a.groupId)).toBe(last)
    expect(cursors.get(b.groupId)).toBe(await head(b.groupId))
    expect(await cleanDump(cursors, 'clean-2')).toBe(dump)
    const es = about(await o.events(b.groupId), b4)
    expect(es.filter((e) => e.kind === 'work.started')).toHaveLength(1)
    expect(es.filter((e) => e.kind === 'work.submitted')).toHaveLength(1)
    expect(lines(stepLog()).filter((l) => l.startsWith('B4 '))).toEqual(steps(STEP_COUNT, 'B4'))
    console.log(
      JSON.stringify({
        test: 'withheld',
        sequence: withheld,
        last,
        whileWithheld: whileWithheld.map((x) => x.sequence),
        ...proxy.stats,
      }),
    )
  }, 60_000)

  it('self-test: the duplicates and the reordering do arrive at the socket — a naive consumer of raw EVENT frames miscounts and its "Cursor" passes the withheld sequence, while a WireClient through the same proxy delivers each Event once, in order', async () => {
    const a = groups[0]!
    const h = await head(a.groupId)
    const withheld = 5
    proxy.withhold(a.groupId, withheld)
    const naive = await rawConsumer(o.key('owner'), a.groupId)
    const delivered: DeliveredEvent[] = []
    const client = await WireClient.connect({
      url: proxy.url,
      key: o.key('owner'),
      registry: RegistryEvidence.fromBytes(readFileSync(o.org.registry)),
      ca: readFileSync(proxy.caFile),
      reconnect: false,
    })
    try {
      await client.subscribe(a.groupId, {afterSequence: 0}, (e) => void delivered.push(e))
      const distinct = () => new Set(naive.events.map((e) => e.sequence)).size
      await until(
        async () => distinct(),
        (n) => n >= h - 1,
        'the naive consumer to see every Event but the withheld one',
      )
      // A consumer that takes the highest sequence it saw as its Cursor has passed the gap; the
      // WireClient stops right before it.
      expect(Math.max(...naive.events.map((e) => e.sequence))).toBe(h)
      expect(naive.events.some((e) => e.sequence === withheld)).toBe(false)
      await client.ping()
      expect(client.cursor(a.groupId)).toBe(withheld - 1)
      expect(delivered.map((e) => e.sequence)).toEqual(range(1, withheld - 1))

      proxy.release()
      await until(
        async () => [distinct(), delivered.length],
        ([n, d]) => n === h && d === h,
        'both consumers to get the released Event',
      )
      await client.ping()
      // Raw: duplicates and overtaken Events; counting kinds from raw frames gets the Group wrong.
      expect(naive.events.length).toBeGreaterThan(h)
      // (the withheld one aside, which came last by construction)
      const firstSeen = [...new Map(naive.events.map((e) => [e.sequence, e])).keys()].filter((n) => n !== withheld)
      expect(firstSeen).not.toEqual(range(1, h).filter((n) => n !== withheld))
      const truth = (await o.events(a.groupId)).filter((e) => e.kind === 'work.submitted').length
      expect(naive.events.filter((e) => e.kind === 'work.submitted').length).toBeGreaterThan(truth)
      // The client: each Event once, in sequence order, the duplicates dropped.
      expect(delivered.map((e) => e.sequence)).toEqual(range(1, h))
      expect(new Set(delivered.map((e) => e.eventId)).size).toBe(h)
      expect(delivered.filter((e) => e.kind === 'work.submitted')).toHaveLength(truth)
      expect(client.duplicatesDropped).toBeGreaterThan(0)
      expect(client.cursor(a.groupId)).toBe(h)
      console.log(
        JSON.stringify({
          test: 'self-test',
          head: h,
          rawFrames: naive.events.length,
          duplicatesDropped: client.duplicatesDropped,
        }),
      )
    } finally {
      await client.close()
      naive.close()
    }
  }, 60_000)
})

const range = (from: number, to: number) => Array.from({length: to - from + 1}, (_, i) => from + i)

/**
 * A deliberately naive consumer: a raw wss socket through the proxy (an honest HELLO as `key`, one
 * SUBSCRIBE from 0) that keeps every EVENT frame it receives, as it arrives — no verification, no
 * deduplication, no ordering.
 */
async function rawConsumer(key: SigningKey, groupId: string) {
  const ws = new WebSocket(proxy.url, {ca: readFileSync(proxy.caFile), minVersion: 'TLSv1.3'})
  const frames: Record<string, unknown>[] = []
  const events: {sequence: number; kind: string; eventId: string}[] = []
  let wake: (() => void) | null = null
  ws.on('message', (data) => {
    const f = JSON.parse(data.toString()) as Record<string, unknown>
    if (f.frameType === 'EVENT') events.push(f.event as {sequence: number; kind: string; eventId: string})
    else frames.push(f)
    wake?.()
  })
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  const nextFrame = async () => {
    while (frames.length === 0) await new Promise<void>((r) => (wake = r))
    return frames.shift()!
  }
  const id = key.principal!.id
  const clientNonce = encodeBase64url(randomBytes(32))
  ws.send(
    frame('HELLO', {
      phase: 'client_init',
      agentId: id,
      keyId: key.keyId,
      clientNonce,
      supportedVersions: [PROTOCOL_VERSION],
    }),
  )
  const challenge = await nextFrame()
  const signature = signEd25519(
    key.seed,
    transcriptBytes({
      principalId: id,
      keyId: key.keyId,
      clientNonce,
      serverNonce: challenge.serverNonce as string,
      challenge: challenge.challenge as string,
      selectedVersion: PROTOCOL_VERSION,
    }),
  )
  ws.send(
    frame('HELLO', {
      phase: 'client_response',
      agentId: id,
      keyId: key.keyId,
      clientNonce,
      serverNonce: challenge.serverNonce as string,
      challengeSignature: encodeBase64url(signature),
    }),
  )
  const accept = await nextFrame()
  if (accept.phase !== 'server_accept') throw new Error(`HELLO refused: ${JSON.stringify(accept)}`)
  ws.send(frame('SUBSCRIBE', {subscriptionId: `urn:uuid:${randomUUID()}`, groups: [{groupId, afterSequence: 0}]}))
  return {events, close: () => ws.terminate()}
}
