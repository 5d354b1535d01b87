// The SQLite store's WAL checkpoints, on a thread of their own (sqlite-writer.ts starts it beside
// the writer thread). SQLite's automatic checkpoint runs inside the COMMIT that crosses the WAL
// threshold: on the writer thread that COMMIT, and every write queued behind it, waited while
// megabytes were copied into the database file and fsynced — tens of milliseconds on this
// project's virtual disks, the wire bench's worst latency spikes. A PASSIVE checkpoint takes no
// write lock: here it runs beside the writer and appends go on while it copies. Under a steady
// stream of appends it never finds the WAL idle, so the WAL file is restarted by the writer's own
// automatic checkpoint at a higher threshold (sqlite-writes.ts); by then this thread has copied
// nearly all of it, and the checkpoint inside that COMMIT copies only the rest. Should this thread
// stop, that threshold alone bounds the WAL.

import Database from 'better-sqlite3'
import {parentPort, workerData} from 'node:worker_threads'

const port = parentPort!
const {path, everyMs} = workerData as {path: string; everyMs: number}
const db = new Database(path, {fileMustExist: true})
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
const timer = setInterval(() => {
  try {
    checkpoint.get()
  } catch {
    // a busy or failing checkpoint is retried on the next tick; the writer's threshold bounds the WAL
  }
}, everyMs)

port.on('message', () => {
  clearInterval(timer)
  db.close()
  port.close()
})
