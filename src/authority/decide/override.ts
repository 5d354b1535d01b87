// policy.grant_cooperation_override (spec §20; ACCEPTANCE M4-M7): issues a durable, one-shot
// Cooperation Override Grant bound to this Mission and Group, one policy name, one beneficiary,
// one target Command kind and Action ID, with reason, approver, grant time and expiry. Only the
// MissionOwner or an Organization policy service listed in AuthorityPolicy.overrideIssuers
// (checked in ingress; services hold no Membership) issues one. Use and consumption: rate-limits.ts.

import {compareTimestampText} from '../../json/timestamp.js'
import type {DecidedCommand} from './command.js'
import {type DecideContext, type Decision, refuse} from './common.js'
import {type Handlers, type InGroup, live} from './gate.js'
import {LIMIT_POLICIES} from './rate-limits.js'

export const OVERRIDE_HANDLERS: Handlers = {
  'policy.grant_cooperation_override': {
    on: 'group',
    gate: {
      membership: 'active',
      services: 'policy',
      who: {by: 'owner', reason: 'only the MissionOwner or an Organization policy actor issues an override grant'},
      mission: live((_, s) => `the Mission is ${s}`),
    },
    decide: grantCooperationOverride,
  },
}

function grantCooperationOverride(
  {state}: InGroup,
  command: DecidedCommand<'policy.grant_cooperation_override'>,
  ctx: DecideContext,
): Decision {
  const p = command.payload
  const {grantId, policy, targetKind, beneficiary} = p
  const kinds = LIMIT_POLICIES[policy]
  if (kinds === undefined) return refuse('INVALID_COMMAND', `this authority enforces no policy named ${policy}`)
  if (!kinds.includes(targetKind)) return refuse('INVALID_COMMAND', `policy ${policy} does not limit ${targetKind}`)
  if (state.overrideGrants?.[grantId] !== undefined)
    return refuse('INVALID_STATE_TRANSITION', 'that grant ID is already issued')
  if (compareTimestampText(p.expiresAt, ctx.acceptedAt) <= 0)
    return refuse('INVALID_COMMAND', 'the grant would already be expired') // full precision (§2)
  const m = state.members[beneficiary.id]
  if (m === undefined || !m.active || m.principal.type !== beneficiary.type)
    return refuse('INVALID_COMMAND', 'the beneficiary has no active Membership in this Group')

  const grant = {
    grantId,
    missionId: state.missionId,
    groupId: state.groupId,
    policy,
    beneficiary: {type: beneficiary.type, id: beneficiary.id},
    targetKind,
    targetActionId: p.targetActionId,
    reason: p.reason,
    approver: {type: command.actor.type, id: command.actor.id},
    grantedAt: ctx.acceptedAt,
    expiresAt: p.expiresAt,
  }
  return {events: [{eventId: ctx.newId(), kind: 'policy.cooperation_override.granted', payload: {grant}}]}
}
