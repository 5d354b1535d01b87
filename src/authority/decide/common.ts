// Shared types and checks of the pure decider (index.ts dispatches to one handler per kind, after
// gate.ts). Nothing here touches time, IDs or I/O except through the DecideContext.

import type {ErrorCode} from '../../errors.js'
import {compareTimestampText} from '../../json/timestamp.js'
import type {Principal} from '../../signing/profiles.js'
import type {GroupState, MemberRole, MemberState} from '../model/state.js'
import type {LeasePolicy} from '../model/work-leases.js'
import type {MessageIndexEntry} from '../model/cooperation-state.js'
import type {CommandFields} from './command.js'
import type {WorkContract} from '../model/payloads.generated.js'

export interface DecideContext {
  /** Trusted acceptance time, RFC 3339 UTC with uppercase Z. */
  acceptedAt: string
  /** Fresh identifier (URI) for Events, Memberships, Conversations, Messages, leases. */
  newId(): string
  /**
   * §12/§14: the states of the other Groups a multi-Group Command involves (the Mission ancestry,
   * a child Group being created: null), loaded and serialized by ingress (cross-group.ts).
   */
  groups?: Readonly<Record<string, GroupState | null>>
  /** §14/§20: the Organization's default maximum Mission depth (AuthorityPolicy.maxMissionDepth). */
  maxMissionDepth?: number
  /** §11.3/§11.4: the Organization's lease lengths (AuthorityPolicy.leases); unset: the defaults. */
  leases?: LeasePolicy
  /**
   * §10.1: whether a complete Work Contract is a valid work-contract.schema.json document. The
   * schema catalog reads files, so ingress passes its validator in (ingress/payloads.ts).
   */
  validWorkContract(contract: unknown): contract is WorkContract
  /**
   * §9: the Message a message.correct / retract / redact names, as the committed log and the
   * in-flight appends this Command is decided on leave it (null: no such Message in the Group).
   * Looked up by ingress (ingress/message-lookup.ts); undefined for every other kind.
   */
  message?: MessageIndexEntry | null
  /**
   * §11.5: the historical Execution Lease of a buffered Command, set by decide/offline.ts once
   * the binding was checked against it; the gate then accepts this lease in place of the current one.
   */
  reconciledLeaseId?: string
}

/** An Event before the authority numbers and signs it. */
export interface EventDraft {
  eventId: string
  kind: string
  conversationId?: string
  payload: Record<string, unknown>
  /** Another Group this Event belongs to (multi-Group Commands, §12/§14); absent: the Command's. */
  groupId?: string
}

/**
 * A refusal may carry `record`: Events the authority appends although the Command is refused
 * (§4 invariant 5: a stale owner's late result kept as non-authoritative Evidence). The actor
 * still gets `error`, and a retry of the same bytes gets the same error.
 */
export type Decision = {events: EventDraft[]} | (Refusal & {record?: EventDraft[]})
/**
 * `reason` is audited, and the actor is told it in the wire error's `details` — except for
 * GROUP_NOT_FOUND, which says only its code (ingress/command.ts decided()). So a reason names
 * only what the actor may know.
 */
export type Refusal = {error: ErrorCode; reason: string}

export const refuse = (error: ErrorCode, reason: string): Refusal => ({error, reason})

/** §15.3: a given expectedRevision must equal the current aggregate revision (0 for no Group). */
export function revisionConflict(state: GroupState | null, command: CommandFields): Refusal | null {
  if (command.expectedRevision === undefined) return null
  const current = state?.revision ?? 0
  return command.expectedRevision === current
    ? null
    : refuse('REVISION_CONFLICT', `expected revision ${command.expectedRevision}, current ${current}`)
}

/**
 * §8: the actor needs an active Membership and must present its current Membership Epoch. An
 * older epoch is fenced (MEMBERSHIP_STALE); an epoch never issued names no Membership.
 * §17.2/§19 (no existence oracle): an actor that never held a Membership here gets exactly what a
 * Group that does not exist gives, GROUP_NOT_FOUND ("absent or intentionally undisclosed"); only
 * a former or current member, who already knows the Group, learns MEMBERSHIP_REQUIRED.
 */
