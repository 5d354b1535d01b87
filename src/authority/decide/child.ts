// Child and follow-up Missions (spec §7.1 table rows "none → active", §10.2 rows for
// mission.create_child and linked child approval / failure, §14, §20 recursion controls).
//
// mission.create_child (parent Group, current Parent Coordinator with its Coordinator Epoch):
//   parent Group:  mission.child.created — the parent WorkItem becomes `blocked`, its ownership
//                  fenced and an active Execution Lease revoked while the child runs
//   child Group:   mission.created (with `parent`) + mission.coordinator.assigned — the Parent
//                  Coordinator is the child MissionOwner (§14 default)
//   one multi-Group append (store/multi-append.ts). Budget, deadline, capabilities and resources
//   must be subsets of the parent WorkItem's (and budget of what it and its Mission have left);
//   the ancestry stays acyclic; beyond the Organization's default maximum depth the Command needs
//   an explicit escalation: a cited Cooperation Override Grant (§20, rate-limits.ts consumes it).
// mission.create_follow_up (new Group, the approved Mission's human MissionOwner, no epochs):
//   mission.follow_up.created + mission.coordinator.assigned, linked to the earlier Mission.
// Child outcome (childOutcome, after mission.approve / terminate / cancel in a child Group): the
//   parent WorkItem gets CHILD_CONCLUDED in the same multi-Group append — `verified` with the
//   child's Approval and Artifacts as Evidence, or structured failure Evidence and `blocked` /
//   `failed` per the declared policy; an indispensable child's failure also fails the parent
//   Mission (mission.terminated), and that failure climbs the tree the same way.
// Cascade (cascadeCancellation, after Mission lifecycle and WorkItem decisions): a Mission that
//   ends, or a promoted WorkItem the Coordinator cancels or fails, cancels every child Mission
//   still running below it, in the same append.

import {canonicalHash} from '../../json/jcs.js'
import {compareTimestampText} from '../../json/timestamp.js'
import type {Principal} from '../../signing/profiles.js'
import {ancestorsOf} from '../model/ancestry.js'
import {type Budget, allocationProblem, missionUsage, remaining, workItemUsage} from '../model/budget.js'
import type {CommandFields, DecidedCommand} from './command.js'
import {
  type DecideContext,
  type Decision,
  type EventDraft,
  type Refusal,
  isRefusal,
  refuse,
  revisionConflict,
} from './common.js'
import type {Handlers, InGroup} from './gate.js'
import {missionCreate, openingEvents} from './mission.js'
import type {MissionCreateChildPayload} from '../model/payloads.generated.js'
import {CHILD_CONCLUDED, type ChildFailurePolicy, runningChild} from '../model/mission-tree.js'
import {type GroupState, TERMINAL, type WorkState} from '../model/state.js'

/** §10.2: the WorkItem states mission.create_child leaves from. */
const PROMOTABLE: ReadonlySet<WorkState> = new Set(['open', 'offered', 'queued', 'active', 'blocked'])

const DEFAULT_FAILURE_POLICY: ChildFailurePolicy = {onFailure: 'block', indispensable: false}

export const CHILD_HANDLERS: Handlers = {
  'mission.create_child': {
    on: 'group',
    // §7.2: only the current Coordinator epoch may create child Missions.
    gate: {
      membership: 'active',
      who: {by: 'coordinator'},
      mission: {from: (s) => s === 'active', reason: (kind, s) => `${kind} in a ${s} Mission`},
    },
    decide: createChild,
  },
  // expectedRevision is checked after the link to the earlier Mission (createFollowUp).
  'mission.create_follow_up': {on: 'new-group', revision: false, decide: createFollowUp},
}

type Capability = {id: string; version: string}
type ResourceGrant = {resource: string; operations: string[]}

