// How an Agent learns its Groups (src/wire/directory.ts, WireClient.watchGroups): a SUBSCRIBE
// naming one's own principal ID announces each Group where one holds a live Membership as a
// server ACK {groupId, visibilityStart - 1}. Real TLS 1.3 on 127.0.0.1, a SQLite store, Commands
// signed and submitted through the full ingress: a connected Worker hears of its just-in-time
// offer live and receives the offer's Event from there; an offline Worker hears of it at its next
// connection; another Agent hears nothing of it; a directory naming someone else is
// GROUP_NOT_FOUND; an ended Membership is not announced; a change written by another Authority
// over the same store (as another process would) arrives at the liveness tick.

import {randomUUID} from 'node:crypto'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {submit} from '../../src/authority/ingress/command.js'
import {openSession} from '../../src/authority/ingress/sessions.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {type Store, openStore} from '../../src/store/index.js'
import type {GroupAnnouncement, WireClient} from '../../src/wire/client.js'
import {
  admissionKey,
  authorityOn,
  codeOf,
  command,
  contract,
  coord,
  coordinator,
  developer,
  devStoreAt,
  groupCommand,
  missionPayload,
  owner,
  receiptOf,
  reviewer,
  sqliteStore,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {storeBackends} from '../support/store-backends.js'
import {type Running, collector, connect, frameId, next, rawSession, serve} from '../support/wire-helpers.js'

const [, pg] = storeBackends('wire directory')

let store: Store
let cleanup: () => Promise<void>
let running: Running
/** The Coordinator's Session Epoch: the server's Authority requires Agent sessions. */
let session: {sessionEpoch: number}
const clients: WireClient[] = []

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  // No liveness tick within a test (10 min): here an announcement arrives only when pushed.
  running = await serve(store, {pingIntervalMs: 600_000})
  session = {sessionEpoch: await openSession(running.authority, coordinator.principal!.id)}
}, 60_000)
afterAll(async () => {
  for (const c of clients) await c.close()
  await running?.server.close()
  await cleanup?.()
})

const run = (bytes: Buffer) => submit(running.authority, bytes)
const head = async (g: string) => (await store.head(g))!.sequence

/** A new Group (MissionOwner and Coordinator only) with one open WorkItem. */
async function openItem(tag: string): Promise<{g: string; w: string}> {
  const g = await missionGroup(run, tag, {members: []})
  const w = `urn:uuid:${randomUUID()}`
  receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()}, 1, coordinator, session)))
  return {g, w}
}

/** The Coordinator's just-in-time offer of `w` to `worker`; returns the offer Event's sequence. */
async function offer(g: string, w: string, worker: SigningKey, submitTo = run): Promise<number> {
  const sequence = (await head(g)) + 1
  const payload = {
    workItemId: w,
    candidates: [worker.principal!.id],
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
    contextPackageId: 'urn:mwp:test:context-package:directory',
  }
  receiptOf(await submitTo(coord('work.offer', g, payload, 1, coordinator, session)))
  return sequence
}

/** A connected client watching its Groups; `settled()` resolves once everything the server has announced so far arrived. */
async function watching(key: SigningKey, on: Running = running) {
  const c = await connect(on.server.url, key, {reconnect: false})
  clients.push(c)
  const announced: GroupAnnouncement[] = []
  const waiters: {groupId: string; resolve: (a: GroupAnnouncement) => void}[] = []
  await c.watchGroups((a) => {
    announced.push(a)
    for (const w of waiters.filter((x) => x.groupId === a.groupId)) {
      waiters.splice(waiters.indexOf(w), 1)
      w.resolve(a)
    }
  })
  // The server handles a connection's frames in order: the PING is answered after the
  // directory's first pass was sent.
  await c.ping()
  return {
    client: c,
    announced,
    groups: () => announced.map((a) => a.groupId),
    /** The next announcement of `groupId` (one already received counts). */
    of: (groupId: string) =>
      new Promise<GroupAnnouncement>((resolve) => {
        const seen = announced.find((a) => a.groupId === groupId)
        if (seen) resolve(seen)
        else waiters.push({groupId, resolve})
      }),
  }
}

