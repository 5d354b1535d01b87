// Read-only human control views (issue 4), folded from a Group's verified Events through the
// authority's own apply() — the one definition of Group state — plus the few facts apply() does
// not keep (submission summary, recent Messages, child links). The Evidence a WorkItem was
// submitted with (§13.2) is shown from the state's IDs, hashes and criteria mapping; the signed
// documents themselves are in the work.submitted Events.
//
// Progress is derived from the WorkItem graph, never a percentage (a percentage hides which work
// is blocking and which deadline is at risk): per state counts, the remaining critical path
// (longest chain of unfinished WorkItems through their dependencies), blockers, deadlines and
// approval state.

import {apply} from '../authority/apply/index.js'
import type {GroupState, SubmittedEvidence, WorkItemCore, WorkState} from '../authority/model/state.js'
import {TERMINAL, WORK_TERMINAL} from '../authority/model/state.js'
import {compareTimestampText} from '../json/timestamp.js'
import type {EventDoc} from './transport.js'

/**
 * What the WorkItem views read: the whole Group's state, or the part of it a member whose
 * visibility starts late can fold (visible-work.ts), which says where its visibility starts.
 */
export interface WorkSource {
  groupId: string
  workItems: Record<string, WorkItemCore>
  proposals: GroupState['proposals']
  visibleFrom?: number
}

/** Said beside a view folded from part of the history. */
export const outsideVisibility = (visibleFrom: number) =>
  `history before sequence ${visibleFrom} is outside your visibility`

/** Folds Events (in sequence order) into the Group state; null for no Events. */
export function foldGroup(events: readonly EventDoc[]): GroupState | null {
  let state: GroupState | null = null
  for (const e of events) state = apply(state, e)
  return state
}

export interface MissionInspection {
  groupId: string
  missionId: string
  state: GroupState['mission']['state']
  objective: string
  deadline: string
  /** The Mission deadline has passed while the Mission is not terminal. */
  overdue: boolean
  missionOwner: {type: string; id: string}
  /** The current Coordinator lease (§7.2). */
  coordinator: GroupState['mission']['coordinator']
  /**
   * Every Coordinator the Mission had, first to last, with its Coordinator Epoch: a replaced one
   * keeps its Membership (role coordinator) but is fenced, so the members table alone would show
   * two Coordinators.
   */
  coordinators: {agentId: string; coordinatorEpoch: number; current: boolean; sequence: number}[]
  /** How a terminal Mission ended (§7.1): approved, cancelled or failed, by whom, when, why. */
  ended: MissionEnd | null
  revision: number
  sequence: number
  budget: Record<string, unknown>
  approvalPolicy: Record<string, unknown>
  /** Who approves the submitted result (§7.3, §14): the Approval kind and whether the root human must co-sign. */
  approval: {kind: 'mission_final' | 'child_mission'; rootHumanApproval: boolean}
  definitionOfDone: unknown[]
  members: {id: string; type: string; role: string; membershipEpoch: number; active: boolean}[]
  submission: SubmissionReview | null
  /** §13.2: the Evidence each submitted or verified WorkItem was submitted with, for the review and the final Approval. */
  workEvidence: WorkEvidenceReview[]
  work: WorkProgressSummary
  /** Child Missions created from this Group (mission.child.created), when any. */
  children: ChildLink[]
  lastEventAt: string | null
}

export interface SubmissionReview {
  missionRevision: number
  artifactHashes: string[]
  summary?: string
  submittedAt: string
  submittedBy: string
  /**
   * Evidence summary: what each artifact is backed by in the WorkItem graph — the WorkItems that
   * produced it, and the IDs of the submitted Evidence about it or referencing it (§13.2).
   */
  evidence: {artifactHash: string; producedBy: {workItemId: string; state: WorkState}[]; evidenceIds: string[]}[]
  /** The Mission's acceptance criteria and the evidence kinds they require. */
  criteria: {criterionId: string; description: string; evidenceRequired: string[]}[]
}

