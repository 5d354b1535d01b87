// What a Coordinator knows of one Group: its state folded Event by Event through the authority's
// own apply() (the one definition of Group state; it holds the current aggregate, never the
// log), plus the few facts the Coordinator needs that apply() does not keep — the file names
// Artifacts were published under, the change requests in order, the offers a candidate declined,
// and the Events a Context Package cites.

import {apply} from '../../authority/apply/index.js'
import type {AppliedEvent} from '../../authority/model/events.js'
import type {GroupState} from '../../authority/model/state.js'
import type {JsonObject} from '../../json/parse.js'
import {FILE_NAME_EXTENSION} from '../artifact-manifest.js'
import type {ArtifactName} from './contract.js'

export interface MissionView {
  groupId: string
  state: GroupState | null
  /** First and latest Event seen (Context Packages cite them, §13.3). */
  first: {sequence: number; eventId: string} | null
  last: {sequence: number; eventId: string} | null
  /** The MissionOwner's change requests, oldest first (§7.3). */
  changeReasons: string[]
  /** Per WorkItem, the Agents that declined its current or an earlier offer (§10.3). */
  declined: Map<string, Set<string>>
  /** The work.failed Event IDs per WorkItem, newest last (a rework Context Package cites them). */
  failures: Map<string, string[]>
  /** Coordinator Epochs whose holder posted its handover Context Package (context.ts), and the Event ID of each assignment. */
  handedOver: Set<number>
  assignedBy: Map<number, string>
}

export const newView = (groupId: string): MissionView => ({
  groupId,
  state: null,
  first: null,
  last: null,
  changeReasons: [],
  declined: new Map(),
  failures: new Map(),
  handedOver: new Set(),
  assignedBy: new Map(),
})

/** Applies one verified Event (in Group order) to the view; `names` collects Artifact file names. */
export function applyEvent(view: MissionView, doc: JsonObject, names: Map<string, ArtifactName>): void {
  const event = doc as unknown as AppliedEvent & {eventId: string}
  view.state = apply(view.state, event)
  const at = {sequence: event.sequence, eventId: event.eventId}
  view.first ??= at
  view.last = at
  const p = event.payload
  switch (event.kind) {
    case 'mission.changes_requested':
      view.changeReasons.push(String(p.reason))
      break
    case 'artifact.published': {
      const m = p.artifact as JsonObject | undefined
      const hash = m?.contentHash
      const ext = (m?.extensions as JsonObject | undefined)?.[FILE_NAME_EXTENSION] as JsonObject | undefined
      const name = (ext?.data as JsonObject | undefined)?.name
      if (typeof hash === 'string' && typeof m?.mediaType === 'string')
        names.set(hash, {name: typeof name === 'string' ? name : hash, mediaType: m.mediaType})
      break
    }
    case 'work.failed': {
      const w = String(p.workItemId)
      view.failures.set(w, [...(view.failures.get(w) ?? []), event.eventId])
      break
    }
    case 'mission.coordinator.assigned': {
      const c = p.coordinator as {coordinatorEpoch?: number} | undefined
      if (typeof c?.coordinatorEpoch === 'number') view.assignedBy.set(c.coordinatorEpoch, event.eventId)
      break
    }
    case 'message.posted': {
      // The runtime's structured decline (agent/runtime.ts): {"offerDeclined": offerId, "reason": …}.
      const message = p.message as JsonObject
      const handover = handoverOf(message)
      if (handover !== null && event.actor?.id === view.state?.mission.coordinator?.agentId)
        view.handedOver.add(handover.coordinatorEpoch)
      const w = workItemOfConversation(view, message.conversationId)
      if (w && event.actor && declineOf(message)) {
        const set = view.declined.get(w) ?? new Set<string>()
        set.add(event.actor.id)
        view.declined.set(w, set)
      }
      break
    }
  }
}

/** A Coordinator's handover notice: {"coordinatorHandover": {coordinatorEpoch, contextPackageId, contextPackageHash}}. */
export interface Handover {
  coordinatorEpoch: number
  contextPackageId: string
  contextPackageHash: string
}

export function handoverOf(message: JsonObject): Handover | null {
  const first = Array.isArray(message.content) ? (message.content[0] as JsonObject | undefined) : undefined
  const text = first?.text
  if (typeof text !== 'string' || !text.startsWith('{"coordinatorHandover"')) return null
  try {
    const h = (JSON.parse(text) as {coordinatorHandover?: Partial<Handover>}).coordinatorHandover
    return typeof h?.coordinatorEpoch === 'number' &&
      typeof h.contextPackageId === 'string' &&
      typeof h.contextPackageHash === 'string'
      ? {
          coordinatorEpoch: h.coordinatorEpoch,
          contextPackageId: h.contextPackageId,
          contextPackageHash: h.contextPackageHash,
        }
      : null
  } catch {
    return null
  }
}

function declineOf(message: JsonObject): boolean {
  const first = Array.isArray(message.content) ? (message.content[0] as JsonObject | undefined) : undefined
  const text = first?.text
  if (typeof text !== 'string' || !text.startsWith('{')) return false
  try {
    const v = JSON.parse(text) as Record<string, unknown>
    return typeof v.offerDeclined === 'string'
  } catch {
    return false
  }
}

function workItemOfConversation(view: MissionView, conversationId: unknown): string | undefined {
  if (typeof conversationId !== 'string' || view.state === null) return undefined
  return Object.values(view.state.workItems).find((w) => w.conversationId === conversationId)?.workItemId
}
