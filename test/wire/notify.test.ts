// PostgreSQL LISTEN/NOTIFY fan-out (ARCHITECTURE principle 7, spec §16 live delivery): an append
// committed by one authority process reaches the WebSocket subscribers of another process sharing
// the database without the poll. Two Authorities on two separate store connections (separate
// pools = separate PostgreSQL sessions) to one throwaway database; the server runs on A with a
// poll of an hour, so only a NOTIFY can wake it. The notify is issued inside the appending
// transaction: a rolled-back append notifies nobody, a refused one appends nothing. Every "not
// notified" is fenced by a later notify: PostgreSQL delivers notifies in commit order, so once the
// fence arrived, an earlier one would have too — no sleeps decide anything.

import {createHash, randomUUID} from 'node:crypto'
import postgres from '#postgres' // the patched copy in vendor/postgres (PATCHES.md)
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Authority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import type {Receipt, StoredEvent} from '../../src/store/group-log.js'
import {type Store, openStore} from '../../src/store/index.js'
import type {GroupAppend} from '../../src/store/multi-append.js'
import {APPENDED_CHANNEL, MAX_NOTIFY_PAYLOAD_BYTES} from '../../src/store/pg-notify.js'
import {
  admissionKey,
  authorityOn,
  codeOf,
  command,
  createCommand,
  devStoreAt,
  missionPayload,
  newGroup,
  owner,
  post,
  receiptOf,
  sqliteStore,
  uuid,
} from '../support/authority-helpers.js'
import {treeSteps} from '../support/mission-tree-helpers.js'
import {storeBackends} from '../support/store-backends.js'
import {type Running, collector, connect, serve} from '../support/wire-helpers.js'

const [, pg] = storeBackends('wire notify')
const HOUR = 3_600_000

/** Group IDs a watcher was told about, in arrival order, with a wait for a predicate. */
function notices() {
  const ids: string[] = []
  const waiters: {predicate: () => boolean; resolve: () => void}[] = []
  return {
    ids,
    listener: (groupId: string) => {
      ids.push(groupId)
      for (const w of [...waiters]) {
        if (w.predicate()) {
          waiters.splice(waiters.indexOf(w), 1)
          w.resolve()
        }
      }
    },
    /** Resolves once `groupId` was noticed (bounded by the test timeout). */
    seen: (groupId: string) =>
      new Promise<void>((resolve) => {
        const predicate = () => ids.includes(groupId)
        if (predicate()) resolve()
        else waiters.push({predicate, resolve})
      }),
  }
}

// Raw appends for the store-level tests: the store does not look inside Event bytes.
const ACTOR = 'https://org.example/agents/coordinator'
function event(groupId: string, sequence: number): StoredEvent {
  const eventId = `urn:uuid:${randomUUID()}`
  return {
    eventId,
    kind: 'work.blocked',
    sequence,
    aggregateRevision: sequence,
    bytes: Buffer.from(JSON.stringify({eventId, groupId, sequence}) + '\n'),
  }
}
const part = (groupId: string, head: number): GroupAppend => ({
  groupId,
  expectedHead: head,
  events: [event(groupId, head + 1)],
})
function receiptFor(own: GroupAppend, actionId = `urn:uuid:${randomUUID()}`, content = actionId): Receipt {
  return {
    actorId: ACTOR,
    actionId,
    contentHash: `sha256:${createHash('sha256').update(content).digest('hex')}`,
    groupId: own.groupId,
    firstSequence: own.expectedHead + 1,
    lastSequence: own.expectedHead + own.events.length,
    document: JSON.stringify({actionId, groupId: own.groupId}),
  }
}
const rawGroup = () => `urn:mwp:test:group:notify-${randomUUID()}`

/** Appends one Event to a new Group (or `g`) through `store` and checks it was appended; returns the Group ID. */
async function appendedTo(store: Store, g = rawGroup()): Promise<string> {
  const p = part(g, 0)
  expect((await store.append(g, 0, p.events, receiptFor(p))).status).toBe('appended')
  return g
}