/** One WorkItem's submission: its Artifacts, its Evidence and how the Evidence maps to the acceptance criteria. */
export interface WorkEvidenceReview {
  workItemId: string
  state: WorkState
  artifactHashes: string[]
  /** The verified Evidence of the submission (ID, type, subject, criteria, result, producer, signing hash, time). */
  evidence: SubmittedEvidence[]
  /** Each acceptance criterion of the Work Contract, the Evidence types it requires, and the Evidence naming it. */
  criteria: {criterionId: string; description: string; evidenceRequired: string[]; coveredBy: string[]}[]
}

/** The WorkItems whose submission carries Evidence, in the state's order. */
export function workEvidence(state: WorkSource): WorkEvidenceReview[] {
  return Object.values(state.workItems).flatMap((w) => {
    const evidence = w.submission?.evidence
    if (evidence === undefined) return []
    return [
      {
        workItemId: w.workItemId,
        state: w.state,
        artifactHashes: [...w.submission!.artifactHashes],
        evidence: evidence.map((e) => ({...e})),
        criteria: w.contract.acceptanceCriteria.map((c) => ({
          criterionId: c.criterionId,
          description: c.description,
          evidenceRequired: [...c.evidenceRequired],
          coveredBy: evidence.filter((e) => e.criterionIds.includes(c.criterionId)).map((e) => e.evidenceId),
        })),
      },
    ]
  })
}

/** The IDs of submitted Evidence whose subject is `artifactHash` or that references it. */
function evidenceAbout(items: readonly WorkItemCore[], artifactHash: string): string[] {
  return items.flatMap((w) =>
    (w.submission?.evidence ?? [])
      .filter(
        (e) =>
          (e.subject.type === 'artifact' && e.subject.id === artifactHash) || e.artifactHashes.includes(artifactHash),
      )
      .map((e) => e.evidenceId),
  )
}

export interface MissionEnd {
  state: 'approved' | 'cancelled' | 'failed'
  at: string
  by: string
  sequence: number
  /** mission.cancelled / mission.terminated: why (and, propagated through the tree, from where). */
  reason?: string
  /** mission.approved: the final Approval's ID. */
  approvalId?: string
}

const ENDINGS: Record<string, MissionEnd['state']> = {
  'mission.approved': 'approved',
  'mission.cancelled': 'cancelled',
  'mission.terminated': 'failed',
}

/** How the Event ends the Mission, when it is one that makes the Mission terminal. */
function endingOf(e: EventDoc): MissionEnd | null {
  const state = ENDINGS[e.kind]
  if (state === undefined) return null
  const p = e.payload as {reason?: unknown; approval?: {approvalId?: unknown}}
  return {
    state,
    at: e.occurredAt,
    by: e.actor.id,
    sequence: e.sequence,
    ...(typeof p.reason === 'string' ? {reason: p.reason} : {}),
    ...(typeof p.approval?.approvalId === 'string' ? {approvalId: p.approval.approvalId} : {}),
  }
}

/** §7.2: the Coordinator lease a mission.coordinator.assigned Event gave. */
function assignedCoordinator(e: EventDoc): InspectionFacts['coordinators'][number] | null {
  if (e.kind !== 'mission.coordinator.assigned') return null
  const c = (e.payload as {coordinator?: {agentId?: unknown; coordinatorEpoch?: unknown}}).coordinator
  if (typeof c?.agentId !== 'string' || typeof c.coordinatorEpoch !== 'number') return null
  return {agentId: c.agentId, coordinatorEpoch: c.coordinatorEpoch, sequence: e.sequence}
}

export interface ChildLink {
  groupId: string
  missionId?: string
  sequence: number
}

/** §14: the child link of a mission.child.created Event (payload.child, decide/child.ts). */
function childOf(e: EventDoc): ChildLink | null {
  if (e.kind !== 'mission.child.created') return null
  const child = (e.payload as {child?: {groupId?: unknown; missionId?: unknown}}).child
  if (typeof child?.groupId !== 'string') return null
  return {
    groupId: child.groupId,
    ...(typeof child.missionId === 'string' ? {missionId: child.missionId} : {}),
    sequence: e.sequence,
  }
}

