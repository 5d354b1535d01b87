// decide(state, command, ctx) → Event drafts | refusal: pure and synchronous (ARCHITECTURE
// principle 2). It sees a Command that already passed verification, admission, freshness, the
// epoch shape rules, idempotency, payload schema and role policy (ingress/command.ts), and decides
// only what the Group's current state allows. Everything non-deterministic (time, IDs) comes from
// ctx. One handler per Command kind, each behind its declared gate (gate.ts); one module per
// aggregate holds its kinds' handlers; this file only dispatches.

import {type CommandKind, type ReceivedCommand, typedCommand} from './command.js'
import {type DecideContext, type Decision, refuse} from './common.js'
import {type Handler, type Handlers, gate} from './gate.js'
import {ARCHIVE_HANDLERS} from './archive.js'
import {ARTIFACT_HANDLERS} from './artifact.js'
import {USAGE_HANDLERS} from './budget.js'
import {CHILD_HANDLERS} from './child.js'
import {DELEGATION_HANDLERS} from './delegation.js'
import {DEPENDENCY_HANDLERS} from './dependency.js'
import {LEASE_HANDLERS} from './lease.js'
import {MEMBERSHIP_HANDLERS} from './membership.js'
import {MESSAGE_HANDLERS} from './message.js'
import {MISSION_HANDLERS} from './mission.js'
import {reconcileOffline} from './offline.js'
import {OVERRIDE_HANDLERS} from './override.js'
import {WORK_HANDLERS} from './work.js'
import type {GroupState} from '../model/state.js'

export type {
  CommandKind,
  DecidedCommand,
  ReceivedCommand,
  VerifiedApproval,
  VerifiedContextPackage,
  VerifiedEvidence,
  VerifiedSnapshot,
} from './command.js'
export type {DecideContext, Decision, EventDraft, Refusal} from './common.js'

const HANDLERS: Handlers = {
  ...MISSION_HANDLERS,
  ...CHILD_HANDLERS,
  ...MESSAGE_HANDLERS,
  ...OVERRIDE_HANDLERS,
  ...ARTIFACT_HANDLERS,
  ...USAGE_HANDLERS,
  ...MEMBERSHIP_HANDLERS,
  ...DELEGATION_HANDLERS,
  ...WORK_HANDLERS,
  ...LEASE_HANDLERS,
  ...DEPENDENCY_HANDLERS,
  ...ARCHIVE_HANDLERS,
}

export function decide(state: GroupState | null, command: ReceivedCommand, ctx: DecideContext): Decision {
  // §7.4: an archived Group is a tombstone — its history stays readable, nothing new is accepted.
  if (state?.archive !== undefined) return refuse('INVALID_STATE_TRANSITION', 'the Group is archived')
  const kind = command.kind
  if (!isDecided(kind)) return refuse('INVALID_COMMAND', `this authority does not implement ${kind} yet`)
  // §11.5: a Command buffered offline is checked against its historical lease, then decided as usual.
  if (command.offline !== undefined)
    return reconcileOffline(state, command, command.offline, ctx, (c) => dispatch(kind, state, command, c))
  return dispatch(kind, state, command, ctx)
}

/** The kinds this authority decides (the Organization-scoped ones go to ingress/organization.ts). */
const isDecided = (kind: string): kind is CommandKind => Object.hasOwn(HANDLERS, kind)

function dispatch<K extends CommandKind>(
  kind: K,
  state: GroupState | null,
  command: ReceivedCommand,
  ctx: DecideContext,
): Decision {
  const handler: Handler<K> | undefined = HANDLERS[kind]
  const typed = typedCommand(command, kind)
  if (handler === undefined || typed === null)
    return refuse('INVALID_COMMAND', `this authority does not implement ${kind} yet`)
  return gate(handler, state, typed, ctx)
}
