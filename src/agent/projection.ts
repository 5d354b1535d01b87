// The per-Group WorkItem projection one Agent keeps (spec §11.1): a pure fold of verified Group
// Events into one entry per WorkItem, plus the Group's own view (Mission, this Agent's Membership,
// whether the Group ended for it), and the intents a transition asks the runtime to act on.
//
// It never assumes a fold from sequence 1 (§8): a just-in-time Worker sees history only from its
// Membership's visibility start, so the first Event it sees of a WorkItem may be the offer to it.
// Whatever an Event does not say stays unknown (null) — e.g. `contract: null` for a late joiner
// whose offer carries no `workItem` — rather than failing the fold.

import {canonicalHash} from '../json/jcs.js'
import type {
  CarriedDocument,
  KnownEvent,
  MembershipDocument,
  WorkOfferCreatedPayload,
} from '../authority/model/events.js'
import {CHILD_CONCLUDED, RESOURCE_USAGE_RECORDED, type Usage} from '../authority/model/mission-tree.js'
import type {WorkContract} from '../authority/model/payloads.generated.js'
import type {CheckpointView, WorkState} from '../authority/model/state.js'
import {LEASE_REVOKED} from '../authority/model/work-leases.js'

/** The offer as this Agent sees it. */
export interface EntryOffer {
  offerId: string
  expiresAt: string
  /** This Agent is one of the offer's candidates. */
  candidate: boolean
  /** §8: the Context Package of this Agent's provisional Membership, if the offer granted one. */
  contextPackageId: string | null
}

export interface EntryOwner {
  agentId: string
  ownershipEpoch: number
  sessionEpoch: number
  /** §11.3: the start-by deadline of the ownership grant (null once started). */
  startBy: string | null
  /** The bounded ownership (queued) or blocked lease expiry; null while active or unbounded. */
  leaseExpiresAt: string | null
}

export interface EntryLease {
  leaseId: string
  expiresAt: string
  renewalCount: number
}

export interface EntryCheckpoint {
  /** canonicalHash of {progress, leaseId, artifactHashes}: the identity the Scheduler compares. */
  hash: string
  progress: string
  leaseId: string
  artifactHashes: string[]
}

export interface WorkEntry {
  groupId: string
  missionId: string | null
  workItemId: string
  conversationId: string | null
  state: WorkState
  exclusive: boolean | null
  /** The current Work Contract; null when no visible Event carried it (a late joiner). */
  contract: WorkContract | null
  /** The WorkItem revision: the authorized document's, then each WorkItemStep's (0 before any is seen). */
  revision: number
  offer: EntryOffer | null
  owner: EntryOwner | null
  /** The owner is this Agent. */
  mine: boolean
  /** The highest Ownership Epoch seen for the WorkItem. */
  ownershipEpoch: number
  /** The active Execution Lease. */
  lease: EntryLease | null
  checkpoint: EntryCheckpoint | null
  /** §11.5: the checkpoint of an earlier ownership the current lease resumes from. */
  resumeFrom: CheckpointView | null
  /** §12: the start gate; `required` null while the contract is unknown. */
  executionApproval: {required: boolean | null; grantedForEpoch: number | null; satisfied: boolean}
  deadline: string | null
  requestedUrgency: string | null
  /** §12: the WorkItem's cumulative usage, from the last resource_usage_recorded naming it. */
  usage: Usage | null
  /** §11.4: what a blocked WorkItem waits for, and its blocked lease. */
  blockedResolution: {requiredResolution: string; blockedLeaseExpiresAt: string} | null
  /** Artifact hashes of the submission or the accepted result. */
  resultArtifactHashes: string[]
  failureReason: string | null
  /** §8: the offer carried a signed Context Package. */
  contextPackage: CarriedDocument | null
}

/** The Group-level part of one Agent's view. */
export interface GroupView {
  groupId: string
  missionId: string | null
  /** This Agent's Membership as the visible Events last stated it. */
  membership: {membershipEpoch: number; state: MembershipDocument['state']; visibilityStartSequence: number} | null
  /** Why the Group ended for this Agent (Mission terminal, or its Membership ended); null while live. */
  ended: {kind: string; reason: string | null} | null
}

