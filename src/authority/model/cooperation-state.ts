// The Group-state views of the Group-level cooperation Commands (engineer A's area): the Message
// index (§9), published Artifacts (§13.1), Delegation Grants (§9.1), Cooperation Override Grants
// (§20) and the per-actor rate buckets (§20). Each lives in an optional GroupState member so a
// Group that never used the feature keeps exactly the state it had before. Plain JSON only.

import type {Principal} from '../../signing/profiles.js'

/** Extension Event kinds this authority emits, in the project's ext.missionweaveprotocol.core namespace (§18). */
export const OVERRIDE_CONSUMED = 'ext.missionweaveprotocol.core.cooperation_override_consumed'
export const LIMIT_NOTICE = 'ext.missionweaveprotocol.core.soft_limit_reached'

/** §9: what the authority must know about a committed Message to judge a later correction. */
export interface MessageIndexEntry {
  author: Principal
  conversationId: string
  /** posted → corrected (any number of times) → retracted; redaction is orthogonal (policy act). */
  status: 'posted' | 'corrected' | 'retracted'
  redacted: boolean
}

/** §13.1: a published Artifact, by artifactId (content identity is the hash, never the URI). */
export interface ArtifactIndexEntry {
  contentHash: string
  workItemId: string
  producerAgentId: string
  publishedAt: string
}

/** §9.1: a persisted Delegation Grant (the fields a later use must re-check). */
export interface DelegationGrantView {
  grantId: string
  granteeAgentId: string
  targetWorkItemId: string
  allowedCapabilities: {id: string; minVersion: string}[]
  budgetCeilings: Record<string, unknown>
  maxDescendantDepth: number
  granteeMembershipEpoch: number
  coordinatorEpoch: number
  issuedBy: string
  grantedAt: string
  expiresAt: string
  /** The scope subtree: the target (depth 0) and every WorkItem authorized under the Grant, with its depth. */
  subtree: Record<string, number>
  /** WorkItems created or offered under the Grant: their budgets count against the ceilings once each. */
  charged: string[]
}

/** §20: a durable one-shot Cooperation Override Grant. */
export interface OverrideGrantView {
  grantId: string
  policy: string
  beneficiary: Principal
  targetKind: string
  targetActionId: string
  reason: string
  approver: Principal
  grantedAt: string
  expiresAt: string
  /** Set once, by the Event that records the consumption (never cleared). */
  consumedBy: {actionId: string; eventId: string} | null
}

/** §20: per-actor counts of rate-limited Commands, in one-minute buckets keyed by epoch minute. */
export interface ActorRates {
  messages?: Record<string, number>
  proposals?: Record<string, number>
}
