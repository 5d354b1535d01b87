// The readable live view of `mwp group tail` on a terminal: one line per Event — sequence, time,
// who, what happened in words, to whom, and the goal of the WorkItem it is about. The NDJSON form
// (the verified Event itself) is what scripts read; this is for a reader watching a Mission.
//
// A WorkItem's goal is written once, in its work.authorized contract (or the offer's, or a
// revision's); later Events name only the ID. The goals learnt from the Events seen are kept in a
// bounded map, so a tail that follows a long Mission does not grow without end; a tail that starts
// late seeds it from the folded WorkItems (learn()).

import type {WorkItemCore} from '../authority/model/state.js'
import type {EventDoc} from './transport.js'
import {messageText} from './render.js'

/** How many WorkItem goals are remembered; the least recently learnt is forgotten first. */
export const MAX_GOALS = 1000

/** A principal's short name: the last segment of its ID (`…:agent:worker-1` → `worker-1`). */
export const shortName = (id: string): string => id.slice(id.lastIndexOf(':') + 1) || id

/** A WorkItem (or other urn:uuid) ID cut to its first eight hex digits: enough to tell items apart on screen. */
const shortId = (id: string): string => (id.startsWith('urn:uuid:') ? id.slice(9, 17) : id)

/** Cuts `line` to `columns` characters, ending a cut line with an ellipsis. */
export function fit(line: string, columns?: number): string {
  const chars = [...line]
  if (columns === undefined || columns < 2 || chars.length <= columns) return line
  return chars.slice(0, columns - 1).join('') + '…'
}

type Payload = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

export class EventLines {
  readonly #goals = new Map<string, string>()

  /** Remembers the goals of WorkItems folded before the tail starts (views.ts, visible-work.ts). */
  learn(workItems: Record<string, Pick<WorkItemCore, 'contract'>>): void {
    for (const [id, item] of Object.entries(workItems)) this.#remember(id, item.contract)
  }

  /** The line for `e`, cut to `columns` characters when given. */
  line(e: EventDoc, columns?: number): string {
    const p = e.payload as Payload
    this.learnFrom(e)
    const time = e.occurredAt.slice(11, 19) // HH:MM:SS, UTC like every time mwp prints
    return fit(`#${e.sequence} ${time} ${shortName(e.actor.id)} ${this.#what(e, p)}`, columns)
  }

  #remember(id: string, contract: unknown): void {
    const goal = (contract as {goal?: unknown} | undefined)?.goal
    if (typeof goal !== 'string') return
    this.#goals.delete(id) // re-inserted last: the most recently learnt
    this.#goals.set(id, goal)
    if (this.#goals.size > MAX_GOALS) this.#goals.delete(this.#goals.keys().next().value!)
  }

  /** Remembers the goal `e` names, if any (line() does this for the Events it shows). */
  learnFrom(e: EventDoc): void {
    const {kind} = e
    const p = e.payload as Payload
    if (kind === 'work.authorized') this.#remember(p.workItem?.workItemId, p.workItem?.contract)
    else if (kind === 'work.offer.created') this.#remember(p.workItemId, p.workItem?.contract)
    else if (kind === 'work.contract.revised') this.#remember(p.workItemId, p.contract)
  }

  /** "WorkItem 1a2b3c4d "goal"", the goal when known. */
  #item(id: unknown): string {
    if (typeof id !== 'string') return 'a WorkItem'
    const goal = this.#goals.get(id)
    return `WorkItem ${shortId(id)}${goal === undefined ? '' : ` "${goal}"`}`
  }

  /** What the Event says happened, in words (the kind itself for an extension this does not know). */
  #what(e: EventDoc, p: Payload): string {
    const w = this.#item(p.workItemId)
    const reason = typeof p.reason === 'string' ? `: ${p.reason}` : ''
    const member = (m: Payload | undefined) =>
      m ? `${shortName(m.member?.id ?? '?')} (${m.role}, epoch ${m.membershipEpoch})` : '?'
    switch (e.kind) {
      case 'mission.created':
        return `created Mission "${p.mission?.objective}"`
      case 'mission.follow_up.created':
        return `created follow-up Mission "${p.mission?.objective}"`
      case 'mission.coordinator.assigned':
        return `assigned Coordinator ${shortName(p.coordinator?.agentId ?? '?')} (epoch ${p.coordinator?.coordinatorEpoch})`
      case 'mission.coordinator.renewed':
        return `renewed the Coordinator lease until ${p.coordinator?.leaseExpiresAt}`
      case 'mission.submitted_for_approval':
        return `submitted revision ${p.missionRevision} for approval`
      case 'mission.changes_requested':
        return `requested changes${reason}`
      case 'mission.approved': {
        const revision = p.approval?.missionRevision
        return `approved ${revision === undefined ? 'the Mission' : `revision ${revision}`}`
      }
      case 'mission.cancelled':
        return `cancelled the Mission${reason}`
      case 'mission.terminated':
        return `terminated the Mission${reason}`
      case 'mission.child.created':
        return `created child Mission ${p.child?.groupId} for ${w}`
      case 'membership.changed':
        return `changed the Membership of ${member(p.membership)}`
      case 'membership.ended':
        return `ended the Membership of ${member(p.membership)}${reason}`
      case 'membership.delegation.granted':
        return `granted a delegation for ${this.#item(p.grant?.targetWorkItemId)} to ${shortName(p.grant?.granteeAgentId ?? '?')}`
      case 'message.posted':
        return `posted: ${messageText(e) ?? ''}`
      case 'message.corrected':
        return `corrected a Message: ${messageText(e) ?? ''}`
      case 'message.retracted':
        return 'retracted a Message'
      case 'message.redacted':
        return 'redacted a Message'
      case 'work.proposed':
        return `proposed work "${p.proposal?.contract?.goal}"`
      case 'work.authorized':
        return `authorized ${this.#item(p.workItem?.workItemId)}`
      case 'work.offer.created':
        return `offered ${w} to ${(p.offer?.candidates ?? []).map(shortName).join(', ')}`
      case 'work.offer.accepted':
        return `accepted the offer of ${w}`
      case 'work.contract.revised':
        return `revised the contract of ${w}${reason}`
      case 'work.started':
        return `started ${w}`
      case 'work.progressed':
        return `reported progress on ${w}`
      case 'work.checkpointed':
        return `checkpointed ${w}`
      case 'work.blocked':
        return `is blocked on ${w}: ${p.requiredResolution}`
      case 'work.unblocked':
        return `unblocked ${w} (now ${p.to})`
      case 'work.submitted':
        return `submitted ${w} with ${p.evidence?.length ?? 0} Evidence, ${p.artifactHashes?.length ?? 0} Artifact(s)`
      case 'work.result.accepted':
        return `accepted the result of ${w}`
      case 'work.failed':
        return `failed ${w}${reason}`
      case 'work.cancelled':
        return `cancelled ${w}${reason}`
      case 'artifact.published':
        return `published Artifact ${p.artifact?.contentHash} for ${w}`
      case 'approval.execution.granted':
        return `approved the execution of ${w}`
      case 'policy.cooperation_override.granted':
        return `granted ${shortName(p.grant?.beneficiary?.id ?? '?')} an override of ${p.grant?.policy}`
      case 'group.snapshot.created':
        return `snapshotted the Group through sequence ${p.snapshot?.throughSequence}`
      case 'group.archived':
        return `archived the Group through sequence ${p.throughSequence}`
      default:
        return `${e.kind}${typeof p.workItemId === 'string' ? ` on ${w}` : ''}${reason}`
    }
  }
}
