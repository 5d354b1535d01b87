// Concurrent first admission across OS processes (spec §6.4: at most one authoritative record per
// logical key; append-or-return-existing is one atomic operation). Eight separate `node`
// processes open the same store, each prepares its own candidate (own admissionRecordId and
// trusted time) for the same (organizationId, signingHash), waits at a file barrier, and appends
// at the same moment. Exactly one commits; the other seven get the winner's stored bytes.

import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import Database from 'better-sqlite3'
import postgres from 'postgres'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {generateSigningKey, serializeKeyFile} from '../src/crypto/keyfile.js'
import {DEFAULT_FRESHNESS, initStore, openStore, type StoreConfig} from '../src/store/index.js'
import {shouldRunPostgres, startPostgres, type PostgresInstance} from './postgres-harness.js'

const WORKER = join(dirname(fileURLToPath(import.meta.url)), 'fixtures-append-worker.mjs')
const PROCESSES = 8
const ROUNDS = 2

const ORG = 'https://org.example/'
const SERVICE = {type: 'service' as const, id: 'https://org.example/services/admission'}
const serviceKey = generateSigningKey({keyId: 'https://org.example/keys/admission-1', principal: SERVICE})
const config: StoreConfig = {
  organizationId: ORG,
  admissionService: {principal: SERVICE, keyId: serviceKey.keyId, publicKey: serviceKey.publicKeyB64},
  freshness: DEFAULT_FRESHNESS,
}

interface WorkerOutput {
  status: string
  detail?: string
  candidateId: string
  record: string | null
}

interface Worker {
  readyFile: string
  done: Promise<{code: number | null; stdout: string; stderr: string}>
}

function startWorker(url: string, dir: string, index: number, fields: object): Worker {
  const readyFile = join(dir, `ready-${index}`)
  const child = spawn(process.execPath, [WORKER, url, readyFile, join(dir, 'go')], {
    env: {...process.env, MWP_WORKER_KEY: serializeKeyFile(serviceKey), MWP_WORKER_FIELDS: JSON.stringify(fields)},
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

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

interface Backend {
  name: string
  enabled: boolean
  start(): Promise<void>
  stop(): Promise<void>
  fresh(): Promise<string>
  countRows(url: string): Promise<number>
}

const sqliteDir = mkdtempSync(join(tmpdir(), 'mwp-store-concurrency-'))
let pg: PostgresInstance | undefined
const backends: Backend[] = [
  {
    name: 'sqlite',
    enabled: true,
    async start() {},
    async stop() {
      rmSync(sqliteDir, {recursive: true, force: true})
    },
    async fresh() {
      return `sqlite:${join(sqliteDir, 'shared.db')}`
    },
    async countRows(url) {
      const db = new Database(url.slice('sqlite:'.length), {readonly: true})
      try {
        return (db.prepare('SELECT count(*) AS n FROM admission_records').get() as {n: number}).n
      } finally {
        db.close()
      }
    },
  },
  {
    name: 'postgres',
    enabled: shouldRunPostgres('store concurrency'),
    async start() {
      pg = await startPostgres()
    },
    async stop() {
      await pg?.stop()
    },
    async fresh() {
      return pg!.url
    },
    async countRows(url) {
      const sql = postgres(url, {max: 1})
      try {
        const [row] = await sql`SELECT count(*)::int AS n FROM admission_records`
        return row!.n as number
      } finally {
        await sql.end({timeout: 5})
      }
    },
  },
]

describe.each(backends.filter((b) => b.enabled))('concurrent first admission across processes: $name', (backend) => {
  let url = ''
  beforeAll(async () => {
    await backend.start()
    url = await backend.fresh()
    await initStore(url, config)
  }, 120_000)
  afterAll(() => backend.stop(), 60_000)

  it(`${PROCESSES} processes append different candidates for one key at once: one row, same bytes for all`, async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const signingHash = `sha256:${round.toString(16).padStart(64, 'c')}`
      const fields = {
        organizationId: ORG,
        signingHash,
        documentKind: 'command',
        keyId: 'https://org.example/keys/alice-1',
        principal: {type: 'human', id: 'https://org.example/people/alice'},
      }
      const dir = mkdtempSync(join(tmpdir(), 'mwp-race-'))
      try {
        const workers = Array.from({length: PROCESSES}, (_, i) => startWorker(url, dir, i, fields))
        let exitedEarly = false
        for (const w of workers) void w.done.then(() => (exitedEarly ||= !existsSync(join(dir, 'go'))))
        await until(() => exitedEarly || workers.every((w) => existsSync(w.readyFile)), 45_000, 'all workers to be ready')
        writeFileSync(join(dir, 'go'), '') // the barrier: everyone appends now
        const runs = await Promise.all(workers.map((w) => w.done))
        for (const r of runs) expect(r.code, r.stderr).toBe(0)

        const outputs = runs.map((r) => JSON.parse(r.stdout) as WorkerOutput)
        const statuses = outputs.map((o) => o.status).sort()
        expect(statuses).toEqual(['committed', ...Array(PROCESSES - 1).fill('existing')])
        const winner = outputs.find((o) => o.status === 'committed')!
        // Every candidate was different; all eight got the winner's exact stored bytes.
        expect(new Set(outputs.map((o) => o.candidateId)).size).toBe(PROCESSES)
        expect(new Set(outputs.map((o) => o.record)).size).toBe(1)
        const stored = JSON.parse(Buffer.from(winner.record!, 'base64').toString()) as {admissionRecordId: string}
        expect(stored.admissionRecordId).toBe(winner.candidateId)

        expect(await backend.countRows(url)).toBe(round)
        const store = await openStore(url)
        try {
          const found = await store.lookup(ORG, signingHash)
          expect(found.status).toBe('found')
          expect(Buffer.from((found as {record: Uint8Array}).record).toString('base64')).toBe(winner.record)
        } finally {
          await store.close()
        }
      } finally {
        rmSync(dir, {recursive: true, force: true})
      }
    }
  }, 120_000)
})
