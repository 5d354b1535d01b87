// What the console knows of the authority, kept current from its EVENT stream: for every Group the
// operator can see (the directory of its live Memberships, and the child Missions reachable from
// them, §14) one follow subscription, folded Event by Event into the Group state (the authority's
// own apply(), views.ts) plus the few facts the views need beside it (views.ts noteEvent). Nothing
// here holds a Group's whole log: the timeline is a bounded window of the latest Events, and an
// older page is read on request (history.ts).
//
// Every accepted Event is also a Change the page hears of over server-sent events (sse.ts), named
// `groupId:sequence`. The last MAX_CHANGES Changes are kept in order, so an EventSource that
// reconnects with Last-Event-ID gets exactly the ones after it — no gap, no duplicate — or, when
// that one has already left the buffer, a reset (the page then re-reads every fragment).
//
// A lost connection to the authority is the wire client's to repair: it reconnects with backoff
// and resubscribes from its Cursors, dropping what it already delivered (the way `group tail
// --follow` resumes), so a Group's Events reach apply() once each and in order.

import type {GroupState} from '../authority/model/state.js'
import type {ErrorCode} from '../errors.js'
import type {EventDoc, Subscription, Transport} from '../operator/transport.js'
import {type InspectionFacts, emptyFacts, noteEvent, outsideVisibility} from '../operator/views.js'
import {apply} from '../authority/apply/index.js'
import {type VisibleWork, foldVisibleEvent} from '../operator/visible-work.js'
import {SlotTime} from './slot-time.js'

/** How many of a Group's latest Events the timeline shows without reading back (the default). */
export const TIMELINE_WINDOW = 50
/** How many Changes an SSE stream can resume across. */
export const MAX_CHANGES = 2000
/** How often the Groups are listed again where the transport cannot announce new ones (the local store). */
const GROUP_POLL_MS = 2000

export interface LiveGroup {
  groupId: string
  /** The folded state; null before the first Event, or when the history is not all visible. */
  state: GroupState | null
  facts: InspectionFacts
  /** The latest Events (at most the window, TIMELINE_WINDOW by default), oldest first. */
  window: EventDoc[]
  /** The Group this one is a child Mission of, when it was reached through the tree. */
  parentGroupId?: string
  /** Why the Mission cannot be shown (not visible, history outside visibility, unreadable). */
  unavailable?: string
  /** §8: what this operator sees of a Group whose history before its visibility start it cannot see. */
  visible?: VisibleWork
  /** Per WorkItem, the progress its lease holder last reported with a renewal (work.progressed, §11.4). */
  progress: Map<string, ReportedProgress>
}

/** What a work.progressed Event said of a running WorkItem: under which lease, its phase and next checkpoint. */
export interface ReportedProgress {
  leaseId: string
  phase: string
  nextCheckpoint?: string
  at: string
}

/** The progress a work.progressed Event reports, or null when its payload lacks the members shown. */
function reportedProgress(e: EventDoc): ReportedProgress | null {
  const {leaseId, progress} = e.payload
  if (typeof leaseId !== 'string' || typeof progress !== 'object' || progress === null) return null
  const {phase, nextCheckpoint} = progress as Record<string, unknown>
  if (typeof phase !== 'string') return null
  return {leaseId, phase, ...(typeof nextCheckpoint === 'string' ? {nextCheckpoint} : {}), at: e.occurredAt}
}

export interface Change {
  /** `groupId:sequence`: the SSE event ID. */
  id: string
  groupId: string
  sequence: number
  kind: string
}

export type ChangeListener = (change: Change) => void

export class LiveGroups {
  readonly #transport: Transport
  readonly #me: string
  readonly #groups = new Map<string, LiveGroup>()
  readonly #subs = new Map<string, Subscription>()
  readonly #changes: Change[] = []
  readonly #listeners = new Set<ChangeListener>()
  readonly #log: (line: string) => void
  /** How many Events each Group's timeline window keeps. */
  readonly window: number
  /** Every Agent's slot time in the followed Groups, over the rolling window. */
  readonly slotTime: SlotTime
  #poll: NodeJS.Timeout | undefined
  #closed = false

  constructor(transport: Transport, me: string, options: {log?: (line: string) => void; window?: number} = {}) {
    this.#transport = transport
    this.#me = me
    this.#log = options.log ?? (() => undefined)
    this.window = options.window ?? TIMELINE_WINDOW
    this.slotTime = new SlotTime()
  }

