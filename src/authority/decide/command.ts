// The Command as the decider sees it: as ingress received it (ReceivedCommand: any kind, payload
// an unchecked JSON object), and as a handler gets it (DecidedCommand<K>: the payload typed by
// the kind's schema). The one step from the first to the second is typedCommand().

import type {Principal} from '../../signing/profiles.js'
import type {ContextPackageDocument, EvidenceDocument} from '../model/events.js'
import type {CommandKind, CommandPayloads} from '../model/payloads.generated.js'
import type {OfflineBinding} from '../model/offline-execution.js'

export type {CommandKind, CommandPayloads} from '../model/payloads.generated.js'

/** An Approval document ingress has already verified with the six-stage verifier (§7.3). */
export interface VerifiedApproval {
  /** The Principal whose key produced the signature. */
  signer: Principal
  document: Record<string, unknown>
}

/** A signed group-snapshot document ingress has verified, with the Event IDs it was checked against. */
export interface VerifiedSnapshot {
  signer: Principal
  document: Record<string, unknown>
  /** The signing hash of the snapshot (its content hash). */
  signingHash: string
}

/** A signed Evidence document of work.submit, verified by ingress with the six stages from its received bytes (§13.2). */
export interface VerifiedEvidence {
  signer: Principal
  document: EvidenceDocument
  /** The signing hash of the Evidence document (its content hash, §6.4). */
  signingHash: string
}

/** A work.offer's signed Context Package, verified by ingress with the six stages from its received bytes (§8, §13.3). */
export interface VerifiedContextPackage {
  signer: Principal
  document: ContextPackageDocument
  signingHash: string
}

/** The Command fields the decider reads besides kind and payload (a verified Command document). */
export interface CommandFields {
  actionId: string
  actor: Principal
  groupId?: string
  membershipEpoch?: number
  /** Agent Commands: the Session Epoch (bound into Ownership grants and Execution Leases, §11.3). */
  sessionEpoch?: number
  coordinatorEpoch?: number
  expectedRevision?: number
  /** §20: the one-shot Cooperation Override Grant this Command cites (rate-limits.ts consumes it). */
  cooperationOverrideGrantId?: string
  /** mission.approve only: the verified payload.approval, attached by ingress. */
  approval?: VerifiedApproval
  /** mission.approve of a child Mission that asks for it (§14): the root human MissionOwner's verified payload.rootApproval. */
  rootApproval?: VerifiedApproval
  /** artifact.publish only: the verified payload.artifact manifest (§13.1), attached by ingress. */
  artifact?: VerifiedApproval
  /** work.submit only: the verified payload.evidence documents, in order, attached by ingress (ingress/evidence.ts). */
  evidence?: VerifiedEvidence[]
  /** work.offer with payload.contextPackage only: the verified document, attached by ingress (ingress/context-package.ts). */
  contextPackage?: VerifiedContextPackage
  /** ext.missionweaveprotocol.core.group_archive only: the verified payload.snapshot (snapshot.ts). */
  snapshot?: VerifiedSnapshot
  /** §11.5 a buffered Command only: its bounded-offline-execution binding, schema-checked by ingress (ingress/extensions.ts). */
  offline?: OfflineBinding
}

/** A verified Command as ingress hands it to decide(): any kind, its payload not yet typed. */
export interface ReceivedCommand extends CommandFields {
  kind: string
  payload: Record<string, unknown>
}

/** A Command of kind K whose payload matches schemas/payloads/K.schema.json. */
export interface DecidedCommand<K extends CommandKind = CommandKind> extends CommandFields {
  kind: K
  payload: CommandPayloads[K]
}

/**
 * The one narrowing of a received Command to its kind's payload type. Sound because ingress
 * validated the payload against schemas/payloads/<kind>.schema.json (ingress/payloads.ts
 * checkPayload, in commandChecks) before it calls decide(), and refused any kind without a
 * payload schema; CommandPayloads is generated from those very schemas (scripts/payload-types.mjs).
 */
export function typedCommand<K extends CommandKind>(command: ReceivedCommand, kind: K): DecidedCommand<K> | null {
  return command.kind === kind ? (command as CommandFields as DecidedCommand<K>) : null
}

/** A Command of one of the kinds K, discriminated by its kind (narrowing `kind` narrows `payload`). */
export type OneOf<K extends CommandKind> = K extends CommandKind ? DecidedCommand<K> : never
