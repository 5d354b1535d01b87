// One sample of each of the nine Signed Document kinds for the development Organization, all
// about one Mission ("add rate limiting to the public API"), and their signatures by the signer
// the §6.4 table names for each kind.

import {canonicalHash} from '../../src/json/jcs.js'
import type {JsonObject} from '../../src/json/parse.js'
import {DOCUMENT_KINDS, type DocumentKind} from '../../src/signing/profiles.js'
import {type Signed, sign} from '../../src/signing/sign.js'
import {type IdentityName, ORG, VALID_FROM, keyOf, principalOf} from './identities.js'
import {clone, sha256Text} from './util.js'

// ---------------------------------------------------------------------------------------------
// Shared identifiers and content

export const MISSION = 'urn:mwp:dev:mission:api-rate-limit'
export const GROUP = 'urn:mwp:dev:group:api-rate-limit'
export const MAIN_CONVERSATION = 'urn:mwp:dev:conversation:api-rate-limit'
export const WORK_CONVERSATION = 'urn:mwp:dev:conversation:rate-limit-middleware'
export const WORK_ITEM = 'urn:mwp:dev:work-item:rate-limit-middleware'
export const REQUIREMENTS_ITEM = 'urn:mwp:dev:work-item:rate-limit-requirements'

/** Lower-case UUID URNs, numbered so the samples read in order. */
export const uuid = (n: number): string => `urn:uuid:6d77702d-6465-4076-8000-${n.toString(16).padStart(12, '0')}`

export const IMPLEMENTATION_CAPABILITY = {id: 'example.software.typescript-implementation', version: '1.4.0'}

// The artifacts exist only as hashes in the documents; their "content" is fixed text so the
// hashes are real SHA-256 values of something.
export const REQUIREMENTS_HASH = sha256Text(
  'Rate limiting requirements v1: 100 requests per minute per API key; 429 with Retry-After.\n',
)
export const PATCH_TEXT =
  'diff --git a/src/middleware/rate-limit.ts b/src/middleware/rate-limit.ts\nnew file mode 100644\n'
export const PATCH_HASH = sha256Text(PATCH_TEXT)
export const TEST_REPORT_HASH = sha256Text('rate-limit suite: 18 passed, 0 failed\n')
export const EVIDENCE_ID = 'urn:mwp:dev:evidence:rate-limit-tests'

// ---------------------------------------------------------------------------------------------
// The nine unsigned samples

function agentCard(): JsonObject {
  const developer = keyOf('developer')
  return {
    agentId: principalOf('developer').id,
    organizationId: ORG,
    cardVersion: 1,
    displayName: 'Developer Agent',
    description: 'Implements and tests TypeScript changes in the example services.',
    owner: principalOf('mission-owner'),
    status: 'active',
    protocolVersions: ['0.1'],
    endpoints: [{transport: 'wss', uri: 'wss://agents.dev.example/developer'}],
    publicKeys: [
      {keyId: developer.keyId, algorithm: 'Ed25519', publicKey: developer.publicKeyB64, validFrom: VALID_FROM},
    ],
    capabilities: [
      {
        ...IMPLEMENTATION_CAPABILITY,
        inputSchema: 'https://schemas.dev.example/capabilities/typescript-implementation-input.json',
        inputSchemaHash: sha256Text('typescript-implementation input schema v1'),
        outputSchema: 'https://schemas.dev.example/capabilities/typescript-implementation-output.json',
        outputSchemaHash: sha256Text('typescript-implementation output schema v1'),
        constraints: {node: '>=20.19'},
        verifiedEvidence: ['urn:mwp:dev:evidence:developer-capability-check'],
      },
    ],
    maxConcurrency: 2,
    issuedAt: '2026-07-01T08:00:00Z',
  }
}

