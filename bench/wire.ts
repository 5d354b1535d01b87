// The WebSocket binding on loopback (TLS 1.3, SQLite store): delivered Events per second and
// Command→Event latency, for 1 Group × 100 subscribers and 100 Groups × 1 subscriber.
//
// Per scenario:
//   live   — message.post Commands at a fixed rate (MWP_BENCH_WIRE_RATE, default 500/s) for
//            MWP_BENCH_WIRE_SECONDS (default 3) through a WireClient connection; every subscriber
//            receives every Event of its Group. Latency: from sending the COMMAND frame to the
//            Event's arrival at a subscriber (sampled on one subscriber per Group).
//   replay — every subscriber resubscribes from sequence 0: the server's top delivery rate.
// Subscribers are raw authenticated sockets that count EVENT frames and ACK every 256 Events
// (the server's per-Group window stays open); they do not verify signatures, so the figure is
// the gateway's, not the client library's (WireClient verifies every Event).
// Targets: ≥ 50,000 Events/s delivered; p99 < 25 ms at 500 Commands/s.

import {randomBytes, randomUUID} from 'node:crypto'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import WebSocket from 'ws'
import {openAuthority} from '../src/authority/authority.js'
import {submit} from '../src/authority/ingress.js'
import {signEd25519} from '../src/crypto/ed25519.js'
import {readKeyFile, type SigningKey} from '../src/crypto/keyfile.js'
import {encodeBase64url} from '../src/json/base64url.js'
import {packageRoot} from '../src/schema/catalog.js'
import {sign} from '../src/signing/sign.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {DEFAULT_FRESHNESS, initStore, openStore} from '../src/store/index.js'
import {WireClient} from '../src/wire/client.js'
import {generateDevTls} from '../src/wire/dev-tls.js'
import {transcriptBytes} from '../src/wire/hello.js'
import {startServer} from '../src/wire/server.js'
import {fmt, percentile} from './measure.js'

const root = packageRoot()
const key = (name: string): SigningKey => readKeyFile(join(root, 'fixtures/keys', `${name}.key.json`))
const owner = key('mission-owner')
const coordinator = key('coordinator')
const registry = RegistryEvidence.fromBytes(readFileSync(join(root, 'fixtures/registry.json')))

const RATE = Number(process.env.MWP_BENCH_WIRE_RATE ?? 500)
const SECONDS = Number(process.env.MWP_BENCH_WIRE_SECONDS ?? 3)

const fid = () => `urn:uuid:${randomUUID()}`
const signed = (signer: SigningKey, fields: Record<string, unknown>) =>
  Buffer.from(
    JSON.stringify(sign('command', {protocolVersion: '0.1', actionId: fid(), actor: signer.principal, correlationId: fid(), issuedAt: new Date().toISOString(), payload: {}, ...fields}, signer).document),
  )

const createFor = (g: string) =>
  signed(owner, {
    kind: 'mission.create',
    groupId: g,
    payload: {
      missionId: g.replace(':group:', ':mission:'),
      groupId: g,
      objective: 'Bench the wire',
      definitionOfDone: [{criterionId: 'done', description: 'Delivered', evidenceRequired: ['human_review']}],
      deadline: '2030-01-01T00:00:00Z',
      budget: {currency: 'EUR', financialLimit: 1},
      approvalPolicy: {finalHumanApproval: true, highRiskExecutionApproval: true},
      coordinatorAgentId: coordinator.principal!.id,
    },
  })
const postTo = (g: string) => signed(owner, {kind: 'message.post', groupId: g, membershipEpoch: 1, payload: {text: 'bench'}})

