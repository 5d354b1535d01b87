// §12 authoritative resource-usage recording: the Organization-owned
// `ext.missionweaveprotocol.core.resource_usage_record` Command charges a nonzero six-dimension
// delta against one WorkItem, presenting the owner's Ownership Epoch and current Execution Lease
// ID. The charge lands on the WorkItem, its Mission, and every parent WorkItem and Mission up the
// tree, as one `…resource_usage_recorded` Event per Group appended in ONE multi-Group append
// (store/multi-append.ts). An overflow in any one dimension at any level rejects the whole
// transition with BUDGET_EXCEEDED: nothing is appended anywhere.
//
// Check order as elsewhere: Membership → role / ownership / lease → expectedRevision → state →
// budget.

import {ancestorsOf} from '../model/ancestry.js'
import {
  type Budget,
  type Remaining,
  type UsageDelta,
  allocationProblem,
  tightest,
  charge,
  currencyMismatch,
  isZeroDelta,
  missionUsage,
  overflow,
  remaining,
  workItemUsage,
} from '../model/budget.js'
import type {DecidedCommand} from './command.js'
import {type DecideContext, type Decision, type EventDraft, type Refusal, isRefusal, refuse} from './common.js'
import {type Handlers, type InGroup, live} from './gate.js'
import {RESOURCE_USAGE_RECORD, RESOURCE_USAGE_RECORDED} from '../model/mission-tree.js'
import {currentLease} from '../model/work-leases.js'
import type {GroupState} from '../model/state.js'

/** One level of the charge: a WorkItem and the Mission of its Group. */
interface Charged {
  state: GroupState
  workItemId: string
}

export const USAGE_HANDLERS: Handlers = {
  [RESOURCE_USAGE_RECORD]: {
    on: 'group',
    gate: {
      membership: 'active',
      who: {
        by: 'rule',
        check: (state, command, ctx) => {
          if (command.actor.type !== 'agent')
            return refuse('AUTH_FORBIDDEN', 'usage is recorded by the owning Worker Agent')
          const p = command.payload
          const item = state.workItems[p.workItemId]
          // Ownership before the revision check, as for every owner Command (§11.3).
          if (item === undefined) return null
          if (p.ownershipEpoch < item.ownershipEpoch)
            return refuse('WORK_STALE_OWNERSHIP', `ownershipEpoch ${p.ownershipEpoch}, current ${item.ownershipEpoch}`)
          if (
            item.owner === null ||
            item.owner.agentId !== command.actor.id ||
            item.owner.ownershipEpoch !== p.ownershipEpoch
          )
            return refuse('AUTH_FORBIDDEN', 'not the WorkItem owner')
          const lease = currentLease(item, p.leaseId, command.sessionEpoch, ctx.acceptedAt)
          return isRefusal(lease) ? lease : null
        },
      },
      mission: live((_, s) => `usage in a ${s} Mission`),
    },
    decide: recordUsage,
  },
}

function recordUsage(
  {state}: InGroup,
  command: DecidedCommand<typeof RESOURCE_USAGE_RECORD>,
  ctx: DecideContext,
): Decision {
  const p = command.payload
  if (state.workItems[p.workItemId] === undefined) return refuse('INVALID_COMMAND', 'no such WorkItem')
  const delta: UsageDelta = p.delta
  if (isZeroDelta(delta)) return refuse('INVALID_COMMAND', 'a usage record needs a nonzero delta')
  const events = usageCharge(state, ctx, p.workItemId, delta, {
    agentId: command.actor.id,
    ownershipEpoch: p.ownershipEpoch,
    leaseId: p.leaseId,
    sessionEpoch: command.sessionEpoch ?? null,
  })
  return isRefusal(events) ? events : {events}
}

/**
 * Who spent a charge: the execution, on the charged WorkItem's level. A reconciled offline delta
 * (§11.5, decide/offline.ts) names the historical execution session in `sessionEpoch` and the
 * session that reconciled it in `reconciliation`.
 */
