// The Coordinator's decisions for one Group, as a pure function of what it knows: the Group's
// folded state, its plan, the Agent directory and the clock. It never does I/O, so the same view
// gives the same next steps — after a crash, or in a replacement Coordinator that rebuilt the
// view by replay (§7.2 "reconcile current WorkItem state before issuing new assignments").
//
// In plan order, each planned WorkItem moves along §10.2:
//   absent, dependencies verified        → authorize (complete contract, inputs from dependencies)
//   open                                 → offer to the best candidate, or create the child Mission (§14)
//   offered, expired or declined         → offer to the next candidate
//   queued/active/blocked, owner lapsed  → reassign (a new offer; the authority fences the old owner)
//   submitted                            → review (§13.2), then accept or send back
//   failed, rounds left                  → offer again with the review's findings
// and when every planned WorkItem is verified, the Mission is submitted for approval with the
// exact Artifact set (§7.3). A child Mission this Coordinator owns is approved once submitted.

import type {GroupState, WorkItemView} from '../../authority/model/state.js'
import {lapsedOwnership} from '../../authority/model/work-leases.js'
import {compareTimestampText, formatUtcNow} from '../../json/timestamp.js'
import {mutated} from '../../mutants.js'
import {type AgentEntry, type PresenceView, type Ranked, rank} from './candidates.js'
import type {ArtifactName} from './contract.js'
import type {MissionView} from './mission-view.js'
import {type Plan, planFor} from './plan.js'
import {type Planned, instantiate, submittedInstances} from './planned.js'

export type Step =
  | {kind: 'renew'}
  | {kind: 'no-plan'}
  | {
      kind: 'authorize'
      planned: Planned
      inputs: {hash: string; name?: ArtifactName}[]
      dependencyWorkItemIds: string[]
    }
  | {
      kind: 'offer'
      planned: Planned
      item: WorkItemView
      candidate: Ranked
      why: 'first' | 'next' | 'reassign' | 'rework'
    }
  | {kind: 'child'; planned: Planned; item: WorkItemView; coordinator: AgentEntry}
  | {kind: 'review'; planned: Planned; item: WorkItemView}
  | {kind: 'give-up'; planned: Planned; item: WorkItemView}
  | {kind: 'submit'; artifactHashes: string[]}
  | {kind: 'approve-child'}
  /** §7.2: a replacement Coordinator's first act: the signed Context Package of what it reconciled. */
  | {kind: 'handover'}

export interface PlanContext {
  self: string
  plans: readonly Plan[]
  agents: readonly AgentEntry[]
  names: ReadonlyMap<string, ArtifactName>
  /** Outstanding offers and owned unfinished WorkItems per Agent, over every Group (loadOf). */
  load: ReadonlyMap<string, number>
  nowMs: number
  /** Renew the Coordinator lease when less than this remains. */
  renewBeforeMs: number
  /** Typical run length for availability estimates. */
  runMs: number
  /** Fresh Presence of the Organization's Agents (candidates.ts presenceViews). */
  presence?: ReadonlyMap<string, PresenceView>
}

const DEFAULT_MAX_ROUNDS = 3

/** The steps to take in `view` now, most urgent first (the runtime sends one Command per Group at a time). */
export function nextSteps(ctx: PlanContext, view: MissionView): Step[] {
  const state = view.state
  if (state === null) return []
  const mission = state.mission
  if (mission.missionOwner.id === ctx.self && mission.state === 'awaiting_approval') return [{kind: 'approve-child'}]
  if (mission.coordinator?.agentId !== ctx.self || mission.state !== 'active') return []
  const steps: Step[] = []
  const lease = mission.coordinator.leaseExpiresAt
  // §7.2: a lease created unbounded is bounded at once, so a replacement can tell when it stopped.
  if ((lease === null || Date.parse(lease) - ctx.nowMs < ctx.renewBeforeMs) && !mutated('coordinator-no-renewal'))
    steps.push({kind: 'renew'})
  // A replacement (epoch > 1) reconciled by replay first; before any assignment it hands over the
  // signed Context Package of the state it found (once per epoch, even across its own restarts).
  const epoch = mission.coordinator.coordinatorEpoch
  if (epoch > 1 && !view.handedOver.has(epoch)) return [...steps, {kind: 'handover'}]
  const plan = planFor(ctx.plans, mission)
  if (plan === null) return [...steps, {kind: 'no-plan'}]
  const planned = instantiate(plan, mission.missionId, view.changeReasons)
  const byInstance = new Map(planned.map((p) => [p.instance, p]))
  const itemOf = (instance: string) => state.workItems[byInstance.get(instance)!.workItemId]
  let allVerified = true
  for (const p of planned) {
    const item = state.workItems[p.workItemId]
    if (item?.state !== 'verified') allVerified = false
    const step = itemStep(ctx, plan, view, state, p, item, itemOf)
    if (step !== null) steps.push(step)
  }
  if (allVerified) {
    const artifactHashes = submittedInstances(plan, planned).flatMap((i) => itemOf(i)?.submission?.artifactHashes ?? [])
    steps.push({kind: 'submit', artifactHashes: [...new Set(artifactHashes)].sort()})
  }
  return steps
}