/** A raw authenticated subscriber socket: counts EVENT frames, ACKs every 256, reports arrivals. */
async function subscriber(url: string, ca: string, onArrival: (groupId: string, text: string) => void) {
  const ws = new WebSocket(url, {ca, minVersion: 'TLSv1.3', perMessageDeflate: false})
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  const queue: string[] = []
  let wake: (() => void) | null = null
  ws.on('message', (d) => {
    queue.push(d.toString())
    wake?.()
  })
  const next = async () => {
    while (queue.length === 0) await new Promise<void>((r) => (wake = r))
    return JSON.parse(queue.shift()!) as Record<string, string>
  }
  const clientNonce = encodeBase64url(randomBytes(32))
  const id = owner.principal!.id
  ws.send(JSON.stringify({protocolVersion: '0.1', frameId: fid(), frameType: 'HELLO', phase: 'client_init', agentId: id, keyId: owner.keyId, clientNonce, supportedVersions: ['0.1']}))
  const ch = await next()
  const sig = signEd25519(owner.seed, transcriptBytes({principalId: id, keyId: owner.keyId, clientNonce, serverNonce: ch.serverNonce!, challenge: ch.challenge!, selectedVersion: '0.1'}))
  ws.send(JSON.stringify({protocolVersion: '0.1', frameId: fid(), frameType: 'HELLO', phase: 'client_response', agentId: id, keyId: owner.keyId, clientNonce, serverNonce: ch.serverNonce, challengeSignature: encodeBase64url(sig)}))
  if ((await next()).phase !== 'server_accept') throw new Error('bench subscriber HELLO failed')
  ws.removeAllListeners('message')
  let received = 0
  const unacked = new Map<string, number>()
  ws.on('message', (d) => {
    const text = d.toString()
    if (!text.includes('"frameType":"EVENT"')) return
    received++
    const groupId = /"groupId":"([^"]+)"/.exec(text)![1]!
    const sequence = Number(/"sequence":(\d+)/.exec(text)![1])
    onArrival(groupId, text)
    const n = (unacked.get(groupId) ?? 0) + 1
    if (n >= 256) {
      ws.send(JSON.stringify({protocolVersion: '0.1', frameId: fid(), frameType: 'ACK', acknowledgements: [{groupId, sequence}], sentAt: new Date().toISOString()}))
      unacked.set(groupId, 0)
    } else unacked.set(groupId, n)
  })
  return {
    subscribe: (groups: string[], after = 0) =>
      ws.send(JSON.stringify({protocolVersion: '0.1', frameId: fid(), frameType: 'SUBSCRIBE', subscriptionId: fid(), groups: groups.map((groupId) => ({groupId, afterSequence: after}))})),
    received: () => received,
    close: () => ws.close(),
  }
}

interface WireFigure {
  scenario: string
  commands: number
  commandRate: number
  liveDeliveredPerSec: number
  p50ms: number
  p99ms: number
  replayDeliveredPerSec: number
}

