// Group commit for the SQLite store (src/store/group-commit.ts): the write steps of one
// event-loop turn share one transaction and one COMMIT; no step settles before that COMMIT; a
// failing step undoes only its own writes; a batch that cannot start or commit fails every step.

import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import Database from 'better-sqlite3'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {GroupCommitFailure, SqliteGroupCommit} from '../../src/store/group-commit.js'
import {DEFAULT_FRESHNESS, initStore, openStore, type Store} from '../../src/store/index.js'
import {type Backend, storeBackends} from '../support/store-backends.js'

const dir = mkdtempSync(join(tmpdir(), 'mwp-group-commit-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
let n = 0

function database() {
  const path = join(dir, `db-${++n}.sqlite`)
  const db = new Database(path, {timeout: 200})
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)')
  // A second connection sees only committed data: it proves what is durable when a step settles.
  const observer = new Database(path, {readonly: true})
  const committed = () => (observer.prepare('SELECT k FROM t ORDER BY k').all() as {k: string}[]).map((r) => r.k)
  return {db, committed, close: () => (observer.close(), db.close())}
}

describe('SqliteGroupCommit', () => {
  it('steps of one turn commit together, and each settles only after the COMMIT', async () => {
    const {db, committed, close} = database()
    const commits = new SqliteGroupCommit(db)
    const insert = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)')
    const settledWith: string[][] = []
    const steps = ['a', 'b', 'c', 'd'].map((k, i) =>
      commits
        .run(() => {
          insert.run(k, i)
          // Inside the shared transaction nothing of this batch is visible to another connection.
          expect(committed()).toEqual([])
          return k
        })
        .then((v) => {
          settledWith.push(committed())
          return v
        }),
    )
    expect(await Promise.all(steps)).toEqual(['a', 'b', 'c', 'd'])
    // Every step saw all four rows committed when it settled: one transaction, committed first.
    for (const seen of settledWith) expect(seen).toEqual(['a', 'b', 'c', 'd'])
    close()
  })

  it('a throwing step undoes only its own writes; the others commit', async () => {
    const {db, committed, close} = database()
    const commits = new SqliteGroupCommit(db)
    const insert = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)')
    const ok1 = commits.run(() => insert.run('x', 1).changes)
    const bad = commits.run(() => {
      insert.run('y', 2)
      insert.run('x', 3) // duplicate key: the step fails after writing 'y'
    })
    const ok2 = commits.run(() => insert.run('z', 4).changes)
    await expect(bad).rejects.toThrow(/UNIQUE/)
    expect([await ok1, await ok2]).toEqual([1, 1])
    expect(committed()).toEqual(['x', 'z'])
    close()
  })

  it('a batch that cannot take the write lock fails every step with phase begin and writes nothing', async () => {
    const {db, committed, close} = database()
    const commits = new SqliteGroupCommit(db)
    const insert = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)')
    const other = new Database(db.name, {timeout: 200})
    other.exec('BEGIN IMMEDIATE') // another writer holds the lock past the busy timeout
    try {
      const results = await Promise.allSettled([
        commits.run(() => insert.run('p', 1)),
        commits.run(() => insert.run('q', 2)),
      ])
      for (const r of results) {
        expect(r.status).toBe('rejected')
        const reason = (r as PromiseRejectedResult).reason
        expect(reason).toBeInstanceOf(GroupCommitFailure)
        expect((reason as GroupCommitFailure).phase).toBe('begin')
      }
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    expect(committed()).toEqual([])
    // The committer recovers: the next batch commits.
    expect((await commits.run(() => insert.run('r', 3))).changes).toBe(1)
    expect(committed()).toEqual(['r'])
    close()
  })
})

