// Payloads of the human control Commands, built from plain options (the CLI flags).

import {randomUUID} from 'node:crypto'
import {compareInstants, formatUtcNow, parseTimestamp} from '../json/timestamp.js'

export interface NewMission {
  organization?: string
  groupId?: string
  objective: string
  coordinatorAgentId: string
  deadline?: string
  /** "ID: description" or a bare description (ID criterion-N). */
  criteria?: string[]
  evidenceRequired?: string[]
  budget?: Record<string, unknown>
  highRiskExecutionApproval?: boolean
}

const DAY_MS = 24 * 3600 * 1000

/** The IDs of a new Group and its Mission share one UUID, so either names the other. */
export function newMissionIds(organization?: string, groupId?: string): {groupId: string; missionId: string} {
  if (groupId)
    return {
      groupId,
      missionId: groupId.includes(':group:') ? groupId.replace(':group:', ':mission:') : `urn:uuid:${randomUUID()}`,
    }
  const id = randomUUID()
  return organization
    ? {groupId: `${organization}:group:${id}`, missionId: `${organization}:mission:${id}`}
    : {groupId: `urn:uuid:${id}`, missionId: `urn:uuid:${randomUUID()}`}
}

/**
 * Why `deadline` cannot be a new Mission's deadline, or null: it must be a protocol timestamp
 * (RFC 3339, e.g. 2027-01-31T00:00:00Z) after `now` — a Mission that is already overdue cannot
 * be worked on. `now` is the caller's clock, so the boundary is testable.
 */
export function deadlineProblem(deadline: string, now: Date): string | null {
  const at = parseTimestamp(deadline)
  if (at === null) return 'not an RFC 3339 timestamp (e.g. 2027-01-31T00:00:00Z)'
  if (compareInstants(at, parseTimestamp(formatUtcNow(now))!) <= 0) return `in the past (now is ${formatUtcNow(now)})`
  return null
}

export function missionCreatePayload(m: NewMission): Record<string, unknown> {
  const {groupId, missionId} = newMissionIds(m.organization, m.groupId)
  const criteria = (m.criteria?.length ? m.criteria : [`done: ${m.objective}`]).map((text, i) => {
    const match = /^([A-Za-z0-9][A-Za-z0-9._-]*):\s*(.+)$/.exec(text)
    return {
      criterionId: match ? match[1] : `criterion-${i + 1}`,
      description: match ? match[2] : text,
      evidenceRequired: m.evidenceRequired?.length ? m.evidenceRequired : ['human_review'],
    }
  })
  return {
    missionId,
    groupId,
    objective: m.objective,
    definitionOfDone: criteria,
    deadline: m.deadline ?? new Date(Date.now() + 30 * DAY_MS).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    budget: m.budget ?? {currency: 'EUR', financialLimit: 100},
    approvalPolicy: {finalHumanApproval: true, highRiskExecutionApproval: m.highRiskExecutionApproval ?? true},
    coordinatorAgentId: m.coordinatorAgentId,
  }
}
