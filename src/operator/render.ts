// Human-readable rendering of the operator views (the --json form is the view object itself).
// Tables use cli-table3 without colors (style head/border empty), so NO_COLOR needs no special case.

import Table from 'cli-table3'
import type {EventDoc} from './transport.js'
import {outsideVisibility} from './views.js'
import type {
  MissionInspection,
  MissionTreeNode,
  SubmissionReview,
  WorkEvidenceReview,
  WorkGraph,
  WorkNode,
} from './views.js'

const table = (head: string[]) => new Table({head, style: {head: [], border: []}})

export function renderInspection(v: MissionInspection): string {
  const t = table(['field', 'value'])
  t.push(
    ['Mission', v.missionId],
    ['Group', v.groupId],
    ['state', v.state],
    ['objective', v.objective],
    ['deadline', `${v.deadline}${v.overdue ? ' (OVERDUE)' : ''}`],
    ['MissionOwner', v.missionOwner.id],
    ['Coordinator', v.coordinator ? `${v.coordinator.agentId} (epoch ${v.coordinator.coordinatorEpoch})` : '-'],
    ['revision / sequence', `${v.revision} / ${v.sequence}`],
    ['work', progressLine(v.work)],
    ['approval', approvalLine(v)],
  )
  if (v.children.length > 0) t.push(['child Missions', v.children.map((c) => c.groupId).join('\n')])
  const members = table(['member', 'type', 'role', 'epoch', 'active'])
  for (const m of v.members) members.push([m.id, m.type, m.role, String(m.membershipEpoch), m.active ? 'yes' : 'no'])
  const parts = [t.toString(), members.toString()]
  if (v.workEvidence.length > 0) parts.push(renderWorkEvidence(v.workEvidence))
  if (v.submission) parts.push(renderSubmission(v.submission))
  return parts.join('\n')
}

/** §13.2: each submitted WorkItem's Evidence, and which Evidence covers each acceptance criterion. */
export function renderWorkEvidence(items: readonly WorkEvidenceReview[]): string {
  const evidence = table(['Evidence', 'WorkItem (state)', 'type', 'criteria', 'result', 'producer', 'signing hash'])
  const criteria = table(['WorkItem', 'acceptance criterion', 'evidence required', 'covered by Evidence'])
  for (const w of items) {
    for (const e of w.evidence)
      evidence.push([
        e.evidenceId,
        `${w.workItemId} (${w.state})`,
        e.type,
        e.criterionIds.join('\n'),
        e.result,
        `${e.generatedBy.type} ${e.generatedBy.id}`,
        e.signingHash,
      ])
    for (const c of w.criteria)
      criteria.push([
        w.workItemId,
        `${c.criterionId}: ${c.description}`,
        c.evidenceRequired.join(', ') || '-',
        c.coveredBy.join('\n') || '- (none)',
      ])
  }
  return [evidence.toString(), criteria.toString()].join('\n')
}

/** Who signs the final Approval (§7.3, §14), and how a child's root-human co-approval is given. */
function approvalLine(v: MissionInspection): string {
  if (v.approval.kind === 'mission_final') return `mission_final Approval by the MissionOwner (${v.missionOwner.id})`
  const own = `child_mission Approval by the MissionOwner (${v.missionOwner.id})`
  return v.approval.rootHumanApproval
    ? `${own}, with the root human MissionOwner's beside it (mission approve --sign-only, then --root-approval)`
    : own
}

export function progressLine(s: WorkGraph['summary']): string {
  const states = Object.entries(s.byState)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ')
  const parts = [`${s.done} of ${s.total} verified`]
  if (states) parts.push(states)
  if (s.blocked.length) parts.push(`${s.blocked.length} blocked/failed`)
  if (s.overdue.length) parts.push(`${s.overdue.length} overdue`)
  if (s.awaitingApproval.length) parts.push(`${s.awaitingApproval.length} awaiting execution approval`)
  if (s.criticalPath.length) parts.push(`critical path ${s.criticalPath.length} item(s)`)
  return parts.join('; ')
}