/** What the runtime must act on, recorded with the Event that asked for it (local-store.ts outbox). */
export type IntentDraft =
  | {kind: 'evaluate-offer'; workItemId: string; payload: {offerId: string; expiresAt: string}}
  | {kind: 'offer-withdrawn'; workItemId: string; payload: {offerId: string}}
  | {kind: 'schedule'; workItemId: string; payload: {ownershipEpoch: number}}
  | {kind: 'execute' | 'resume'; workItemId: string; payload: {ownershipEpoch: number; leaseId: string}}
  | {kind: 'stop'; workItemId: string; payload: {ownershipEpoch: number; leaseId: string | null; cause: string}}
  | {kind: 'group-ended'; workItemId: null; payload: {cause: string}}

export type IntentKind = IntentDraft['kind']

export const emptyGroupView = (groupId: string): GroupView => ({
  groupId,
  missionId: null,
  membership: null,
  ended: null,
})

/** The offer's optional WorkItem summary and Context Package (§8); absent on older authorities. */
interface OfferExtras {
  workItem?: {missionId: string; conversationId: string; exclusive: boolean; contract: WorkContract}
  contextPackage?: CarriedDocument
}

// The authority change adding these members to WorkOfferCreatedPayload may not have landed: read
// them as optional members of the same payload (a widening, not an `any`), so this compiles both
// before and after it does.
const offerExtras = (p: WorkOfferCreatedPayload): OfferExtras => p as WorkOfferCreatedPayload & OfferExtras

/** The WorkItems an Event changes: one named by the payload, or every unfinished one for a Mission end. */
export function touchedWorkItems(event: KnownEvent, known: () => readonly WorkEntry[]): string[] {
  switch (event.kind) {
    case 'work.authorized':
      return [event.payload.workItem.workItemId]
    case 'mission.cancelled':
    case 'mission.terminated':
      return known()
        .filter((e) => UNFINISHED.has(e.state))
        .map((e) => e.workItemId)
    case 'work.offer.created':
    case 'work.offer.accepted':
    case 'work.contract.revised':
    case 'work.started':
    case 'work.progressed':
    case 'work.checkpointed':
    case 'work.blocked':
    case 'work.unblocked':
    case 'work.submitted':
    case 'work.result.accepted':
    case 'work.failed':
    case 'work.cancelled':
    case 'approval.execution.granted':
    case 'mission.child.created':
    case CHILD_CONCLUDED:
    case RESOURCE_USAGE_RECORDED:
    case LEASE_REVOKED:
      return [event.payload.workItemId]
    default:
      return []
  }
}

const UNFINISHED: ReadonlySet<WorkState> = new Set(['open', 'offered', 'queued', 'active', 'blocked', 'submitted'])

/** The Group view after `event`, for Agent `agentId`. */
/** The Events after which a Group is over for every member. */
const MISSION_ENDS: ReadonlySet<string> = new Set(['mission.cancelled', 'mission.terminated', 'mission.approved'])

export function foldGroup(view: GroupView, event: KnownEvent, agentId: string): GroupView {
  const own = (m: MembershipDocument | undefined, v: GroupView = view): GroupView => {
    if (m === undefined || m.member.id !== agentId) return v
    const membership = {
      membershipEpoch: m.membershipEpoch,
      state: m.state,
      visibilityStartSequence: m.visibilityStartSequence,
    }
    // A Membership granted again (a later just-in-time offer) reopens a Group its ended Membership
    // had closed; a Mission's end stays final.
    const ended =
      m.state === 'ended'
        ? (v.ended ?? {kind: event.kind, reason: null})
        : v.ended !== null && !MISSION_ENDS.has(v.ended.kind)
          ? null
          : v.ended
    return {...v, missionId: v.missionId ?? m.missionId, membership, ended}
  }
  switch (event.kind) {
    case 'mission.created':
    case 'mission.follow_up.created':
      return {...own(event.payload.membership), missionId: event.payload.mission.missionId}
    case 'mission.coordinator.assigned':
    case 'membership.changed':
      return own(event.payload.membership)
    case 'membership.ended': {
      const next = own(event.payload.membership)
      return next.ended?.kind === 'membership.ended'
        ? {...next, ended: {kind: 'membership.ended', reason: event.payload.reason ?? null}}
        : next
    }
    case 'work.offer.created':
      return (event.payload.provisionalMemberships ?? []).reduce<GroupView>((v, m) => own(m, v), view)
    case 'work.offer.accepted':
      return own(event.payload.activatedMembership)
    case 'mission.cancelled':
    case 'mission.terminated':
      return view.ended === null ? {...view, ended: {kind: event.kind, reason: event.payload.reason}} : view
    case 'mission.approved':
      return view.ended === null ? {...view, ended: {kind: event.kind, reason: null}} : view
    default:
      return view
  }
}

