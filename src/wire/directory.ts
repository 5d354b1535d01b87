// The directory subscription: how an Agent learns which Groups it belongs to (spec §8, §10.3,
// §17.2; an mwp convention on top of the core frames, README "How an Agent learns its Groups").
//
// A Worker learns of a Group only when a Coordinator offers it work there (§8 just-in-time
// Membership: the offer's Event grants it a provisional Membership), and an offline Worker must
// still find a durable offer when it reconnects (§10.3); the protocol has no discovery frame. So a
// principal may SUBSCRIBE with a group entry whose groupId is its own principal ID (no Group can
// have that ID: ingress/command-checks.ts refuses to open one under a principal's ID). The gateway
// then announces each Group where the principal has a live Membership (provisional or active;
// store/member-table.ts) with a server ACK frame {groupId, sequence: visibilityStart - 1}. That is
// exactly what a server ACK already means on this binding — "nothing at or before this sequence
// will be delivered to you" (group-pump.ts) — so a client that knows nothing of the convention
// sees an ACK for a Group it did not subscribe to, and ignores it (client.ts).
//
// After the first pass over the principal's live rows, only rows written after the last position
// seen are read (MemberTable.changedAfter): at every append of this process that carries a
// Membership document of the principal, at every notice of another process's (PostgreSQL
// watchMembers), and at the connection's liveness tick as a fallback. An ended Membership is not
// announced. Nothing about another principal's rows is ever read for this connection.

import type {MemberRecord, MemberTable} from '../store/member-table.js'
import {frame} from './frames.js'

/** Rows read from the index per page (and announced per ACK frame), at most. */
export const DIRECTORY_PAGE = 256

export interface DirectorySink {
  /** Sends a text frame; returns false when the connection is gone. */
  send(text: string): boolean
  /** The connection already subscribes to the Group: its pump's ACKs speak for it, no announcement. */
  subscribed(groupId: string): boolean
  /** A read of the index failed (logged by the connection; the next refresh tries again). */
  failed(e: Error): void
}

export class Directory {
  /** The highest index position read so far: later refreshes read only after it. */
  #position = 0
  #started = false
  #running: Promise<void> | null = null
  #again = false
  #stopped = false

  constructor(
    private readonly members: MemberTable,
    readonly principalId: string,
    private readonly sink: DirectorySink,
  ) {}

  /**
   * Reads the rows written since the last read (the live rows, the first time) and announces the
   * live ones. Calls while a read runs are merged into one more read after it; resolves when the
   * index was read at least once after the call.
   */
  refresh(): Promise<void> {
    if (this.#stopped) return Promise.resolve()
    if (this.#running) {
      this.#again = true
      return this.#running
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false
          await this.#read()
        } while (this.#again && !this.#stopped)
      } catch (e) {
        this.sink.failed(e as Error)
      } finally {
        this.#running = null
      }
    })()
    return this.#running
  }

  stop(): void {
    this.#stopped = true
  }

  async #read(): Promise<void> {
    // First pass: the live rows only (an ended Membership has nothing to announce). Afterwards
    // every change, from the highest position the first pass saw: ended rows there are skipped.
    const first = !this.#started
    for (;;) {
      const rows = first
        ? await this.members.live(this.principalId, this.#position, DIRECTORY_PAGE)
        : await this.members.changedAfter(this.principalId, this.#position, DIRECTORY_PAGE)
      if (this.#stopped) return
      this.#announce(rows)
      if (rows.length > 0) this.#position = rows[rows.length - 1]!.position
      if (rows.length < DIRECTORY_PAGE) break
    }
    this.#started = true
  }

  #announce(rows: readonly MemberRecord[]): void {
    const live = rows.filter((r) => r.state !== 'ended' && !this.sink.subscribed(r.groupId))
    if (live.length === 0) return
    this.sink.send(
      frame('ACK', {
        acknowledgements: live.map((r) => ({groupId: r.groupId, sequence: r.visibilityStart - 1})),
        sentAt: new Date().toISOString(),
      }),
    )
  }
}
