// Human-readable rendering of the operator views (the --json form is the view object itself).
// Tables are drawn by output.ts: boxed and fitted to a terminal, tab-separated when piped; each
// renderer takes the style (default: tab-separated). IDs are shown with what they name (a
// WorkItem's goal, a Mission's objective), and every Mission with the Group ID the commands take.

import type {MissionListRow} from './mission-list.js'
import type {NextStep} from './next-step.js'
import {PIPED, type TableStyle, grid} from '../cli/output.js'
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

export function renderInspection(v: MissionInspection, style: TableStyle = PIPED, next?: NextStep): string {
  const former = v.coordinators.filter((c) => !c.current)
  const rows = [
    ['Group', v.groupId],
    ['Mission', v.missionId],
    ['state', v.state],
    ['objective', v.objective],
    ['deadline', `${v.deadline}${v.overdue ? ' (OVERDUE)' : ''}`],
    ['MissionOwner', v.missionOwner.id],
    ['Coordinator', v.coordinator ? `${v.coordinator.agentId} (epoch ${v.coordinator.coordinatorEpoch})` : '-'],
    ...(former.length
      ? [['former Coordinators', former.map((c) => `${c.agentId} (epoch ${c.coordinatorEpoch}, fenced)`).join('\n')]]
      : []),
    ['revision / sequence', `${v.revision} / ${v.sequence}`],
    ['work', progressLine(v.work)],
    ['approval', approvalLine(v)],
    ...(v.children.length ? [['child Missions (Group)', v.children.map((c) => c.groupId).join('\n')]] : []),
  ]
  const current = v.coordinator?.agentId
  const members = v.members.map((m) => [
    m.id,
    m.type,
    m.role === 'coordinator' && m.id !== current ? 'coordinator (former)' : m.role,
    String(m.membershipEpoch),
    m.active ? 'yes' : 'no',
  ])
  const parts = [
    grid(['field', 'value'], rows, style),
    grid(['member', 'type', 'role', 'epoch', 'active'], members, style),
  ]
  if (v.workEvidence.length > 0) parts.push(renderWorkEvidence(v.workEvidence, style))
  if (v.submission) parts.push(renderSubmission(v.submission, style))
  if (next) parts.push(renderNext(next))
  return parts.join('\n')
}

/** The "next:" line: what to do, and the exact command on a line of its own. */
export const renderNext = (n: NextStep): string => `next: ${n.what}${n.command ? `\n  ${n.command}` : ''}`

/** §13.2: each submitted WorkItem's Evidence, and which Evidence covers each acceptance criterion. */
export function renderWorkEvidence(items: readonly WorkEvidenceReview[], style: TableStyle = PIPED): string {
  const evidence = items.flatMap((w) =>
    w.evidence.map((e) => [
      e.evidenceId,
      `${w.workItemId} (${w.state})`,
      e.type,
      e.criterionIds.join('\n'),
      e.result,
      `${e.generatedBy.type} ${e.generatedBy.id}`,
      e.signingHash,
    ]),
  )
  const criteria = items.flatMap((w) =>
    w.criteria.map((c) => [
      w.workItemId,
      `${c.criterionId}: ${c.description}`,
      c.evidenceRequired.join(', ') || '-',
      c.coveredBy.join('\n') || '- (none)',
    ]),
  )
  return [
    grid(['Evidence', 'WorkItem (state)', 'type', 'criteria', 'result', 'producer', 'signing hash'], evidence, style),
    grid(['WorkItem', 'acceptance criterion', 'evidence required', 'covered by Evidence'], criteria, style),
  ].join('\n')
}

/**
 * Who signs the final Approval (§7.3, §14) and where that stands: to come on submission, awaited,
 * given, or never (a cancelled or failed Mission).
 */
