// policy.grant_cooperation_override (spec §20; ACCEPTANCE M4-M7): issues a durable, one-shot
// Cooperation Override Grant bound to this Mission and Group, one policy name, one beneficiary,
// one target Command kind and Action ID, with reason, approver, grant time and expiry. Only the
// MissionOwner or an Organization policy service listed in AuthorityPolicy.overrideIssuers
// (checked in ingress; services hold no Membership) issues one. Use and consumption: rate-limits.ts.

import {compareTimestampText} from '../../json/timestamp.js'
import type {Principal} from '../../signing/profiles.js'
import {type DecideContext, type DecidedCommand, type Decision, activeMember, isOwner, isRefusal, refuse, revisionConflict} from './common.js'
import {LIMIT_POLICIES} from './rate-limits.js'
import {type GroupState, TERMINAL} from '../model/state.js'

export function grantCooperationOverride(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state === null) return refuse('GROUP_NOT_FOUND', 'no such Group')
  if (command.actor.type !== 'service') {
    const member = activeMember(state, command)
    if (isRefusal(member)) return member
    if (!isOwner(state, command.actor)) return refuse('AUTH_FORBIDDEN', 'only the MissionOwner or an Organization policy actor issues an override grant')
  }
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  if (TERMINAL.has(state.mission.state)) return refuse('INVALID_STATE_TRANSITION', `the Mission is ${state.mission.state}`)

  const p = command.payload
  const grantId = p.grantId as string
  const policy = p.policy as string
  const targetKind = p.targetKind as string
  const beneficiary = p.beneficiary as Principal
  const kinds = LIMIT_POLICIES[policy]
  if (kinds === undefined) return refuse('INVALID_COMMAND', `this authority enforces no policy named ${policy}`)
  if (!kinds.includes(targetKind)) return refuse('INVALID_COMMAND', `policy ${policy} does not limit ${targetKind}`)
  if (state.overrideGrants?.[grantId] !== undefined) return refuse('INVALID_STATE_TRANSITION', 'that grant ID is already issued')
  if (compareTimestampText(p.expiresAt as string, ctx.acceptedAt) <= 0) return refuse('INVALID_COMMAND', 'the grant would already be expired') // full precision (§2)
  const m = state.members[beneficiary.id]
  if (m === undefined || !m.active || m.principal.type !== beneficiary.type) return refuse('INVALID_COMMAND', 'the beneficiary has no active Membership in this Group')

  const grant = {
    grantId,
    missionId: state.missionId,
    groupId: state.groupId,
    policy,
    beneficiary: {type: beneficiary.type, id: beneficiary.id},
    targetKind,
    targetActionId: p.targetActionId as string,
    reason: p.reason as string,
    approver: {type: command.actor.type, id: command.actor.id},
    grantedAt: ctx.acceptedAt,
    expiresAt: p.expiresAt as string,
  }
  return {events: [{eventId: ctx.newId(), kind: 'policy.cooperation_override.granted', payload: {grant}}]}
}
