// Delivery of one Group to one connection (spec §8, §16, §17.2, §17.3).
//
// The pump sends each Event after its position that the Membership may see and the attention
// filter passes, as an EVENT frame carrying the stored signed bytes: live Events from the Group's
// shared feed (group-feed.ts), older ones paged from the store. Replay is never truncated: the
// pump keeps going until it reaches the head.
//
// Flow control is per Group: at most `sendWindow` delivered Events may be un-ACKed by the client.
// At the limit the Group pauses and the client gets ERROR BACKPRESSURE {groupId, retryAfterMs};
// the next client ACK for that Group resumes it from the store, so nothing is lost and the other
// Groups on the connection never wait for it. Sequences the pump handles without delivering
// (before the Membership's visibility start, or filtered out) are announced with a server ACK
// "delivered through" frame after the page, so the client never mistakes them for a gap.
//
// Under the window, credit from the socket itself (issue #15): a pump writes only while fewer than
// SOCKET_HIGH_WATER bytes are queued on its connection, and each write is one page of at most
// pageBytes, so a subscriber that reads slowly or not at all holds at most that much of the
// server's memory, however long the history it replays. The pump then waits for the socket to
// drain; one still full after SOCKET_STALL_MS is told so with BACKPRESSURE (once per stall).
// Replay pages are read one at a time, and the pump yields to the event loop (setImmediate)
// between them: a replay never holds the loop for more than one page's read and write.

import {mayRead} from '../authority/decide/common.js'
import type {JsonObject} from '../json/parse.js'
import type {AttentionFilter} from './client.js'
import {errorFrame, errorOf, frame} from './frames.js'
import type {FeedEvent, GroupFeed} from './group-feed.js'
import type {ServerContext} from './server.js'

export interface PumpSink {
  /** Sends a text frame; returns false when the connection is gone. */
  send(text: string): boolean
  /** Writes a message already framed for the socket (FeedEvent.frame); returns false when the connection is gone. */
  sendFramed(bytes: Buffer): boolean
  /** Corks the socket until the end of this tick: the frames sent meanwhile leave in one write (one TLS record batch). */
  cork(): void
  /** Bytes queued on the socket (connection-level pressure). */
  bufferedAmount(): number
  /** Calls `resume` once when the socket's queue has drained; returns the function that stops waiting. */
  whenDrained(resume: () => void): () => void
  principalId: string
  principalType: string
  /** §14: the principal owns a Mission above this one and inspects it without a Membership (connection.ts); fixed for the Group's life, since Mission links and owners never change. */
  inspects: boolean
}

/** Socket-level bound: above this many queued bytes every pump of the connection waits. */
const SOCKET_HIGH_WATER = 4 * 1024 * 1024
/** A socket still full after this long has a slow or paused reader: BACKPRESSURE says so. */
const SOCKET_STALL_MS = 1000

export class GroupPump {
  position: number
  #delivered: number[] = []
  /** A page is being read from the store (replay): the read goes on with wake() when it arrives. */
  #reading = false
  #paused = false
  #stopped = false
  /** Waiting for the socket to drain: the function that stops waiting. */
  #draining: (() => void) | null = null
  /** This stall of the socket was announced with BACKPRESSURE. */
  #stallTold = false
  /** The highest sequence the client ACKed here (its server Cursor), or the position it subscribed after. */
  acknowledgedThrough: number
  /** BACKPRESSURE frames sent for this Group on this connection (full window, stalled socket). */
  backpressureSignals = 0

  constructor(
    private readonly context: ServerContext,
    private readonly sink: PumpSink,
    private readonly feed: GroupFeed,
    readonly groupId: string,
    afterSequence: number,
    private readonly attention: AttentionFilter | undefined,
  ) {
    this.position = afterSequence
    this.acknowledgedThrough = afterSequence
  }

  /** The subscribing principal's ID. */
  get subscriberId(): string {
    return this.sink.principalId
  }