describe.runIf(pg.enabled)('LISTEN/NOTIFY fan-out on PostgreSQL', () => {
  let url: string
  let storeA: Store
  let storeB: Store
  let raw: postgres.Sql
  let running: Running
  let authorityB: Authority

  beforeAll(async () => {
    await pg.start()
    url = await pg.fresh()
    storeA = await devStoreAt(url)
    storeB = await openStore(url, {admissionKey})
    raw = postgres(url, {max: 2, onnotice: () => {}})
    running = await serve(storeA, {pollMs: HOUR})
    authorityB = authorityOn(storeB)
  }, 120_000)
  afterAll(async () => {
    await running?.server.close()
    await storeA?.close()
    await storeB?.close()
    await raw?.end({timeout: 5})
    await pg.stop()
  }, 60_000)

  /**
   * Runs `append` while a raw session holds an uncommitted receipt row for (actorId, actionId),
   * and commits that row once the append waits for it. The append's INSERT INTO receipts comes
   * after its head UPDATE issued the notify; when the row commits, that INSERT fails with a
   * unique violation, the append's transaction rolls back and is decided again against the
   * committed receipt (other content: an Action ID collision).
   */
  async function rolledBackByReceiptRace<T>(
    actorId: string,
    actionId: string,
    groupId: string,
    append: () => Promise<T>,
  ): Promise<T> {
    let pending: Promise<T> | undefined
    await raw.begin(async (tx) => {
      await tx`INSERT INTO receipts (actor_id, action_id, content_hash, group_id, first_sequence, last_sequence, document)
        VALUES (${actorId}, ${actionId}, ${'sha256:' + 'f'.repeat(64)}, ${groupId}, 1, 1, '{}')`
      pending = append()
      await blockedOnReceipt()
    })
    return pending!
  }

  /** Resolves once a session of the database waits for a lock inside its INSERT INTO receipts. */
  async function blockedOnReceipt(): Promise<void> {
    for (;;) {
      const [row] = await raw`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO receipts%'`
      if (row!.n > 0) return
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  it('logs that the server listens for appends', () => {
    expect(running.logs.some((e) => e.event === 'listening-appends')).toBe(true)
    expect(running.logs.some((e) => e.event === 'listen-appends-failed')).toBe(false)
  })

  it("[+cmd:message.post] [+evt:message.posted] a Command accepted by another authority process reaches this server's subscriber through NOTIFY", async () => {
    const g = newGroup('notify')
    expect(codeOf(await submit(authorityB, createCommand(g)))).toBe('ok')
    const client = await connect(running.server.url, owner, {reconnect: false})
    try {
      const got = collector()
      await client.subscribe(g, {afterSequence: 0}, got.onEvent)
      const created = (await storeA.head(g))!.sequence
      await got.until(() => got.events.length === created) // the replay, read from the store
      // Two appends by B, one at a time: each can only arrive through its own NOTIFY.
      for (const text of ['first', 'second']) {
        const r = receiptOf(await submit(authorityB, post(owner, g, {payload: {text}})))
        await got.until(() => got.events.some((e) => e.eventId === r.eventIds[0]))
        const last = got.events.at(-1)!
        expect(last.kind).toBe('message.posted')
        expect(last.sequence).toBe(r.firstSequence)
        expect((last.document.payload as {message: {content: {text: string}[]}}).message.content[0]!.text).toBe(text)
      }
      expect(got.sequences()).toEqual(Array.from({length: created + 2}, (_, i) => i + 1))
    } finally {
      await client.close()
    }
  }, 30_000)

  it('[-cmd:mission.create] [-cmd:message.post] [-evt:message.posted] refused and rolled-back Commands on another process deliver nothing; the next Event is the next accepted one', async () => {
    const g = newGroup('notify-refused')
    expect(codeOf(await submit(authorityB, createCommand(g)))).toBe('ok')
    const client = await connect(running.server.url, owner, {reconnect: false})
    try {
      const got = collector()
      await client.subscribe(g, {afterSequence: 0}, got.onEvent)
      const head = (await storeA.head(g))!.sequence
      await got.until(() => got.events.length === head)

      // Refused before the store: a second mission.create for an existing Group.
      const again = await submit(
        authorityB,
        command(owner, {kind: 'mission.create', groupId: g, payload: missionPayload(g)}),
      )
      expect(codeOf(again)).toBe('INVALID_STATE_TRANSITION')
      // Rolled back in the store after its head UPDATE issued the notify: another session holds
      // the receipt key; the append retries and is refused as an Action ID collision.
      const actionId = uuid(9)
      const collided = await rolledBackByReceiptRace(owner.principal!.id, actionId, g, () =>
        submit(authorityB, post(owner, g, {actionId})),
      )
      expect(codeOf(collided)).toBe('ACTION_ID_COLLISION')
      expect((await storeA.head(g))!.sequence).toBe(head)

      // The fence: the next accepted Command is the next Event delivered, at head + 1.
      const r = receiptOf(await submit(authorityB, post(owner, g)))
      await got.until(() => got.events.some((e) => e.eventId === r.eventIds[0]))
      expect(got.sequences()).toEqual(Array.from({length: head + 1}, (_, i) => i + 1))
      expect(got.events.at(-1)!.eventId).toBe(r.eventIds[0])
    } finally {
      await client.close()
    }
  }, 30_000)

  it("[+cmd:mission.create_child] [+evt:mission.child.created] a multi-Group append on another process (a child Mission) reaches the parent Group's subscriber", async () => {
    const tree = treeSteps(() => ({authority: authorityB, store: storeB}))
    const g = await tree.rootGroup()
    const w = await tree.workItem(g, 'open')
    const client = await connect(running.server.url, owner, {reconnect: false})
    try {
      const got = collector()
      await client.subscribe(g, {afterSequence: 0}, got.onEvent)
      const head = (await storeA.head(g))!.sequence
      await got.until(() => got.events.length === head)
      const cg = newGroup('notify-child')
      const r = receiptOf(await submit(authorityB, tree.createChild(g, w, cg)))
      await got.until(() => got.events.some((e) => e.eventId === r.eventIds[0]))
      const last = got.events.at(-1)!
      expect(last.kind).toBe('mission.child.created')
      expect(last.document.payload).toMatchObject({workItemId: w, child: {groupId: cg}})
      expect((await storeA.head(cg))!.sequence).toBe(2) // the child Group, in the same append
    } finally {
      await client.close()
    }
  }, 30_000)

  it('watchAppends notifies every Group of a committed multi-Group append, and stops when unsubscribed', async () => {
    const first = notices()
    const second = notices()
    const stopFirst = await storeA.watchAppends!(first.listener)
    const stopSecond = await storeA.watchAppends!(second.listener)
    try {
      const [x, y] = [rawGroup(), rawGroup()]
      const px = part(x, 0)
      expect((await storeB.appendGroups([px, part(y, 0)], receiptFor(px))).status).toBe('appended')
      await Promise.all([first.seen(x), first.seen(y), second.seen(x), second.seen(y)])
      expect(first.ids.filter((g) => g === x || g === y).sort()).toEqual([x, y].sort())

      await stopFirst()
      const z = await appendedTo(storeB)
      // Both listeners hang off the store's one LISTEN connection and get each notify together.
      await second.seen(z)
      expect(first.ids).not.toContain(z)
    } finally {
      await stopFirst()
      await stopSecond()
    }
  }, 30_000)

  it('a rolled-back append notifies nobody, on the single-Group and the multi-Group path; a refused one neither', async () => {
    const seen = notices()
    const stop = await storeA.watchAppends!(seen.listener)
    try {
      // Single-Group (batched) path: blocks on the receipt key after its head UPDATE, rolls back.
      const g = rawGroup()
      const pg1 = part(g, 0)
      const r1 = receiptFor(pg1)
      const single = await rolledBackByReceiptRace(r1.actorId, r1.actionId, g, () =>
        storeB.append(g, 0, pg1.events, r1),
      )
      expect(single.status).toBe('action-id-collision')
      expect(await storeA.head(g)).toBeNull()

      // Multi-Group path: same, across two Groups.
      const [x, y] = [rawGroup(), rawGroup()]
      const px = part(x, 0)
      const rx = receiptFor(px)
      const multi = await rolledBackByReceiptRace(rx.actorId, rx.actionId, x, () =>
        storeB.appendGroups([px, part(y, 0)], rx),
      )
      expect(multi.status).toBe('action-id-collision')
      expect(await storeA.head(x)).toBeNull()
      expect(await storeA.head(y)).toBeNull()

      // Refused without a write: a moved head.
      const h = await appendedTo(storeB)
      const stale = part(h, 0)
      expect((await storeB.append(h, 0, stale.events, receiptFor(stale))).status).toBe('head-moved')

      // The fence: notifies arrive in commit order, so everything committed before it arrived.
      const fence = await appendedTo(storeB)
      await seen.seen(fence)
      expect(seen.ids.filter((id) => [g, x, y, h, fence].includes(id))).toEqual([h, fence])
    } finally {
      await stop()
    }
  }, 30_000)

  it('a Group ID too long for a notify payload is appended without one; its subscribers rely on the poll', async () => {
    const seen = notices()
    const stop = await storeA.watchAppends!(seen.listener)
    try {
      // Compressible, so the group_id index accepts it.
      const long = await appendedTo(storeB, `urn:mwp:test:group:${'x'.repeat(MAX_NOTIFY_PAYLOAD_BYTES)}`)
      expect((await storeA.head(long))!.sequence).toBe(1)
      const fence = await appendedTo(storeB)
      await seen.seen(fence)
      expect(seen.ids).not.toContain(long)
    } finally {
      await stop()
    }
  }, 30_000)

  /** Ends every LISTEN session of the database (as a failover or network loss would). */
  async function dropListenConnections(): Promise<void> {
    const ended = await raw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'listen %'`
    expect(ended.length).toBeGreaterThan(0)
  }

  it('after its connection is lost, the watch re-listens, asks for a resync, keeps notifying, and still stops', async () => {
    const seen = notices()
    const fence = notices()
    let resyncs = 0
    let resynced!: () => void
    const resync = new Promise<void>((resolve) => (resynced = resolve))
    const stop = await storeA.watchAppends!(seen.listener, () => {
      resyncs++
      resynced()
    })
    const stopFence = await storeA.watchAppends!(fence.listener)
    try {
      expect(resyncs).toBe(0) // the first LISTEN is not a resync
      await dropListenConnections()
      await resync
      const g = await appendedTo(storeB)
      await seen.seen(g)

      // The library re-registers listeners on reconnect; stopping must still silence this one.
      await stop()
      const after = await appendedTo(storeB)
      await fence.seen(after)
      expect(seen.ids).not.toContain(after)
    } finally {
      await stop()
      await stopFence()
    }
  }, 30_000)

  it("a subscriber misses nothing while the server's LISTEN connection is re-established", async () => {
    const g = newGroup('notify-resync')
    expect(codeOf(await submit(authorityB, createCommand(g)))).toBe('ok')
    const client = await connect(running.server.url, owner, {reconnect: false})
    try {
      const got = collector()
      await client.subscribe(g, {afterSequence: 0}, got.onEvent)
      const head = (await storeA.head(g))!.sequence
      await got.until(() => got.events.length === head)
      const resyncsBefore = running.logs.filter((e) => e.event === 'appends-resync').length
      await dropListenConnections()
      // Committed before or after the re-LISTEN: its notify, or the resync's re-read, delivers it.
      const r = receiptOf(await submit(authorityB, post(owner, g)))
      await got.until(() => got.events.some((e) => e.eventId === r.eventIds[0]))
      expect(got.sequences()).toEqual(Array.from({length: head + 1}, (_, i) => i + 1))
      // And the server did notice the lost connection.
      await new Promise<void>((resolve) => {
        const check = () =>
          running.logs.filter((e) => e.event === 'appends-resync').length > resyncsBefore
            ? resolve()
            : setTimeout(check, 20)
        check()
      })
    } finally {
      await client.close()
    }
  }, 30_000)

  it('the channel carries exactly the Group ID as payload', async () => {
    const payloads: string[] = []
    const got = notices()
    const listening = await raw.listen(APPENDED_CHANNEL, (p) => {
      payloads.push(p)
      got.listener(p)
    })
    try {
      const g = await appendedTo(storeB)
      await got.seen(g)
      expect(payloads).toContain(g)
    } finally {
      await listening.unlisten()
    }
  }, 30_000)
})

describe('a store that cannot push (SQLite)', () => {
  it('has no watchAppends, and the server keeps polling without claiming to listen', async () => {
    const {store, cleanup} = await sqliteStore()
    try {
      expect(store.watchAppends).toBeUndefined()
      const running = await serve(store)
      await running.server.close()
      expect(running.logs.some((e) => e.event === 'listening-appends')).toBe(false)
    } finally {
      await cleanup()
    }
  })
})
