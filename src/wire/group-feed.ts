// One Group's shared read side on this server: the Group state (for Membership checks) and a
// bounded cache of its most recent Events, whatever the number of subscribers. Appends this
// process commits arrive with their state and Events (Authority.onAppended → appended()); appends
// by other processes sharing the store make the server refresh() from the store. Pumps serve
// live delivery from this cache and page older history (replay) from the store, so 100
// subscribers of one Group cost nothing per append beyond the socket writes.
//
// Those writes are batched in time for a busy Group: after a wake, the next waits until
// `batchMs` have passed, and the Events appended meanwhile leave in one write per subscriber (one
// TLS record, one syscall, one wake of the reader). A socket write costs about as much as the
// whole frame it carries (ARCHITECTURE.md "Performance notes"), so at 500 appends/s a 10 ms window
// cuts the writes of 100 subscribers from 50,000/s to 10,000/s, and the subscribers' reads with
// them. The first Event after a quiet spell goes at once; no Event waits longer than `batchMs`.
//
// Memory is bounded whatever the Events' sizes and the history's length (issue #15): the cache
// of recent Events by count and bytes (TAIL, TAIL_BYTES), every store read by count and bytes
// (pageSize, pageBytes: a large page of large Events stalls the loop on a synchronous SQLite read
// and holds megabytes per subscriber), and the replay pages kept for subscribers replaying behind
// each other by number (HISTORY_PAGES, each at most pageBytes). Nothing reads a Group's history
// whole.

import type {Authority} from '../authority/authority.js'
import type {GroupState} from '../authority/model/state.js'
import type {LoggedEvent} from '../store/group-log.js'
import {performance} from 'node:perf_hooks'
import {deliveryFrame} from './frames.js'

export interface FeedEvent {
  sequence: number
  kind: string
  /** The delivery EVENT frame around the stored signed bytes, already framed for the socket (frames.ts deliveryFrame): shared by every subscriber. */
  frame: Buffer
  /**
   * Those bytes, exact: a view into `frame`, not a string of them. A Group's cached Events outlive
   * several young-generation collections, so what each holds is promoted and later marked: a
   * second copy as a 1 KB string made the feed about 40 % of the server's promoted bytes.
   */
  event: Buffer
}

export function feedEvent(e: LoggedEvent): FeedEvent {
  const frame = deliveryFrame(e.eventId, e.bytes)
  return {
    sequence: e.sequence,
    kind: e.kind,
    frame,
    event: frame.subarray(frame.length - 1 - e.bytes.byteLength, frame.length - 1),
  }
}

/** How many recent Events each Group keeps in memory for live delivery, at most, and in how many bytes at most. */
const TAIL = 512
const TAIL_BYTES = 4 * 1024 * 1024
/** How many history pages (replay) a Group keeps for the subscribers replaying behind each other. */
const HISTORY_PAGES = 16

/** Stored Event bytes per store read (replay page, catching up) when the server is not told otherwise. */
export const DEFAULT_PAGE_BYTES = 256 * 1024

export class GroupFeed {
  /** The state at `head` (null: the Group has no Events / does not exist). */
  state: GroupState | null = null
  head = 0
  #tail: FeedEvent[] = []
  /** The frames' bytes in #tail. */
  #tailBytes = 0
  /** Sequence of #tail[0]. */
  #tailStart = 1
  #loaded = false
  #running: Promise<void> | null = null
  #again = false
  /** Recent history pages by the position they follow; the log is append-only, so a page never changes. */
  readonly #history = new Map<number, Promise<FeedEvent[]>>()
  #lastWake = -Infinity
  #wakeTimer: NodeJS.Timeout | null = null

  /**
   * `changed` wakes the Group's pumps; `batchMs` (0: every append at once) is the module comment's
   * window; every store read returns at most `pageSize` Events and `pageBytes` of them (one larger Event alone).
   */
  constructor(
    private readonly authority: Authority,
    readonly groupId: string,
    private readonly changed: () => void,
    private readonly batchMs = 0,
    private readonly pageSize = 256,
    private readonly pageBytes = DEFAULT_PAGE_BYTES,
  ) {}

