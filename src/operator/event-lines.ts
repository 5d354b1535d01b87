// The readable live view of `mwp group tail` on a terminal: one line per Event — sequence, time,
// who, what happened in words, to whom, and the goal of the WorkItem it is about. The NDJSON form
// (the verified Event itself) is what scripts read; this is for a reader watching a Mission.
//
// A WorkItem's goal is written once, in its work.authorized contract (or the offer's, or a
// revision's); later Events name only the ID. The goals learnt from the Events seen are kept in a
// bounded map, so a tail that follows a long Mission does not grow without end; a tail that starts
// late seeds it from the folded WorkItems (learn()).

import {type MembershipDocument, knownEvent} from '../authority/model/events.js'
import type {WorkItemCore} from '../authority/model/state.js'
import type {EventDoc} from './transport.js'
import {fit} from '../cli/output.js'
import {messageText} from './render.js'

/** How many WorkItem goals are remembered; the least recently learnt is forgotten first. */
export const MAX_GOALS = 1000

/** A principal's short name: the last segment of its ID (`…:agent:worker-1` → `worker-1`). */
export const shortName = (id: string): string => id.slice(id.lastIndexOf(':') + 1) || id

/** A WorkItem (or other urn:uuid) ID cut to its first eight hex digits: enough to tell items apart on screen. */
export const shortId = (id: string): string => (id.startsWith('urn:uuid:') ? id.slice(9, 17) : id)

export class EventLines {
  readonly #goals = new Map<string, string>()

  /** Remembers the goals of WorkItems folded before the tail starts (views.ts, visible-work.ts). */
  learn(workItems: Record<string, Pick<WorkItemCore, 'contract'>>): void {
    for (const [id, item] of Object.entries(workItems)) this.#remember(id, item.contract.goal)
  }

  /** Remembers the goal `e` names, if any (line() does this for the Events it shows). */
  learnFrom(e: EventDoc): void {
    const k = knownEvent(e)
    if (k?.kind === 'work.authorized') this.#remember(k.payload.workItem.workItemId, k.payload.workItem.contract.goal)
    else if (k?.kind === 'work.offer.created') this.#remember(k.payload.workItemId, k.payload.workItem.contract.goal)
    else if (k?.kind === 'work.contract.revised') this.#remember(k.payload.workItemId, k.payload.contract.goal)
  }

  /** The line for `e`, cut to `columns` characters when given. */
  line(e: EventDoc, columns?: number): string {
    this.learnFrom(e)
    const time = e.occurredAt.slice(11, 19) // HH:MM:SS, UTC like every time mwp prints
    return fit(`#${e.sequence} ${time} ${shortName(e.actor.id)} ${this.#what(e)}`, columns)
  }

  /** What `e` says happened, in words, without the sequence, time and actor line() puts before it. */
  what(e: EventDoc): string {
    this.learnFrom(e)
    return this.#what(e)
  }

  #remember(id: string, goal: string): void {
    this.#goals.delete(id) // re-inserted last: the most recently learnt
    this.#goals.set(id, goal)
    if (this.#goals.size > MAX_GOALS) this.#goals.delete(this.#goals.keys().next().value!)
  }

