// Tables a PostgreSQL store creates on first use rather than at open (the Organization log, the
// delivery Cursors, the state checkpoints): older stores get them without a migration step.

import type postgres from 'postgres'

/**
 * Returns `ensure()`: the first call runs `ddl` once; later calls share that run. Concurrent first
 * uses, here or in another process, serialize on the advisory lock `lock` (CREATE … IF NOT EXISTS
 * is not race-free). A failed run is handed to `fail` and retried by the next call.
 */
export function lazyPostgresSchema(
  sql: postgres.Sql,
  lock: string,
  ddl: string,
  fail: (e: unknown) => never,
): () => Promise<void> {
  let ready: Promise<void> | undefined
  return () =>
    (ready ??= sql
      .begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(hashtext(${lock}))`
        await tx.unsafe(ddl).simple()
      })
      .then(() => undefined)
      .catch((e) => {
        ready = undefined
        return fail(e)
      }))
}
