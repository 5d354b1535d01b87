// decide(state, command, ctx) → Event drafts | refusal: pure and synchronous (ARCHITECTURE
// principle 2). It sees a Command that already passed verification, admission, freshness, the
// epoch shape rules, idempotency, payload schema and role policy (ingress.ts), and decides only
// what the Group's current state allows. Everything non-deterministic (time, IDs) comes from ctx.
// One module per aggregate; this file only dispatches.

import {type DecideContext, type DecidedCommand, type Decision, refuse} from './common.js'
import {membershipDecide, MEMBERSHIP_KINDS} from './membership.js'
import {messageFollowUp, messagePost, MESSAGE_FOLLOW_UP_KINDS} from './message.js'
import {grantCooperationOverride} from './override.js'
import {artifactPublish} from './artifact.js'
import {grantDelegation, markWorkAuthority} from './delegation.js'
import {missionCreate, missionLifecycle, MISSION_KINDS} from './mission.js'
import type {GroupState} from '../model/state.js'
import {workDecide, WORK_KINDS} from './work.js'
import {leaseRenew, LEASE_RENEW} from './lease.js'
import {dependencyInsert, DEPENDENCY_INSERT} from './dependency.js'
import {groupArchive, GROUP_ARCHIVE} from './archive.js'
import {cascadeCancellation, childDecide, childOutcome, CHILD_KINDS} from './child.js'
import {recordUsage} from './budget.js'
import {RESOURCE_USAGE_RECORD} from '../model/mission-tree.js'

export type {DecideContext, DecidedCommand, Decision, EventDraft, VerifiedApproval} from './common.js'

export function decide(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  // §7.4: an archived Group is a tombstone — its history stays readable, nothing new is accepted.
  if (state?.archive !== undefined) return refuse('INVALID_STATE_TRANSITION', 'the Group is archived')
  if (command.kind === 'mission.create') return missionCreate(state, command, ctx)
  if (command.kind === 'message.post') return messagePost(state, command, ctx)
  if (MESSAGE_FOLLOW_UP_KINDS.has(command.kind)) return messageFollowUp(state, command, ctx)
  if (command.kind === 'policy.grant_cooperation_override') return grantCooperationOverride(state, command, ctx)
  if (command.kind === 'artifact.publish') return artifactPublish(state, command, ctx)
  if (MISSION_KINDS.has(command.kind)) return cascadeCancellation(state, ctx, childOutcome(state, command, ctx, missionLifecycle(state, command, ctx)))
  if (CHILD_KINDS.has(command.kind)) return childDecide(state, command, ctx)
  if (command.kind === RESOURCE_USAGE_RECORD) return recordUsage(state, command, ctx)
  if (MEMBERSHIP_KINDS.has(command.kind)) return membershipDecide(state, command, ctx)
  if (WORK_KINDS.has(command.kind)) return cascadeCancellation(state, ctx, markWorkAuthority(workDecide(state, command, ctx), command))
  if (command.kind === 'membership.grant_delegation') return grantDelegation(state, command, ctx)
  if (command.kind === LEASE_RENEW) return leaseRenew(state, command, ctx)
  if (command.kind === DEPENDENCY_INSERT) return dependencyInsert(state, command, ctx)
  if (command.kind === GROUP_ARCHIVE) return groupArchive(state, command, ctx)
  return refuse('INVALID_COMMAND', `this authority does not implement ${command.kind} yet`)
}
