// Six-dimension budget arithmetic (spec §12, common.schema.json `budget`): usage sums, remaining
// budget, overflow and subset checks. Pure functions over plain JSON, shared by the decider (which
// checks) and apply() (which records), so live state and replay compute the same numbers.
//
// Money is summed in integer micro-units: binary floating point would make 0.1 + 0.2 overflow a
// limit of 0.3. The other five dimensions are safe integers.

import type {BudgetLedger, Usage} from './mission-tree.js'

/** Each ledger dimension and the budget field that limits it. */
export const DIMENSIONS = [
  ['financial', 'financialLimit'],
  ['modelTokens', 'modelTokenLimit'],
  ['toolCalls', 'toolCallLimit'],
  ['computeSeconds', 'computeSecondsLimit'],
  ['wallClockSeconds', 'wallClockSecondsLimit'],
  ['externalSideEffects', 'externalSideEffectLimit'],
] as const satisfies readonly (readonly [keyof Usage, string])[]

export type Dimension = (typeof DIMENSIONS)[number][0]

/** A budget document (common.schema.json `budget`): the limits it bounds, and the currency. */
export type Budget = Partial<Record<(typeof DIMENSIONS)[number][1], number>> & {currency?: string}

/** A usage delta as recorded: any subset of the six dimensions, money with its currency. */
export type UsageDelta = Partial<Usage> & {currency?: string}

/** Remaining budget: only the dimensions the budget bounds (an unbounded one has no remainder). */
export type Remaining = Partial<Usage>

export const ZERO_USAGE: Usage = {
  financial: 0,
  modelTokens: 0,
  toolCalls: 0,
  computeSeconds: 0,
  wallClockSeconds: 0,
  externalSideEffects: 0,
}

export const EMPTY_LEDGER: BudgetLedger = {mission: ZERO_USAGE, workItems: {}}

const MICRO = 1_000_000
const micro = (x: number) => Math.round(x * MICRO)

/** a + b in dimension `d` (money through micro-units). */
function sum(d: Dimension, a: number, b: number): number {
  return d === 'financial' ? (micro(a) + micro(b)) / MICRO : a + b
}

/** limit - used in dimension `d`. */
function minus(d: Dimension, limit: number, used: number): number {
  return d === 'financial' ? (micro(limit) - micro(used)) / MICRO : limit - used
}

/** a <= b in dimension `d`. */
const atMost = (d: Dimension, a: number, b: number) => (d === 'financial' ? micro(a) <= micro(b) : a <= b)

export function addUsage(usage: Usage, delta: UsageDelta): Usage {
  const out = {...usage}
  for (const [d] of DIMENSIONS) if (delta[d] !== undefined) out[d] = sum(d, usage[d], delta[d]!)
  return out
}

/** A budget's limits read as amounts per dimension (what is allocated, e.g. under a Delegation Grant). */
export function limitsAsUsage(budget: Budget | undefined): UsageDelta {
  const out: UsageDelta = {}
  for (const [d, limit] of DIMENSIONS) if (budget?.[limit] !== undefined) out[d] = budget[limit]
  return out
}

/** True when the delta records nothing (every dimension absent or zero). */
export const isZeroDelta = (delta: UsageDelta) => DIMENSIONS.every(([d]) => (delta[d] ?? 0) === 0)

export function remaining(budget: Budget, used: Usage): Remaining {
  const out: Remaining = {}
  for (const [d, limit] of DIMENSIONS) if (budget[limit] !== undefined) out[d] = minus(d, budget[limit]!, used[d])
  return out
}

/** Per dimension, the least of several remainders (a dimension none of them bounds stays absent). */
export function tightest(remainders: readonly Remaining[]): Remaining {
  const out: Remaining = {}
  for (const r of remainders)
    for (const [d] of DIMENSIONS) if (r[d] !== undefined && (out[d] === undefined || r[d]! < out[d]!)) out[d] = r[d]
  return out
}

/** The first dimension in which `used` exceeds `budget`, or null. */
export function overflow(budget: Budget, used: Usage): Dimension | null {
  for (const [d, limit] of DIMENSIONS) if (budget[limit] !== undefined && !atMost(d, used[d], budget[limit]!)) return d
  return null
}

/**
 * §12: money is charged in one currency; a delta in another currency than a budget that bounds
 * money cannot be charged against it.
 */
export function currencyMismatch(budget: Budget, delta: UsageDelta): boolean {
  return (delta.financial ?? 0) !== 0 && budget.financialLimit !== undefined && budget.currency !== delta.currency
}

/**
 * §14/§12 G5: a child budget allocated from `available` (what the parent still has, per bounded
 * dimension): every dimension the parent bounds must be bounded by the child (unless `mustBound`
 * is false: the Mission above the WorkItem, whose other limits the ledger enforces on usage), at
 * most what is available, in the parent's currency. 'unbounded' / 'currency' are structural (INVALID_COMMAND);
 * 'exceeds' is BUDGET_EXCEEDED.
 */
export function allocationProblem(
  child: Budget,
  parent: Budget,
  available: Remaining,
  mustBound = true,
): {problem: 'unbounded' | 'currency' | 'exceeds'; dimension: Dimension} | null {
  for (const [d, limit] of DIMENSIONS) {
    if (parent[limit] === undefined) continue
    if (child[limit] === undefined) {
      if (mustBound) return {problem: 'unbounded', dimension: d}
      continue
    }
    if (d === 'financial' && child.currency !== parent.currency) return {problem: 'currency', dimension: d}
    if (!atMost(d, child[limit]!, available[d]!)) return {problem: 'exceeds', dimension: d}
  }
  return null
}

/** The ledger after charging `delta` to `workItemId` and to the Mission. */
export function charge(ledger: BudgetLedger | undefined, workItemId: string, delta: UsageDelta): BudgetLedger {
  const l = ledger ?? EMPTY_LEDGER
  return {
    mission: addUsage(l.mission, delta),
    workItems: {...l.workItems, [workItemId]: addUsage(l.workItems[workItemId] ?? ZERO_USAGE, delta)},
  }
}

export const workItemUsage = (ledger: BudgetLedger | undefined, workItemId: string): Usage =>
  ledger?.workItems[workItemId] ?? ZERO_USAGE
export const missionUsage = (ledger: BudgetLedger | undefined): Usage => ledger?.mission ?? ZERO_USAGE
