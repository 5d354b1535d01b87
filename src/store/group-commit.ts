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

/** The shared transaction could not be opened or committed: the step's outcome is that of the batch. */
export class GroupCommitFailure extends Error {
  constructor(
    /** 'begin': nothing was written. 'commit': the batch's writes may or may not be durable. */
    readonly phase: 'begin' | 'commit',
    cause: unknown,
  ) {
    super(`group commit ${phase} failed: ${cause instanceof Error ? cause.message : String(cause)}`)
    this.name = 'GroupCommitFailure'
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

  constructor(private readonly db: Database.Database) {}

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
    try {
      db.exec('BEGIN IMMEDIATE')
    } catch (e) {
      for (const p of batch) p.reject(new GroupCommitFailure('begin', e))
      return
    }
    const outcomes: ({ok: true; value: unknown} | {ok: false; error: unknown})[] = []
    for (const p of batch) {
      try {
        db.exec('SAVEPOINT mwp_step')
        const value = p.step()
        db.exec('RELEASE mwp_step')
        outcomes.push({ok: true, value})
      } catch (error) {
        try {
          db.exec('ROLLBACK TO mwp_step')
          db.exec('RELEASE mwp_step')
        } catch {
          // The savepoint is gone only if the whole transaction is; COMMIT below then fails too.
        }
        outcomes.push({ok: false, error})
      }
    }
    try {
      db.exec('COMMIT')
    } catch (e) {
      try {
        if (db.inTransaction) db.exec('ROLLBACK')
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
