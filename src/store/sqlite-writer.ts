// The SQLite store's writes run on a worker thread of their own (sqlite-writes.ts says why):
// the store's thread posts each write and awaits its verdict, so an fsync never blocks the
// thread that verifies Commands and feeds sockets. Reads stay on the store's thread, on its own
// connection: WAL lets them proceed while the writer commits, and a write's verdict arrives only
// after its COMMIT, so a read that follows it sees it.
//
// The thread starts on the first write (read-only CLI commands never pay for it), keeps the
// process alive only while a write is in flight, and is stopped by close(). Errors cross the
// thread boundary as data and are rebuilt as the classes callers test for. A short-lived process
// writes inline instead (InlineWriter, OpenOptions.inlineWrites).

import {createRequire} from 'node:module'
import {pathToFileURL} from 'node:url'
import {Worker} from 'node:worker_threads'
import {GroupCommitFailure} from './group-commit.js'
import {StoreError, type StoreErrorCode, describeError} from './records.js'
import {SqliteWrites, type WriteOp, connectSqlite} from './sqlite-writes.js'

/** An error as it crosses the thread boundary (plain data: classes do not survive a structured clone). */
export type CrossedError =
  | {kind: 'group-commit'; phase: 'begin' | 'commit'; message: string}
  | {kind: 'store'; code: StoreErrorCode; message: string}
  | {kind: 'other'; message: string}

export function errorToData(e: unknown): CrossedError {
  if (e instanceof GroupCommitFailure) return {kind: 'group-commit', phase: e.phase, message: e.message}
  if (e instanceof StoreError) return {kind: 'store', code: e.code, message: e.message}
  return {kind: 'other', message: describeError(e)}
}

function errorFromData(d: CrossedError): Error {
  const e =
    d.kind === 'group-commit'
      ? new GroupCommitFailure(d.phase, '')
      : d.kind === 'store'
        ? new StoreError(d.code, d.message)
        : new Error(d.message)
  e.message = d.message
  return e
}

/** What the writer thread answers, by request ID. */
export type WriterReply = {id: number; value?: unknown; error?: CrossedError}

/** One request to the writer thread; requests and replies travel in batches (one message per turn). */
export type WriterRequest = {id: number; op: WriteOp; args: unknown[]}

/**
 * Byte views copied to buffers of their own size: a structured clone copies a view's WHOLE
 * underlying ArrayBuffer (a Buffer from Node's 8 KB pool, or a slice of a received frame), which
 * made posting one Event cost as much as verifying it.
 */
function compact(value: unknown): unknown {
  if (value instanceof Uint8Array)
    return value.byteOffset === 0 && value.byteLength === value.buffer.byteLength ? value : new Uint8Array(value)
  if (value === null || typeof value !== 'object') return value
  // Containers are copied only when something inside them was.
  if (Array.isArray(value)) {
    const items = value.map(compact)
    return items.some((v, i) => v !== value[i]) ? items : value
  }
  let copy: Record<string, unknown> | undefined
  for (const [k, v] of Object.entries(value)) {
    const c = compact(v)
    if (c !== v) (copy ??= {...(value as Record<string, unknown>)})[k] = c
  }
  return copy ?? value
}

type Args<K extends WriteOp> = Parameters<SqliteWrites[K]>
type Result<K extends WriteOp> = Awaited<ReturnType<SqliteWrites[K]>>

/**
 * Starts the writer or the checkpoint thread: the compiled sibling module; under a TypeScript
 * loader (vitest, tsx) the .ts source, loaded through tsx's register API since Node 20 workers
 * ignore `--import`.
 */
function spawn(
  module: 'sqlite-writer-thread' | 'sqlite-checkpointer',
  workerData: {path: string; everyMs?: number},
): Worker {
  const entry = new URL(`./${module}.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url)
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, {workerData})
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}) })`,
    {eval: true, workerData},
  )
}

/** How often the checkpoint thread checkpoints the WAL; with nothing new to copy that costs one read of the WAL index. */
export const CHECKPOINT_EVERY_MS = 250

/** Where the SQLite store's writes run: the writer thread (SqliteWriter) or the caller's thread (InlineWriter). */
export interface Writer {
  call<K extends WriteOp>(op: K, ...args: Args<K>): Promise<Result<K>>
  /** Answers the writes issued before it, then releases the connection. */
  close(): Promise<void>
}

/**
 * OpenOptions.inlineWrites, for short-lived processes: the same SqliteWrites on a connection of its
 * own on the caller's thread (opened on the first write), with no thread to start or stop.
 */
export class InlineWriter implements Writer {
  #writes: SqliteWrites | undefined
  /** Writes not yet answered: close() waits for them, as the writer thread does. */
  readonly #inFlight = new Set<Promise<unknown>>()
  #closed = false

  constructor(private readonly path: string) {}