export interface ChargedExecution {
  agentId: string
  ownershipEpoch: number
  leaseId: string
  sessionEpoch: number | null
  reconciliation?: {sessionEpoch: number; bufferedAt: string}
}

/**
 * §12: the `…resource_usage_recorded` Events charging a nonzero `delta` to `workItemId` of
 * `state` and to its complete WorkItem/Mission ancestry (one per Group, ctx.groups holding the
 * ancestors), or the refusal: one overflowing dimension anywhere rejects everything.
 */
export function usageCharge(
  state: GroupState,
  ctx: DecideContext,
  workItemId: string,
  delta: UsageDelta,
  execution: ChargedExecution,
): EventDraft[] | Refusal {
  const ancestors = ancestorsOf(state, ctx)
  if (isRefusal(ancestors)) return ancestors
  const levels: Charged[] = [{state, workItemId}, ...ancestors]

  // Check every level first: one overflowing dimension anywhere rejects everything (§12).
  const events: EventDraft[] = []
  const remainders: Remaining[] = []
  for (const [i, level] of levels.entries()) {
    const s = level.state
    const w = s.workItems[level.workItemId]
    if (w === undefined) return refuse('INTERNAL_ERROR', `parent WorkItem ${level.workItemId} missing in ${s.groupId}`)
    const wBudget = w.contract.budget as Budget
    const mBudget = s.mission.budget as Budget
    if (currencyMismatch(wBudget, delta) || currencyMismatch(mBudget, delta))
      return refuse(
        'INVALID_COMMAND',
        `the delta's currency is not the budget currency of ${i === 0 ? 'the WorkItem' : s.missionId}`,
      )
    const after = charge(s.budgetLedger, level.workItemId, delta)
    const wUsed = workItemUsage(after, level.workItemId)
    const mUsed = missionUsage(after)
    const wOver = overflow(wBudget, wUsed)
    if (wOver !== null) return refuse('BUDGET_EXCEEDED', `WorkItem ${level.workItemId} ${wOver} budget exhausted`)
    const mOver = overflow(mBudget, mUsed)
    if (mOver !== null) return refuse('BUDGET_EXCEEDED', `Mission ${s.missionId} ${mOver} budget exhausted`)
    const left = {workItem: remaining(wBudget, wUsed), mission: remaining(mBudget, mUsed)}
    remainders.push(left.workItem, left.mission)
    events.push({
      eventId: ctx.newId(),
      kind: RESOURCE_USAGE_RECORDED,
      ...(i === 0 ? {conversationId: w.conversationId} : {groupId: s.groupId}),
      payload: {
        missionId: s.missionId,
        workItemId: level.workItemId,
        delta,
        cumulative: {workItem: wUsed, mission: mUsed},
        remaining: left,
        // The charged execution (level 0) or the descendant it came from (ancestors).
        ...(i === 0 ? {...execution} : {source: {missionId: state.missionId, groupId: state.groupId, workItemId}}),
      },
    })
  }
  // §12: what the execution may still spend is the least remainder anywhere up the tree — the
  // authoritative cap for the Worker's capability-token budget.
  const first = events[0]!.payload as {remaining: Record<string, Remaining>}
  first.remaining = {...first.remaining, effective: tightest(remainders)}
  return events
}

/**
 * §12 / ACCEPTANCE G5: the Coordinator allocates no more than the Mission's limits. A new
 * WorkItem's budget may not exceed, in any dimension both bound, what the Mission has not yet
 * consumed, and money is allocated in the Mission's currency. (Mission limits the WorkItem leaves
 * open are enforced on every charge by the ledger.)
 */
export function allocationCheck(state: GroupState, budget: Budget): Refusal | null {
  const mission = state.mission.budget as Budget
  const problem = allocationProblem(budget, mission, remaining(mission, missionUsage(state.budgetLedger)), false)
  if (problem === null) return null
  return problem.problem === 'exceeds'
    ? refuse('BUDGET_EXCEEDED', `the WorkItem ${problem.dimension} budget exceeds what the Mission has left`)
    : refuse('INVALID_COMMAND', `the WorkItem budget is not in the Mission's ${problem.dimension} terms`)
}
