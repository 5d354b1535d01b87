// The two store backends the store suites run against, and the process-race helper they share.
// SQLite: one file per fresh store in a temp dir. PostgreSQL: a throwaway cluster (or
// MWP_TEST_POSTGRES_URL), a new database per fresh store; skipped locally when unavailable,
// a failure under CI=true.

import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import Database from 'better-sqlite3'
import postgres from '#postgres' // the patched copy in vendor/postgres (PATCHES.md)
import {type PostgresInstance, shouldRunPostgres, startPostgres} from './postgres-harness.js'

/** Direct database access, to count or tamper with rows behind the store's back. */
export interface RawDb {
  exec(sql: string): Promise<void>
  count(table: string): Promise<number>
  close(): Promise<void>
}

export interface Backend {
  name: 'sqlite' | 'postgres'
  enabled: boolean
  start(): Promise<void>
  stop(): Promise<void>
  /** URL of a new, uninitialized store. */
  fresh(): Promise<string>
  raw(url: string): RawDb
}

export function storeBackends(suite: string): [sqlite: Backend, postgres: Backend] {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-store-'))
  let count = 0
  let pg: PostgresInstance | undefined
  const sqlite: Backend = {
    name: 'sqlite',
    enabled: true,
    async start() {},
    async stop() {
      rmSync(dir, {recursive: true, force: true})
    },
    async fresh() {
      return `sqlite:${join(dir, `store-${++count}.db`)}`
    },
    raw(url) {
      const db = new Database(url.slice('sqlite:'.length))
      return {
        async exec(sql) {
          db.exec(sql)
        },
        async count(table) {
          return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as {n: number}).n
        },
        async close() {
          db.close()
        },
      }
    },
  }
  const pgBackend: Backend = {
    name: 'postgres',
    enabled: shouldRunPostgres(suite),
    async start() {
      pg = await startPostgres()
    },
    async stop() {
      await pg?.stop()
    },
    async fresh() {
      return pg!.newDatabase()
    },
    raw(url) {
      const sql = postgres(url, {max: 1, onnotice: () => {}})
      return {
        async exec(text) {
          await sql.unsafe(text).simple()
        },
        async count(table) {
          const [row] = await sql.unsafe(`SELECT count(*)::int AS n FROM ${table}`)
          return row!.n as number
        },
        async close() {
          await sql.end({timeout: 5})
        },
      }
    },
  }
  return [sqlite, pgBackend]
}

/**
 * Starts one worker process that signals readiness by creating `readyFile` and then waits for
 * `dir/go`: the caller releases all workers at once. Killed after 60 s so a test never hangs.
 */
export function startBarrierWorker(
  worker: string,
  url: string,
  dir: string,
  index: number,
  env: Record<string, string>,
) {
  const readyFile = join(dir, `ready-${index}`)
  const child = spawn(process.execPath, [worker, url, readyFile, join(dir, 'go')], {
    env: {...process.env, ...env},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d))
  child.stderr.on('data', (d: Buffer) => (stderr += d))
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const done = new Promise<{code: number | null; stdout: string; stderr: string}>((resolve) => {
    child.on('close', (code) => {
      clearTimeout(killer)
      resolve({code, stdout, stderr})
    })
  })
  return {readyFile, done}
}