  call<K extends WriteOp>(op: K, ...args: Args<K>): Promise<Result<K>> {
    if (this.#closed) return Promise.reject(new StoreError('unavailable', 'the store is closed'))
    try {
      this.#writes ??= new SqliteWrites(connectSqlite(this.path, false))
    } catch (e) {
      return Promise.reject(new StoreError('unavailable', describeError(e), {cause: e}))
    }
    const done = (this.#writes[op] as (...a: Args<K>) => Promise<Result<K>>).apply(this.#writes, args)
    this.#inFlight.add(done)
    void done.catch(() => undefined).finally(() => this.#inFlight.delete(done))
    return done
  }

  async close(): Promise<void> {
    this.#closed = true
    await Promise.allSettled(this.#inFlight)
    this.#writes?.close()
  }
}

export class SqliteWriter implements Writer {
  #worker: Worker | undefined
  /**
   * The WAL's checkpoints (sqlite-checkpointer.ts): started one interval after the writer, so a
   * short CLI command, which would wait for its start at close, never starts one (60 ms per
   * `mwp admit`); it never keeps the process alive.
   */
  #checkpointer: Worker | undefined
  #checkpointerDue: NodeJS.Timeout | undefined
  readonly #pending = new Map<number, {resolve: (v: unknown) => void; reject: (e: Error) => void}>()
  #next = 1
  #closed = false
  /** Requests of this turn, posted together: one message (one structured clone) per turn, not per write. */
  #outbox: WriterRequest[] = []

  constructor(private readonly path: string) {}

  call<K extends WriteOp>(op: K, ...args: Args<K>): Promise<Result<K>> {
    if (this.#closed) return Promise.reject(new StoreError('unavailable', 'the store is closed'))
    const worker = (this.#worker ??= this.#start())
    if (this.#pending.size === 0) worker.ref()
    const id = this.#next++
    if (this.#outbox.length === 0) process.nextTick(() => this.#post(worker))
    this.#outbox.push({id, op, args: args.map(compact)})
    return new Promise<Result<K>>((resolve, reject) => {
      this.#pending.set(id, {resolve: resolve as (v: unknown) => void, reject})
    })
  }

  #post(worker: Worker): void {
    const batch = this.#outbox
    if (batch.length === 0) return // close() posted it already
    this.#outbox = []
    worker.postMessage(batch)
  }

  #start(): Worker {
    const worker = spawn('sqlite-writer-thread', {path: this.path})
    if (!this.#checkpointer && !this.#checkpointerDue) {
      this.#checkpointerDue = setTimeout(() => {
        this.#checkpointerDue = undefined
        const checkpointer = spawn('sqlite-checkpointer', {path: this.path, everyMs: CHECKPOINT_EVERY_MS})
        checkpointer.unref()
        // A stopped checkpointer leaves the writer's own threshold in charge; the next writer start replaces it.
        checkpointer.on('error', () => undefined)
        checkpointer.on('exit', () => {
          if (this.#checkpointer === checkpointer) this.#checkpointer = undefined
        })
        this.#checkpointer = checkpointer
      }, CHECKPOINT_EVERY_MS)
      this.#checkpointerDue.unref()
    }
    // A batch's replies settle together, as one commit's outcomes did on a single thread: whatever
    // runs next sees every write of that commit answered (and remembered) at once.
    worker.on('message', (replies: WriterReply[]) => {
      for (const m of replies) {
        const p = this.#pending.get(m.id)
        if (!p) continue
        this.#pending.delete(m.id)
        if (m.error) p.reject(errorFromData(m.error))
        else p.resolve(m.value)
      }
      // Idle: the thread no longer keeps the process alive — except while close() waits for it to
      // exit (unref'd then, the process could end first, with close() pending: exit code 13).
      if (this.#pending.size === 0 && !this.#closed) worker.unref()
    })
    // A thread that dies takes its in-flight writes with it: their outcome is unknown, and the
    // next write starts a new thread.
    const lost = (reason: string) => {
      if (this.#worker === worker) this.#worker = undefined
      for (const p of this.#pending.values())
        p.reject(new StoreError('unavailable', `the SQLite writer thread stopped: ${reason}`))
      this.#pending.clear()
    }
    worker.on('error', (e) => lost(describeError(e)))
    worker.on('exit', (code) => lost(`exit code ${code}`))
    worker.unref()
    return worker
  }

  /** Stops the thread once the writes in flight are answered (it closes its connection). */
  async close(): Promise<void> {
    this.#closed = true
    const worker = this.#worker
    clearTimeout(this.#checkpointerDue)
    this.#checkpointerDue = undefined
    const checkpointer = this.#checkpointer
    if (worker) this.#post(worker) // this turn's writes go before the close, not after it
    await Promise.all([worker && stop(worker, {close: true}), checkpointer && stop(checkpointer, 'close')])
  }
}

/** Asks a thread to finish and waits for it to exit, keeping the process alive meanwhile (else: exit code 13). */
function stop(worker: Worker, message: unknown): Promise<void> {
  worker.ref()
  return new Promise<void>((resolve) => {
    worker.once('exit', () => resolve())
    worker.postMessage(message)
  })
}
