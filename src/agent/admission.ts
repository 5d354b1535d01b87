// Offer admission control (spec §10.3, §10.1): accept only what the Agent can credibly commit to,
// or decline with a structured reason. Pure: the runtime passes in what it knows.

import type {WorkContract} from '../authority/model/payloads.generated.js'
import type {DeclineReason, OfferAnswer} from './handler.js'

export interface Capability {
  id: string
  version: string
}

export interface AdmissionInput {
  now: number
  contract: WorkContract | null
  offerExpiresAt: string
  /** The Agent Card's capabilities. */
  capabilities: Capability[]
  /** WorkItems this Agent already owns and has not finished, across every Group. */
  committed: number
  /** How many owned WorkItems it will hold at most (queue capacity). */
  capacity: number
  /** The offer's selection basis for this Agent says it is authorization-eligible. */
  authorizationEligible: boolean
  /** The Context Package's unresolved questions (§10.1 essential ambiguity). */
  unresolvedQuestions: string[]
}

export type Admission = OfferAnswer | {accept: false; reason: 'ambiguity'; detail: string}

const decline = (reason: DeclineReason, detail: string): Admission => ({accept: false, reason, detail})

/** Compares dotted numeric versions (1.10.0 > 1.9.0); a missing part counts as 0. */
export function versionAtLeast(have: string, need: string): boolean {
  const a = have.split(/[.+-]/).map(Number)
  const b = need.split(/[.+-]/).map(Number)
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0
    const y = b[i] ?? 0
    if (Number.isNaN(x) || Number.isNaN(y)) return have === need
    if (x !== y) return x > y
  }
  return true
}

export function admit(input: AdmissionInput): Admission {
  const c = input.contract
  if (c === null) return decline('capability', 'the offer carries no Work Contract this Agent can read')
  if (input.unresolvedQuestions.length > 0)
    return {accept: false, reason: 'ambiguity', detail: `unresolved: ${input.unresolvedQuestions.join('; ')}`}
  if (Date.parse(input.offerExpiresAt) <= input.now) return decline('deadline', 'the offer has expired')
  if (Date.parse(c.deadline) <= input.now) return decline('deadline', `the contract deadline ${c.deadline} has passed`)
  for (const r of c.requiredCapabilities) {
    const have = input.capabilities.find((k) => k.id === r.id)
    if (!have) return decline('capability', `no capability ${r.id}`)
    if (!versionAtLeast(have.version, r.version))
      return decline('capability', `capability ${r.id} ${have.version} is older than ${r.version}`)
  }
  if (!input.authorizationEligible) return decline('authorization', 'the offer does not find this Agent eligible')
  if (input.committed >= input.capacity)
    return decline('capacity', `${input.committed} WorkItems already committed (capacity ${input.capacity})`)
  // The contract schema requires a budget; a contract that reaches here without one is refused.
  if (!(c.budget as unknown)) return decline('budget', 'the contract states no budget')
  return {accept: true}
}