/** A WorkItem first seen at a step that did not say what it is. */
function blankEntry(groupId: string, missionId: string | null, workItemId: string): WorkEntry {
  return {
    groupId,
    missionId,
    workItemId,
    conversationId: null,
    state: 'open',
    exclusive: null,
    contract: null,
    revision: 0,
    offer: null,
    owner: null,
    mine: false,
    ownershipEpoch: 0,
    lease: null,
    checkpoint: null,
    resumeFrom: null,
    executionApproval: {required: null, grantedForEpoch: null, satisfied: false},
    deadline: null,
    requestedUrgency: null,
    usage: null,
    blockedResolution: null,
    resultArtifactHashes: [],
    failureReason: null,
    contextPackage: null,
  }
}

const withContract = (e: WorkEntry, contract: WorkContract): WorkEntry => ({
  ...e,
  contract,
  deadline: contract.deadline,
  requestedUrgency: contract.requestedUrgency,
  executionApproval: {...e.executionApproval, required: contract.executionApproval !== 'not_required'},
})

const checkpointOf = (c: Omit<CheckpointView, 'leaseId'>, leaseId: string): EntryCheckpoint => {
  const view = {progress: c.progress, leaseId, artifactHashes: [...c.artifactHashes]}
  return {hash: canonicalHash(view), ...view}
}

/** Derived members that follow from the others: mine, and whether the start gate is satisfied. */
function settle(e: WorkEntry, agentId: string): WorkEntry {
  const {required, grantedForEpoch} = e.executionApproval
  const satisfied = required === false || (e.owner !== null && grantedForEpoch === e.owner.ownershipEpoch)
  return {...e, mine: e.owner?.agentId === agentId, executionApproval: {required, grantedForEpoch, satisfied}}
}

/**
 * One fold step of WorkItem `workItemId` for Agent `agentId`: the entry after `event` (a new one
 * when `entry` is undefined), or undefined when the Event says nothing of a WorkItem not yet seen.
 */
export function foldWorkItem(
  entry: WorkEntry | undefined,
  event: KnownEvent,
  group: GroupView,
  agentId: string,
  workItemId: string,
): WorkEntry | undefined {
  const base = entry ?? blankEntry(event.groupId, group.missionId, workItemId)
  const next = step(base, event, agentId)
  if (next === null) return entry
  return settle({...next, missionId: next.missionId ?? group.missionId}, agentId)
}