async function scenario(name: string, groupCount: number, subscribersPerGroup: number): Promise<WireFigure> {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-bench-wire-'))
  const url = `sqlite:${join(dir, 'authority.db')}`
  const admissionKey = key('admission')
  await initStore(url, {organizationId: 'urn:mwp:dev:org:example', admissionService: {principal: admissionKey.principal!, keyId: admissionKey.keyId, publicKey: admissionKey.publicKeyB64}, freshness: DEFAULT_FRESHNESS})
  const store = await openStore(url, {admissionKey})
  const authority = openAuthority({store, registry, authorityKey: key('group-authority'), policy: {rootMissionOwners: [owner.principal!.id]}})
  const tls = generateDevTls()
  const server = await startServer({authority, host: '127.0.0.1', port: 0, tls: {cert: tls.cert, key: tls.key}, log: () => undefined, sendWindow: 4096, pollMs: 1000})
  try {
    const groups = Array.from({length: groupCount}, (_, i) => `urn:mwp:bench:group:wire-${i}-${process.pid}`)
    for (const g of groups) if ('error' in (await submit(authority, createFor(g)))) throw new Error('bench create failed')
    const heads = new Map<string, number>()
    for (const g of groups) heads.set(g, (await store.head(g))!.sequence)

    const sentAt = new Map<string, bigint>()
    const latencies: number[] = []
    const subscribers = []
    for (let s = 0; s < subscribersPerGroup * groupCount; s++) {
      const sampler = s < groupCount // the first subscriber of each Group samples latency
      subscribers.push(
        await subscriber(server.url, tls.ca, (_g, text) => {
          if (!sampler) return
          const cause = /"cause":\{"type":"command","id":"([^"]+)"/.exec(text)?.[1]
          const t0 = cause ? sentAt.get(cause) : undefined
          if (t0 !== undefined) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6)
        }),
      )
    }
    subscribers.forEach((sub, s) => sub.subscribe([groups[s % groupCount]!], heads.get(groups[s % groupCount]!)))

    // Live phase: Commands at RATE/s through one client connection.
    const total = Math.round(RATE * SECONDS)
    const commands = Array.from({length: total}, (_, i) => postTo(groups[i % groupCount]!))
    const client = await WireClient.connect({url: server.url, key: owner, registry, ca: tls.ca, reconnect: false})
    const expected = total * subscribersPerGroup
    const start = process.hrtime.bigint()
    let sent = 0
    const pending: Promise<unknown>[] = []
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        const due = Math.min(total, Math.floor((Number(process.hrtime.bigint() - start) / 1e9) * RATE))
        while (sent < due) {
          const bytes = commands[sent++]!
          sentAt.set(JSON.parse(bytes.toString()).actionId as string, process.hrtime.bigint())
          pending.push(client.submit(bytes))
        }
        if (sent >= total) {
          clearInterval(tick)
          resolve()
        }
      }, 2)
    })
    const delivered = () => subscribers.reduce((n, s) => n + s.received(), 0)
    while (delivered() < expected) await new Promise((r) => setTimeout(r, 5))
    const liveSeconds = Number(process.hrtime.bigint() - start) / 1e9
    await Promise.all(pending)
    await client.close()

    // Replay phase: everyone from 0.
    const before = delivered()
    let replayExpected = 0
    for (const [i, sub] of subscribers.entries()) {
      const g = groups[i % groupCount]!
      replayExpected += (await store.head(g))!.sequence
      sub.subscribe([g], 0)
    }
    const replayStart = process.hrtime.bigint()
    while (delivered() - before < replayExpected) await new Promise((r) => setTimeout(r, 2))
    const replaySeconds = Number(process.hrtime.bigint() - replayStart) / 1e9
    subscribers.forEach((s) => s.close())

    latencies.sort((a, b) => a - b)
    return {
      scenario: name,
      commands: total,
      commandRate: total / liveSeconds,
      liveDeliveredPerSec: expected / liveSeconds,
      p50ms: percentile(latencies, 0.5),
      p99ms: percentile(latencies, 0.99),
      replayDeliveredPerSec: replayExpected / replaySeconds,
    }
  } finally {
    await server.close()
    await store.close()
    rmSync(dir, {recursive: true, force: true})
  }
}

export async function runWireBench(): Promise<WireFigure[]> {
  console.log(`\nmwp bench wire: TLS 1.3 loopback, SQLite, ${RATE} Commands/s for ${SECONDS}s per scenario`)
  const figures = [await scenario('1 Group x 100 subscribers', 1, 100), await scenario('100 Groups x 1 subscriber', 100, 1)]
  for (const f of figures) {
    console.log(
      `${f.scenario.padEnd(28)} live ${fmt(f.liveDeliveredPerSec).padStart(8)} Events/s delivered (${fmt(f.commandRate)} Commands/s)   p50 ${f.p50ms.toFixed(1)} ms   p99 ${f.p99ms.toFixed(1)} ms   replay ${fmt(f.replayDeliveredPerSec).padStart(8)} Events/s`,
    )
  }
  const best = Math.max(...figures.map((f) => f.replayDeliveredPerSec), ...figures.map((f) => f.liveDeliveredPerSec))
  const worstP99 = Math.max(...figures.map((f) => f.p99ms))
  console.log(`target: ≥ 50,000 Events/s delivered → ${fmt(best)}/s: ${best >= 50_000 ? 'met' : 'NOT met'}; p99 < 25 ms at ${RATE} Commands/s → ${worstP99.toFixed(1)} ms: ${worstP99 < 25 ? 'met' : 'NOT met'}`)
  console.log(JSON.stringify({bench: 'wire', results: figures}))
  return figures
}
