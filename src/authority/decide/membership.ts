// Membership aggregate decisions (spec §8). membership.change grants or changes a member's role
// and scopes and raises that member's Membership Epoch, so Commands signed under the old epoch
// are fenced with MEMBERSHIP_STALE; membership.end ends the Membership (MEMBERSHIP_REQUIRED after).
// The MissionOwner's and the Coordinator's Memberships are not changed here: the first is fixed
// by §7.1, the second follows the Coordinator lease (mission.assign_coordinator).

import type {Principal} from '../../signing/profiles.js'
import {type DecideContext, type DecidedCommand, type Decision, activeMember, coordinatorCheck, isOwner, isRefusal, memberDoc, membershipDoc, refuse, revisionConflict} from './common.js'
import {type GroupState, type MemberRole, TERMINAL} from '../model/state.js'

export const MEMBERSHIP_KINDS: ReadonlySet<string> = new Set(['membership.change', 'membership.end'])

export function membershipDecide(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state === null) return refuse('GROUP_NOT_FOUND', 'no such Group')
  const actor = activeMember(state, command)
  if (isRefusal(actor)) return actor
  if (!isOwner(state, command.actor)) {
    // The Coordinator manages membership under its lease (§7.2): a stale epoch is fenced.
    const fenced = coordinatorCheck(state, command)
    if (fenced) return fenced.error === 'AUTH_STALE_COORDINATOR' ? fenced : refuse('AUTH_FORBIDDEN', 'only the MissionOwner or the current Coordinator manages Memberships')
  }
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  if (TERMINAL.has(state.mission.state)) return refuse('INVALID_STATE_TRANSITION', `the Mission is ${state.mission.state}`)

  const p = command.payload
  const target = p.member as Principal
  if (isOwner(state, target) || state.mission.coordinator?.agentId === target.id) {
    return refuse('INVALID_COMMAND', "the MissionOwner's and the Coordinator's Memberships are not changed by membership.*")
  }
  const existing = state.members[target.id]
  if (existing !== undefined && existing.principal.type !== target.type) return refuse('INVALID_COMMAND', 'member type differs from the Membership')
  const eventId = ctx.newId()

  if (command.kind === 'membership.end') {
    if (existing === undefined || !existing.active) return refuse('INVALID_STATE_TRANSITION', 'no active Membership to end')
    const membership = memberDoc(state, existing, false, ctx.acceptedAt)
    return {events: [{eventId, kind: 'membership.ended', payload: {membership, ...(p.reason !== undefined ? {reason: p.reason} : {})}}]}
  }
  // membership.change: a new Membership at epoch 1, or the existing one at epoch + 1. A new member
  // sees the Group from the next sequence on (§8 visibility); an ended Membership is re-granted.
  const membership = membershipDoc(
    state,
    {
      membershipId: existing?.membershipId ?? ctx.newId(),
      member: {type: target.type, id: target.id},
      role: p.role as MemberRole,
      membershipEpoch: (existing?.membershipEpoch ?? 0) + 1,
      scopes: (p.scopes as string[] | undefined) ?? existing?.scopes ?? ['group.read'],
      visibilityStartSequence: existing?.visibilityStartSequence ?? state.sequence + 1,
      active: true,
    },
    ctx.acceptedAt,
  )
  return {events: [{eventId, kind: 'membership.changed', payload: {membership}}]}
}