// Both adapters batch the single-Group appends of one turn (SQLite: one write transaction with a
// savepoint per append; PostgreSQL: pg-group-commit.ts). Submitted together, the appends of one
// batch must get exactly the outcomes they would get one after another, and nothing else.
describe.each(storeBackends('group commit').filter((b) => b.enabled))(
  'batched appends through the Store: $name',
  (backend: Backend) => {
    let url = ''
    let store: Store
    beforeAll(async () => {
      await backend.start()
      url = await backend.fresh()
      await initStore(url, {
        organizationId: 'urn:mwp:dev:org:example',
        admissionService: {
          principal: {type: 'service', id: 'urn:mwp:test:service:admission'},
          keyId: 'urn:mwp:test:key:admission',
          publicKey: 'w73iuuQnfRQbF53dV3hPdbV2WqKyNVkXw5KebJ5avm8',
        },
        freshness: DEFAULT_FRESHNESS,
      })
      store = await openStore(url)
    }, 120_000)
    afterAll(async () => {
      await store?.close()
      await backend.stop()
    }, 60_000)

    let ids = 0
    const event = (sequence: number, eventId = `urn:mwp:test:event:${backend.name}-${++ids}`) => ({
      eventId,
      kind: 'message.posted',
      sequence,
      aggregateRevision: 0,
      bytes: new TextEncoder().encode(`{"e":"${eventId}"}`),
    })
    const receipt = (
      groupId: string,
      first: number,
      last: number,
      actionId = `urn:mwp:test:action:${backend.name}-${++ids}`,
      contentHash = `sha256:${'1'.repeat(64)}`,
    ) => ({
      actorId: 'urn:mwp:test:agent:writer',
      actionId,
      contentHash,
      groupId,
      firstSequence: first,
      lastSequence: last,
      document: `{"actionId":"${actionId}"}`,
    })

    it('forty appends to twenty Groups in one turn: each appended once, all durable for a second connection', async () => {
      const groups = Array.from({length: 20}, (_, i) => `urn:mwp:test:group:batch-${backend.name}-${i}`)
      const first = await Promise.all(groups.map((g) => store.append(g, 0, [event(1)], receipt(g, 1, 1))))
      expect(first.map((o) => o.status)).toEqual(groups.map(() => 'appended'))
      const second = await Promise.all(groups.map((g) => store.append(g, 1, [event(2), event(3)], receipt(g, 2, 3))))
      expect(second).toEqual(groups.map(() => ({status: 'appended', firstSequence: 2, lastSequence: 3})))
      const raw = backend.raw(url)
      try {
        expect(await raw.count('group_events')).toBe(60)
        expect(await raw.count('receipts')).toBe(40)
      } finally {
        await raw.close()
      }
      const other = await openStore(url)
      try {
        for (const g of groups) expect((await other.read(g, 0, 10)).events.map((e) => e.sequence)).toEqual([1, 2, 3])
      } finally {
        await other.close()
      }
    })

    it('a closed store answers appends with unavailable (nothing written), never a throw or a hang', async () => {
      const closing = await openStore(url)
      await closing.close()
      const g = `urn:mwp:test:group:closed-${backend.name}`
      expect((await closing.append(g, 0, [event(1)], receipt(g, 1, 1))).status).toBe('unavailable')
      expect(await store.head(g)).toBeNull()
    })

    it('conflicts inside one batch resolve in arrival order: head-moved, duplicate, collision, duplicate-event-id', async () => {
      const g = `urn:mwp:test:group:conflict-${backend.name}`
      const h = `urn:mwp:test:group:conflict-other-${backend.name}`
      const r = receipt(g, 1, 1)
      const shared = event(1)
      const [a, sameHead, sameReceipt, collision, takenId] = await Promise.all([
        store.append(g, 0, [event(1)], r),
        store.append(g, 0, [event(1)], receipt(g, 1, 1)),
        store.append(g, 0, [event(1)], {...r}),
        store.append(g, 0, [event(1)], {...r, contentHash: `sha256:${'2'.repeat(64)}`}),
        store
          .append(h, 0, [shared], receipt(h, 1, 1))
          .then(async (o) => [o, await store.append(`${h}-2`, 0, [shared], receipt(`${h}-2`, 1, 1))] as const),
      ])
      expect(a).toEqual({status: 'appended', firstSequence: 1, lastSequence: 1})
      expect(sameHead).toEqual({status: 'head-moved', head: 1})
      expect(sameReceipt).toMatchObject({status: 'duplicate', receipt: {actionId: r.actionId}})
      expect(collision).toEqual({status: 'action-id-collision'})
      expect(takenId[0].status).toBe('appended')
      expect(takenId[1]).toEqual({status: 'duplicate-event-id', eventId: shared.eventId})
      expect((await store.head(g))?.sequence).toBe(1)
      expect(await store.head(`${h}-2`)).toBeNull()
    })
  },
)
