// Group commit for the SQLite store (src/store/group-commit.ts): the write steps of one
// event-loop turn share one transaction and one COMMIT; no step settles before that COMMIT; a
// failing step undoes only its own writes; a batch that cannot start or commit fails every step.

import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import Database from 'better-sqlite3'
import {afterAll, describe, expect, it} from 'vitest'
import {GroupCommitFailure, SqliteGroupCommit} from '../src/store/group-commit.js'

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
      commits.run(() => {
        insert.run(k, i)
        // Inside the shared transaction nothing of this batch is visible to another connection.
        expect(committed()).toEqual([])
        return k
      }).then((v) => {
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
      const results = await Promise.allSettled([commits.run(() => insert.run('p', 1)), commits.run(() => insert.run('q', 2))])
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
