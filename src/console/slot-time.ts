// Slot time over a rolling window, per Agent and Group, from the Events of the Groups this operator
// can see: a WorkItem's Execution Lease occupies one of its holder's slots from its issue until
// the Event that ends it (submitted, checkpointed for preemption, blocked, failed, revoked) or, with
// no such Event yet, until it expires (§11.3). The runtime view sets each Group's share of an
// Agent's slot time beside its weight in the scheduling policy, when the console was given it, and
// counts the runs in the window that gave their slot back at a checkpoint or lost their lease.
//
// Only spans that reach into the window are kept: a replay of a long history keeps no more than
// the live ones, and each Event costs one lookup. An Agent's time in Groups this operator cannot
// see is not known here, so a share is of the slot time in the Groups shown.

import type {ExecutionLeaseView} from '../authority/model/state.js'

/** The rolling window the runtime view measures slot time over (ms). */
export const SLOT_WINDOW_MS = 10 * 60_000

interface Span {
  groupId: string
  agentId: string
  leaseId: string
  from: number
  /** When an Event ended it; null while it is open. */
  to: number | null
  /** The lease's expiry as last seen: an open span ends there at the latest. */
  expiresAt: number | null
  /** How it ended: an Event, a checkpoint that gave the slot back (work.checkpointed: a preemption or a retry), or the lease's expiry. */
  ended: 'event' | 'checkpointed' | 'expired' | null
}

/** One Group's part of an Agent's slot time in the window. */
export interface GroupSlotTime {
  ms: number
  /** Runs that gave their slot back at a checkpoint (preempted, or checkpointed for a retry). */
  checkpointed: number
  /** Execution Leases that expired while held (ended by expiry, or past it now). */
  expired: number
}

/** One Agent's slot time in the window: in all, and per Group. */
export interface AgentSlotTime {
  totalMs: number
  groups: Map<string, GroupSlotTime>
}

export class SlotTime {
  readonly #open = new Map<string, Span>()
  #closed: Span[] = []
  #pruneAt = 64
  readonly #now: () => number
  readonly windowMs: number

  constructor(options: {now?: () => number; windowMs?: number} = {}) {
    this.#now = options.now ?? Date.now
    this.windowMs = options.windowMs ?? SLOT_WINDOW_MS
  }

  /** What the WorkItem's lease is after an Event of `kind` that occurred at `at` (its occurredAt). */
  note(groupId: string, workItemId: string, lease: ExecutionLeaseView | null, at: string, kind: string): void {
    const key = `${groupId}\n${workItemId}`
    const open = this.#open.get(key)
    const active = lease?.state === 'active' ? lease : null
    if (open !== undefined && open.leaseId !== active?.leaseId) {
      this.#open.delete(key)
      const eventAt = Date.parse(at)
      const end = open.expiresAt !== null && open.expiresAt < eventAt ? open.expiresAt : eventAt
      open.to = end
      open.ended = end < eventAt ? 'expired' : kind === 'work.checkpointed' ? 'checkpointed' : 'event'
      const start = this.#now() - this.windowMs
      if (end >= start) this.#closed.push(open)
      // Nobody may read the view for a long while: prune as spans come, at amortized constant cost.
      if (this.#closed.length >= this.#pruneAt) this.#prune(start)
    }
    if (active === null) return
    const expiresAt = active.expiresAt !== undefined ? Date.parse(active.expiresAt) : null
    const span = this.#open.get(key)
    if (span !== undefined) span.expiresAt = expiresAt
    else
      this.#open.set(key, {
        groupId,
        agentId: active.holderAgentId,
        leaseId: active.leaseId,
        from: Date.parse(active.issuedAt),
        to: null,
        expiresAt,
        ended: null,
      })
  }

  /** How many spans are kept: the open ones and those that end inside the window (at most twice as many). */
  get retained(): number {
    return this.#open.size + this.#closed.length
  }

  #prune(start: number): void {
    this.#closed = this.#closed.filter((s) => s.to! >= start)
    this.#pruneAt = Math.max(64, 2 * this.#closed.length)
  }

  /** Every Agent's slot time in the window ending now. */
  byAgent(): Map<string, AgentSlotTime> {
    const now = this.#now()
    const start = now - this.windowMs
    this.#prune(start)
    const out = new Map<string, AgentSlotTime>()
    for (const s of [...this.#closed, ...this.#open.values()]) {
      const end = Math.min(s.to ?? now, s.expiresAt ?? now, now)
      const ms = Math.max(0, end - Math.max(s.from, start))
      const ended = s.ended ?? (s.expiresAt !== null && s.expiresAt < now ? 'expired' : null)
      if (ms === 0 && ended !== 'checkpointed' && ended !== 'expired') continue
      let agent = out.get(s.agentId)
      if (agent === undefined) out.set(s.agentId, (agent = {totalMs: 0, groups: new Map()}))
      let group = agent.groups.get(s.groupId)
      if (group === undefined) agent.groups.set(s.groupId, (group = {ms: 0, checkpointed: 0, expired: 0}))
      agent.totalMs += ms
      group.ms += ms
      if (ended === 'checkpointed') group.checkpointed++
      if (ended === 'expired') group.expired++
    }
    return out
  }
}
