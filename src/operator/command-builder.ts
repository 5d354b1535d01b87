// Building and signing a Command locally with the actor's own key (issue 4, human control). The
// private key never leaves the operator's machine: the authority receives signed bytes only.
//
// The builder fills the envelope the way command.schema.json and the ingress epoch rules expect
// for the actor type: a fresh Action ID and Correlation ID, issuedAt now, and the epochs looked
// up from the Group's current state (folded from its Events) unless given explicitly:
//   mission.create / mission.create_follow_up: no epochs (the Group does not exist yet)
//   human:   membershipEpoch (from the actor's Membership)
//   agent:   sessionEpoch (given, default 1 until sessions exist) + membershipEpoch, and
//            coordinatorEpoch when the actor holds the Coordinator lease
//   service: no epochs
// An explicit value always wins, so a caller can deliberately send a stale epoch.

import {randomUUID} from 'node:crypto'
import type {CoordinatorState, GroupState, MemberState} from '../authority/model/state.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {MwpError} from '../errors.js'
import type {JsonObject} from '../json/parse.js'
import {formatUtcNow} from '../json/timestamp.js'
import {sign} from '../signing/sign.js'

export const GROUP_CREATING_KINDS: ReadonlySet<string> = new Set(['mission.create', 'mission.create_follow_up'])

/**
 * What the builder reads from a Group to fill the epochs: the Memberships and the Coordinator
 * lease. A GroupState is one; so is what a member whose visibility starts late (§8) sees of them
 * (OperatorContext.signing, from operator/visible-work.ts).
 */
export interface EpochSource {
  members: Readonly<Record<string, Pick<MemberState, 'membershipEpoch'>>>
  mission: {coordinator: Pick<CoordinatorState, 'agentId' | 'coordinatorEpoch'> | null}
}

export interface CommandSpec {
  kind: string
  groupId: string
  payload: Record<string, unknown>
  /** The Group's current epochs (its state); null/undefined when it does not exist (or is not known). */
  state?: EpochSource | null
  actionId?: string
  correlationId?: string
  issuedAt?: string
  sessionEpoch?: number
  membershipEpoch?: number
  coordinatorEpoch?: number
  expectedRevision?: number
  workItemId?: string
  conversationId?: string
  causedByEventId?: string
  /** §18: Extension Profile data, keyed by profile URI (e.g. §11.5's offline binding, agent/offline-binding.ts). */
  extensions?: Record<string, {version: string; critical: boolean; data: unknown}>
}

export interface BuiltCommand {
  bytes: Buffer
  document: JsonObject
  actionId: string
  correlationId: string
}

/** Why the builder cannot fill an envelope (the CLI reports it as a usage error). */
export class CommandBuildError extends MwpError<'command-unbuildable'> {
  constructor(message: string) {
    super('command-unbuildable', message)
  }
}

export const newUrn = () => `urn:uuid:${randomUUID()}`

function epochsFor(key: SigningKey, spec: CommandSpec): Record<string, number> {
  if (GROUP_CREATING_KINDS.has(spec.kind)) return {}
  const principal = key.principal!
  if (principal.type === 'service') return {}
  const epochs: Record<string, number> = {}
  const member = spec.state?.members[principal.id]
  const membershipEpoch = spec.membershipEpoch ?? member?.membershipEpoch
  if (membershipEpoch === undefined) {
    throw new CommandBuildError(
      spec.state
        ? `${principal.id} has no Membership in ${spec.groupId}: give the membership epoch explicitly to send anyway`
        : `Group ${spec.groupId} does not exist (no Events): cannot look up the membership epoch`,
    )
  }
  if (principal.type === 'agent') epochs.sessionEpoch = spec.sessionEpoch ?? 1
  epochs.membershipEpoch = membershipEpoch
  const lease = spec.state?.mission.coordinator
  const coordinatorEpoch =
    spec.coordinatorEpoch ??
    (principal.type === 'agent' && lease?.agentId === principal.id ? lease.coordinatorEpoch : undefined)
  if (coordinatorEpoch !== undefined) epochs.coordinatorEpoch = coordinatorEpoch
  return epochs
}

/** Builds and signs one Command with `key`. Throws CommandBuildError when an epoch is unknown. */
export function buildCommand(key: SigningKey, spec: CommandSpec): BuiltCommand {
  if (!key.principal)
    throw new CommandBuildError(`key ${key.keyId} names no principal (upstream test-only key): it cannot act`)
  const actionId = spec.actionId ?? newUrn()
  const correlationId = spec.correlationId ?? newUrn()
  const optional: Record<string, unknown> = {}
  for (const field of ['expectedRevision', 'workItemId', 'conversationId', 'causedByEventId', 'extensions'] as const) {
    if (spec[field] !== undefined) optional[field] = spec[field]
  }
  const unsigned = {
    protocolVersion: '0.1',
    actionId,
    actor: {type: key.principal.type, id: key.principal.id},
    kind: spec.kind,
    groupId: spec.groupId,
    ...epochsFor(key, spec),
    ...optional,
    correlationId,
    issuedAt: spec.issuedAt ?? formatUtcNow(),
    payload: spec.payload,
  }
  const {document} = sign('command', unsigned, key)
  return {bytes: Buffer.from(JSON.stringify(document), 'utf8'), document, actionId, correlationId}
}

/**
 * A human's final Approval (§7.3) of exactly what the Coordinator submitted, signed locally with
 * the human's key; it travels inside mission.approve.
 */
export function buildFinalApproval(
  key: SigningKey,
  state: GroupState,
  options: {comments?: string; conditions?: string[]; occurredAt?: string; acceptancePolicyVersion?: string} = {},
): JsonObject {
  const submission = state.mission.submission
  if (!submission)
    throw new CommandBuildError(
      `Mission ${state.missionId} has no submission awaiting approval (state ${state.mission.state})`,
    )
  const unsigned = {
    approvalId: newUrn(),
    // §14: a child Mission's result is approved with a `child_mission` Approval (by its own
    // MissionOwner and, where its risk policy asks, by the root human too).
    kind: state.mission.parent !== undefined ? 'child_mission' : 'mission_final',
    decision: 'approved',
    missionId: state.missionId,
    groupId: state.groupId,
    missionRevision: submission.missionRevision,
    artifactHashes: [...submission.artifactHashes],
    acceptancePolicyVersion: options.acceptancePolicyVersion ?? '1.0.0',
    approver: {type: key.principal!.type, id: key.principal!.id},
    comments: options.comments ?? 'Submitted revision, Artifacts and Evidence reviewed.',
    conditions: options.conditions ?? [],
    occurredAt: options.occurredAt ?? formatUtcNow(),
  }
  return sign('approval', unsigned, key).document
}
