// Group commit for the SQLite store (ARCHITECTURE "Durability: … throughput comes from batching,
// not from skipping fsync"). better-sqlite3 is synchronous, so every COMMIT under
// synchronous=FULL blocks the process for one fsync; one commit per Command caps the authority at
// the disk's fsync rate however many Groups are busy. Instead, the write steps that arrive within
// one event-loop turn run inside ONE write transaction, each in its own SAVEPOINT (a failing step
// undoes only its own writes), followed by one COMMIT — one fsync for the whole batch. No caller
// learns its result before that COMMIT returned, so an acknowledged write is as durable as before.
//
// A step is a synchronous function: it reads and writes through the same connection and returns
// its verdict. The batch runs in one synchronous stretch, so no other code of this process sees
// the open transaction; other processes wait on SQLite's lock as with any write transaction.

import type Database from 'better-sqlite3'
import {type GroupCommitErrorCode, MwpError} from '../errors.js'

/** The shared transaction could not be opened or committed: the step's outcome is that of the batch. */
export class GroupCommitFailure extends MwpError<GroupCommitErrorCode> {
  constructor(
    /** 'begin': nothing was written. 'commit': the batch's writes may or may not be durable. */
    readonly phase: 'begin' | 'commit',
    cause: unknown,
  ) {
    super(
      'group-commit-failed',
      `group commit ${phase} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      {cause},
    )
  }
}

interface Pending {
  step: () => unknown
  resolve: (value: unknown) => void
  reject: (reason: unknown) => void
}

export class SqliteGroupCommit {
  #queue: Pending[] = []
  #scheduled = false

  /** Transaction control, prepared once: a batch runs three of these per step on the hot path. */
  readonly #sql: Record<'begin' | 'savepoint' | 'release' | 'rollbackTo' | 'commit' | 'rollback', Database.Statement>

  constructor(private readonly db: Database.Database) {
    this.#sql = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      savepoint: db.prepare('SAVEPOINT mwp_step'),
      release: db.prepare('RELEASE mwp_step'),
      rollbackTo: db.prepare('ROLLBACK TO mwp_step'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
    }
  }

  /** Runs `step` inside the next batch's write transaction; settles after that batch committed. */
  run<T>(step: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({step, resolve: resolve as (value: unknown) => void, reject})
      if (!this.#scheduled) {
        this.#scheduled = true
        // setImmediate, not a microtask: every step that other Commands reach in this turn of the
        // event loop (after their verification, decision and signing) joins the same batch.
        setImmediate(() => this.#flush())
      }
    })
  }

  #flush(): void {
    this.#scheduled = false
    const batch = this.#queue
    this.#queue = []
    if (batch.length === 0) return
    const db = this.db
    const sql = this.#sql
    try {
      sql.begin.run()
    } catch (e) {
      for (const p of batch) p.reject(new GroupCommitFailure('begin', e))
      return
    }
    const outcomes: ({ok: true; value: unknown} | {ok: false; error: unknown})[] = []
    for (const p of batch) {
      try {
        sql.savepoint.run()
        const value = p.step()
        sql.release.run()
        outcomes.push({ok: true, value})
      } catch (error) {
        try {
          sql.rollbackTo.run()
          sql.release.run()
        } catch {
          // The savepoint is gone only if the whole transaction is; COMMIT below then fails too.
        }
        outcomes.push({ok: false, error})
      }
    }
    try {
      sql.commit.run()
    } catch (e) {
      try {
        if (db.inTransaction) sql.rollback.run()
      } catch {
        // the transaction is gone either way
      }
      for (const p of batch) p.reject(new GroupCommitFailure('commit', e))
      return
    }
    batch.forEach((p, i) => {
      const o = outcomes[i]!
      if (o.ok) p.resolve(o.value)
      else p.reject(o.error)
    })
  }
}
