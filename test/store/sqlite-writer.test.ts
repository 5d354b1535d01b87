// The SQLite store's writer thread (src/store/sqlite-writer.ts): every write runs on its own
// connection off the caller's thread. What callers rely on: a write's verdict arrives after its
// COMMIT (a read that follows sees it), close() answers the writes already issued before it stops
// the thread, a write after close is refused as unavailable, and an Event's bytes are stored
// exactly as the view the caller passed (the copy to a buffer of its own size before the
// structured clone keeps the view's range, not its whole underlying buffer).

import {spawn} from 'node:child_process'
import {createHash, randomUUID} from 'node:crypto'
import {mkdtempSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
import type {Receipt, StoredEvent} from '../../src/store/group-log.js'
import {openStore} from '../../src/store/index.js'
import {CHECKPOINT_EVERY_MS} from '../../src/store/sqlite-writer.js'
import {SqliteWrites, WAL_BACKSTOP_PAGES, connectSqlite} from '../../src/store/sqlite-writes.js'
import {admissionKey, devStoreAt} from '../support/authority-helpers.js'

const CLOSER = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'fixtures-writer-close.mjs')
const dir = mkdtempSync(join(tmpdir(), 'mwp-writer-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
let n = 0
const url = () => `sqlite:${join(dir, `store-${++n}.db`)}`

function append(groupId: string, head: number, bytes: Uint8Array): {events: StoredEvent[]; receipt: Receipt} {
  const actionId = `urn:uuid:${randomUUID()}`
  const sequence = head + 1
  return {
    events: [
      {eventId: `urn:uuid:${randomUUID()}`, kind: 'message.posted', sequence, aggregateRevision: sequence, bytes},
    ],
    receipt: {
      actorId: 'https://org.example/people/alice',
      actionId,
      contentHash: `sha256:${createHash('sha256').update(actionId).digest('hex')}`,
      groupId,
      firstSequence: sequence,
      lastSequence: sequence,
      document: JSON.stringify({actionId}),
    },
  }
}

describe('SQLite writer thread', () => {
  it('a write is visible to the next read as soon as its verdict arrives', async () => {
    const store = await devStoreAt(url())
    const g = `urn:mwp:test:group:${randomUUID()}`
    for (let head = 0; head < 5; head++) {
      const a = append(g, head, Buffer.from(`event ${head + 1}`))
      expect((await store.append(g, head, a.events, a.receipt)).status).toBe('appended')
      expect((await store.head(g))?.sequence).toBe(head + 1)
    }
    await store.close()
  })

  // Both writers: the writer thread, and inline writes (OpenOptions.inlineWrites, the CLI) on the caller's thread.
  it.each([false, true])(
    'inlineWrites %s: the same verdicts; close() answers a write issued before it; a write after close is refused as unavailable; a store opened later sees everything',
    async (inlineWrites) => {
      const at = url()
      await (await devStoreAt(at)).close()
      const store = await openStore(at, {admissionKey, inlineWrites})
      const g = `urn:mwp:test:group:${randomUUID()}`
      const first = append(g, 0, Buffer.from('first'))
      expect((await store.append(g, 0, first.events, first.receipt)).status).toBe('appended')
      expect((await store.head(g))?.sequence).toBe(1)
      const stale = append(g, 0, Buffer.from('stale'))
      expect((await store.append(g, 0, stale.events, stale.receipt)).status).toBe('head-moved')
      const second = append(g, 1, Buffer.from('second'))
      const pending = store.append(g, 1, second.events, second.receipt) // not awaited before close
      await store.close()
      expect((await pending).status).toBe('appended')
      const late = append(g, 2, Buffer.from('late'))
      expect((await store.append(g, 2, late.events, late.receipt)).status).toBe('unavailable')
      const reopened = await openStore(at)
      expect((await reopened.read(g, 0, 10)).events.map((e) => Buffer.from(e.bytes).toString())).toEqual([
        'first',
        'second',
      ])
      await reopened.close()
    },
  )

  it('a process closing its store with a write in flight ends normally, after close() returned (exit code 0, not 13)', async () => {
    const at = url()
    await (await devStoreAt(at)).close()
    for (let i = 0; i < 5; i++) {
      const {code, stdout} = await new Promise<{code: number | null; stdout: string}>((resolve) => {
        const child = spawn(process.execPath, [CLOSER, at], {stdio: ['ignore', 'pipe', 'inherit']})
        let stdout = ''
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
        child.on('close', (code) => resolve({code, stdout}))
      })
      expect({code, stdout: stdout.trim()}).toEqual({code: 0, stdout: 'closed'})
    }
    const store = await openStore(at)
    expect((await store.listAudit()).filter((a) => a.reason === 'in flight at close')).toHaveLength(5)
    await store.close()
  })

  it('bytes given as a view into a larger buffer are stored as exactly that view', async () => {
    const store = await devStoreAt(url())
    const g = `urn:mwp:test:group:${randomUUID()}`
    const big = Buffer.from('prefix-{"the":"event"}-suffix and a lot more bytes around it')
    const view = big.subarray(7, 22)
    const a = append(g, 0, view)
    expect((await store.append(g, 0, a.events, a.receipt)).status).toBe('appended')
    const [stored] = (await store.read(g, 0, 1)).events
    expect(Buffer.from(stored!.bytes).toString()).toBe('{"the":"event"}')
    await store.close()
  })

  // SQLite's automatic checkpoint ran inside the COMMIT crossing 1,000 WAL pages, stalling every
  // write queued behind it for tens of milliseconds (the wire bench's worst latencies). The writer's own
  // threshold is now 4,096 pages: the 400 KB written here (about 100 pages) reach the database
  // file only through the checkpoint thread.
  it('WAL checkpoints run beside the writer, not inside its COMMITs: the database file takes the appends while the writer threshold is the backstop', async () => {
    const at = url()
    const path = at.slice('sqlite:'.length)
    const store = await devStoreAt(at)
    const before = statSync(path).size
    const g = `urn:mwp:test:group:${randomUUID()}`
    for (let head = 0; head < 200; head++) {
      const a = append(g, head, Buffer.alloc(2000, 0x61 + (head % 26)))
      expect((await store.append(g, head, a.events, a.receipt)).status).toBe('appended')
    }
    const deadline = Date.now() + 40 * CHECKPOINT_EVERY_MS
    while (statSync(path).size < before + 400_000 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, CHECKPOINT_EVERY_MS / 5))
    expect(statSync(path).size).toBeGreaterThanOrEqual(before + 400_000)
    await store.close()
    const writerConnection = connectSqlite(path, false)
    const writes = new SqliteWrites(writerConnection)
    expect(writerConnection.pragma('wal_autocheckpoint', {simple: true})).toBe(WAL_BACKSTOP_PAGES)
    writes.close()
  })

  // Each append names the head it expects: only issue order applied in order commits them all.
  it('writes from many turns keep their order and all commit', async () => {
    const store = await devStoreAt(url())
    const g = `urn:mwp:test:group:${randomUUID()}`
    const writes = [] as Promise<{status: string}>[]
    let head = 0
    for (let i = 0; i < 20; i++) {
      const a = append(g, head, Buffer.from(`e${i}`))
      writes.push(store.append(g, head, a.events, a.receipt))
      if (i % 3 === 0) await new Promise((r) => setImmediate(r))
      head++
    }
    expect((await Promise.all(writes)).map((w) => w.status)).toEqual(Array(20).fill('appended'))
    const events = (await store.read(g, 0, 50)).events
    expect(events.map((e) => Buffer.from(e.bytes).toString())).toEqual(Array.from({length: 20}, (_, i) => `e${i}`))
    await store.close()
  })
})
