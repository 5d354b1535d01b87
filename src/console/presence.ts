// The Agents' Presence for the runtime view (§6.2): read from the authority on every render of the
// view (the page re-reads the fragment every few seconds), never kept, since a Presence Record is
// ephemeral and a stale one is no evidence of anything. A record carries capacity and capability
// availability only, never a Group's identity or content, so showing every Agent's record to this
// operator shows nothing of a Group the operator cannot see.

import type {JsonObject} from '../json/parse.js'
import type {Transport} from '../operator/transport.js'

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

/** What the runtime view knows of Presence at one instant. */
export type PresenceView = {served: true; records: AgentPresence[]; at: string} | {served: false; why: string}

/** How often the page re-reads the runtime view, for the Presence (ms). */
export const PRESENCE_REFRESH_MS = 5000

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)
const count = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null)

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

/** The Presence now: the server's records, or why there are none to show. */
export async function readPresence(transport: Transport): Promise<PresenceView> {
  if (!transport.presence)
    return {
      served: false,
      why: 'Presence needs a server: this console reads a local store (--store), which keeps none.',
    }
  try {
    const records = (await transport.presence()).map(agentPresence).filter((r): r is AgentPresence => r !== null)
    return {served: true, records, at: new Date().toISOString()}
  } catch (e) {
    return {served: false, why: `Cannot read the Presence from the authority: ${(e as Error).message}`}
  }
}
