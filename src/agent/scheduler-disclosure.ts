// §11.2 schedule disclosure: the estimate a Worker publishes for one queued WorkItem (the
// work-item.schema.json scheduleEstimate, plus the start window the spec names), computed from
// figures that carry nothing of another Group.
//
// Why nothing leaks (ACCEPTANCE F3): the inputs are this item's own figures, its own Group's
// queue ahead of it (summed), and Worker-wide aggregates: the slot count, free slots, the time
// until the next slot frees, the longest remaining run, and the summed effective weight of the
// other active Groups. No other Group's ID, name, content, assignment or count of items reaches
// this function, so the result cannot contain them. Exact global queue positions are not derived
// either: the result carries times only, rounded outward to `granularityMs`, and the Group's own
// position is folded into a duration.

export type CapacityStatus = 'available' | 'queued' | 'constrained' | 'blocked'

export interface Disclosure {
  groupId: string
  workItemId: string
  /** Earliest and latest expected start, ms. */
  startWindow: {earliest: number; latest: number}
  /** The most likely start (the schema's estimatedStart), ms. */
  estimatedStart: number
  estimatedCompletion: number
  /** 0 … 1: narrower windows and ungated items are more certain. */
  confidence: number
  capacityStatus: CapacityStatus
  /** The decision time the figures were computed for (the schema's lastCalculatedAt), ms. */
  calculatedAt: number
}

/** Everything the estimate reads: no other Group's identity or items (see the header). */
export interface DisclosureInputs {
  now: number
  slots: number
  freeSlots: number
  /** 0 when a slot is free, else ms until the first running item's estimate runs out. */
  nextFreeMs: number
  longestRemainingMs: number
  maxWaitMs: number
  granularityMs: number
  ownWeight: number
  /** Summed effective weight of the other Groups with ready or running work. */
  otherActiveWeight: number
  /** Summed effective weight of every registered Group, this one included. */
  allWeight: number
  quota: number | undefined
  ownRunning: number
  /** This Group's ready items ordered before the item: their summed estimates and count. */
  aheadMs: number
  aheadCount: number
  estimateMs: number
  eligible: boolean
  needsResources: boolean
}

export function discloseSchedule(groupId: string, workItemId: string, x: DisclosureInputs): Disclosure {
  const cap = Math.min(x.slots, x.quota ?? x.slots)
  // Slots' worth of capacity this Group gets: alone (best), at the current mix (expected), and
  // when every registered Group is backlogged (worst) — never more than its quota allows.
  const best = cap
  const expected = Math.min(cap, (x.slots * x.ownWeight) / (x.ownWeight + x.otherActiveWeight))
  const worst = Math.min(cap, (x.slots * x.ownWeight) / x.allWeight)
  // With c slots the item starts once all but c − 1 of the items ahead have finished, so the
  // fluid time for the work ahead is shortened by c − 1 items of average length.
  const mean = x.aheadCount === 0 ? 0 : x.aheadMs / x.aheadCount
  const through = (c: number) => Math.max(0, x.aheadMs - Math.max(0, c - 1) * mean) / c
  const startableNow = Math.min(x.freeSlots, cap - x.ownRunning)
  const wait = x.aheadCount < startableNow ? 0 : x.nextFreeMs
  const earliest = x.aheadCount < startableNow ? x.now : x.now + through(best)
  const likely = x.aheadCount < startableNow ? x.now : x.now + wait + through(expected)
  // Worst case: every registered Group backlogged, plus one item's worth of this Group's service
  // for the start-time fair queueing lag (another Group's run may come first at every turn).
  // Anti-starvation caps it: the Group starts something at least once per maxWaitMs plus the
  // longest running stretch.
  const aging = x.now + (x.aheadCount + 1) * (x.maxWaitMs + x.longestRemainingMs)
  const latest = Math.max(likely, Math.min(x.now + wait + (x.aheadMs + x.estimateMs) / worst, aging))
  const g = x.granularityMs
  const window = {earliest: Math.floor(earliest / g) * g, latest: Math.ceil(latest / g) * g}
  const estimatedStart = Math.min(window.latest, Math.max(window.earliest, Math.round(likely / g) * g))
  const spread = (window.latest - window.earliest) / Math.max(x.estimateMs, g)
  const certainty = 1 / (1 + spread)
  const confidence = Math.round((x.eligible ? certainty : certainty / 2) * 100) / 100
  const capacityStatus: CapacityStatus = !x.eligible
    ? 'blocked'
    : x.needsResources || (x.quota !== undefined && x.ownRunning >= x.quota)
      ? 'constrained'
      : x.freeSlots > 0 && x.aheadCount === 0
        ? 'available'
        : 'queued'
  return {
    groupId,
    workItemId,
    startWindow: window,
    estimatedStart,
    estimatedCompletion: Math.ceil((estimatedStart + x.estimateMs) / g) * g,
    confidence,
    capacityStatus,
    calculatedAt: x.now,
  }
}