function step(e: WorkEntry, event: KnownEvent, agentId: string): WorkEntry | null {
  switch (event.kind) {
    case 'work.authorized': {
      const w = event.payload.workItem
      return withContract(
        {
          ...e,
          missionId: w.missionId,
          conversationId: w.conversationId,
          exclusive: w.exclusive,
          state: w.state,
          revision: w.revision,
        },
        w.contract,
      )
    }
    case 'work.offer.created': {
      const p = event.payload
      const extras = offerExtras(p)
      const mineProvisional = (p.provisionalMemberships ?? []).find((m) => m.member.id === agentId)
      let next: WorkEntry = {
        ...e,
        state: 'offered',
        revision: p.revision,
        offer: {
          offerId: p.offer.offerId,
          expiresAt: p.offer.expiresAt,
          candidate: p.offer.candidates.includes(agentId),
          contextPackageId: mineProvisional?.contextPackageId ?? null,
        },
        // A re-offer fences a lapsed owner (§11.5); the offer reserves nothing (§10.3).
        owner: null,
        lease: null,
        contextPackage: extras.contextPackage ?? e.contextPackage,
      }
      if (extras.workItem !== undefined) {
        const w = extras.workItem
        next = withContract(
          {...next, missionId: w.missionId, conversationId: w.conversationId, exclusive: w.exclusive},
          w.contract,
        )
      }
      return next
    }
    case 'work.offer.accepted': {
      const o = event.payload.owner
      return {
        ...e,
        state: 'queued',
        revision: event.payload.revision,
        offer: null,
        owner: {
          agentId: o.agentId,
          ownershipEpoch: o.ownershipEpoch,
          sessionEpoch: o.sessionEpoch,
          startBy: o.startBy,
          leaseExpiresAt: o.startBy,
        },
        ownershipEpoch: Math.max(e.ownershipEpoch, o.ownershipEpoch),
        resumeFrom: null,
      }
    }
    case 'approval.execution.granted':
      return {
        ...e,
        revision: event.payload.revision,
        executionApproval: {...e.executionApproval, grantedForEpoch: event.payload.approval.ownershipEpoch},
      }
    case 'work.started': {
      const {lease, resumeFrom} = event.payload
      const owner: EntryOwner = {
        agentId: lease.holderAgentId,
        ownershipEpoch: lease.ownershipEpoch,
        sessionEpoch: lease.sessionEpoch,
        startBy: null,
        leaseExpiresAt: null,
      }
      return {
        ...e,
        state: 'active',
        revision: event.payload.revision,
        owner,
        ownershipEpoch: Math.max(e.ownershipEpoch, lease.ownershipEpoch),
        lease: {leaseId: lease.leaseId, expiresAt: lease.expiresAt, renewalCount: lease.renewalCount},
        resumeFrom: resumeFrom ?? null,
      }
    }
    case 'work.progressed': {
      const p = event.payload
      const lease =
        e.lease !== null && e.lease.leaseId === p.leaseId
          ? {leaseId: p.leaseId, expiresAt: p.lease.expiresAt, renewalCount: p.lease.renewalCount}
          : e.lease
      return {...e, revision: p.revision, lease}
    }
    case 'work.checkpointed': {
      const p = event.payload
      return {...requeued(e, p), checkpoint: checkpointOf(p.checkpoint, p.leaseId)}
    }
    // §11.3 (ACCEPTANCE B9): a replacement session revoked the lease; the WorkItem is queued
    // again, still this owner's under the same Ownership Epoch, for the new session to start.
    case LEASE_REVOKED:
      return requeued(e, event.payload)
    case 'work.blocked': {
      const p = event.payload
      return {
        ...e,
        state: 'blocked',
        revision: p.revision,
        lease: null,
        checkpoint: checkpointOf(p.checkpoint, p.leaseId),
        owner: e.owner === null ? null : {...e.owner, leaseExpiresAt: p.blockedLeaseExpiresAt},
        blockedResolution: {requiredResolution: p.requiredResolution, blockedLeaseExpiresAt: p.blockedLeaseExpiresAt},
      }
    }
    case 'work.unblocked': {
      const p = event.payload
      const owner = p.to === 'open' || e.owner === null ? null : {...e.owner, leaseExpiresAt: p.ownershipLeaseExpiresAt}
      return {...e, state: p.to, revision: p.revision, owner, blockedResolution: null}
    }
    case 'work.contract.revised': {
      const p = event.payload
      let next = withContract({...e, revision: p.revision}, p.contract)
      if (p.withdrawnOfferId !== undefined) next = {...next, offer: null}
      if (p.revokedLeaseId !== undefined) {
        const owner = next.owner === null ? null : {...next.owner, leaseExpiresAt: p.ownershipLeaseExpiresAt}
        next = {...next, state: 'queued', lease: null, owner}
      }
      return next
    }
    case 'work.submitted':
      return {
        ...e,
        state: 'submitted',
        revision: event.payload.revision,
        lease: null,
        resultArtifactHashes: [...event.payload.artifactHashes],
      }
    case 'work.result.accepted':
      return {
        ...e,
        state: 'verified',
        revision: event.payload.revision,
        resultArtifactHashes: [...event.payload.artifactHashes],
      }
    case 'work.failed':
      return {
        ...e,
        state: 'failed',
        revision: event.payload.revision,
        lease: null,
        owner: null,
        offer: null,
        failureReason: event.payload.reason,
      }
    case 'work.cancelled':
      return {...e, state: 'cancelled', revision: event.payload.revision, lease: null, offer: null}
    case 'mission.child.created':
      // §14: ownership is fenced while the linked child Mission runs.
      return {...e, state: 'blocked', revision: event.payload.revision, lease: null, owner: null, offer: null}
    case CHILD_CONCLUDED:
      return {...e, state: event.payload.to, revision: event.payload.revision}
    case RESOURCE_USAGE_RECORDED:
      return {...e, usage: {...event.payload.cumulative.workItem}}
    case 'mission.cancelled':
      return UNFINISHED.has(e.state) ? {...e, state: 'cancelled', revision: e.revision + 1, lease: null} : e
    case 'mission.terminated':
      return UNFINISHED.has(e.state)
        ? {...e, state: 'failed', revision: e.revision + 1, lease: null, owner: null, offer: null}
        : e
    default:
      return null
  }
}