describe('the directory subscription (watchGroups)', () => {
  it('announces a just-in-time offer live to the connected Worker, which subscribes from there and receives the offer; another Agent hears nothing of it', async () => {
    const worker = await watching(developer)
    // reviewer's own Group, as a positive control for "nothing about developer's Group"
    const own = await missionGroup(run, 'directory-reviewer', {members: [reviewer]})
    const other = await watching(reviewer)
    expect(other.groups()).toContain(own)

    const {g, w} = await openItem('directory-live')
    expect(worker.groups()).not.toContain(g)
    const sequence = await offer(g, w, developer)
    const announced = await worker.of(g)
    expect(announced).toEqual({groupId: g, afterSequence: sequence - 1})

    const got = collector()
    await worker.client.subscribe(g, {afterSequence: announced.afterSequence}, got.onEvent)
    await got.until(() => got.events.length > 0)
    expect(got.events[0]).toMatchObject({groupId: g, sequence, kind: 'work.offer.created'})

    // reviewer, asking again, is told of its own Groups and not of developer's
    await other.client.watchGroups(() => undefined)
    await other.client.ping()
    expect(other.groups()).not.toContain(g)
    expect(worker.groups().filter((x) => x === g)).toHaveLength(1)
  })

  it('an offline Worker hears of its offer at its next connection, and receives it from there', async () => {
    const {g, w} = await openItem('directory-offline')
    const sequence = await offer(g, w, reviewer) // reviewer has no connection watching now
    const worker = await watching(reviewer)
    expect(worker.announced).toContainEqual({groupId: g, afterSequence: sequence - 1})
    const got = collector()
    await worker.client.subscribe(g, {afterSequence: sequence - 1}, got.onEvent)
    await got.until(() => got.events.length > 0)
    expect(got.events[0]).toMatchObject({sequence, kind: 'work.offer.created'})
  })

  it('a directory naming another principal is GROUP_NOT_FOUND, like any Group one may not read; no Group can be opened under a principal ID', async () => {
    const raw = await rawSession(running.server.url, developer)
    const id = frameId()
    raw.send({
      protocolVersion: '0.1',
      frameId: id,
      frameType: 'SUBSCRIBE',
      subscriptionId: frameId(),
      groups: [{groupId: reviewer.principal!.id, afterSequence: 0}],
    })
    expect((await raw.next()).error).toMatchObject({
      code: 'GROUP_NOT_FOUND',
      groupId: reviewer.principal!.id,
      relatedFrameId: id,
    })
    raw.ws.close()
    const g = reviewer.principal!.id
    expect(codeOf(await run(command(owner, {kind: 'mission.create', groupId: g, payload: missionPayload(g)})))).toBe(
      'INVALID_COMMAND',
    )
  })

  it('an ended Membership is not announced to a new connection', async () => {
    const {g, w} = await openItem('directory-ended')
    const sequence = await offer(g, w, developer)
    const first = await watching(developer)
    expect(first.announced).toContainEqual({groupId: g, afterSequence: sequence - 1})
    // The Worker accepts over its own session, then the MissionOwner ends its Membership.
    const offerId = (await running.authority.current(g))!.workItems[w]!.offer!.offerId
    const accept = groupCommand(
      developer,
      'work.accept_offer',
      g,
      {workItemId: w, offerId},
      {sessionEpoch: first.client.sessionEpoch},
    )
    expect('receipt' in (await first.client.submit(accept))).toBe(true)
    receiptOf(await run(groupCommand(owner, 'membership.end', g, {member: developer.principal, reason: 'Done.'})))
    // Live: the activation is announced again, the end is not (the refresh after each append
    // reads the store before this PING is answered).
    await first.client.ping()
    expect(first.announced.filter((a) => a.groupId === g)).toEqual([
      {groupId: g, afterSequence: sequence - 1},
      {groupId: g, afterSequence: sequence - 1},
    ])
    await first.client.close()

    const next = await watching(developer)
    expect(next.groups()).not.toContain(g)
    expect(next.announced.length).toBeGreaterThan(0) // developer's other Groups are still announced
  })

  it('a Membership written by another Authority over the same store (no in-process notice) arrives at the liveness tick', async () => {
    // A second server over the store with a short tick (a client answers every PING).
    const ticking = await serve(store, {pingIntervalMs: 200})
    const worker = await watching(reviewer, ticking)
    const {g, w} = await openItem('directory-tick')
    const elsewhere = authorityOn(store) // shares the store, not this server's Authority
    const sequence = await offer(g, w, reviewer, (bytes) => submit(elsewhere, bytes))
    expect(await worker.of(g)).toEqual({groupId: g, afterSequence: sequence - 1})
    await worker.client.close()
    await ticking.server.close()
  })

  it('is asked for again after a reconnect: an offer made while the server was down is announced then', async () => {
    const reconnects: boolean[] = []
    const c = await connect(running.server.url, reviewer, {
      reconnect: {initialDelayMs: 20, maxDelayMs: 200},
      onSession: (s) => reconnects.push(s.reconnect),
    })
    clients.push(c)
    const announced: GroupAnnouncement[] = []
    await c.watchGroups((a) => announced.push(a))
    await c.ping()
    const {g, w} = await openItem('directory-reconnect')
    const port = running.server.port
    await running.server.close()
    // Down: the offer goes through an Authority on the store, which the client cannot hear of.
    const sequence = await offer(g, w, reviewer, (bytes) => submit(authorityOn(store), bytes))
    expect(announced.map((a) => a.groupId)).not.toContain(g)
    const back = next<void>((resolve) => {
      const timer = setInterval(() => {
        if (reconnects.includes(true)) {
          clearInterval(timer)
          resolve()
        }
      }, 10)
    })
    running = await serve(store, {pingIntervalMs: 600_000, port})
    await back
    await c.ping() // the re-sent directory SUBSCRIBE went first; its first pass is answered before this
    expect(announced).toContainEqual({groupId: g, afterSequence: sequence - 1})
  })
})

