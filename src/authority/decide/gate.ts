// The one gate every Command kind passes before its handler (index.ts holds the table). Each kind
// declares what it needs — whether its Group must exist, whose Membership and authority it needs,
// the Mission states it may act in, and for §10.2 WorkItem Commands the WorkItem it names, the
// Ownership Epoch and Execution Lease ID it presents and the WorkItem states it leaves from — and
// gate() checks them in one fixed order:
//
//   Group exists (or, opening a Group, does not) → Membership (§8) → who may issue it (§7.2,
//   §10.2, §11.3) → expectedRevision (§15.3) → Mission state (§7.1) → the WorkItem: it exists, no
//   child Mission runs it (§10.2), ownership and lease (§11.3), its state (§10.2)
//
// Authorization comes before state, so a stranger learns nothing about the Mission's state; the
// Membership check keeps the existence-oracle order of common.ts activeMember. A kind whose
// later checks interleave with its own lookups (a Message, an Artifact manifest) leaves those
// steps out of its spec and makes them in its handler, at the same place as before.

import type {Principal} from '../../signing/profiles.js'
import type {CommandPayloads} from '../model/payloads.generated.js'
import {
  type GroupState,
  type MemberState,
  type MissionState,
  type WorkItemView,
  type WorkState,
  TERMINAL,
} from '../model/state.js'
import {runningChild} from '../model/mission-tree.js'
import {currentLease, reached} from '../model/work-leases.js'
import type {CommandFields, CommandKind, DecidedCommand} from './command.js'
import {
  type DecideContext,
  type Decision,
  type EventDraft,
  type Refusal,
  activeMember,
  coordinatorCheck,
  isOwner,
  isRefusal,
  refuse,
  revisionConflict,
} from './common.js'

/** A check on the actor's authority for one Command: the refusal, or null to go on. */
export type AuthorityCheck<K extends CommandKind> = (
  state: GroupState,
  command: DecidedCommand<K>,
  ctx: DecideContext,
) => Refusal | null

/** Who may issue a Command kind, checked after the Membership. */
export type Who<K extends CommandKind> =
  /** Any member (the Membership check is all). */
  | {by: 'member'}
  /** The MissionOwner; anyone else: AUTH_FORBIDDEN with `reason`. */
  | {by: 'owner'; reason: string}
  /** The current Coordinator lease holder with its Coordinator Epoch (common.ts coordinatorCheck). */
  | {by: 'coordinator'}
  /**
   * The MissionOwner, or the current Coordinator. With `forbidden`, a refusal other than a fenced
   * epoch (AUTH_STALE_COORDINATOR) gives that reason.
   */
  | {by: 'owner-or-coordinator'; forbidden?: string}
  /** An Agent (whose ownership or lease the later steps check); anyone else: AUTH_FORBIDDEN. */
  | {by: 'agent'; reason: string}
  /** An Organization service (authorized by policy in ingress); anyone else: AUTH_FORBIDDEN. */
  | {by: 'service'; reason: string}
  /** A rule of the kind's own (it depends on the payload or on what the payload names). */
  | {by: 'rule'; check: AuthorityCheck<K>}

/** The Mission states a kind may act in; any other: INVALID_STATE_TRANSITION with `reason`. */
export interface MissionRule {
  from: (state: MissionState) => boolean
  reason: (kind: string, state: MissionState) => string
}

/** The gate of a Command in an existing Group. */
export interface GroupGate<K extends CommandKind> {
  /**
   * 'active': an active Membership under its current epoch (§8). 'none': no Membership is
   * looked at (Organization services). provisionalFor: an active Membership, or the provisional
   * one an offer granted for the WorkItem the payload names (§8 just-in-time Worker Membership).
   */
  membership: 'active' | 'none' | {provisionalFor: (payload: CommandPayloads[K], state: GroupState) => string}
  /**
   * 'policy': a service actor skips the Membership and `who` — one that reaches the decider was
   * authorized by Organization policy in ingress (terminators, redactors, override issuers), and
   * services hold no Membership.
   */
  services?: 'policy'
  who: Who<K>
  /** Absent: the handler checks the Mission state itself, where its own lookups put it. */
  mission?: MissionRule
}