function createChild({state}: InGroup, command: DecidedCommand<'mission.create_child'>, ctx: DecideContext): Decision {
  const p = command.payload
  const workItemId = p.workItemId
  const item = state.workItems[workItemId]
  if (item === undefined) return refuse('INVALID_COMMAND', 'no such WorkItem')
  if (!PROMOTABLE.has(item.state)) return refuse('INVALID_STATE_TRANSITION', `mission.create_child from ${item.state}`)
  if (runningChild(item) !== null)
    return refuse('INVALID_STATE_TRANSITION', 'a child Mission already runs this WorkItem')

  // §20: the ancestry stays acyclic — the child may not reuse any Mission or Group on its chain.
  const ancestors = ancestorsOf(state, ctx)
  if (isRefusal(ancestors)) return ancestors
  const childMissionId = p.missionId
  const childGroupId = p.groupId
  for (const s of [state, ...ancestors.map((a) => a.state)]) {
    if (s.missionId === childMissionId || s.groupId === childGroupId)
      return refuse('INVALID_COMMAND', `cyclic Mission ancestry: ${s.missionId} is already an ancestor`)
  }
  if (ctx.groups?.[childGroupId] !== null) return refuse('INVALID_STATE_TRANSITION', 'the child Group already exists')

  const subset = childSubset(state, item.workItemId, p)
  if (subset) return subset

  // §14/§20: beyond the Organization's default maximum depth, only an explicit escalation — a
  // cited Cooperation Override Grant, checked and consumed by the cooperation gate — lets it pass.
  const depth = (state.mission.parent?.depth ?? 0) + 1
  const grantId = command.cooperationOverrideGrantId
  if (ctx.maxMissionDepth !== undefined && depth > ctx.maxMissionDepth && grantId === undefined) {
    return refuse('RATE_LIMITED', `Mission depth ${depth} exceeds the Organization default ${ctx.maxMissionDepth}`)
  }

  const lease = state.mission.coordinator!
  const childOwner: Principal = {type: 'agent', id: lease.agentId}
  const coordinatorAgentId = p.coordinatorAgentId
  // Memberships are keyed by principal: one Agent cannot hold both child roles.
  if (coordinatorAgentId === childOwner.id)
    return refuse(
      'INVALID_COMMAND',
      'the child Coordinator must differ from the child MissionOwner (the Parent Coordinator)',
    )

  const failurePolicy: ChildFailurePolicy = p.childFailurePolicy ?? DEFAULT_FAILURE_POLICY
  const childCreatedId = ctx.newId()
  // The child Group opens like a root one, in the child Group; the Mission names its parent
  // (mission.schema.json `parent`) and its Group rides beside it.
  const opening = openingEvents({missionId: childMissionId, groupId: childGroupId}, childOwner, p, ctx, {
    mission: {parent: {missionId: state.missionId, workItemId, depth}},
    payload: {parentGroupId: state.groupId},
    groupId: childGroupId,
  })
  const childCreated: EventDraft = {
    eventId: childCreatedId,
    kind: 'mission.child.created',
    conversationId: item.conversationId,
    payload: {
      workItemId,
      revision: item.revision + 1,
      child: {
        missionId: childMissionId,
        groupId: childGroupId,
        depth,
        missionOwner: childOwner,
        coordinatorAgentId,
        budget: p.budget,
        deadline: p.deadline,
        requiredCapabilities: p.requiredCapabilities ?? item.contract.requiredCapabilities,
        allowedResources: p.allowedResources ?? item.contract.allowedResources,
        failurePolicy,
      },
      // §10.2: ownership is fenced while the linked child Mission runs.
      ...(item.owner !== null ? {fencedOwnershipEpoch: item.owner.ownershipEpoch} : {}),
      ...(item.lease?.state === 'active' ? {revokedLeaseId: item.lease.leaseId} : {}),
    },
  }
  return {events: [childCreated, ...opening]}
}

/**
 * §14: budget, deadline, capabilities, data access and permissions of the child are subsets of
 * the parent WorkItem's (the budget of what the WorkItem and its Mission have not yet consumed);
 * the child cannot relax the parent's execution-approval gate.
 */
function childSubset(state: GroupState, workItemId: string, p: MissionCreateChildPayload): Refusal | null {
  const item = state.workItems[workItemId]!
  const contract = item.contract
  const child: Budget = p.budget
  // The child is allocated from the parent WorkItem (every dimension it bounds) and may not exceed
  // what the parent Mission has left; Mission limits the WorkItem leaves open are enforced on usage.
  for (const [what, parent, used, mustBound] of [
    ['WorkItem', contract.budget as Budget, workItemUsage(state.budgetLedger, workItemId), true],
    ['Mission', state.mission.budget as Budget, missionUsage(state.budgetLedger), false],
  ] as const) {
    const problem = allocationProblem(child, parent, remaining(parent, used), mustBound)
    if (problem?.problem === 'exceeds')
      return refuse('BUDGET_EXCEEDED', `the child ${problem.dimension} budget exceeds what the parent ${what} has left`)
    if (problem)
      return refuse(
        'INVALID_COMMAND',
        `the child budget is not a subset of the parent ${what} budget (${problem.problem} ${problem.dimension})`,
      )
  }
  const deadline = p.deadline
  if (
    compareTimestampText(deadline, contract.deadline) > 0 ||
    compareTimestampText(deadline, state.mission.deadline) > 0
  ) {
    return refuse('INVALID_COMMAND', 'the child deadline is later than the parent WorkItem or Mission deadline')
  }
  const parentCaps = contract.requiredCapabilities as Capability[]
  for (const c of p.requiredCapabilities ?? []) {
    if (!parentCaps.some((pc) => pc.id === c.id && pc.version === c.version))
      return refuse('INVALID_COMMAND', `capability ${c.id}@${c.version} is not granted to the parent WorkItem`)
  }
  const parentGrants = contract.allowedResources as ResourceGrant[]
  for (const g of p.allowedResources ?? []) {
    const granted = parentGrants.find((pg) => pg.resource === g.resource)
    if (granted === undefined || !g.operations.every((o) => granted.operations.includes(o)))
      return refuse('INVALID_COMMAND', `resource ${g.resource} exceeds the parent WorkItem's grant`)
  }
  const policy = p.approvalPolicy
  if (
    (state.mission.approvalPolicy as {highRiskExecutionApproval?: boolean}).highRiskExecutionApproval === true &&
    !policy.highRiskExecutionApproval
  ) {
    return refuse('INVALID_COMMAND', 'the child may not relax the parent execution-approval policy')
  }
  return null
}

