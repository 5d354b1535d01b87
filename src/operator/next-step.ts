// What a Mission waits for, and what the operator does next, with the exact command: the line
// `mwp mission list` shows per Mission and the "next:" line of `mwp mission inspect`. Derived
// from the inspection (views.ts) and the reader's principal ID: the MissionOwner is told to act,
// anyone else who they are waiting for.

import type {MissionInspection, WorkNode} from './views.js'

export interface NextStep {
  /** What happens next, in words. */
  what: string
  /** The command that does it, when the reader can run one. */
  command?: string
}

/** One short phrase: what the Mission waits for ("awaiting your approval", "running: 3/5 WorkItems verified"). */
export function awaiting(v: MissionInspection, me?: string): string {
  if (v.state === 'approved' || v.state === 'cancelled' || v.state === 'failed') return `nothing (${v.state})`
  if (v.state === 'awaiting_approval')
    return v.missionOwner.id === me ? 'awaiting your approval' : `awaiting approval by ${v.missionOwner.id}`
  if (v.coordinator === null) return 'no Coordinator'
  const w = v.work
  if (w.total === 0) return 'running: no WorkItems yet'
  const parts = [`running: ${w.done}/${w.total} WorkItems verified`]
  if (w.blocked.length) parts.push(`${w.blocked.length} blocked/failed`)
  if (w.awaitingApproval.length) parts.push(`${w.awaitingApproval.length} awaiting execution approval`)
  return parts.join(', ') + (v.overdue ? ' (OVERDUE)' : '')
}

/** The next action on the Mission and, where the reader can take it, the command. */
export function nextStep(v: MissionInspection, items: readonly WorkNode[], me?: string): NextStep {
  const g = v.groupId
  const owner = v.missionOwner.id
  const mine = owner === me
  switch (v.state) {
    case 'approved':
    case 'cancelled':
    case 'failed':
      return {what: `nothing: the Mission is ${v.state} (terminal); its history: mwp group tail ${g}`}
    case 'awaiting_approval': {
      const revision = v.submission?.missionRevision
      if (v.approval.rootHumanApproval && !mine)
        return {
          what: `${owner} approves revision ${revision} with the root human MissionOwner's Approval beside it; the root human signs it without sending`,
          command: `mwp mission approve ${g} --sign-only --yes > root-approval.json`,
        }
      if (!mine) return {what: `wait for ${owner} to approve revision ${revision}`}
      const root = v.approval.rootHumanApproval ? ' --root-approval root-approval.json' : ''
      return {
        what: `review revision ${revision} and approve it (or: mwp mission request-changes ${g} --message "…")`,
        command: `mwp mission approve ${g}${root}`,
      }
    }
    case 'active':
      break
  }
  if (v.coordinator === null)
    return {
      what: 'give the Mission a Coordinator',
      ...(mine ? {command: `mwp mission replace-coordinator ${g} --agent AGENT`} : {}),
    }
  const gated = items.find((n) => v.work.awaitingApproval.includes(n.workItemId) && n.ownershipEpoch !== null)
  if (gated && mine)
    return {
      what: `approve the execution of ${gated.workItemId} (${gated.goal})`,
      command: `echo '${JSON.stringify({workItemId: gated.workItemId, ownershipEpoch: gated.ownershipEpoch})}' | mwp command issue --kind approval.grant_execution --group ${g} --payload -`,
    }
  const stuck = items.find((n) => v.work.blocked.includes(n.workItemId))
  if (stuck)
    return {what: `${stuck.workItemId} is ${stuck.state}: see why`, command: `mwp work show ${g} ${stuck.workItemId}`}
  const coordinator = v.coordinator.agentId
  if (v.work.total === 0)
    return {
      what: `the Coordinator ${coordinator} plans the work; follow the Group`,
      command: `mwp group tail ${g} --follow`,
    }
  if (v.work.remaining === 0)
    return {
      what: `the work is done: the Coordinator ${coordinator} submits the result for approval; follow the Group`,
      command: `mwp group tail ${g} --follow`,
    }
  return {what: `${v.work.remaining} WorkItem(s) to go; follow the work`, command: `mwp work list ${g}`}
}