export function activeMember(state: GroupState, command: CommandFields): MemberState | Refusal {
  const member = state.members[command.actor.id]
  if (member === undefined || member.principal.type !== command.actor.type)
    return refuse('GROUP_NOT_FOUND', 'no such Group')
  if (!member.active) {
    return refuse('MEMBERSHIP_REQUIRED', 'the actor has no active Membership in this Group')
  }
  const epoch = command.membershipEpoch ?? 0
  if (epoch < member.membershipEpoch)
    return refuse('MEMBERSHIP_STALE', `membershipEpoch ${epoch}, current ${member.membershipEpoch}`)
  if (epoch > member.membershipEpoch) return refuse('MEMBERSHIP_REQUIRED', `membershipEpoch ${epoch} was never issued`)
  return member
}

export const isRefusal = (x: unknown): x is Refusal => typeof x === 'object' && x !== null && 'error' in x

/**
 * §7.2/§15.1: Coordinator authority comes from the current lease. An older Coordinator Epoch is
 * fenced (AUTH_STALE_COORDINATOR) whoever presents it — a replaced Coordinator keeps its old
 * epoch; the current epoch from anyone but the lease holder, or an epoch never issued, is
 * AUTH_FORBIDDEN.
 */
export function coordinatorCheck(state: GroupState, command: CommandFields): Refusal | null {
  const lease = state.mission.coordinator
  if (lease === null) return refuse('AUTH_FORBIDDEN', 'the Mission has no Coordinator')
  const epoch = command.coordinatorEpoch
  if (command.actor.type !== 'agent' || epoch === undefined)
    return refuse('AUTH_FORBIDDEN', 'not the current Coordinator')
  if (epoch < lease.coordinatorEpoch)
    return refuse('AUTH_STALE_COORDINATOR', `coordinatorEpoch ${epoch}, current ${lease.coordinatorEpoch}`)
  if (epoch > lease.coordinatorEpoch || command.actor.id !== lease.agentId)
    return refuse('AUTH_FORBIDDEN', 'not the current Coordinator')
  return null
}

/**
 * §8/§17.2: who may read a Group's history (from its visibility start): an active Membership, or a
 * provisional (just-in-time) one until the offer it came with expires — so a candidate Worker can
 * receive its offer and Context Package before accepting.
 */
export function mayRead(
  member: MemberState | undefined,
  principal: {type: string},
  now: () => string,
): member is MemberState {
  if (member === undefined || member.principal.type !== principal.type) return false
  if (member.active) return true
  // The clock is read only here: the wire checks every page of every subscriber.
  return member.provisional !== undefined && compareTimestampText(now(), member.provisional.expiresAt) < 0
}

export const isOwner = (state: GroupState, actor: Principal) =>
  actor.type === state.mission.missionOwner.type && actor.id === state.mission.missionOwner.id

/** The Membership document of an existing member, now active or ended (epoch, role and scopes unchanged). */
export const memberDoc = (state: {missionId: string; groupId: string}, m: MemberState, active: boolean, at: string) =>
  membershipDoc(state, {...m, member: m.principal, active}, at)

/** A Membership document (membership.schema.json) as carried in Membership-changing Events. */
export function membershipDoc(
  state: {missionId: string; groupId: string},
  fields: {
    membershipId: string
    member: Principal
    role: MemberRole
    membershipEpoch: number
    scopes: string[]
    visibilityStartSequence: number
    active: boolean
  },
  at: string,
) {
  return {
    membershipId: fields.membershipId,
    missionId: state.missionId,
    groupId: state.groupId,
    member: {type: fields.member.type, id: fields.member.id},
    role: fields.role,
    state: fields.active ? 'active' : 'ended',
    membershipEpoch: fields.membershipEpoch,
    scopes: fields.scopes,
    visibilityStartSequence: fields.visibilityStartSequence,
    grantedAt: at,
    ...(fields.active ? {activatedAt: at} : {endedAt: at}),
  }
}