/**
 * Agent-authored releases: the Agent already stopped the slot when it sent them. And a lease its
 * own session replacement revoked (B9): the runtime that opened the new session is not running it
 * (a restarted one has no slot; a reconnected one finds its old-lease Commands refused), and the
 * 'schedule' intent the revocation asks for re-queues the WorkItem — a 'stop' after it would take
 * the WorkItem out of the Scheduler again.
 */
const OWN_RELEASES: ReadonlySet<string> = new Set([
  'work.checkpointed',
  'work.blocked',
  'work.submitted',
  LEASE_REVOKED,
])

/** Back in its queue without a lease, the owner's start-by deadline renewed (a checkpoint, a revocation). */
const requeued = (e: WorkEntry, p: {revision: number; ownershipLeaseExpiresAt: string}): WorkEntry => ({
  ...e,
  state: 'queued',
  revision: p.revision,
  lease: null,
  owner: e.owner === null ? null : {...e.owner, leaseExpiresAt: p.ownershipLeaseExpiresAt},
})

/**
 * The intents one WorkItem transition asks of the runtime: a pure function of (before, after), so
 * a replay re-derives exactly the intents a live run recorded.
 */
export function intentsOf(before: WorkEntry | undefined, after: WorkEntry, cause: string): IntentDraft[] {
  const out: IntentDraft[] = []
  const w = after.workItemId
  const offered = (e: WorkEntry | undefined) => (e?.state === 'offered' && e.offer?.candidate ? e.offer : null)
  const was = offered(before)
  const now = offered(after)
  if (now !== null && was?.offerId !== now.offerId)
    out.push({kind: 'evaluate-offer', workItemId: w, payload: {offerId: now.offerId, expiresAt: now.expiresAt}})
  if (was !== null && now?.offerId !== was.offerId && !after.mine)
    out.push({kind: 'offer-withdrawn', workItemId: w, payload: {offerId: was.offerId}})

  const queuedMine = (e: WorkEntry | undefined) => e !== undefined && e.mine && e.state === 'queued'
  if (queuedMine(after) && !(queuedMine(before) && before?.ownershipEpoch === after.ownershipEpoch))
    out.push({kind: 'schedule', workItemId: w, payload: {ownershipEpoch: after.ownershipEpoch}})

  const myLease = (e: WorkEntry | undefined) => (e !== undefined && e.mine && e.state === 'active' ? e.lease : null)
  const had = myLease(before)
  const has = myLease(after)
  if (has !== null && had?.leaseId !== has.leaseId)
    out.push({
      kind: after.resumeFrom !== null ? 'resume' : 'execute',
      workItemId: w,
      payload: {ownershipEpoch: after.ownershipEpoch, leaseId: has.leaseId},
    })
  // Lost the lease or the ownership other than by this Agent's own release or a verified result.
  const ownedBefore = before !== undefined && before.mine && UNFINISHED.has(before.state)
  const lostLease = had !== null && has?.leaseId !== had.leaseId && !OWN_RELEASES.has(cause)
  const lostOwnership = ownedBefore && had === null && (!after.mine || !UNFINISHED.has(after.state))
  if (before !== undefined && (lostLease || (lostOwnership && after.state !== 'verified')))
    out.push({
      kind: 'stop',
      workItemId: w,
      payload: {ownershipEpoch: before.ownershipEpoch, leaseId: had?.leaseId ?? null, cause},
    })
  return out
}

/** An intent recorded earlier that a later state of its WorkItem has made moot (see local-store.ts). */
export function intentStillOpen(intent: IntentDraft, entry: WorkEntry | undefined): boolean {
  switch (intent.kind) {
    case 'evaluate-offer':
      return entry?.state === 'offered' && entry.offer?.offerId === intent.payload.offerId
    case 'offer-withdrawn':
      return !(entry?.state === 'offered' && entry.offer?.candidate === true)
    case 'schedule':
      return entry !== undefined && entry.mine && entry.state === 'queued'
    case 'execute':
    case 'resume':
      return entry !== undefined && entry.mine && entry.lease?.leaseId === intent.payload.leaseId
    // A stop is never moot by a later Event: the slot may still be running the revoked lease.
    case 'stop':
    case 'group-ended':
      return true
  }
}