export function inspectMission(
  events: readonly EventDoc[],
  now: string = new Date().toISOString(),
): MissionInspection | null {
  const state = foldGroup(events)
  return state === null ? null : inspectFolded(state, events, now)
}

/**
 * The facts of a Mission's view that apply() does not keep in the Group state, noted Event by Event
 * (noteEvent): the last submission's summary, author and time, how the Mission ended, every
 * Coordinator it had, its child Missions, and the time of the last Event. Each grows only with
 * structured transitions (a submission, a Coordinator assignment, a child), never with Messages,
 * so a long-running viewer (the console) keeps these and the state instead of the Events.
 */
export interface InspectionFacts {
  submitted: {summary?: string; at: string; by: string} | null
  ended: MissionEnd | null
  coordinators: {agentId: string; coordinatorEpoch: number; sequence: number}[]
  children: ChildLink[]
  lastEventAt: string | null
}

export const emptyFacts = (): InspectionFacts => ({
  submitted: null,
  ended: null,
  coordinators: [],
  children: [],
  lastEventAt: null,
})

/** Notes one Event (in Group order) into `facts`, in place. */
export function noteEvent(facts: InspectionFacts, e: EventDoc): void {
  facts.lastEventAt = e.occurredAt
  if (e.kind === 'mission.submitted_for_approval') {
    const summary = (e.payload as {summary?: unknown}).summary
    facts.submitted = {...(typeof summary === 'string' ? {summary} : {}), at: e.occurredAt, by: e.actor.id}
  }
  const ending = endingOf(e)
  if (ending) facts.ended = ending
  const coordinator = assignedCoordinator(e)
  if (coordinator) facts.coordinators.push(coordinator)
  const child = childOf(e)
  if (child) facts.children.push(child)
}

/** The facts of `events` (noteEvent over each). */
export function factsOf(events: readonly EventDoc[]): InspectionFacts {
  const facts = emptyFacts()
  for (const e of events) noteEvent(facts, e)
  return facts
}

/** inspectMission for a caller that already folded `events` into `state` (OperatorContext.folded). */
export function inspectFolded(
  state: GroupState,
  events: readonly EventDoc[],
  now: string = new Date().toISOString(),
): MissionInspection {
  return inspectFacts(state, factsOf(events), now)
}

/** The Mission's view from its folded state and the facts noted beside it (an incremental viewer's inspectFolded). */
export function inspectFacts(
  state: GroupState,
  facts: InspectionFacts,
  now: string = new Date().toISOString(),
): MissionInspection {
  const m = state.mission
  let submission: SubmissionReview | null = null
  if (m.submission) {
    const submitted = facts.submitted
    const items = Object.values(state.workItems)
    submission = {
      missionRevision: m.submission.missionRevision,
      artifactHashes: [...m.submission.artifactHashes],
      ...(submitted?.summary !== undefined ? {summary: submitted.summary} : {}),
      submittedAt: submitted?.at ?? '',
      submittedBy: submitted?.by ?? '',
      evidence: m.submission.artifactHashes.map((artifactHash) => ({
        artifactHash,
        producedBy: items
          .filter(
            (w) =>
              w.submission?.artifactHashes.includes(artifactHash) ||
              w.checkpoint?.artifactHashes.includes(artifactHash),
          )
          .map((w) => ({workItemId: w.workItemId, state: w.state})),
        evidenceIds: evidenceAbout(items, artifactHash),
      })),
      criteria: (m.definitionOfDone as {criterionId: string; description: string; evidenceRequired?: string[]}[]).map(
        (c) => ({
          criterionId: c.criterionId,
          description: c.description,
          evidenceRequired: [...(c.evidenceRequired ?? [])],
        }),
      ),
    }
  }
  return {
    groupId: state.groupId,
    missionId: state.missionId,
    state: m.state,
    objective: m.objective,
    deadline: m.deadline,
    overdue: !TERMINAL.has(m.state) && compareTimestampText(m.deadline, now) < 0,
    missionOwner: m.missionOwner,
    coordinator: m.coordinator,
    coordinators: facts.coordinators.map((c) => ({
      ...c,
      current: m.coordinator !== null && m.coordinator.coordinatorEpoch === c.coordinatorEpoch,
    })),
    ended: TERMINAL.has(m.state) ? facts.ended : null,
    revision: state.revision,
    sequence: state.sequence,
    budget: m.budget,
    approvalPolicy: m.approvalPolicy,
    approval:
      m.parent === undefined
        ? {kind: 'mission_final', rootHumanApproval: false}
        : {kind: 'child_mission', rootHumanApproval: m.approvalPolicy.finalHumanApproval === true},
    definitionOfDone: m.definitionOfDone,
    members: Object.values(state.members).map((x) => ({
      id: x.principal.id,
      type: x.principal.type,
      role: x.role,
      membershipEpoch: x.membershipEpoch,
      active: x.active,
    })),
    submission,
    workEvidence: workEvidence(state),
    work: workGraph(state, now).summary,
    children: facts.children.map((c) => ({...c})),
    lastEventAt: facts.lastEventAt,
  }
}