  /** "WorkItem 1a2b3c4d "goal"", the goal when known. */
  #item(id: string): string {
    const goal = this.#goals.get(id)
    return `WorkItem ${shortId(id)}${goal === undefined ? '' : ` "${goal}"`}`
  }

  /** What the Event says happened, in words (the kind itself for an extension this does not know). */
  #what(event: EventDoc): string {
    const e = knownEvent(event)
    if (e === null) {
      const {workItemId} = event.payload
      return `${event.kind}${typeof workItemId === 'string' ? ` on ${this.#item(workItemId)}` : ''}`
    }
    const member = (m: MembershipDocument) => `${shortName(m.member.id)} (${m.role}, epoch ${m.membershipEpoch})`
    const because = (reason: string | undefined) => (reason ? `: ${reason}` : '')
    switch (e.kind) {
      case 'mission.created':
        return `created Mission "${e.payload.mission.objective}"`
      case 'mission.follow_up.created':
        return `created follow-up Mission "${e.payload.mission.objective}"`
      case 'mission.coordinator.assigned':
        return `assigned Coordinator ${shortName(e.payload.coordinator.agentId)} (epoch ${e.payload.coordinator.coordinatorEpoch})`
      case 'mission.coordinator.renewed':
        return `renewed the Coordinator lease until ${e.payload.coordinator.leaseExpiresAt}`
      case 'mission.submitted_for_approval':
        return `submitted revision ${e.payload.missionRevision} for approval`
      case 'mission.changes_requested':
        return `requested changes${because(e.payload.reason)}`
      case 'mission.approved': {
        const revision = e.payload.approval.missionRevision
        return `approved ${typeof revision === 'number' ? `revision ${revision}` : 'the Mission'}`
      }
      case 'mission.cancelled':
        return `cancelled the Mission${because(e.payload.reason)}`
      case 'mission.terminated':
        return `terminated the Mission${because(e.payload.reason)}`
      case 'mission.child.created':
        return `created child Mission ${e.payload.child.groupId} for ${this.#item(e.payload.workItemId)}`
      case 'membership.changed':
        return `changed the Membership of ${member(e.payload.membership)}`
      case 'membership.ended':
        return `ended the Membership of ${member(e.payload.membership)}${because(e.payload.reason)}`
      case 'membership.delegation.granted':
        return `delegated ${this.#item(e.payload.grant.targetWorkItemId)} to ${shortName(e.payload.grant.granteeAgentId)}`
      case 'message.posted':
        return `posted: ${messageText(event) ?? ''}`
      case 'message.corrected':
        return `corrected a Message: ${messageText(event) ?? ''}`
      case 'message.retracted':
        return 'retracted a Message'
      case 'message.redacted':
        return 'redacted a Message'
      case 'work.proposed':
        return `proposed work "${String(e.payload.proposal.contract.goal)}"`
      case 'work.authorized':
        return `authorized ${this.#item(e.payload.workItem.workItemId)}`
      case 'work.offer.created':
        return `offered ${this.#item(e.payload.workItemId)} to ${e.payload.offer.candidates.map(shortName).join(', ')}`
      case 'work.offer.accepted':
        return `accepted the offer of ${this.#item(e.payload.workItemId)}`
      case 'work.contract.revised':
        return `revised the contract of ${this.#item(e.payload.workItemId)}${because(e.payload.reason)}`
      case 'work.started':
        return `started ${this.#item(e.payload.workItemId)}`
      case 'work.progressed':
        return `reported progress on ${this.#item(e.payload.workItemId)}`
      case 'work.checkpointed':
        return `checkpointed ${this.#item(e.payload.workItemId)}`
      case 'work.blocked':
        return `is blocked on ${this.#item(e.payload.workItemId)}: ${e.payload.requiredResolution}`
      case 'work.unblocked':
        return `unblocked ${this.#item(e.payload.workItemId)} (now ${e.payload.to})`
      case 'work.submitted':
        return `submitted ${this.#item(e.payload.workItemId)} with ${e.payload.evidence.length} Evidence, ${e.payload.artifactHashes.length} Artifact(s)`
      case 'work.result.accepted':
        return `accepted the result of ${this.#item(e.payload.workItemId)}`
      case 'work.failed':
        return `failed ${this.#item(e.payload.workItemId)}${because(e.payload.reason)}`
      case 'work.cancelled':
        return `cancelled ${this.#item(e.payload.workItemId)}${because(e.payload.reason)}`
      case 'artifact.published':
        return `published Artifact ${e.payload.artifact.contentHash} for ${this.#item(e.payload.workItemId)}`
      case 'approval.execution.granted':
        return `approved the execution of ${this.#item(e.payload.workItemId)}`
      case 'policy.cooperation_override.granted':
        return `granted ${shortName(e.payload.grant.beneficiary.id)} an override of ${e.payload.grant.policy}`
      case 'group.snapshot.created':
        return `snapshotted the Group through sequence ${e.payload.snapshot.throughSequence}`
      case 'group.archived':
        return `archived the Group through sequence ${e.payload.throughSequence}`
      default: // the core extensions (usage records, limit notices, …): their kind says it
        return `${e.kind}${'workItemId' in e.payload ? ` on ${this.#item(e.payload.workItemId)}` : ''}`
    }
  }
}
