// What the runtime view (runtime-page.ts) is drawn from, beside the followed Groups: the Agents'
// Presence (§6.2) and the authority's delivery metrics, read from the authority on every render of
// the view (the page re-reads the fragment every few seconds) and never kept, since a Presence
// Record is ephemeral and a stale one is no evidence of anything; and the slot time the followed
// Groups' Events show (slot-time.ts). A Presence Record carries capacity and capability
// availability only, never a Group's identity or content, so showing every Agent's record to this
// operator shows nothing of a Group the operator cannot see; the authority answers the delivery
// metrics of the Groups this operator may read only.

import type {GroupPolicySource} from '../agent/scheduling-policy.js'
import {type JsonObject, countOf as count, isJsonObject as isObject} from '../json/parse.js'
import type {Transport} from '../operator/transport.js'
import type {GroupDelivery} from '../wire/metrics-routes.js'
import type {LiveGroups} from './live.js'
import type {AgentSlotTime} from './slot-time.js'

/** The fields of a Presence Record the page shows (presence-record.schema.json). */
export interface AgentPresence {
  agentId: string
  status: string
  maxSlots: number
  activeSlots: number
  availableSlots: number
  queuedItems: number
  lastHeartbeat: string
  expiresAt: string
  capabilities: {id: string; version: string; status: string}[]
}

/**
 * What the runtime view knows of one of the authority's runtime sources at one instant: its value,
 * or why there is none to show (a local store serves none, or the read failed).
 */
export type Served<T> = {served: true; value: T; at: string} | {served: false; why: string}

/** What the runtime view knows of Presence at one instant. */
export type PresenceView = Served<AgentPresence[]>

/** How often the page re-reads the runtime view, for the Presence (ms). */
export const PRESENCE_REFRESH_MS = 5000

/** The record's shown fields, or null when it lacks one (the server validated it; this only types it). */
export function agentPresence(r: JsonObject): AgentPresence | null {
  const c = r.capacity
  if (!isObject(c)) return null
  const [maxSlots, activeSlots, availableSlots, queuedItems] = [
    c.maxSlots,
    c.activeSlots,
    c.availableSlots,
    c.queuedItems,
  ].map(count)
  const {agentId, status, lastHeartbeat, expiresAt} = r
  if (
    typeof agentId !== 'string' ||
    typeof status !== 'string' ||
    typeof lastHeartbeat !== 'string' ||
    typeof expiresAt !== 'string' ||
    maxSlots == null ||
    activeSlots == null ||
    availableSlots == null ||
    queuedItems == null
  )
    return null
  const capabilities = (Array.isArray(r.capabilityAvailability) ? r.capabilityAvailability : [])
    .filter(isObject)
    .flatMap((a) =>
      isObject(a.capability) &&
      typeof a.capability.id === 'string' &&
      typeof a.capability.version === 'string' &&
      typeof a.status === 'string'
        ? [{id: a.capability.id, version: a.capability.version, status: a.status}]
        : [],
    )
  return {agentId, status, maxSlots, activeSlots, availableSlots, queuedItems, lastHeartbeat, expiresAt, capabilities}
}

/** `read`'s value now, or why there is none: `what` is what it reads, for the sentence. */
export async function readServed<T>(what: string, read: (() => Promise<T>) | undefined): Promise<Served<T>> {
  if (read === undefined)
    return {
      served: false,
      why: `No ${what} here: that needs a server, and this console reads a local store (--store), which keeps none.`,
    }
  try {
    return {served: true, value: await read(), at: new Date().toISOString()}
  } catch (e) {
    return {served: false, why: `Cannot read the ${what} from the authority: ${(e as Error).message}`}
  }
}

/** The Presence now: the server's records, or why there are none to show. */
export function readPresence(transport: Transport): Promise<PresenceView> {
  const {presence} = transport
  return readServed(
    'Presence',
    presence && (async () => (await presence()).map(agentPresence).filter((r): r is AgentPresence => r !== null)),
  )
}

/** What the runtime view is drawn from, beside the followed Groups. */
export interface RuntimeSources {
  presence: PresenceView
  delivery: Served<GroupDelivery[]>
  /** Each Agent's slot time over the window (LiveGroups.slotTime). */
  slotTime: Map<string, AgentSlotTime>
  windowMs: number
  /** The Organization's scheduling policy the Agents run under (--scheduling-policy), when given. */
  policy?: GroupPolicySource
}

/** Everything the runtime view shows beside the Groups, now. */
export async function readRuntime(
  transport: Transport,
  live: LiveGroups,
  policy: GroupPolicySource | undefined,
): Promise<RuntimeSources> {
  const [presence, delivery] = await Promise.all([
    readPresence(transport),
    readServed('delivery metrics', transport.deliveryMetrics),
  ])
  return {
    presence,
    delivery,
    slotTime: live.slotTime.byAgent(),
    windowMs: live.slotTime.windowMs,
    ...(policy ? {policy} : {}),
  }
}