export interface MissionTreeNode {
  groupId: string
  missionId: string | null
  state: string | null
  objective: string | null
  /** Set when the child Group's Events could not be read (not visible or not on this authority). */
  unavailable?: string
  children: MissionTreeNode[]
}

/**
 * The full Mission tree from a root Group, following mission.child.created links. `load` returns
 * a Group's Events and throws when it cannot (the root's failure is the caller's; a child's is
 * shown on its node); a Group already visited is not entered twice.
 */
export async function missionTree(
  rootGroupId: string,
  load: (groupId: string) => Promise<EventDoc[]>,
  seen = new Set<string>(),
): Promise<MissionTreeNode> {
  seen.add(rootGroupId)
  const view = inspectMission(await load(rootGroupId))
  if (view === null) return unavailable(rootGroupId, 'no Events')
  const children: MissionTreeNode[] = []
  for (const child of view.children) {
    if (seen.has(child.groupId)) continue
    children.push(
      await missionTree(child.groupId, load, seen).catch((e: Error) => unavailable(child.groupId, e.message)),
    )
  }
  return {groupId: view.groupId, missionId: view.missionId, state: view.state, objective: view.objective, children}
}

const unavailable = (groupId: string, why: string): MissionTreeNode => ({
  groupId,
  missionId: null,
  state: null,
  objective: null,
  unavailable: why,
  children: [],
})

export interface WorkNode {
  workItemId: string
  goal: string
  state: WorkState
  owner: string | null
  /** The current owner's Ownership Epoch (what an execution approval is bound to, §12). */
  ownershipEpoch: number | null
  dependsOn: string[]
  /** Unfinished WorkItems this one waits for (dependencies not yet verified). */
  waitingOn: string[]
  /** Why it cannot progress now: its own block, a failure, or unfinished dependencies. */
  blockers: string[]
  deadline: string | null
  overdue: boolean
  /** §12 execution approval: not required, required and pending, or granted. */
  approval: 'not_required' | 'pending' | 'granted'
  /** On the remaining critical path. */
  critical: boolean
  lastProgress: string | null
}

export interface WorkProgressSummary {
  total: number
  byState: Partial<Record<WorkState, number>>
  /** verified of total — a count, never a percentage. */
  done: number
  remaining: number
  blocked: string[]
  overdue: string[]
  awaitingApproval: string[]
  openProposals: number
  /** The longest chain of unfinished WorkItems through dependencies, first to last. */
  criticalPath: string[]
}

export interface WorkGraph {
  groupId: string
  at: string
  /** Set when the graph was folded from part of the history: the first sequence the reader sees. */
  visibleFrom?: number
  items: WorkNode[]
  summary: WorkProgressSummary
}

