// Contracts for driving the poc worker handler: a WorkSpec for one stage, with its input files
// served from a directory of stored Artifacts (content hash => file) as the runtime will serve them.

import {join} from 'node:path'
import type {WorkSpec} from '../../../src/agent/handler.js'
import type {AcceptanceCriterion, EvidenceType, WorkContract} from '../../../src/authority/model/payloads.generated.js'
import {tempDir} from './layout.js'

/** The WorkSpec with the input files the runtime materializes (the lead's addition). */
export type PocWork = WorkSpec & {inputs?: Record<string, string>}

/** The Artifacts every run stored, by content hash, as files the next stage gets as inputs. */
export const blobs = tempDir('blobs')
export const blobPath = (hash: string): string => join(blobs, hash.replace('sha256:', ''))

export const criterion = (criterionId: string, evidence: EvidenceType = 'deterministic_test'): AcceptanceCriterion => ({
  criterionId,
  description: `criterion ${criterionId}`,
  evidenceRequired: [evidence],
})

export function spec(
  poc: Record<string, unknown>,
  criteria: AcceptanceCriterion[],
  resume: WorkSpec['resume'] = null,
): PocWork {
  const files = typeof poc.files === 'object' && poc.files !== null ? Object.values(poc.files) : []
  const contract: WorkContract = {
    contractVersion: 1,
    goal: `poc ${String(poc.stage)}`,
    requiredDeliverables: [],
    acceptanceCriteria: criteria,
    inputArtifacts: files.filter((h): h is string => typeof h === 'string'),
    dependencyWorkItemIds: [],
    allowedResources: [],
    requiredCapabilities: [{id: 'software.typescript', version: '1.0.0'}],
    deadline: '2027-01-15T00:00:00Z',
    requestedUrgency: 'normal',
    businessImpact: 'proof of concept',
    retryPolicy: {maxAttempts: 1, backoff: 'none', maxDelay: 'PT1M', retryableFailures: []},
    budget: {},
    sideEffectRisk: 'none',
    executionApproval: 'not_required',
    constraints: {poc: JSON.parse(JSON.stringify(poc))},
  }
  const inputs = Object.fromEntries(contract.inputArtifacts.map((h) => [h, blobPath(h)]))
  const work: PocWork = {
    groupId: 'urn:mwp:test:group:poc',
    missionId: 'urn:mwp:test:mission:poc',
    workItemId: 'urn:mwp:test:work:poc',
    conversationId: 'urn:mwp:test:conversation:poc',
    ownershipEpoch: 1,
    leaseId: 'urn:mwp:test:lease:poc',
    contract,
    resume,
    attempt: 1,
    inputs,
  }
  return work
}
