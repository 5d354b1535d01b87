// An older page of a Group's timeline, read on request rather than kept: the Events with sequence
// in [from, to], read from the authority through a second transport (a wire session subscribes to
// a Group once, and the live one, live.ts, must not be disturbed) and let go once collected. The
// reads are serialized: one subscription per Group at a time on the reader.

import type {EventDoc, Subscription, Transport} from '../operator/transport.js'

/** A page never waits longer than this for its Events. */
const PAGE_TIMEOUT_MS = 15_000

export class HistoryReader {
  readonly #open: () => Promise<Transport>
  #transport: Promise<Transport> | undefined
  #queue: Promise<unknown> = Promise.resolve()

  constructor(open: () => Promise<Transport>) {
    this.#open = open
  }

  /** The Group's Events with sequence from..to (inclusive; the caller knows `to` exists). */
  page(groupId: string, from: number, to: number): Promise<EventDoc[]> {
    const run = this.#queue.then(() => this.#read(groupId, from, to))
    this.#queue = run.catch(() => undefined)
    return run
  }

  async #read(groupId: string, from: number, to: number): Promise<EventDoc[]> {
    if (to < from) return []
    this.#transport ??= this.#open()
    const t = await this.#transport
    const out: EventDoc[] = []
    let finish: (err?: Error) => void = () => undefined
    const collected = new Promise<void>((resolve, reject) => {
      finish = (err) => (err ? reject(err) : resolve())
    })
    const timer = setTimeout(
      () => finish(new Error(`the Events ${from}-${to} of ${groupId} did not arrive`)),
      PAGE_TIMEOUT_MS,
    )
    const subscribed: Promise<Subscription> = t.follow(
      groupId,
      from - 1,
      (e) => {
        if (e.sequence > to) return
        out.push(e)
        if (e.sequence >= to) finish()
      },
      (code) => finish(new Error(`cannot read ${groupId}: ${code}`)),
    )
    try {
      await Promise.all([collected, subscribed])
    } finally {
      clearTimeout(timer)
      await subscribed.then((s) => s.close()).catch(() => undefined)
    }
    return out
  }

  async close(): Promise<void> {
    const t = this.#transport
    this.#transport = undefined
    if (t) await (await t.catch(() => undefined))?.close()
  }
}