  /** Starts following the operator's Groups: announced ones as they come, else listed every GROUP_POLL_MS. */
  async start(): Promise<void> {
    const t = this.#transport
    if (t.watchGroups) {
      await t.watchGroups((g) => void this.follow(g))
      return
    }
    const list = async () => {
      for (const g of await t.groups(this.#me)) await this.follow(g)
    }
    await list()
    const again = () => {
      if (this.#closed) return
      this.#poll = setTimeout(
        () => void list().then(again, (e: Error) => (this.#log(e.message), again())),
        GROUP_POLL_MS,
      )
    }
    again()
  }

  /** Follows a Group (once); `parentGroupId` when it is a child Mission reached through the tree. */
  async follow(groupId: string, parentGroupId?: string): Promise<void> {
    if (this.#closed || this.#groups.has(groupId)) return
    const live: LiveGroup = {
      groupId,
      state: null,
      facts: emptyFacts(),
      window: [],
      progress: new Map(),
      ...(parentGroupId !== undefined ? {parentGroupId} : {}),
    }
    this.#groups.set(groupId, live)
    let sub: Subscription
    try {
      sub = await this.#transport.follow(
        groupId,
        0,
        (e) => this.#apply(live, e),
        (code: ErrorCode) => {
          live.unavailable =
            code === 'GROUP_NOT_FOUND' ? 'unknown, or not visible to you' : `the subscription ended (${code})`
          this.#announce(live, live.state?.sequence ?? 0, 'subscription.ended')
        },
      )
    } catch (e) {
      // Called unawaited (a directory announcement, a child link): a failure is shown, never thrown.
      live.unavailable = `cannot follow it: ${(e as Error).message}`
      this.#log(`console: cannot follow ${groupId}: ${(e as Error).message}`)
      this.#announce(live, 0, 'subscription.failed')
      return
    }
    if (this.#closed) await sub.close()
    else this.#subs.set(groupId, sub)
  }

  #apply(live: LiveGroup, e: EventDoc): void {
    live.window.push(e)
    if (live.window.length > this.window) live.window.shift()
    // §8: a member whose visibility starts late cannot fold the Group from the middle; it folds
    // what it sees (operator/visible-work.ts), from its first Event on.
    const late = live.visible !== undefined || (live.unavailable === undefined && live.state === null && e.sequence > 1)
    if (late && live.visible === undefined) live.unavailable = outsideVisibility(e.sequence)
    if (late || live.unavailable === undefined) {
      try {
        if (late) live.visible = foldVisibleEvent(live.visible ?? null, e)
        else this.#fold(live, e)
      } catch (err) {
        live.unavailable = `cannot fold Event ${e.sequence}: ${(err as Error).message}`
        delete live.visible
      }
    }
    if (e.kind === 'mission.child.created') {
      const child = (e.payload as {child?: {groupId?: unknown}}).child
      if (typeof child?.groupId === 'string') void this.follow(child.groupId, live.groupId)
    }
    this.#announce(live, e.sequence, e.kind)
  }

  /** One Event into the Group state, the inspection facts, the reported progress and the slot time. */
  #fold(live: LiveGroup, e: EventDoc): void {
    const state = apply(live.state, e)
    live.state = state
    noteEvent(live.facts, e)
    const workItemId = e.payload.workItemId
    if (typeof workItemId !== 'string') return
    const reported = e.kind === 'work.progressed' ? reportedProgress(e) : null
    if (reported !== null) live.progress.set(workItemId, reported)
    this.slotTime.note(live.groupId, workItemId, state.workItems[workItemId]?.lease ?? null, e.occurredAt, e.kind)
  }

  #announce(live: LiveGroup, sequence: number, kind: string): void {
    const change: Change = {id: `${live.groupId}:${sequence}`, groupId: live.groupId, sequence, kind}
    this.#changes.push(change)
    if (this.#changes.length > MAX_CHANGES) this.#changes.shift()
    for (const l of this.#listeners) l(change)
  }

  get(groupId: string): LiveGroup | undefined {
    return this.#groups.get(groupId)
  }

  /** Every followed Group, in the order they were first seen. */
  all(): LiveGroup[] {
    return [...this.#groups.values()]
  }

  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /**
   * The Changes after the one named `lastId` that `wanted` keeps, oldest first; null when `lastId`
   * is no longer (or never was) in the buffer: the reader has missed an unknown number.
   */
  changesAfter(lastId: string, wanted: (c: Change) => boolean = () => true): Change[] | null {
    for (let at = this.#changes.length - 1; at >= 0; at--)
      if (this.#changes[at]!.id === lastId) return this.#changes.slice(at + 1).filter(wanted)
    return null
  }

  /** The newest Change `wanted` keeps (what a fresh stream's first ID says it has seen). */
  latest(wanted: (c: Change) => boolean = () => true): Change | undefined {
    for (let at = this.#changes.length - 1; at >= 0; at--) if (wanted(this.#changes[at]!)) return this.#changes[at]
    return undefined
  }

  async close(): Promise<void> {
    this.#closed = true
    if (this.#poll) clearTimeout(this.#poll)
    for (const s of this.#subs.values()) await s.close()
    this.#subs.clear()
    this.#listeners.clear()
  }
}