function extensionProfile(): JsonObject {
  return {
    profileUri: 'urn:mwp:dev:profile:dependency-audit',
    name: 'Dependency Audit',
    version: '1.0.0',
    schemaUri: 'https://schemas.dev.example/mwp/dependency-audit-1.json',
    schemaHash: sha256Text('dependency-audit profile schema v1'),
    requiredCapabilities: [{id: 'example.security.dependency-audit', version: '1.0.0'}],
    critical: false,
    commandKinds: ['ext.example.dependency_audit.request'],
    eventKinds: ['ext.example.dependency_audit.completed'],
    overridesCoreInvariants: false,
    approvedBy: principalOf('security-owner'),
    approvedAt: '2026-07-01T09:00:00Z',
  }
}

function contextPackage(): JsonObject {
  return {
    contextPackageId: 'urn:mwp:dev:context-package:developer-v1',
    version: 1,
    missionId: MISSION,
    groupId: GROUP,
    workItemId: WORK_ITEM,
    sourceEventRange: {
      fromSequence: 1,
      toSequence: 12,
      eventIds: [
        'urn:mwp:dev:event:mission-created',
        'urn:mwp:dev:event:requirements-accepted',
        'urn:mwp:dev:event:middleware-offered',
      ],
    },
    artifactHashes: [REQUIREMENTS_HASH],
    summary: 'Add a per-API-key rate-limiting middleware following the accepted requirements artifact.',
    decisions: [
      {
        description: 'Use a sliding-window counter kept in the existing cache.',
        sourceEventIds: ['urn:mwp:dev:event:requirements-accepted'],
      },
    ],
    constraints: ['Do not change the public error schema.', 'Return 429 with a Retry-After header.'],
    unresolvedQuestions: ['Should internal service keys be exempt?'],
    generatedBy: principalOf('coordinator'),
    generatedAt: '2026-07-02T09:00:00Z',
  }
}

function artifact(): JsonObject {
  return {
    artifactId: 'urn:mwp:dev:artifact:rate-limit-patch',
    contentHash: PATCH_HASH,
    uri: `https://artifacts.dev.example/sha256/${PATCH_HASH.slice('sha256:'.length)}`,
    sizeBytes: Buffer.byteLength(PATCH_TEXT, 'utf8'),
    mediaType: 'text/x-diff',
    schemaUri: 'urn:mwp:dev:schema:opaque',
    producer: {
      agentId: principalOf('developer').id,
      agentCardVersion: 1,
      capabilities: [{...IMPLEMENTATION_CAPABILITY}],
    },
    missionId: MISSION,
    groupId: GROUP,
    workItemId: WORK_ITEM,
    sourceArtifactHashes: [REQUIREMENTS_HASH],
    toolVersions: [
      {name: 'git', version: '2.47.0'},
      {name: 'node', version: '20.19.0'},
    ],
    modelVersions: [{provider: 'example', model: 'developer-model', version: '2026-06'}],
    classification: 'internal',
    createdAt: '2026-07-02T15:00:00Z',
  }
}

function evidence(): JsonObject {
  return {
    evidenceId: EVIDENCE_ID,
    missionId: MISSION,
    groupId: GROUP,
    workItemId: WORK_ITEM,
    type: 'deterministic_test',
    subject: {type: 'artifact', id: PATCH_HASH},
    criterionIds: ['limits-enforced', 'tests-pass'],
    method: 'Run the rate-limit integration suite against the patched service in the pinned environment.',
    result: 'passed',
    details: {passed: 18, failed: 0, durationMs: 5321},
    artifactHashes: [TEST_REPORT_HASH],
    generatedBy: principalOf('reviewer'),
    toolVersion: 'vitest 4.1.12',
    createdAt: '2026-07-02T16:00:00Z',
  }
}

function command(): JsonObject {
  return {
    protocolVersion: '0.1',
    actionId: uuid(1),
    actor: principalOf('coordinator'),
    sessionEpoch: 3,
    membershipEpoch: 2,
    coordinatorEpoch: 1,
    groupId: GROUP,
    conversationId: MAIN_CONVERSATION,
    kind: 'mission.submit_for_approval',
    expectedRevision: 14,
    correlationId: uuid(2),
    issuedAt: '2026-07-03T10:00:00Z',
    payload: {artifactHashes: [PATCH_HASH], evidenceIds: [EVIDENCE_ID]},
  }
}