describe.runIf(pg.enabled)('the directory subscription across processes on PostgreSQL', () => {
  let storeA: Store
  let storeB: Store
  let server: Running
  beforeAll(async () => {
    await pg.start()
    const url = await pg.fresh()
    storeA = await devStoreAt(url)
    storeB = await openStore(url, {admissionKey}) // another pool: what another process would hold
    server = await serve(storeA, {pingIntervalMs: 600_000}) // no tick: only the membership notice
  }, 120_000)
  afterAll(async () => {
    await server?.server.close()
    await storeA?.close()
    await storeB?.close()
    await pg.stop()
  })

  it("an offer another process appends reaches the Worker watching on this server (the store's membership notice)", async () => {
    const c = await connect(server.server.url, developer, {reconnect: false})
    const announced: GroupAnnouncement[] = []
    const heard = new Promise<GroupAnnouncement>((resolve) =>
      c.watchGroups((a) => {
        announced.push(a)
        resolve(a)
      }),
    )
    await c.ping()
    expect(announced).toEqual([])
    // The other process: its own Authority over its own connection pool.
    const other = authorityOn(storeB)
    const runB = (bytes: Buffer) => submit(other, bytes)
    const coordinatorSession = {sessionEpoch: await openSession(other, coordinator.principal!.id)}
    const g = await missionGroup(runB, 'directory-pg', {members: []})
    const w = `urn:uuid:${randomUUID()}`
    receiptOf(
      await runB(coord('work.authorize', g, {workItemId: w, contract: contract()}, 1, coordinator, coordinatorSession)),
    )
    const sequence = (await storeB.head(g))!.sequence + 1
    const payload = {
      workItemId: w,
      candidates: [developer.principal!.id],
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
      contextPackageId: 'urn:mwp:test:context-package:directory-pg',
    }
    receiptOf(await runB(coord('work.offer', g, payload, 1, coordinator, coordinatorSession)))
    expect(await heard).toEqual({groupId: g, afterSequence: sequence - 1})
    await c.close()
  })
})