/** §7.1: a follow-up is mission.create's transition, linked to an approved Mission of the same human owner. */
function createFollowUp(command: DecidedCommand<'mission.create_follow_up'>, ctx: DecideContext): Decision {
  const link = command.payload.followUpTo
  const earlier = ctx.groups?.[link.groupId] ?? null
  // A stranger learns nothing about the earlier Mission (no existence oracle).
  const wasMember = earlier !== null && earlier.members[command.actor.id]?.principal.type === command.actor.type
  if (earlier === null || !wasMember || earlier.missionId !== link.missionId)
    return refuse('GROUP_NOT_FOUND', 'no such Mission')
  const owner = earlier.mission.missionOwner
  if (owner.type !== command.actor.type || owner.id !== command.actor.id)
    return refuse('AUTH_FORBIDDEN', 'a follow-up is created by the same human MissionOwner (§7.1)')
  if (earlier.mission.state !== 'approved')
    return refuse(
      'INVALID_STATE_TRANSITION',
      `a follow-up continues an approved Mission, not a ${earlier.mission.state} one`,
    )
  const conflict = revisionConflict(null, command)
  if (conflict) return conflict
  const created = missionCreate(command, ctx)
  if ('error' in created) return created
  const [first, ...rest] = created.events
  const payload = first!.payload as {mission: Record<string, unknown>}
  // mission.schema.json names the earlier Mission (followUpToMissionId); its Group rides beside it.
  const linked = {
    ...payload,
    mission: {...payload.mission, followUpToMissionId: link.missionId},
    followUpToGroupId: link.groupId,
  }
  return {events: [{...first!, kind: 'mission.follow_up.created', payload: linked}, ...rest]}
}

/** The terminal Mission Events that conclude a child (and the outcome each means for the parent). */
const OUTCOME: Readonly<Record<string, 'approved' | 'failed' | 'cancelled'>> = {
  'mission.approved': 'approved',
  'mission.terminated': 'failed',
  'mission.cancelled': 'cancelled',
}

/**
 * Runs after the Mission lifecycle decided a Command: when it concluded a child Mission, the
 * parent WorkItem's transition (and, for an indispensable child, the parent Mission's failure,
 * recursively up the tree) join the same atomic append.
 */
