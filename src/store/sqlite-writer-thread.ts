// The SQLite writer thread (sqlite-writer.ts): one connection, every write of the store, in
// arrival order. Writes that arrive in one turn of this thread's event loop share a COMMIT.

import {parentPort, workerData} from 'node:worker_threads'
import {type WriterReply, type WriterRequest, errorToData} from './sqlite-writer.js'
import {SqliteWrites, connectSqlite} from './sqlite-writes.js'

const port = parentPort!
let writes: SqliteWrites | undefined
let opening: unknown
/** Writes not yet answered: close waits for them. */
const inFlight = new Set<Promise<unknown>>()

try {
  writes = new SqliteWrites(connectSqlite((workerData as {path: string}).path, false))
} catch (e) {
  opening = e
}

let outbox: WriterReply[] = []
const reply = (r: WriterReply) => {
  // The replies of one commit are settled in one turn: post them together after it.
  if (outbox.length === 0) setImmediate(flush)
  outbox.push(r)
}
const flush = () => {
  const batch = outbox
  outbox = []
  port.postMessage(batch)
}

port.on('message', (m: WriterRequest[] | {close: true}) => {
  if ('close' in m) {
    void Promise.allSettled(inFlight).then(() => {
      if (outbox.length > 0) flush()
      writes?.close()
      port.close()
    })
    return
  }
  for (const r of m) {
    if (!writes) {
      reply({id: r.id, error: errorToData(opening)})
      continue
    }
    const method = writes[r.op] as (...args: unknown[]) => Promise<unknown>
    const done = method.apply(writes, r.args).then(
      (value) => reply({id: r.id, value}),
      (e: unknown) => reply({id: r.id, error: errorToData(e)}),
    )
    inFlight.add(done)
    void done.finally(() => inFlight.delete(done))
  }
})