/** §10.2 WorkItem Commands: the WorkItem the payload names, and what its owner must present. */
export interface ItemGate<K extends CommandKind> {
  workItemId: (payload: CommandPayloads[K]) => string
  /** §10.2: refused while a linked child Mission runs the WorkItem (it concludes through the child). */
  childFence: boolean
  /**
   * §11.3: the Ownership Epoch the payload presents; when it presents one, the actor must be the
   * owner under it (ownerCheck), and then cite the current Execution Lease when `lease` says so.
   */
  ownershipEpoch?: (payload: CommandPayloads[K]) => number | undefined
  /** §11.3: 'always', or 'while-active' (only while the WorkItem holds an active Execution Lease). */
  lease?: {cited: 'always' | 'while-active'; leaseId: (payload: CommandPayloads[K]) => string | undefined}
  /** §11.5: what a refused stale owner still records (a late result), with the gate's Event ID. */
  staleRecord?: (item: WorkItemView, command: DecidedCommand<K>, eventId: string, at: string) => EventDraft | null
  /** §10.2 rows: the WorkItem states it leaves from. Absent: the handler checks, in its own order. */
  from?: ReadonlySet<WorkState>
}

/** What a Command in an existing Group is decided on once it passed the gate. */
export interface InGroup {
  state: GroupState
  /** The actor's Membership; null when none was looked at (a service). */
  member: MemberState | null
}

/** ... and for a WorkItem Command, the WorkItem and the Event ID drawn for it. */
export interface OnItem extends InGroup {
  item: WorkItemView
  /**
   * Drawn right after the WorkItem lookup, before the ownership and state checks, as it always
   * was: a deterministic ID generator gives the same IDs whatever the outcome.
   */
  eventId: string
}

/** One handler per Command kind, behind its gate. */
export type Handler<K extends CommandKind> =
  /** A Command that opens a Group: it must not exist yet. `revision: false`: the handler checks expectedRevision. */
  | {on: 'new-group'; revision: boolean; decide: (command: DecidedCommand<K>, ctx: DecideContext) => Decision}
  | {on: 'group'; gate: GroupGate<K>; decide: (at: InGroup, command: DecidedCommand<K>, ctx: DecideContext) => Decision}
  | {
      on: 'work-item'
      gate: GroupGate<K>
      item: ItemGate<K>
      decide: (at: OnItem, command: DecidedCommand<K>, ctx: DecideContext) => Decision
    }

/** The handler table: at most one handler per kind. */
export type Handlers = {[K in CommandKind]?: Handler<K>}

/** Runs `handler`'s gate, then the handler. */
export function gate<K extends CommandKind>(
  handler: Handler<K>,
  state: GroupState | null,
  command: DecidedCommand<K>,
  ctx: DecideContext,
): Decision {
  if (handler.on === 'new-group') {
    if (state !== null) return refuse('INVALID_STATE_TRANSITION', 'the Group already exists')
    const conflict = handler.revision ? revisionConflict(state, command) : null
    return conflict ?? handler.decide(command, ctx)
  }
  if (state === null) return refuse('GROUP_NOT_FOUND', 'no such Group')
  const inGroup = groupGate(handler.gate, state, command, ctx)
  if (isRefusal(inGroup)) return inGroup
  if (handler.on === 'group') return handler.decide(inGroup, command, ctx)
  const onItem = itemGate(handler.item, inGroup, command, ctx)
  if ('error' in onItem) return onItem
  return handler.decide(onItem, command, ctx)
}

function groupGate<K extends CommandKind>(
  spec: GroupGate<K>,
  state: GroupState,
  command: DecidedCommand<K>,
  ctx: DecideContext,
): InGroup | Refusal {
  let member: MemberState | null = null
  if (spec.services !== 'policy' || command.actor.type !== 'service') {
    const m =
      spec.membership === 'active'
        ? activeMember(state, command)
        : spec.membership === 'none'
          ? null
          : provisionalMember(state, command, spec.membership.provisionalFor(command.payload, state), ctx.acceptedAt)
    if (m !== null && isRefusal(m)) return m
    member = m
    const denied = authority(spec.who, state, command, ctx)
    if (denied) return denied
  }
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  const mission = state.mission.state
  if (spec.mission !== undefined && !spec.mission.from(mission))
    return refuse('INVALID_STATE_TRANSITION', spec.mission.reason(command.kind, mission))
  return {state, member}
}

function authority<K extends CommandKind>(
  who: Who<K>,
  state: GroupState,
  command: DecidedCommand<K>,
  ctx: DecideContext,
): Refusal | null {
  switch (who.by) {
    case 'member':
      return null
    case 'owner':
      return isOwner(state, command.actor) ? null : refuse('AUTH_FORBIDDEN', who.reason)
    case 'coordinator':
      return coordinatorCheck(state, command)
    case 'owner-or-coordinator': {
      if (isOwner(state, command.actor)) return null
      const fenced = coordinatorCheck(state, command)
      if (fenced === null || who.forbidden === undefined || fenced.error === 'AUTH_STALE_COORDINATOR') return fenced
      return refuse('AUTH_FORBIDDEN', who.forbidden)
    }
    case 'agent':
      return command.actor.type === 'agent' ? null : refuse('AUTH_FORBIDDEN', who.reason)
    case 'service':
      return command.actor.type === 'service' ? null : refuse('AUTH_FORBIDDEN', who.reason)
    case 'rule':
      return who.check(state, command, ctx)
  }
}