function approvalLine(v: MissionInspection): string {
  const who =
    v.approval.kind === 'mission_final'
      ? `mission_final Approval by the MissionOwner (${v.missionOwner.id})`
      : `child_mission Approval by the MissionOwner (${v.missionOwner.id})` +
        (v.approval.rootHumanApproval
          ? ", with the root human MissionOwner's beside it (mission approve --sign-only, then --root-approval)"
          : '')
  const end = v.ended
  switch (v.state) {
    case 'active':
      return `on submission: ${who}`
    case 'awaiting_approval':
      return `awaiting the ${who} of revision ${v.submission?.missionRevision}`
    case 'approved':
      return `approved${end?.approvalId ? `: Approval ${end.approvalId}` : ''}${end ? ` by ${end.by} at ${end.at}` : ''}`
    default:
      return `none: the Mission ${v.state === 'failed' ? 'failed' : 'was cancelled'}${end ? ` at ${end.at} by ${end.by}${end.reason ? ` (${end.reason})` : ''}` : ''}; no Approval follows`
  }
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
export function renderSubmission(s: SubmissionReview, style: TableStyle = PIPED): string {
  const artifacts = s.evidence.map((e) => [
    e.artifactHash,
    e.producedBy.length
      ? e.producedBy.map((p) => `${p.workItemId} (${p.state})`).join('\n')
      : '- (not from a WorkItem)',
    e.evidenceIds.join('\n') || '-',
  ])
  const criteria = s.criteria.map((c) => [`${c.criterionId}: ${c.description}`, c.evidenceRequired.join(', ') || '-'])
  return [
    grid(
      ['submitted revision', 'submitted by', 'at'],
      [[String(s.missionRevision), s.submittedBy, s.submittedAt]],
      style,
    ),
    ...(s.summary ? [`summary: ${s.summary}`] : []),
    grid(['Artifact hash', 'produced by WorkItem (state)', 'Evidence'], artifacts, style),
    grid(['acceptance criterion', 'evidence required'], criteria, style),
  ].join('\n')
}

/** The Mission tree: each Mission by the Group ID the commands take, its state and objective. */
export function renderTree(node: MissionTreeNode, indent = ''): string {
  const label = node.unavailable
    ? `${node.groupId} (${node.unavailable})`
    : `${node.groupId} [${node.state}] ${node.objective}`
  return [indent + label, ...node.children.map((c) => renderTree(c, indent + '  '))].join('\n')
}

/** `mwp mission list`: one row per Mission; a child Mission's objective is marked under its parent's. */
export function renderMissionList(rows: readonly MissionListRow[], style: TableStyle = PIPED): string {
  const parents = new Map(rows.map((r) => [r.groupId, r.parentGroupId]))
  const depth = (r: MissionListRow) => {
    let d = 0
    for (let p = r.parentGroupId; p !== undefined && d < rows.length; p = parents.get(p)) d++
    return d
  }
  return grid(
    ['Group', 'state', 'objective', 'deadline', 'awaiting'],
    rows.map((r) => [
      r.groupId,
      r.state ?? '-',
      `${'↳ '.repeat(depth(r))}${r.objective ?? '-'}`,
      r.deadline ? `${r.deadline}${r.overdue ? ' OVERDUE' : ''}` : '-',
      r.awaiting,
    ]),
    style,
    [0],
  )
}

export function renderWorkList(g: WorkGraph, style: TableStyle = PIPED): string {
  const rows = g.items.map((n) => [
    n.workItemId,
    n.goal,
    n.state,
    n.owner ?? '-',
    n.deadline ? `${n.deadline}${n.overdue ? ' OVERDUE' : ''}` : '-',
    n.approval,
    n.blockers.join('\n') || '-',
    n.critical ? 'yes' : '',
  ])
  return [
    ...visibilityNote(g.visibleFrom),
    progressLine(g.summary),
    grid(['WorkItem', 'goal', 'state', 'owner', 'deadline', 'approval', 'blockers', 'critical'], rows, style, [0]),
  ].join('\n')
}

/** The line a view folded from part of the history starts with (§8). */
const visibilityNote = (visibleFrom: number | undefined): string[] =>
  visibleFrom === undefined ? [] : [`note: ${outsideVisibility(visibleFrom)}`]

/** One WorkItem; with `evidence`, the Evidence its submission carries (§13.2); `visibleFrom` as in WorkGraph. */
export function renderWorkItem(
  n: WorkNode,
  evidence?: WorkEvidenceReview,
  visibleFrom?: number,
  style: TableStyle = PIPED,
): string {
  const rows = [
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
  ]
  return [
    ...visibilityNote(visibleFrom),
    grid(['field', 'value'], rows, style),
    ...(evidence === undefined ? [] : [renderWorkEvidence([evidence], style)]),
  ].join('\n')
}

/** The dependency graph as text: each WorkItem with its goal and the items it depends on, critical path marked. */
export function renderWorkGraph(g: WorkGraph): string {
  const lines = [...visibilityNote(g.visibleFrom), progressLine(g.summary)]
  if (g.summary.criticalPath.length) lines.push(`critical path: ${g.summary.criticalPath.join(' -> ')}`)
  for (const n of g.items) {
    lines.push(
      `${n.critical ? '*' : ' '} ${n.workItemId} [${n.state}] ${n.goal}${n.dependsOn.length ? ` <- ${n.dependsOn.map((d) => (n.waitingOn.includes(d) ? `${d} (waiting)` : d)).join(', ')}` : ''}`,
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
