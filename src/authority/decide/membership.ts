// Membership aggregate decisions (spec §8). membership.change grants or changes a member's role
// and scopes and raises that member's Membership Epoch, so Commands signed under the old epoch
// are fenced with MEMBERSHIP_STALE; membership.end ends the Membership (MEMBERSHIP_REQUIRED after).
// The MissionOwner's and the Coordinator's Memberships are not changed here: the first is fixed
// by §7.1, the second follows the Coordinator lease (mission.assign_coordinator).

import type {Principal} from '../../signing/profiles.js'
import {type Refusal, isOwner, isRefusal, memberDoc, membershipDoc, refuse} from './common.js'
import {type Handler, type Handlers, live} from './gate.js'
import type {GroupState, MemberState} from '../model/state.js'

/**
 * The MissionOwner, or the Coordinator under its lease (§7.2): a stale epoch is fenced, any other
 * actor is told who manages Memberships.
 */
const membershipHandler = <K extends 'membership.change' | 'membership.end'>(
  decide: Extract<Handler<K>, {on: 'group'}>['decide'],
): Handler<K> => ({
  on: 'group',
  gate: {
    membership: 'active',
    who: {
      by: 'owner-or-coordinator',
      forbidden: 'only the MissionOwner or the current Coordinator manages Memberships',
    },
    mission: live((_, s) => `the Mission is ${s}`),
  },
  decide,
})

export const MEMBERSHIP_HANDLERS: Handlers = {
  'membership.change': membershipHandler(({state}, {payload: p}, ctx) => {
    const existing = changeable(state, p.member)
    if (isRefusal(existing)) return existing
    const eventId = ctx.newId()
    // A new Membership at epoch 1, or the existing one at epoch + 1. A new member sees the Group
    // from the next sequence on (§8 visibility); an ended Membership is re-granted.
    const membership = membershipDoc(
      state,
      {
        membershipId: existing?.membershipId ?? ctx.newId(),
        member: {type: p.member.type, id: p.member.id},
        role: p.role,
        membershipEpoch: (existing?.membershipEpoch ?? 0) + 1,
        scopes: p.scopes ?? existing?.scopes ?? ['group.read'],
        visibilityStartSequence: existing?.visibilityStartSequence ?? state.sequence + 1,
        active: true,
      },
      ctx.acceptedAt,
    )
    return {events: [{eventId, kind: 'membership.changed', payload: {membership}}]}
  }),
  'membership.end': membershipHandler(({state}, {payload: p}, ctx) => {
    const existing = changeable(state, p.member)
    if (isRefusal(existing)) return existing
    const eventId = ctx.newId()
    if (existing === undefined || !existing.active)
      return refuse('INVALID_STATE_TRANSITION', 'no active Membership to end')
    const membership = memberDoc(state, existing, false, ctx.acceptedAt)
    return {
      events: [
        {
          eventId,
          kind: 'membership.ended',
          payload: {membership, ...(p.reason !== undefined ? {reason: p.reason} : {})},
        },
      ],
    }
  }),
}

/** The target's Membership (if any), unless it is one membership.* does not change. */
function changeable(state: GroupState, target: Principal): MemberState | undefined | Refusal {
  if (isOwner(state, target) || state.mission.coordinator?.agentId === target.id) {
    return refuse(
      'INVALID_COMMAND',
      "the MissionOwner's and the Coordinator's Memberships are not changed by membership.*",
    )
  }
  const existing = state.members[target.id]
  if (existing !== undefined && existing.principal.type !== target.type)
    return refuse('INVALID_COMMAND', 'member type differs from the Membership')
  return existing
}