function itemStep(
  ctx: PlanContext,
  plan: Plan,
  view: MissionView,
  state: GroupState,
  p: Planned,
  item: WorkItemView | undefined,
  itemOf: (instance: string) => WorkItemView | undefined,
): Step | null {
  if (item === undefined) {
    const deps = p.dependsOn.map(itemOf)
    if (!deps.every((d) => d?.state === 'verified') && !mutated('planner-ignores-dependencies')) return null
    const inputs = p.inputsFrom
      .flatMap((i) => itemOf(i)?.submission?.artifactHashes ?? [])
      .map((hash) => {
        const name = ctx.names.get(hash)
        return name ? {hash, name} : {hash}
      })
    const dependencyWorkItemIds = deps.filter((d) => d !== undefined).map((d) => d.workItemId)
    return {kind: 'authorize', planned: p, inputs, dependencyWorkItemIds}
  }
  const now = formatUtcNow(new Date(ctx.nowMs))
  // §7.2/§13.2: whoever produced the results this WorkItem judges never gets it.
  const authors = p.independentOf.flatMap((i) => (itemOf(i)?.submission?.evidence ?? []).map((e) => e.generatedBy.id))
  const offer = (why: 'first' | 'next' | 'reassign' | 'rework', exclude: Iterable<string>): Step | null => {
    const broken = mutated('offer-to-author')
    const candidate = bestCandidate(
      ctx,
      state,
      item,
      broken ? {...p, item: {...p.item, prefer: authors}} : p,
      new Set(broken ? exclude : [...exclude, ...authors]),
    )
    return candidate === null ? null : {kind: 'offer', planned: p, item, candidate, why}
  }
  const lapsedOwners = lapsed(item)
  const declined = view.declined.get(item.workItemId) ?? new Set<string>()
  switch (item.state) {
    case 'open':
      if (p.item.child !== undefined) {
        const coordinator = agentNamed(ctx.agents, p.item.child.coordinator)
        return coordinator === undefined ? null : {kind: 'child', planned: p, item, coordinator}
      }
      return offer('first', [...lapsedOwners, ...declined])
    case 'offered': {
      const o = item.offer
      const expired = o !== null && compareTimestampText(o.expiresAt, now) <= 0
      const allDeclined = o !== null && o.candidates.every((c) => declined.has(c))
      return expired || allDeclined ? offer('next', [...lapsedOwners, ...declined, ...(o?.candidates ?? [])]) : null
    }
    case 'queued':
    case 'active':
    case 'blocked': {
      if (item.childMission?.state === 'running') return null
      const lapsed = lapsedOwnership(item, now)
      return lapsed === null ? null : offer('reassign', [...lapsedOwners, lapsed.agentId])
    }
    case 'submitted':
      return {kind: 'review', planned: p, item}
    case 'failed': {
      const rounds = view.failures.get(item.workItemId)?.length ?? 0
      if (rounds >= (plan.defaults?.maxRounds ?? DEFAULT_MAX_ROUNDS)) return {kind: 'give-up', planned: p, item}
      // Sent back by review: the author may rework it (it knows the work); only lapsed owners are left out.
      return offer('rework', lapsed(item))
    }
    default:
      return null
  }
}

function bestCandidate(
  ctx: PlanContext,
  state: GroupState,
  item: WorkItemView,
  p: Planned,
  exclude: Set<string>,
): Ranked | null {
  exclude.add(ctx.self)
  const ranked = rank(ctx.agents, {
    required: item.contract.requiredCapabilities,
    ...(p.item.prefer ? {prefer: p.item.prefer} : {}),
    exclude,
    load: ctx.load,
    cost: item.contract.budget.financialLimit ?? 0,
    nowMs: ctx.nowMs,
    runMs: ctx.runMs,
    ...(ctx.presence ? {presence: ctx.presence} : {}),
  })
  // §8 just-in-time Membership: an Agent that is not yet a member holds at most one provisional
  // Membership, for one offered WorkItem; a second offer would replace it. So the best candidate
  // waits its turn (its answer to the first offer takes a moment) rather than the WorkItem going
  // to a lower-ranked one (§10.3: offered sequentially to the highest-ranked eligible Worker).
  const now = formatUtcNow(new Date(ctx.nowMs))
  const best = ranked[0]
  if (best === undefined) return null
  const m = state.members[best.agent.agentId]
  const held = m?.active && m.provisional === undefined ? undefined : m?.provisional
  const busy =
    held !== undefined &&
    held.workItemId !== item.workItemId &&
    compareTimestampText(held.expiresAt, now) > 0 &&
    state.workItems[held.workItemId]?.state === 'offered'
  return busy ? null : best
}

/** Agents whose ownership of `item` lapsed (missed start, lease or blocked deadline), not ended by a verdict. */
const lapsed = (item: WorkItemView) =>
  (item.endedOwnerships ?? []).filter((o) => LAPSES.has(o.reason)).map((o) => o.agentId)
const LAPSES: ReadonlySet<string> = new Set([
  'execution lease expired',
  'start deadline missed',
  'blocked lease expired',
])

export const agentNamed = (agents: readonly AgentEntry[], nameOrId: string) =>
  agents.find((a) => a.name === nameOrId || a.agentId === nameOrId)

/** Per Agent: offers it holds and unfinished WorkItems it owns, in the Groups this Coordinator sees. */
export function loadOf(views: Iterable<MissionView>): Map<string, number> {
  const load = new Map<string, number>()
  const add = (agentId: string) => load.set(agentId, (load.get(agentId) ?? 0) + 1)
  for (const v of views)
    for (const w of Object.values(v.state?.workItems ?? {})) {
      if (w.state === 'offered') for (const c of w.offer?.candidates ?? []) add(c)
      else if ((w.state === 'queued' || w.state === 'active' || w.state === 'blocked') && w.owner) add(w.owner.agentId)
    }
  return load
}
