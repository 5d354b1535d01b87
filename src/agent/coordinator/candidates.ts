// Who may be offered a WorkItem, and why (§10.3): the Organization's verified Agent Cards with the
// required capability at the required version, active and not expired, ranked by the plan's
// preference, then by Presence (§6.2: free slots now, then busy, then no fresh record, then away,
// draining or offline — an offline Worker may still get a durable offer, §10.3, just last), then by
// how much work the Coordinator already has with each (its own offers and owned, unfinished
// WorkItems across the Missions it coordinates), then by name. Every offer
// records the structured selection basis — matches, eligibility, availability estimate, expected
// cost, reliability Evidence and the rules applied — never free-form reasoning.

import {readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import type {CapabilityRef} from '../../authority/model/payloads.generated.js'
import type {JsonObject} from '../../json/parse.js'
import {formatUtcSeconds} from '../../json/timestamp.js'
import type {RegistryEvidence} from '../../signing/registry.js'
import {Rejection, verify} from '../../signing/verify.js'

export interface AgentEntry {
  agentId: string
  /** The card file's name (cards/NAME.card.json), for plans that say `prefer: [worker-2]`. */
  name: string
  capabilities: {id: string; version: string; verifiedEvidence: string[]}[]
  maxConcurrency: number
  active: boolean
}

export interface SelectionBasisDoc {
  verifiedMatches: CapabilityRef[]
  authorizationEligible: boolean
  availabilityEstimate: string
  expectedCost: number
  reliabilityEvidence: string[]
  policyRulesApplied: string[]
}

export interface Ranked {
  agent: AgentEntry
  basis: SelectionBasisDoc
}

/** Reads and verifies every Agent Card in `dir` (cards/*.card.json); a card that does not verify is left out. */
export function readAgentDirectory(dir: string, registry: RegistryEvidence): AgentEntry[] {
  const out: AgentEntry[] = []
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.card.json')) continue
    const verified = verify('agent-card', readFileSync(join(dir, f)), registry)
    if (verified instanceof Rejection) continue
    out.push(entryOf(verified.document, f.slice(0, -'.card.json'.length)))
  }
  return out
}

function entryOf(card: JsonObject, name: string): AgentEntry {
  const caps = Array.isArray(card.capabilities) ? (card.capabilities as JsonObject[]) : []
  return {
    agentId: String(card.agentId),
    name,
    capabilities: caps.map((c) => ({
      id: String(c.id),
      version: String(c.version),
      verifiedEvidence: Array.isArray(c.verifiedEvidence) ? c.verifiedEvidence.map(String) : [],
    })),
    maxConcurrency: typeof card.maxConcurrency === 'number' ? card.maxConcurrency : 1,
    active: card.status === 'active',
  }
}

/** An Agent's fresh Presence as the Coordinator last read it (wire/presence-routes.ts). */
export interface PresenceView {
  status: string
  availableSlots: number
  maxSlots: number
  queuedItems: number
}

/** The Presence Records by Agent ID (the server sends only unexpired ones). */
export function presenceViews(records: readonly JsonObject[]): Map<string, PresenceView> {
  const out = new Map<string, PresenceView>()
  for (const r of records) {
    const c = (r.capacity ?? {}) as JsonObject
    out.set(String(r.agentId), {
      status: String(r.status),
      availableSlots: Number(c.availableSlots) || 0,
      maxSlots: Number(c.maxSlots) || 1,
      queuedItems: Number(c.queuedItems) || 0,
    })
  }
  return out
}

const UNAVAILABLE = new Set(['away', 'draining', 'offline'])

/** 0 free slots now, 1 busy, 2 no fresh Presence, 3 away / draining / offline. */
function presenceTier(p: PresenceView | undefined): number {
  if (p === undefined) return 2
  if (UNAVAILABLE.has(p.status)) return 3
  return p.availableSlots > 0 ? 0 : 1
}

export interface RankInput {
  required: readonly CapabilityRef[]
  /** Plan preference: Agent names or IDs, best first. */
  prefer?: readonly string[]
  /** Agents not to offer to (the Coordinator itself, owners that lost this WorkItem). */
  exclude: ReadonlySet<string>
  /** Outstanding offers and owned unfinished WorkItems per Agent ID. */
  load: ReadonlyMap<string, number>
  /** Expected cost of the WorkItem (its financial budget). */
  cost: number
  nowMs: number
  /** Typical run length, for the availability estimate. */
  runMs: number
  /** Fresh Presence by Agent ID; an Agent without is ranked as "no fresh record". */
  presence?: ReadonlyMap<string, PresenceView>
}

export function rank(agents: readonly AgentEntry[], r: RankInput): Ranked[] {
  const preferIndex = (a: AgentEntry) => {
    const i = (r.prefer ?? []).findIndex((p) => p === a.name || p === a.agentId)
    return i < 0 ? Number.MAX_SAFE_INTEGER : i
  }
  const eligible = agents.filter(
    (a) =>
      a.active &&
      !r.exclude.has(a.agentId) &&
      r.required.every((c) => a.capabilities.some((x) => x.id === c.id && x.version === c.version)),
  )
  const loadOf = (a: AgentEntry) => r.load.get(a.agentId) ?? 0
  const presenceOf = (a: AgentEntry) => r.presence?.get(a.agentId)
  const tierOf = (a: AgentEntry) => presenceTier(presenceOf(a))
  eligible.sort(
    (a, b) =>
      preferIndex(a) - preferIndex(b) ||
      tierOf(a) - tierOf(b) ||
      loadOf(a) - loadOf(b) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  )
  return eligible.map((agent) => {
    const matches = agent.capabilities.filter((x) => r.required.some((c) => c.id === x.id && c.version === x.version))
    // Work ahead of this one per slot, times a typical run: when a slot should be free for it. With
    // fresh Presence, what the Worker reports queued (and a free slot) rather than our own count.
    const p = presenceOf(agent)
    const ahead = p === undefined ? loadOf(agent) : p.queuedItems + (p.availableSlots > 0 ? 0 : 1)
    const waitMs = Math.floor(ahead / Math.max(1, p?.maxSlots ?? agent.maxConcurrency)) * r.runMs
    const rules = [
      'capability-match: id and exact version',
      p === undefined
        ? 'presence: no fresh record'
        : `presence: ${p.status}, ${p.availableSlots} of ${p.maxSlots} slots free, ${p.queuedItems} queued`,
      'least-loaded first',
    ]
    if (preferIndex(agent) !== Number.MAX_SAFE_INTEGER) rules.unshift(`plan preference #${preferIndex(agent) + 1}`)
    return {
      agent,
      basis: {
        verifiedMatches: matches.map((m) => ({id: m.id, version: m.version})),
        authorizationEligible: true,
        availabilityEstimate: formatUtcSeconds(r.nowMs + waitMs),
        expectedCost: r.cost,
        reliabilityEvidence: matches.flatMap((m) => m.verifiedEvidence),
        policyRulesApplied: rules,
      },
    }
  })
}
