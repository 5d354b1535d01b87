// The tests' PostgreSQL (scripts/postgres-cluster.ts): a throwaway cluster with fsync off, or a
// fresh database on MWP_TEST_POSTGRES_URL. Never depends on a system service being up.

import {
  type PostgresInstance,
  postgresBinDir,
  postgresSupport as support,
  startPostgres as start,
} from '../../scripts/postgres-cluster.js'

export {type PostgresInstance, postgresBinDir}

/** Whether startPostgres() can work here, and why not. */
export const postgresSupport = () => support(process.env.MWP_TEST_POSTGRES_URL)

/**
 * True when the PostgreSQL half of a suite should run. When it cannot, it logs why and returns
 * false, except under CI=true, where a missing PostgreSQL is an error.
 */
export function shouldRunPostgres(suite: string): boolean {
  const s = postgresSupport()
  if (s.available) return true
  if (process.env.CI === 'true') throw new Error(`${suite}: PostgreSQL is required under CI=true: ${s.reason}`)
  console.warn(`${suite}: skipping the PostgreSQL half: ${s.reason}`)
  return false
}

/** Starts a throwaway PostgreSQL (or a fresh database on MWP_TEST_POSTGRES_URL). */
export const startPostgres = (): Promise<PostgresInstance> =>
  start({external: process.env.MWP_TEST_POSTGRES_URL, durable: false})