function itemGate<K extends CommandKind>(
  spec: ItemGate<K>,
  at: InGroup,
  command: DecidedCommand<K>,
  ctx: DecideContext,
): OnItem | Exclude<Decision, {events: EventDraft[]}> {
  const item = at.state.workItems[spec.workItemId(command.payload)]
  if (item === undefined) return refuse('INVALID_COMMAND', 'no such WorkItem')
  // §10.2: while a linked child Mission runs, the WorkItem's ownership is fenced: it concludes
  // through the child (child.ts), or the Coordinator fails or cancels it (and the child).
  const child = runningChild(item)
  if (child !== null && spec.childFence)
    return refuse('INVALID_STATE_TRANSITION', `${command.kind} while child Mission ${child.missionId} runs`)
  const eventId = ctx.newId()
  const epoch = spec.ownershipEpoch?.(command.payload)
  if (epoch !== undefined) {
    // Owner Commands (§11.3): ownership epoch, then lease, then state.
    const owned = ownerCheck(item, command.actor, epoch)
    if (owned) {
      const late =
        owned.error === 'WORK_STALE_OWNERSHIP'
          ? (spec.staleRecord?.(item, command, eventId, ctx.acceptedAt) ?? null)
          : null
      return late !== null ? {...owned, record: [late]} : owned
    }
    const lease = spec.lease
    if (lease !== undefined && (lease.cited === 'always' || item.lease?.state === 'active')) {
      const cited = lease.leaseId(command.payload)
      // §11.5: a reconciled buffered Command ran under its historical lease (decide/offline.ts).
      const current =
        cited !== undefined && cited === ctx.reconciledLeaseId
          ? null
          : currentLease(item, cited, command.sessionEpoch, ctx.acceptedAt)
      if (current !== null && isRefusal(current)) return current
    }
  }
  if (spec.from !== undefined && !spec.from.has(item.state))
    return refuse('INVALID_STATE_TRANSITION', `${command.kind} from ${item.state}`)
  return {...at, item, eventId}
}

/**
 * §11.3: the owner with its current Ownership Epoch; an older epoch is fenced, and so is the
 * latest epoch once that ownership has ended (fenced on expiry or failed) with no successor yet.
 */
export function ownerCheck(item: WorkItemView, actor: Principal, epoch: number): Refusal | null {
  if (epoch < item.ownershipEpoch)
    return refuse('WORK_STALE_OWNERSHIP', `ownershipEpoch ${epoch}, current ${item.ownershipEpoch}`)
  const owner = item.owner
  if (
    owner === null &&
    (item.endedOwnerships ?? []).some((e) => e.agentId === actor.id && e.ownershipEpoch === epoch)
  ) {
    return refuse('WORK_STALE_OWNERSHIP', `ownership epoch ${epoch} has ended`)
  }
  if (owner === null || owner.agentId !== actor.id || epoch !== owner.ownershipEpoch)
    return refuse('AUTH_FORBIDDEN', 'not the WorkItem owner')
  return null
}

/** The Membership that may accept an offer: an active one, or the provisional one granted with it. */
function provisionalMember(
  state: GroupState,
  command: CommandFields,
  workItemId: string,
  at: string,
): MemberState | Refusal {
  const m = state.members[command.actor.id]
  if (m?.provisional === undefined) return activeMember(state, command)
  if (m.principal.type !== command.actor.type)
    return refuse('MEMBERSHIP_REQUIRED', 'the actor has no Membership in this Group')
  const epoch = command.membershipEpoch ?? 0
  if (epoch < m.membershipEpoch)
    return refuse('MEMBERSHIP_STALE', `membershipEpoch ${epoch}, current ${m.membershipEpoch}`)
  if (epoch > m.membershipEpoch) return refuse('MEMBERSHIP_REQUIRED', `membershipEpoch ${epoch} was never issued`)
  if (m.provisional.workItemId !== workItemId)
    return refuse('MEMBERSHIP_REQUIRED', 'the provisional Membership is for another WorkItem')
  if (reached(at, m.provisional.expiresAt))
    return refuse('WORK_OFFER_EXPIRED', 'the provisional Membership expired with its offer')
  return m
}

/** §7.1: the Mission states that still take Commands. */
export const live = (reason: (kind: string, state: MissionState) => string): MissionRule => ({
  from: (s) => !TERMINAL.has(s),
  reason,
})