/** The approval screen: the submitted revision, its Artifact set and the Evidence behind it. */
export function renderSubmission(s: SubmissionReview): string {
  const head = table(['submitted revision', 'submitted by', 'at'])
  head.push([String(s.missionRevision), s.submittedBy, s.submittedAt])
  const artifacts = table(['Artifact hash', 'produced by WorkItem (state)', 'Evidence'])
  for (const e of s.evidence)
    artifacts.push([
      e.artifactHash,
      e.producedBy.length
        ? e.producedBy.map((p) => `${p.workItemId} (${p.state})`).join('\n')
        : '- (not from a WorkItem)',
      e.evidenceIds.join('\n') || '-',
    ])
  const criteria = table(['acceptance criterion', 'evidence required'])
  for (const c of s.criteria)
    criteria.push([`${c.criterionId}: ${c.description}`, c.evidenceRequired.join(', ') || '-'])
  return [
    head.toString(),
    ...(s.summary ? [`summary: ${s.summary}`] : []),
    artifacts.toString(),
    criteria.toString(),
  ].join('\n')
}

export function renderTree(node: MissionTreeNode, indent = ''): string {
  const label = node.unavailable
    ? `${node.groupId} (${node.unavailable})`
    : `${node.missionId} [${node.state}] ${node.objective}`
  return [indent + label, ...node.children.map((c) => renderTree(c, indent + '  '))].join('\n')
}

export function renderWorkList(g: WorkGraph): string {
  const t = table(['WorkItem', 'state', 'owner', 'deadline', 'approval', 'blockers', 'critical'])
  for (const n of g.items)
    t.push([
      n.workItemId,
      n.state,
      n.owner ?? '-',
      n.deadline ? `${n.deadline}${n.overdue ? ' OVERDUE' : ''}` : '-',
      n.approval,
      n.blockers.join('\n') || '-',
      n.critical ? 'yes' : '',
    ])
  return [...visibilityNote(g.visibleFrom), progressLine(g.summary), t.toString()].join('\n')
}

/** The line a view folded from part of the history starts with (§8). */
const visibilityNote = (visibleFrom: number | undefined): string[] =>
  visibleFrom === undefined ? [] : [`note: ${outsideVisibility(visibleFrom)}`]

/** One WorkItem; with `evidence`, the Evidence its submission carries (§13.2); `visibleFrom` as in WorkGraph. */
export function renderWorkItem(n: WorkNode, evidence?: WorkEvidenceReview, visibleFrom?: number): string {
  const t = table(['field', 'value'])
  t.push(
    ['WorkItem', n.workItemId],
    ['goal', n.goal],
    ['state', n.state],
    ['owner', n.owner ?? '-'],
    ['depends on', n.dependsOn.join('\n') || '-'],
    ['waiting on', n.waitingOn.join('\n') || '-'],
    ['blockers', n.blockers.join('\n') || '-'],
    ['deadline', n.deadline ? `${n.deadline}${n.overdue ? ' (overdue)' : ''}` : '-'],
    ['execution approval', n.approval],
    ['on critical path', n.critical ? 'yes' : 'no'],
    ['last progress', n.lastProgress ?? '-'],
  )
  return [
    ...visibilityNote(visibleFrom),
    t.toString(),
    ...(evidence === undefined ? [] : [renderWorkEvidence([evidence])]),
  ].join('\n')
}

/** The dependency graph as text: each WorkItem with the items it depends on, critical path marked. */
export function renderWorkGraph(g: WorkGraph): string {
  const lines = [...visibilityNote(g.visibleFrom), progressLine(g.summary)]
  if (g.summary.criticalPath.length) lines.push(`critical path: ${g.summary.criticalPath.join(' -> ')}`)
  for (const n of g.items) {
    lines.push(
      `${n.critical ? '*' : ' '} ${n.workItemId} [${n.state}]${n.dependsOn.length ? ` <- ${n.dependsOn.map((d) => (n.waitingOn.includes(d) ? `${d} (waiting)` : d)).join(', ')}` : ''}`,
    )
  }
  return lines.join('\n')
}

/** The text of a message.posted Event (a Message document's text parts), if any. */
export function messageText(e: EventDoc): string | undefined {
  const message = (e.payload as {message?: {content?: {type: string; text?: string}[]}}).message
  const parts = message?.content?.filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text!)
  return parts && parts.length ? parts.join(' ') : undefined
}

/** One line per Event for the live view on a terminal. */
export function renderEventLine(e: EventDoc): string {
  const p = e.payload as Record<string, unknown>
  const text = messageText(e)
  const detail =
    text !== undefined
      ? ` "${text}"`
      : typeof p.workItemId === 'string'
        ? ` ${p.workItemId}`
        : typeof p.reason === 'string'
          ? ` (${p.reason})`
          : ''
  return `#${e.sequence} ${e.occurredAt} ${e.kind} by ${e.actor.id}${detail}`
}
