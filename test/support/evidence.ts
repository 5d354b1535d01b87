// Signed Evidence documents (§13.2, evidence.schema.json) for work.submit: by default one
// deterministic_test Evidence produced and signed by the submitting Worker, about the WorkItem,
// referencing the submitted Artifacts and covering the given acceptance criteria.

import type {SigningKey} from '../../src/crypto/keyfile.js'
import type {JsonObject} from '../../src/json/parse.js'
import {sign} from '../../src/signing/sign.js'

let counter = 0

export interface EvidenceFields {
  /** Default: the Group ID with `:group:` replaced by `:mission:` (authority-helpers missionIdOf). */
  missionId?: string
  groupId: string
  workItemId: string
  /** The acceptance criteria it covers (default the contract() fixture's `notes`). */
  criterionIds?: string[]
  artifactHashes: string[]
  /** Any other member of the document (type, subject, result, evidenceId, createdAt, ...). */
  extra?: Record<string, unknown>
}

/** An Evidence document signed by `signer`, its producer (generatedBy). */
export function evidenceDoc(signer: SigningKey, f: EvidenceFields): JsonObject {
  const unsigned = {
    evidenceId: `urn:mwp:test:evidence:${++counter}-${process.pid}`,
    missionId: f.missionId ?? f.groupId.replace(':group:', ':mission:'),
    groupId: f.groupId,
    workItemId: f.workItemId,
    type: 'deterministic_test',
    subject: {type: 'work_item', id: f.workItemId},
    criterionIds: f.criterionIds ?? ['notes'],
    method: 'Ran the release-notes checks against the submitted draft.',
    result: 'passed',
    artifactHashes: f.artifactHashes,
    generatedBy: signer.principal,
    createdAt: new Date().toISOString(),
    ...f.extra,
  }
  return sign('evidence', unsigned, signer).document
}

/**
 * A work.submit payload with Evidence: unless the payload states `evidence` (an array, or `null`
 * for none at all), one Evidence document by `signer` covering `criterionIds` (default `notes`).
 */
export function withEvidence(
  signer: SigningKey,
  groupId: string,
  payload: Record<string, unknown>,
  options: Omit<EvidenceFields, 'groupId' | 'workItemId' | 'artifactHashes'> = {},
): Record<string, unknown> {
  if (payload.evidence === null) {
    const {evidence: _none, ...rest} = payload
    return rest
  }
  if (payload.evidence !== undefined) return payload
  const doc = evidenceDoc(signer, {
    ...options,
    groupId,
    workItemId: payload.workItemId as string,
    artifactHashes: (payload.artifactHashes as string[] | undefined) ?? [],
  })
  return {...payload, evidence: [doc]}
}