function event(signedCommand: JsonObject): JsonObject {
  return {
    protocolVersion: '0.1',
    eventId: uuid(3),
    groupId: GROUP,
    sequence: 27,
    aggregateRevision: 15,
    kind: 'mission.submitted_for_approval',
    actor: principalOf('coordinator'),
    cause: {type: 'command', id: signedCommand.actionId as string},
    correlationId: signedCommand.correlationId as string,
    conversationId: MAIN_CONVERSATION,
    occurredAt: '2026-07-03T10:00:01Z',
    payload: {missionId: MISSION, artifactHashes: [PATCH_HASH], evidenceIds: [EVIDENCE_ID]},
    acceptedBy: principalOf('group-authority'),
    commandHash: canonicalHash(signedCommand),
  }
}

function approval(): JsonObject {
  return {
    approvalId: 'urn:mwp:dev:approval:api-rate-limit-final',
    kind: 'mission_final',
    decision: 'approved',
    missionId: MISSION,
    groupId: GROUP,
    missionRevision: 15,
    artifactHashes: [PATCH_HASH],
    acceptancePolicyVersion: '1.0.0',
    approver: principalOf('mission-owner'),
    comments: 'Rate limiting verified by the integration suite; approved for release.',
    conditions: [],
    occurredAt: '2026-07-03T14:00:00Z',
  }
}

function groupSnapshot(signedEvent: JsonObject): JsonObject {
  return {
    snapshotId: 'urn:mwp:dev:snapshot:api-rate-limit-final',
    groupId: GROUP,
    throughSequence: 29,
    eventIds: ['urn:mwp:dev:event:mission-created', signedEvent.eventId as string, uuid(5)],
    stateHash: canonicalHash({missionId: MISSION, state: 'approved', revision: 16}),
    policyLog: [
      {
        entryId: 'urn:mwp:dev:policy-log:final-approval',
        decision: 'Verified the signed human final Approval against the submitted artifacts.',
        actor: principalOf('group-authority'),
        occurredAt: '2026-07-03T14:00:02Z',
        details: {approvalId: 'urn:mwp:dev:approval:api-rate-limit-final'},
      },
    ],
    createdBy: principalOf('group-authority'),
    createdAt: '2026-07-04T00:00:00Z',
  }
}

// ---------------------------------------------------------------------------------------------
// Signing

/** Who signs each kind (spec §6.4 table). */
export const SIGNER: Readonly<Record<DocumentKind, IdentityName>> = {
  'agent-card': 'service', // an Organization service Principal issues Agent Cards
  approval: 'mission-owner', // approver
  artifact: 'developer', // producer.agentId
  command: 'coordinator', // actor
  'context-package': 'coordinator', // generatedBy
  event: 'group-authority', // acceptedBy
  evidence: 'reviewer', // generatedBy
  'extension-profile': 'security-owner', // approvedBy
  'group-snapshot': 'group-authority', // createdBy
}

export interface DocumentSet {
  unsigned: Record<DocumentKind, JsonObject>
  signed: Record<DocumentKind, Signed>
}

/** Builds and signs the nine samples (in dependency order: Event cites the Command, and so on). */
export function buildDocuments(): DocumentSet {
  const unsigned = {} as Record<DocumentKind, JsonObject>
  const signed = {} as Record<DocumentKind, Signed>
  const add = (kind: DocumentKind, doc: JsonObject): JsonObject => {
    unsigned[kind] = doc
    signed[kind] = sign(kind, clone(doc), keyOf(SIGNER[kind]))
    return signed[kind].document
  }
  add('agent-card', agentCard())
  add('extension-profile', extensionProfile())
  add('context-package', contextPackage())
  add('artifact', artifact())
  add('evidence', evidence())
  const cmd = add('command', command())
  const evt = add('event', event(cmd))
  add('approval', approval())
  add('group-snapshot', groupSnapshot(evt))
  for (const kind of DOCUMENT_KINDS) if (!signed[kind]) throw new Error(`no sample for ${kind}`)
  return {unsigned, signed}
}