  /** Delivered Events the client has not ACKed yet (at most the send window). */
  get unacknowledged(): number {
    return this.#delivered.length
  }

  stop(): void {
    this.#stopped = true
    this.#draining?.()
    this.#draining = null
  }

  /** Stopped for good: by the connection, a failed read, or an ended Membership. */
  get stopped(): boolean {
    return this.#stopped
  }

  get paused(): boolean {
    return this.#paused
  }

  /** The client ACKed `sequence`: frees window space and resumes a paused Group. */
  acknowledged(sequence: number): void {
    if (sequence > this.acknowledgedThrough) this.acknowledgedThrough = sequence
    let i = 0
    while (i < this.#delivered.length && this.#delivered[i]! <= sequence) i++
    if (i > 0) this.#delivered.splice(0, i)
    if (this.#paused && this.#delivered.length < this.context.options.sendWindow) {
      this.#paused = false
      this.wake()
    }
  }

  /**
   * Delivers what there is to deliver. Live Events come from the feed's cache and go out
   * synchronously, in this call (100 subscribers of a busy Group wake 100 pumps per append: no
   * promise per wake); only a page older than the cache (replay) is read from the store, and the
   * pump goes on from there when it arrives.
   */
  wake(): void {
    if (this.#stopped || this.#reading) return
    for (;;) {
      const next = this.#next()
      if (next === null) return
      const events = this.feed.after(this.position, next.limit)
      if (events === null) return this.#read()
      if (events.length === 0) return
      this.#deliver(events, next)
    }
  }

  /**
   * A page older than the feed's cache, from the store (shared by the Group's replaying pumps);
   * then on with wake() in a later turn of the loop, so replays never chain page reads in one.
   */
  #read(): void {
    this.#reading = true
    this.feed
      .history(this.position)
      .then((events) => {
        // Checked again: the Membership may have ended, or the socket filled, while the page was read.
        const next = this.#next()
        if (next !== null && events.length > 0) this.#deliver(events, next)
        setImmediate(() => {
          this.#reading = false
          this.wake()
        })
      })
      .catch((e: Error) => {
        this.#reading = false
        this.context.log({level: 'error', event: 'pump-failed', groupId: this.groupId, reason: e.message})
        this.sink.send(errorFrame(errorOf('INTERNAL_ERROR', {groupId: this.groupId})))
        this.#stopped = true
      })
  }

  /**
   * Whether the pump may send now, and how much: null when it is stopped, paused, caught up, its
   * socket is full, or its Membership no longer lets it read (it then stops with GROUP_NOT_FOUND).
   */
  #next(): {limit: number; visibilityStart: number} | null {
    const {authority, options} = this.context
    if (this.#stopped || this.#paused) return null
    if (this.sink.bufferedAmount() > SOCKET_HIGH_WATER) {
      this.#waitForSocket()
      return null
    }
    this.#stallTold = false
    if (this.position >= this.feed.head) return null // nothing to send: a full window is no pressure
    const room = options.sendWindow - this.#delivered.length
    if (room <= 0) {
      this.#paused = true
      const retryAfterMs = 250
      this.backpressureSignals++
      this.sink.send(errorFrame(errorOf('BACKPRESSURE', {groupId: this.groupId, retryAfterMs})))
      this.context.log({level: 'info', event: 'backpressure', groupId: this.groupId, principal: this.sink.principalId})
      return null
    }
    const limit = Math.min(options.pageSize, room)
    if (this.sink.inspects) return {limit, visibilityStart: 1}
    // Membership is enforced on every page (§17.2): an ended Membership stops delivery.
    const state = this.feed.state
    const member = state?.members[this.sink.principalId]
    if (!state || !mayRead(member, {type: this.sink.principalType}, authority.clock)) {
      this.#stopped = true
      this.sink.send(errorFrame(errorOf('GROUP_NOT_FOUND', {groupId: this.groupId})))
      return null
    }
    return {limit, visibilityStart: member.visibilityStartSequence}
  }

  /** Waits for the socket to drain, or SOCKET_STALL_MS (then BACKPRESSURE, once per stall); then wake(). */
  #waitForSocket(): void {
    if (this.#draining !== null) return
    let timer: NodeJS.Timeout | undefined = undefined
    const resume = (stalled: boolean) => {
      if (this.#draining === null) return
      this.#draining = null
      stopWaiting()
      clearTimeout(timer)
      if (stalled && !this.#stallTold && !this.#stopped) {
        this.#stallTold = true
        const retryAfterMs = SOCKET_STALL_MS
        this.backpressureSignals++
        this.sink.send(errorFrame(errorOf('BACKPRESSURE', {groupId: this.groupId, retryAfterMs})))
        this.context.log({
          level: 'info',
          event: 'socket-stalled',
          groupId: this.groupId,
          principal: this.sink.principalId,
        })
      }
      this.wake()
    }
    const stopWaiting = this.sink.whenDrained(() => resume(false))
    timer = setTimeout(() => resume(true), SOCKET_STALL_MS).unref()
    this.#draining = () => {
      stopWaiting()
      clearTimeout(timer)
    }
  }

  /**
   * Sends one page, corked (one write with the rest of this tick's frames), and advances the
   * position over it: at most `next.limit` Events and about pageBytes of frames (always one).
   */
  #deliver(page: FeedEvent[], next: {limit: number; visibilityStart: number}): void {
    const {visibilityStart} = next
    const events = page.length > next.limit ? page.slice(0, next.limit) : page
    const maxBytes = this.context.options.pageBytes
    let bytes = 0
    this.sink.cork()
    let skipped = false
    for (const e of events) {
      if (this.#stopped) return
      if (bytes > 0 && bytes + e.frame.byteLength > maxBytes) break
      if (e.sequence >= visibilityStart && this.#passes(e)) {
        if (!this.sink.sendFramed(e.frame)) return this.stop()
        bytes += e.frame.byteLength
        this.#delivered.push(e.sequence)
      } else {
        skipped = true
      }
      this.position = e.sequence
    }
    if (skipped)
      this.sink.send(
        frame('ACK', {
          acknowledgements: [{groupId: this.groupId, sequence: this.position}],
          sentAt: new Date().toISOString(),
        }),
      )
  }

  /**
   * §8/§17.2 attention: with no lists every Event passes; otherwise an Event passes when it matches
   * any given list (kinds, Conversations, WorkItems). `mentionsOnly` keeps only message.posted
   * Events that mention the principal (other kinds are unaffected); `announcements` lets Events
   * whose payload is marked as an announcement through regardless.
   */
  #passes(e: FeedEvent): boolean {
    const {kind} = e
    const a = this.attention
    if (!a) return true
    const lists = a.eventKinds !== undefined || a.conversationIds !== undefined || a.workItemIds !== undefined
    if (!lists && !a.mentionsOnly) return true
    if (a.eventKinds !== undefined && !a.conversationIds && !a.workItemIds && !a.mentionsOnly && !a.announcements)
      return a.eventKinds.includes(kind)
    const doc = JSON.parse(e.event.toString('utf8')) as JsonObject
    const payload = (doc.payload ?? {}) as JsonObject
    if (a.announcements && payload.announcement === true) return true
    if (a.mentionsOnly && kind === 'message.posted') {
      const mentions = payload.mentions
      const mentioned =
        Array.isArray(mentions) &&
        mentions.some((m) => m === this.sink.principalId || (m as JsonObject | null)?.id === this.sink.principalId)
      if (!mentioned) return false
    }
    if (!lists) return true
    if (a.eventKinds?.includes(kind)) return true
    const conversationId = (doc.conversationId ?? payload.conversationId) as string | undefined
    if (conversationId !== undefined && a.conversationIds?.includes(conversationId)) return true
    const workItemId = (doc.workItemId ?? payload.workItemId) as string | undefined
    return workItemId !== undefined && (a.workItemIds?.includes(workItemId) ?? false)
  }
}
