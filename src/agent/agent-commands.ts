// The Commands an Agent runtime signs (spec §10.3, §11.3, §11.4, §12, §13.2), each with the
// current Session Epoch and the Agent's Membership Epoch in the Group, and the Evidence documents
// a submission carries. Signing happens here, in the runtime process: a slot never holds the key.

import type {UsageDelta} from '../authority/model/budget.js'
import type {SigningKey} from '../crypto/keyfile.js'
import type {JsonObject} from '../json/parse.js'
import {formatUtcNow} from '../json/timestamp.js'
import {buildCommand, newUrn} from '../operator/command-builder.js'
import {sign} from '../signing/sign.js'
import type {EvidenceClaim, Progress} from './handler.js'

/** Where a WorkItem Command goes and under which epochs. */
export interface CommandTarget {
  groupId: string
  workItemId: string
  conversationId?: string
  sessionEpoch: number
  membershipEpoch: number
}

/** The lease a Command cites (§11.3: every renewal, checkpoint, block, submission and failure). */
export interface LeaseRef {
  ownershipEpoch: number
  leaseId: string
}

export class AgentCommands {
  constructor(readonly key: SigningKey) {}

  get agentId(): string {
    return this.key.principal!.id
  }

  #build(t: CommandTarget, kind: string, payload: Record<string, unknown>): Buffer {
    return buildCommand(this.key, {
      kind,
      groupId: t.groupId,
      payload,
      sessionEpoch: t.sessionEpoch,
      membershipEpoch: t.membershipEpoch,
      workItemId: t.workItemId,
      ...(t.conversationId ? {conversationId: t.conversationId} : {}),
    }).bytes
  }

  acceptOffer(t: CommandTarget, offerId: string) {
    return this.#build(t, 'work.accept_offer', {workItemId: t.workItemId, offerId})
  }

  start(t: CommandTarget, ownershipEpoch: number) {
    return this.#build(t, 'work.start', {workItemId: t.workItemId, ownershipEpoch})
  }

  renew(t: CommandTarget, lease: LeaseRef, progress: Progress, leaseSeconds?: number) {
    return this.#build(t, 'ext.missionweaveprotocol.core.lease_renew', {
      workItemId: t.workItemId,
      ...lease,
      ...(leaseSeconds ? {leaseSeconds} : {}),
      progress: progressPayload(progress),
    })
  }

  checkpoint(t: CommandTarget, lease: LeaseRef, progress: string, checkpointHash: string | null) {
    return this.#build(t, 'work.checkpoint', checkpointPayload(t, lease, progress, checkpointHash))
  }

  block(t: CommandTarget, lease: LeaseRef, requiredResolution: string) {
    return this.#build(t, 'work.block', {workItemId: t.workItemId, ...lease, requiredResolution})
  }

  submit(t: CommandTarget, lease: LeaseRef, artifactHashes: string[], evidence: JsonObject[]) {
    return this.#build(t, 'work.submit', {workItemId: t.workItemId, ...lease, artifactHashes, evidence})
  }

  fail(t: CommandTarget, lease: LeaseRef, reason: string, evidenceHashes: string[]) {
    return this.#build(t, 'work.fail', {workItemId: t.workItemId, ...lease, reason, evidenceHashes})
  }

  /** §13.1: the signed manifest of an Artifact this run produced, under the current lease. */
  publish(t: CommandTarget, lease: LeaseRef, manifest: JsonObject) {
    return this.#build(t, 'artifact.publish', {artifact: manifest, ...lease})
  }

  usage(t: CommandTarget, lease: LeaseRef, delta: UsageDelta) {
    return this.#build(t, 'ext.missionweaveprotocol.core.resource_usage_record', {
      workItemId: t.workItemId,
      ...lease,
      delta,
    })
  }

  post(t: CommandTarget, text: string) {
    return this.#build(t, 'message.post', postPayload(t, text))
  }

  /** One signed Evidence document (§13.2) produced by this Agent about the WorkItem. */
  evidence(
    scope: {missionId: string; groupId: string; workItemId: string},
    criterionIds: string[],
    claim: EvidenceClaim,
  ): JsonObject {
    const unsigned = {
      evidenceId: newUrn(),
      missionId: scope.missionId,
      groupId: scope.groupId,
      workItemId: scope.workItemId,
      type: claim.type ?? 'deterministic_test',
      subject: {type: 'work_item', id: scope.workItemId},
      criterionIds,
      method: claim.method,
      result: claim.result,
      artifactHashes: claim.artifactHashes ?? [],
      generatedBy: this.key.principal!,
      createdAt: formatUtcNow(),
    }
    return sign('evidence', unsigned, this.key).document
  }
}

/** work.checkpoint's payload (also buffered offline, §11.5). */
export function checkpointPayload(t: CommandTarget, lease: LeaseRef, progress: string, checkpointHash: string | null) {
  return {
    workItemId: t.workItemId,
    ...lease,
    progress: progress.slice(0, 4096),
    ...(checkpointHash ? {artifactHashes: [checkpointHash]} : {}),
  }
}

/** message.post's payload: a text Message in the WorkItem's Conversation (also buffered offline, §11.5). */
export function postPayload(t: CommandTarget, text: string) {
  return {...(t.conversationId ? {conversationId: t.conversationId} : {}), text: text.slice(0, 16_000)}
}

/** The lease_renew progress member (§11.4: phase, milestones, next checkpoint, blockers, estimate). */
export function progressPayload(p: Progress): Record<string, unknown> {
  return {
    phase: p.phase.slice(0, 200),
    ...(p.milestones?.length ? {completedMilestones: p.milestones.slice(-100).map((m) => m.slice(0, 500))} : {}),
    ...(p.nextCheckpoint ? {nextCheckpoint: p.nextCheckpoint.slice(0, 500)} : {}),
    ...(p.blockers?.length ? {blockers: p.blockers.slice(0, 50).map((b) => b.slice(0, 500))} : {}),
    ...(p.estimate ? {revisedEstimate: p.estimate} : {}),
  }
}
