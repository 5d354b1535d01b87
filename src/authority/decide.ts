// decide(state, command, ctx) → Event drafts | rejection: pure and synchronous (ARCHITECTURE
// principle 2). It sees a Command that already passed verification, admission, freshness, the
// epoch shape rules, idempotency, payload schema and role policy (ingress.ts), and decides only
// what the Group's current state allows. Everything non-deterministic (time, IDs) comes from ctx.
// One module per aggregate; this file only dispatches.

import {type DecideContext, type DecidedCommand, type Decision, reject} from './decide-common.js'
import {membershipDecide, MEMBERSHIP_KINDS} from './decide-membership.js'
import {messagePost} from './decide-message.js'
import {missionCreate, missionLifecycle, MISSION_KINDS} from './decide-mission.js'
import type {GroupState} from './state.js'
import {workDecide, WORK_KINDS} from './decide-work.js'

export type {DecideContext, DecidedCommand, Decision, EventDraft, VerifiedApproval} from './decide-common.js'

export function decide(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (command.kind === 'mission.create') return missionCreate(state, command, ctx)
  if (command.kind === 'message.post') return messagePost(state, command, ctx)
  if (MISSION_KINDS.has(command.kind)) return missionLifecycle(state, command, ctx)
  if (MEMBERSHIP_KINDS.has(command.kind)) return membershipDecide(state, command, ctx)
  if (WORK_KINDS.has(command.kind)) return workDecide(state, command, ctx)
  return reject('INVALID_COMMAND', `this authority does not implement ${command.kind} yet`)
}