const isDone = (w: WorkItemCore) => WORK_TERMINAL.has(w.state)
const depsOf = (w: WorkItemCore): string[] =>
  Array.isArray(w.contract.dependencyWorkItemIds) ? (w.contract.dependencyWorkItemIds as string[]) : []

/** The WorkItem graph with derived progress at instant `now` (RFC 3339, for deadlines). */
export function workGraph(state: WorkSource, now: string = new Date().toISOString()): WorkGraph {
  const items = Object.values(state.workItems)
  const byId = new Map(items.map((w) => [w.workItemId, w]))
  // Remaining critical path: longest chain of unfinished items, memoized over the DAG. A cycle
  // (the authority refuses them, but be safe) is cut by the visiting set.
  const longest = new Map<string, string[]>()
  const visiting = new Set<string>()
  const chain = (id: string): string[] => {
    const memo = longest.get(id)
    if (memo) return memo
    const w = byId.get(id)
    if (!w || isDone(w) || visiting.has(id)) return []
    visiting.add(id)
    let best: string[] = []
    for (const d of depsOf(w)) {
      const c = chain(d)
      if (c.length > best.length) best = c
    }
    visiting.delete(id)
    const result = [...best, id]
    longest.set(id, result)
    return result
  }
  let critical: string[] = []
  for (const w of items) {
    const c = chain(w.workItemId)
    if (c.length > critical.length) critical = c
  }
  const onPath = new Set(critical)

  const nodes: WorkNode[] = items.map((w) => {
    const dependsOn = depsOf(w)
    const waitingOn = dependsOn.filter((d) => byId.get(d)?.state !== 'verified')
    const blockers: string[] = []
    if (w.state === 'blocked' && w.blocker) blockers.push(`blocked: ${w.blocker.requiredResolution}`)
    if (w.state === 'failed' && w.failure) blockers.push(`failed: ${w.failure.reason}`)
    if (!isDone(w)) for (const d of waitingOn) blockers.push(`waits for ${d}`)
    const deadline = typeof w.contract.deadline === 'string' ? w.contract.deadline : null
    const required = w.contract.executionApproval !== undefined && w.contract.executionApproval !== 'not_required'
    const approval: WorkNode['approval'] = !required
      ? 'not_required'
      : w.executionApproval && w.executionApproval.ownershipEpoch === w.ownershipEpoch
        ? 'granted'
        : 'pending'
    return {
      workItemId: w.workItemId,
      goal: typeof w.contract.goal === 'string' ? w.contract.goal : '',
      state: w.state,
      owner: w.owner?.agentId ?? null,
      ownershipEpoch: w.owner?.ownershipEpoch ?? null,
      dependsOn,
      waitingOn,
      blockers,
      deadline,
      overdue: deadline !== null && !isDone(w) && compareTimestampText(deadline, now) < 0,
      approval,
      critical: onPath.has(w.workItemId),
      lastProgress: w.checkpoint?.progress ?? null,
    }
  })
  const byState: Partial<Record<WorkState, number>> = {}
  for (const w of items) byState[w.state] = (byState[w.state] ?? 0) + 1
  const done = items.filter((w) => w.state === 'verified').length
  return {
    groupId: state.groupId,
    at: now,
    ...(state.visibleFrom !== undefined ? {visibleFrom: state.visibleFrom} : {}),
    items: nodes,
    summary: {
      total: items.length,
      byState,
      done,
      remaining: items.filter((w) => !isDone(w)).length,
      blocked: nodes.filter((n) => n.state === 'blocked' || n.state === 'failed').map((n) => n.workItemId),
      overdue: nodes.filter((n) => n.overdue).map((n) => n.workItemId),
      awaitingApproval: nodes
        .filter((n) => n.approval === 'pending' && !WORK_TERMINAL.has(n.state))
        .map((n) => n.workItemId),
      openProposals: Object.keys(state.proposals).length,
      criticalPath: critical,
    },
  }
}