export function childOutcome(
  state: GroupState | null,
  command: CommandFields,
  ctx: DecideContext,
  decision: Decision,
): Decision {
  if ('error' in decision || state === null || state.mission.parent === undefined) return decision
  const concluding = decision.events.find((e) => OUTCOME[e.kind] !== undefined && e.groupId === undefined)
  if (concluding === undefined) return decision
  const ancestors = ancestorsOf(state, ctx)
  if (isRefusal(ancestors)) return ancestors
  const events = [...decision.events]
  let child = state
  let outcome = OUTCOME[concluding.kind]!
  const stated = concluding.payload.reason
  let reason = typeof stated === 'string' ? stated : 'approved'
  for (const {state: parent, workItemId} of ancestors) {
    const item = parent.workItems[workItemId]
    const link = item?.childMission
    // The parent moved on (cancelled the WorkItem, replaced the child, ended its Mission): the
    // child's conclusion stays in the child Group only.
    if (
      item === undefined ||
      link?.missionId !== child.missionId ||
      runningChild(item) === null ||
      TERMINAL.has(parent.mission.state)
    )
      break
    const criterionIds = (item.contract.acceptanceCriteria as {criterionId: string}[]).map((c) => c.criterionId)
    const approval =
      outcome === 'approved'
        ? (concluding.payload.approval as {approvalId?: string; artifactHashes?: string[]} | undefined)
        : undefined
    const artifactHashes = [...(approval?.artifactHashes ?? [])].sort()
    const evidence = {
      evidenceId: ctx.newId(),
      missionId: parent.missionId,
      groupId: parent.groupId,
      workItemId,
      type: outcome === 'approved' ? 'reviewer_assessment' : 'failure_report',
      subject: {type: 'mission', id: child.missionId},
      criterionIds,
      method:
        outcome === 'approved' ? 'child Mission approved by its MissionOwner (§14)' : `child Mission ${outcome} (§14)`,
      result: outcome === 'approved' ? 'passed' : 'failed',
      details: {
        childMissionId: child.missionId,
        childGroupId: child.groupId,
        outcome,
        reason,
        ...(approval?.approvalId !== undefined ? {approvalId: approval.approvalId} : {}),
      },
      artifactHashes,
      generatedBy: {type: command.actor.type, id: command.actor.id},
      createdAt: ctx.acceptedAt,
    }
    const to: WorkState =
      outcome === 'approved' ? 'verified' : link.failurePolicy.onFailure === 'fail' ? 'failed' : 'blocked'
    events.push({
      eventId: ctx.newId(),
      kind: CHILD_CONCLUDED,
      groupId: parent.groupId,
      conversationId: item.conversationId,
      payload: {
        workItemId,
        revision: item.revision + 1,
        child: {missionId: child.missionId, groupId: child.groupId},
        outcome,
        to,
        artifactHashes,
        evidence,
        evidenceHashes: [canonicalHash(evidence)],
        ...(approval !== undefined ? {approval} : {}),
      },
    })
    // §14: failure climbs only when the parent declared this child indispensable (no alternative).
    if (outcome === 'approved' || !link.failurePolicy.indispensable) break
    reason = `indispensable child Mission ${child.missionId} ${outcome}`
    events.push({
      eventId: ctx.newId(),
      kind: 'mission.terminated',
      groupId: parent.groupId,
      payload: {
        missionId: parent.missionId,
        reason,
        propagatedFrom: {missionId: child.missionId, groupId: child.groupId},
      },
    })
    child = parent
    outcome = 'failed'
  }
  return {events}
}

/** Events that end a Mission, and so every child Mission still running under it (§7.1). */
const MISSION_ENDED: ReadonlySet<string> = new Set(['mission.cancelled', 'mission.terminated'])

/**
 * §7.1 "parent-cancellation propagation" / §10.2 last row: when a decision ends a Mission (cancel,
 * terminate, or a failure propagated from an indispensable child) or cancels or fails a WorkItem
 * (control returns to the Coordinator, the child's work is moot), every
 * child Mission still running under it is cancelled in the same atomic append, and so on down
 * the tree. Ingress loaded the whole tree for the kinds that can do this (cross-group.ts).
 */
export function cascadeCancellation(state: GroupState | null, ctx: DecideContext, decision: Decision): Decision {
  if ('error' in decision || state === null) return decision
  const stateOf = (g: string) => (g === state.groupId ? state : (ctx.groups?.[g] ?? null))
  const ended = new Set(
    decision.events.filter((e) => OUTCOME[e.kind] !== undefined).map((e) => e.groupId ?? state.groupId),
  )
  const queue: {parent: GroupState; groupId: string}[] = []
  const running = (s: GroupState, only?: string) =>
    Object.values(s.workItems)
      .filter((w) => runningChild(w) !== null && (only === undefined || w.workItemId === only))
      .map((w) => ({parent: s, groupId: w.childMission!.groupId}))
  for (const e of decision.events) {
    const s = stateOf(e.groupId ?? state.groupId)
    if (s === null) continue
    if (MISSION_ENDED.has(e.kind)) queue.push(...running(s))
    else if (e.kind === 'work.cancelled' || e.kind === 'work.failed') {
      const id = e.payload.workItemId
      if (typeof id === 'string') queue.push(...running(s, id))
    }
  }
  const events = [...decision.events]
  while (queue.length > 0) {
    const {parent, groupId} = queue.shift()!
    const child = stateOf(groupId)
    // A child created after ingress collected the tree (a race with mission.create_child in
    // another queue or process): refuse retryably rather than leave it running under an ended parent.
    if (child === null) return refuse('INTERNAL_ERROR', `running child Group ${groupId} was not loaded; retry`)
    if (ended.has(groupId) || TERMINAL.has(child.mission.state)) continue
    ended.add(groupId)
    const reason = `parent Mission ${parent.missionId} ended`
    events.push({
      eventId: ctx.newId(),
      kind: 'mission.cancelled',
      groupId,
      payload: {
        missionId: child.missionId,
        reason,
        propagatedFrom: {missionId: parent.missionId, groupId: parent.groupId},
      },
    })
    queue.push(...running(child))
  }
  return events.length === decision.events.length ? decision : {events}
}
