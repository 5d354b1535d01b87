// Concurrent first admission across OS processes (spec §6.4: at most one authoritative record per
// logical key; append-or-return-existing is one atomic operation). Eight separate `node`
// processes open the same store, each prepares its own candidate (own admissionRecordId and
// trusted time) for the same (organizationId, signingHash), waits at a file barrier, and appends
// at the same moment. Exactly one commits; the other seven get the winner's stored bytes.

import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {serializeKeyFile} from '../../src/crypto/keyfile.js'
import {initStore, openStore} from '../../src/store/index.js'
import {type Backend, startBarrierWorker, storeBackends} from '../support/store-backends.js'
import {ORG, serviceKey, storeConfig as config} from '../support/store-config.js'

const WORKER = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'fixtures-append-worker.mjs')
const PROCESSES = 8
const ROUNDS = 2

interface WorkerOutput {
  status: string
  detail?: string
  candidateId: string
  record: string | null
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const backends = storeBackends('store concurrency')

/** Rows in the Admission Log, read behind the store's back. */
async function countRows(backend: Backend, url: string): Promise<number> {
  const raw = backend.raw(url)
  try {
    return await raw.count('admission_records')
  } finally {
    await raw.close()
  }
}

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
        const workers = Array.from({length: PROCESSES}, (_, i) =>
          startBarrierWorker(WORKER, url, dir, i, {
            MWP_WORKER_KEY: serializeKeyFile(serviceKey),
            MWP_WORKER_FIELDS: JSON.stringify(fields),
          }),
        )
        let exitedEarly = false
        for (const w of workers) void w.done.then(() => (exitedEarly ||= !existsSync(join(dir, 'go'))))
        await until(
          () => exitedEarly || workers.every((w) => existsSync(w.readyFile)),
          45_000,
          'all workers to be ready',
        )
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

        expect(await countRows(backend, url)).toBe(round)
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