  /** Up to `limit` cached Events after `position`, or null when they are older than the cache. */
  after(position: number, limit: number): FeedEvent[] | null {
    const index = position + 1 - this.#tailStart
    if (index < 0) return null
    return this.#tail.slice(index, index + limit)
  }

  /**
   * The page of stored Events after `position`, for replay (at most pageSize Events and pageBytes):
   * one store read and one set of frames per page however many subscribers replay the same history
   * (a hundred subscribers resubscribing from 0 read each page once, not a hundred times).
   */
  history(position: number): Promise<FeedEvent[]> {
    const key = position
    let page = this.#history.get(key)
    if (page === undefined) {
      page = this.#read(position).then((p) => {
        // Only a page short of the head stays: one that ends at the head of its moment grows as the head moves on.
        const last = p.events[p.events.length - 1]?.sequence ?? position
        if (last >= p.head) this.#history.delete(key)
        return p.events.map(feedEvent)
      })
      page.catch(() => this.#history.delete(key)) // a failed read is not remembered
      this.#history.set(key, page)
      if (this.#history.size > HISTORY_PAGES) this.#history.delete(this.#history.keys().next().value!)
    }
    return page
  }

  #read(position: number) {
    return this.authority.store.read(this.groupId, position, this.pageSize, this.pageBytes)
  }

  /**
   * An append this process committed: its state and Events. Taken as they are when they follow
   * the cache's head; false when they cannot be (not loaded yet, a load in flight, a gap), and the
   * caller refreshes from the store instead.
   */
  appended(state: GroupState, events: readonly LoggedEvent[]): boolean {
    if (!this.#loaded || this.#running || events.length === 0 || events[0]!.sequence !== this.head + 1) return false
    for (const e of events) this.#push(feedEvent(e))
    this.head = events[events.length - 1]!.sequence
    this.state = state
    this.#trim()
    this.#wake()
    return true
  }

  /** Brings state, head and cache up to the store's head (single flight), then wakes the pumps. */
  refresh(): Promise<void> {
    if (this.#running) {
      this.#again = true
      return this.#running
    }
    this.#running = (async () => {
      do {
        this.#again = false
        await this.#load()
      } while (this.#again)
    })().finally(() => {
      this.#running = null
    })
    return this.#running
  }

  async #load(): Promise<void> {
    const state = await this.authority.current(this.groupId)
    const target = state?.sequence ?? 0
    const headBefore = this.#loaded ? this.head : -1
    if (!this.#loaded) {
      // The cache starts at the head: older history is replayed from the store by the pumps.
      this.#loaded = true
      this.head = target
      this.#tailStart = target + 1
    }
    while (this.head < target) {
      const page = await this.#read(this.head)
      if (page.events.length === 0) break
      for (const e of page.events) {
        this.#push(feedEvent(e))
        this.head = e.sequence
      }
      this.#trim() // each page: a long catch-up never holds more than the cache's bound and a page
    }
    this.#trim()
    // Several appends notify at once (one group commit): only a load that found something new
    // wakes the pumps, so 100 subscribers are not woken again for nothing.
    const news = state !== this.state || this.head !== headBefore
    this.state = state
    if (news) this.#wake()
  }

  #wake(): void {
    if (this.#wakeTimer !== null) return // a wake is due: it delivers these Events too
    const wait = this.#lastWake + this.batchMs - performance.now()
    if (wait <= 0) return this.#wakeNow()
    this.#wakeTimer = setTimeout(() => this.#wakeNow(), wait)
  }

  #wakeNow(): void {
    this.#wakeTimer = null
    this.#lastWake = performance.now()
    this.changed()
  }

  #push(e: FeedEvent): void {
    this.#tail.push(e)
    this.#tailBytes += e.frame.byteLength
  }

  /** Drops the oldest cached Events beyond TAIL or TAIL_BYTES (the newest always stays). */
  #trim(): void {
    let drop = Math.max(0, this.#tail.length - TAIL)
    let bytes = this.#tailBytes
    for (let i = 0; i < drop; i++) bytes -= this.#tail[i]!.frame.byteLength
    while (bytes > TAIL_BYTES && drop < this.#tail.length - 1) bytes -= this.#tail[drop++]!.frame.byteLength
    if (drop === 0) return
    this.#tail.splice(0, drop)
    this.#tailBytes = bytes
    this.#tailStart += drop
  }
}
