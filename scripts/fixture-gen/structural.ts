// Our structural vectors (`conformance/`): `{name, schema, instance, valid}` entries validated
// against the project's own schemas. At least one valid instance per schema (the nine Signed
// Document samples carry real development signatures), valid edge cases, and invalid instances
// that each break exactly one rule of ACCEPTANCE.md A, B7, D1-D2, G3, H1-H3, H8 or K3.

import type {JsonObject} from '../../src/json/parse.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import {DOCUMENT_KINDS, PROFILES} from '../../src/signing/profiles.js'
import {
  type DocumentSet,
  GROUP,
  IMPLEMENTATION_CAPABILITY,
  MAIN_CONVERSATION,
  MISSION,
  PATCH_HASH,
  REQUIREMENTS_HASH,
  REQUIREMENTS_ITEM,
  WORK_CONVERSATION,
  WORK_ITEM,
  uuid,
} from './documents.js'
import {ORG, keyOf, principalOf} from './identities.js'
import {type GeneratedFile, clone, edited, jsonText} from './util.js'

type Obj = JsonObject

// ---------------------------------------------------------------------------------------------
// Valid base objects for the schemas that are not Signed Documents

const workContract = (): Obj => ({
  contractVersion: 1,
  goal: 'Add per-API-key rate limiting middleware to the public API.',
  requiredDeliverables: [
    {
      deliverableId: 'middleware-patch',
      description: 'Source and test changes for the middleware.',
      mediaType: 'text/x-diff',
      schema: 'urn:mwp:dev:schema:opaque',
    },
  ],
  acceptanceCriteria: [
    {
      criterionId: 'limits-enforced',
      description: 'Requests above 100 per minute per key receive 429 with Retry-After.',
      evidenceRequired: ['deterministic_test'],
    },
    {
      criterionId: 'tests-pass',
      description: 'The full integration suite passes.',
      evidenceRequired: ['deterministic_test', 'artifact_integrity'],
    },
  ],
  inputArtifacts: [REQUIREMENTS_HASH],
  dependencyWorkItemIds: [REQUIREMENTS_ITEM],
  allowedResources: [{resource: 'urn:mwp:dev:resource:api-repository', operations: ['read', 'write:branch']}],
  requiredCapabilities: [{...IMPLEMENTATION_CAPABILITY}],
  deadline: '2026-07-05T00:00:00Z',
  requestedUrgency: 'normal',
  businessImpact: 'Protects the public API from abusive clients before the partner launch.',
  retryPolicy: {
    maxAttempts: 3,
    backoff: 'exponential',
    maxDelay: 'PT10M',
    retryableFailures: ['TRANSIENT_TOOL_FAILURE'],
  },
  budget: {currency: 'EUR', financialLimit: 40, modelTokenLimit: 200000, toolCallLimit: 300},
  sideEffectRisk: 'reversible',
  executionApproval: 'not_required',
})

const workItem = (): Obj => ({
  workItemId: WORK_ITEM,
  missionId: MISSION,
  groupId: GROUP,
  conversationId: WORK_CONVERSATION,
  revision: 4,
  state: 'active',
  exclusive: true,
  contract: workContract(),
  offers: [
    {
      offerId: 'urn:mwp:dev:offer:middleware-developer',
      agentId: principalOf('developer').id,
      agentCardVersion: 1,
      expiresAt: '2026-07-02T10:00:00Z',
      status: 'accepted',
    },
  ],
  owner: {
    agentId: principalOf('developer').id,
    agentCardVersion: 1,
    capabilityPins: [{...IMPLEMENTATION_CAPABILITY}],
    ownershipEpoch: 1,
    ownershipLeaseId: 'urn:mwp:dev:lease:middleware-ownership-1',
    acceptedAt: '2026-07-02T09:30:00Z',
  },
  selectionBasis: {
    requiredCapabilities: [{...IMPLEMENTATION_CAPABILITY}],
    verifiedMatches: [{...IMPLEMENTATION_CAPABILITY}],
    authorizationEligible: true,
    availabilityEstimate: '2026-07-02T09:30:00Z',
    expectedCost: 12.5,
    reliabilityEvidence: ['urn:mwp:dev:evidence:developer-capability-check'],
    policyRulesApplied: ['capability-pinned', 'within-mission-budget'],
  },
  progress: {
    currentPhase: 'implementation',
    completedMilestones: ['middleware skeleton'],
    nextCheckpoint: 'integration tests green',
    blockers: [],
    updatedCompletionEstimate: '2026-07-02T15:00:00Z',
    evidenceIds: [],
  },
  createdBy: principalOf('coordinator'),
  authorizedBy: principalOf('coordinator'),
  createdAt: '2026-07-02T08:00:00Z',
  updatedAt: '2026-07-02T09:30:00Z',
})

const mission = (): Obj => ({
  missionId: MISSION,
  groupId: GROUP,
  revision: 14,
  objective: 'Add rate limiting to the public API without changing its error schema.',
  definitionOfDone: [
    {
      criterionId: 'limits-enforced',
      description: 'Rate limits are enforced and tested.',
      evidenceRequired: ['deterministic_test'],
    },
  ],
  missionOwner: principalOf('mission-owner'),
  coordinator: {
    agentId: principalOf('coordinator').id,
    agentCardVersion: 1,
    coordinatorEpoch: 1,
    leaseId: 'urn:mwp:dev:lease:coordinator-1',
  },
  state: 'active',
  budget: {currency: 'EUR', financialLimit: 150, modelTokenLimit: 1000000, wallClockSecondsLimit: 259200},
  deadline: '2026-07-06T00:00:00Z',
  approvalPolicy: {finalHumanApproval: true, highRiskExecutionApproval: true, policyVersion: '1.0.0'},
  createdAt: '2026-07-01T10:00:00Z',
})

const group = (): Obj => ({
  groupId: GROUP,
  missionId: MISSION,
  state: 'active',
  mainConversationId: MAIN_CONVERSATION,
  createdAt: '2026-07-01T10:00:00Z',
})

const membership = (): Obj => ({
  membershipId: 'urn:mwp:dev:membership:developer-api-rate-limit',
  missionId: MISSION,
  groupId: GROUP,
  member: principalOf('developer'),
  role: 'worker',
  state: 'active',
  membershipEpoch: 2,
  scopes: ['message.post', 'work.accept_offer', 'work.execute'],
  visibilityStartSequence: 12,
  contextPackageId: 'urn:mwp:dev:context-package:developer-v1',
  grantedAt: '2026-07-02T09:00:00Z',
  activatedAt: '2026-07-02T09:05:00Z',
})

const conversation = (): Obj => ({
  conversationId: WORK_CONVERSATION,
  missionId: MISSION,
  groupId: GROUP,
  type: 'work_item',
  primaryWorkItemId: WORK_ITEM,
  title: 'Rate-limit middleware',
  access: {mode: 'group'},
  createdBy: principalOf('coordinator'),
  createdAt: '2026-07-02T08:00:00Z',
  state: 'active',
  revision: 1,
})

const message = (): Obj => ({
  messageId: 'urn:mwp:dev:message:exemption-question',
  missionId: MISSION,
  groupId: GROUP,
  conversationId: WORK_CONVERSATION,
  author: principalOf('developer'),
  kind: 'message',
  authority: false,
  content: [
    {type: 'text', text: 'Should internal service keys be exempt from the limit?'},
    {type: 'artifact_ref', artifactHash: REQUIREMENTS_HASH},
  ],
  mentions: [principalOf('coordinator')],
  committedAt: '2026-07-02T10:15:00Z',
})

const lease = (): Obj => ({
  leaseId: 'urn:mwp:dev:lease:middleware-execution-1',
  leaseType: 'execution',
  missionId: MISSION,
  groupId: GROUP,
  workItemId: WORK_ITEM,
  holderAgentId: principalOf('developer').id,
  sessionEpoch: 3,
  ownershipEpoch: 1,
  issuedAt: '2026-07-02T09:30:00Z',
  startsAt: '2026-07-02T09:30:00Z',
  expiresAt: '2026-07-02T10:00:00Z',
  state: 'released',
  renewalCount: 1,
  lastRenewedAt: '2026-07-02T09:45:00Z',
  closedAt: '2026-07-02T09:55:00Z',
  closureReason: 'work checkpointed',
})

const error = (): Obj => ({
  code: 'REVISION_CONFLICT',
  message: 'Expected Mission revision 13; the current revision is 14.',
  retryable: false,
  fatal: false,
  relatedActionId: uuid(1),
  groupId: GROUP,
  expectedRevision: 13,
  currentRevision: 14,
  occurredAt: '2026-07-03T10:00:01Z',
})

const presenceRecord = (): Obj => ({
  agentId: principalOf('developer').id,
  sessionEpoch: 3,
  status: 'busy',
  capacity: {maxSlots: 2, activeSlots: 1, availableSlots: 1, queuedItems: 0},
  capabilityAvailability: [{capability: {...IMPLEMENTATION_CAPABILITY}, status: 'available'}],
  estimatedResponseMs: 400,
  lastHeartbeat: '2026-07-02T10:00:00Z',
  expiresAt: '2026-07-02T10:00:30Z',
})

const subscribeFrame = (): Obj => ({
  protocolVersion: '0.1',
  frameId: uuid(201),
  frameType: 'SUBSCRIBE',
  subscriptionId: 'urn:mwp:dev:subscription:developer',
  groups: [
    {
      groupId: GROUP,
      afterSequence: 12,
      attention: {
        eventKinds: ['work.offer.created', 'message.posted'],
        workItemIds: [WORK_ITEM],
        mentionsOnly: false,
        announcements: true,
      },
    },
  ],
})

const helloClientInit = (): Obj => ({
  protocolVersion: '0.1',
  frameId: uuid(202),
  frameType: 'HELLO',
  phase: 'client_init',
  agentId: principalOf('developer').id,
  keyId: keyOf('developer').keyId,
  clientNonce: 'bXdwLWRldi1jbGllbnQtbm9uY2UtMDE',
  supportedVersions: ['0.1'],
})

// ---------------------------------------------------------------------------------------------
// Vector table

interface Vector {
  file: string
  name: string
  schema: string
  instance: unknown
  valid: boolean
}

export function structuralBundle(docs: DocumentSet): GeneratedFile[] {
  const vectors: Vector[] = []
  const valid = (file: string, schema: string, name: string, instance: unknown) =>
    vectors.push({file, name, schema, instance, valid: true})
  const invalid = (file: string, schema: string, name: string, instance: unknown) =>
    vectors.push({file, name, schema, instance, valid: false})
  const signed = (kind: (typeof DOCUMENT_KINDS)[number]): Obj => docs.signed[kind].document
  const cmd = signed('command')
  const evt = signed('event')
  const card = signed('agent-card')

  // Commands by the other two actor types (unsigned shapes, placeholder signature values).
  const humanCreate = (): Obj => ({
    protocolVersion: '0.1',
    actionId: uuid(301),
    actor: principalOf('mission-owner'),
    groupId: 'urn:mwp:dev:group:api-pagination',
    kind: 'mission.create',
    correlationId: uuid(302),
    issuedAt: '2026-07-04T09:00:00Z',
    payload: {
      missionId: 'urn:mwp:dev:mission:api-pagination',
      groupId: 'urn:mwp:dev:group:api-pagination',
      coordinatorAgentId: principalOf('coordinator').id,
    },
    signature: {
      algorithm: 'Ed25519',
      keyId: keyOf('mission-owner').keyId,
      createdAt: '2026-07-04T09:00:00Z',
      value: 'cGxhY2Vob2xkZXI',
    },
  })
  const humanApprove = (): Obj => ({
    protocolVersion: '0.1',
    actionId: uuid(303),
    actor: principalOf('mission-owner'),
    membershipEpoch: 1,
    groupId: GROUP,
    kind: 'mission.approve',
    correlationId: uuid(2),
    issuedAt: '2026-07-03T14:00:00Z',
    payload: {approvalId: 'urn:mwp:dev:approval:api-rate-limit-final'},
    signature: {
      algorithm: 'Ed25519',
      keyId: keyOf('mission-owner').keyId,
      createdAt: '2026-07-03T14:00:00Z',
      value: 'cGxhY2Vob2xkZXI',
    },
  })
  const serviceSessionOpen = (): Obj => ({
    protocolVersion: '0.1',
    actionId: uuid(304),
    actor: principalOf('group-authority'),
    kind: 'ext.missionweaveprotocol.identity.session_open',
    correlationId: uuid(305),
    issuedAt: '2026-07-02T08:59:00Z',
    payload: {agentId: principalOf('developer').id},
    signature: {
      algorithm: 'Ed25519',
      keyId: keyOf('group-authority').keyId,
      createdAt: '2026-07-02T08:59:00Z',
      value: 'cGxhY2Vob2xkZXI',
    },
  })
  const orgSessionOpened = (): Obj => ({
    protocolVersion: '0.1',
    eventId: uuid(306),
    kind: 'ext.missionweaveprotocol.identity.session_opened',
    actor: principalOf('group-authority'),
    cause: {type: 'command', id: uuid(304)},
    correlationId: uuid(305),
    occurredAt: '2026-07-02T08:59:01Z',
    payload: {agentId: principalOf('developer').id, sessionEpoch: 3},
    acceptedBy: principalOf('group-authority'),
    signature: {
      algorithm: 'Ed25519',
      keyId: keyOf('group-authority').keyId,
      createdAt: '2026-07-02T08:59:01Z',
      value: 'cGxhY2Vob2xkZXI',
    },
  })
  const admissionRecord = (): Obj => ({
    protocolVersion: '0.1',
    admissionRecordId: 'urn:mwp:dev:admission-record:submit-for-approval',
    organizationId: ORG,
    documentKind: 'command',
    signingHash: docs.signed.command.signingHash,
    keyId: keyOf('coordinator').keyId,
    principal: principalOf('coordinator'),
    trustedAcceptedAt: '2026-07-03T10:00:00.250Z',
    acceptedBy: principalOf('admission'),
  })

  // --- valid: one per schema -------------------------------------------------------------
  for (const kind of DOCUMENT_KINDS) {
    valid(
      `${kind}.json`,
      PROFILES[kind].schema,
      `valid ${kind} signed by its §6.4 signer with a development key`,
      signed(kind),
    )
  }
  valid(
    'common.json',
    'common.schema.json',
    'common.schema.json constrains nothing at its root: any JSON value validates',
    {note: 'shared definitions only'},
  )
  valid(
    'websocket-frame-subscribe.json',
    'websocket-frame.schema.json',
    'valid SUBSCRIBE frame with an attention filter',
    subscribeFrame(),
  )
  valid(
    'websocket-frame-hello-client-init.json',
    'websocket-frame.schema.json',
    'valid HELLO client_init frame',
    helloClientInit(),
  )
  valid(
    'websocket-frame-command.json',
    'websocket-frame.schema.json',
    'valid COMMAND frame carrying the signed development Command',
    {protocolVersion: '0.1', frameId: uuid(203), frameType: 'COMMAND', command: cmd},
  )
  valid(
    'presence-record.json',
    'presence-record.schema.json',
    'valid Presence Record of a busy Worker',
    presenceRecord(),
  )
  valid(
    'mission.json',
    'mission.schema.json',
    'valid root Mission with a human MissionOwner and final human Approval',
    mission(),
  )
  valid('group.json', 'group.schema.json', 'valid active Group', group())
  valid('group-archived.json', 'group.schema.json', 'valid archived Group citing its archive snapshot', {
    ...group(),
    state: 'archived',
    archivedAt: '2026-07-04T00:00:00Z',
    archiveSnapshotId: 'urn:mwp:dev:snapshot:api-rate-limit-final',
  })
  valid('membership.json', 'membership.schema.json', 'valid active Worker Membership', membership())
  valid(
    'conversation.json',
    'conversation.schema.json',
    'valid WorkItem Conversation with its primary WorkItem',
    conversation(),
  )
  valid(
    'message.json',
    'message.schema.json',
    'valid non-authoritative Message with text and an artifact reference',
    message(),
  )
  valid('work-contract.json', 'work-contract.schema.json', 'valid complete Work Contract', workContract())
  valid('work-item.json', 'work-item.schema.json', 'valid active WorkItem with owner and selection basis', workItem())
  valid('lease.json', 'lease.schema.json', 'valid released execution Lease', lease())
  valid('error.json', 'error.schema.json', 'valid REVISION_CONFLICT error', error())
  valid(
    'first-admission-record.json',
    'first-admission-record.schema.json',
    'valid First-Admission Record for the signed development Command',
    admissionRecord(),
  )

  // --- valid edge cases ------------------------------------------------------------------
  valid(
    'command-action-id-empty-hier-part.json',
    'command.schema.json',
    'valid: identifier "example:" with an empty hier-part (A16)',
    edited(cmd, (d) => (d.actionId = 'example:')),
  )
  valid(
    'command-correlation-id-ipvfuture-host.json',
    'command.schema.json',
    'valid: identifier "x://[V01.a]/" with an IPvFuture host (A18)',
    edited(cmd, (d) => (d.correlationId = 'x://[V01.a]/')),
  )
  valid(
    'command-caused-by-ipv6-embedded-ipv4.json',
    'command.schema.json',
    'valid: IPv6 literal with a canonical embedded IPv4 address',
    edited(cmd, (d) => (d.causedByEventId = 'https://[::ffff:192.0.2.10]/events/1')),
  )
  valid(
    'human-mission-create-command.json',
    'command.schema.json',
    'valid: human mission.create carries the new groupId and no epochs (H2)',
    humanCreate(),
  )
  valid(
    'human-command-with-membership-epoch.json',
    'command.schema.json',
    'valid: human Command in an existing Group carries membershipEpoch (H2)',
    humanApprove(),
  )
  valid(
    'service-session-open-command.json',
    'command.schema.json',
    'valid: service session_open carries no groupId and no epochs (H3)',
    serviceSessionOpen(),
  )
  valid(
    'organization-session-opened-event.json',
    'event.schema.json',
    'valid: Organization-scoped Event omits groupId, sequence and aggregateRevision (H8)',
    orgSessionOpened(),
  )
  valid(
    'mission-lowercase-t-and-z.json',
    'mission.schema.json',
    'valid: lowercase t and z in non-protected timestamps (A5)',
    edited(mission(), (d) => ((d.createdAt = '2026-07-01t10:00:00z'), (d.deadline = '2026-07-06t00:00:00Z'))),
  )
  valid(
    'lease-offsets-plus-minus-23-59.json',
    'lease.schema.json',
    'valid: numeric offsets +23:59 and -23:59 (A5)',
    edited(lease(), (d) => ((d.issuedAt = '2026-07-03T09:29:00+23:59'), (d.startsAt = '2026-07-01T09:31:00-23:59'))),
  )
  valid(
    'lease-long-fraction.json',
    'lease.schema.json',
    'valid: fractional seconds with 30 digits keep full precision (A6)',
    edited(lease(), (d) => (d.expiresAt = '2026-07-02T10:00:00.000000000000000000000000000001Z')),
  )
  valid(
    'first-admission-record-trusted-time-offset.json',
    'first-admission-record.schema.json',
    'valid: trustedAcceptedAt with lowercase t and a +05:30 offset (D3)',
    edited(admissionRecord(), (d) => (d.trustedAcceptedAt = '2026-07-03t15:30:00.250+05:30')),
  )
  valid(
    'error-leap-day.json',
    'error.schema.json',
    'valid: 2028-02-29 is a real Gregorian date',
    edited(error(), (d) => (d.occurredAt = '2028-02-29T23:59:59Z')),
  )

  // --- invalid: A data conventions --------------------------------------------------------
  invalid(
    'mission-created-at-year-zero.json',
    'mission.schema.json',
    'invalid: timestamp year 0000 (A3)',
    edited(mission(), (d) => (d.createdAt = '0000-07-01T10:00:00Z')),
  )
  invalid(
    'lease-expires-at-leap-second.json',
    'lease.schema.json',
    'invalid: leap second :60 (A3)',
    edited(lease(), (d) => (d.expiresAt = '2026-06-30T23:59:60Z')),
  )
  invalid(
    'error-occurred-at-unknown-local-offset.json',
    'error.schema.json',
    'invalid: unknown local offset -00:00 (A3)',
    edited(error(), (d) => (d.occurredAt = '2026-07-03T10:00:01-00:00')),
  )
  invalid(
    'membership-granted-at-2026-02-29.json',
    'membership.schema.json',
    'invalid: 2026-02-29 is not a Gregorian date (A4)',
    edited(membership(), (d) => (d.grantedAt = '2026-02-29T09:00:00Z')),
  )
  invalid(
    'work-item-created-at-2100-02-29.json',
    'work-item.schema.json',
    'invalid: 2100 is not a leap year (A4)',
    edited(workItem(), (d) => (d.createdAt = '2100-02-29T08:00:00Z')),
  )
  invalid(
    'group-created-at-hour-24.json',
    'group.schema.json',
    'invalid: hour 24 (A4)',
    edited(group(), (d) => (d.createdAt = '2026-07-01T24:00:00Z')),
  )
  invalid(
    'conversation-created-at-minute-60.json',
    'conversation.schema.json',
    'invalid: minute 60 (A4)',
    edited(conversation(), (d) => (d.createdAt = '2026-07-02T08:60:00Z')),
  )
  invalid(
    'message-committed-at-offset-plus-24.json',
    'message.schema.json',
    'invalid: numeric offset +24:00 is outside ±23:59 (A4)',
    edited(message(), (d) => (d.committedAt = '2026-07-02T10:15:00+24:00')),
  )
  invalid(
    'presence-expires-at-offset-minute-60.json',
    'presence-record.schema.json',
    'invalid: numeric offset minute 60 (A4)',
    edited(presenceRecord(), (d) => (d.expiresAt = '2026-07-02T15:30:30+05:60')),
  )
  invalid(
    'command-issued-at-space-separator.json',
    'command.schema.json',
    'invalid: space instead of T between date and time (A2)',
    edited(cmd, (d) => (d.issuedAt = '2026-07-03 10:00:00Z')),
  )
  invalid(
    'artifact-content-hash-uppercase-hex.json',
    'artifact.schema.json',
    'invalid: content hash with uppercase hex digits (A14)',
    edited(signed('artifact'), (d) => (d.contentHash = `sha256:${PATCH_HASH.slice('sha256:'.length).toUpperCase()}`)),
  )
  invalid(
    'evidence-artifact-hash-missing-prefix.json',
    'evidence.schema.json',
    'invalid: content hash without the sha256: prefix (A14)',
    edited(signed('evidence'), (d) => (d.artifactHashes = [PATCH_HASH.slice('sha256:'.length)])),
  )
  invalid(
    'approval-artifact-hash-63-hex-digits.json',
    'approval.schema.json',
    'invalid: content hash with 63 hex digits (A14)',
    edited(signed('approval'), (d) => (d.artifactHashes = [PATCH_HASH.slice(0, -1)])),
  )
  invalid(
    'agent-card-public-key-padded-base64url.json',
    'agent-card.schema.json',
    'invalid: base64url public key with = padding (A12)',
    edited(card, (d) => (((d.publicKeys as Obj[])[0] as Obj).publicKey = `${keyOf('developer').publicKeyB64}=`)),
  )
  invalid(
    'command-signature-value-padded-base64url.json',
    'command.schema.json',
    'invalid: base64url signature value with == padding (A12)',
    edited(cmd, (d) => ((d.signature as Obj).value = `${(cmd.signature as Obj).value}==`)),
  )
  invalid(
    'mission-id-trailing-line-feed.json',
    'mission.schema.json',
    'invalid: identifier with a trailing line feed (A17)',
    edited(mission(), (d) => (d.missionId = `${MISSION}\n`)),
  )
  invalid(
    'group-id-relative-reference.json',
    'group.schema.json',
    'invalid: identifier that is a relative reference (A17)',
    edited(group(), (d) => (d.groupId = 'groups/api-rate-limit')),
  )
  invalid(
    'membership-member-id-iri-only.json',
    'membership.schema.json',
    'invalid: IRI-only identifier with a raw non-ASCII character (A17)',
    edited(membership(), (d) => ((d.member as Obj).id = 'urn:mwp:dev:agent:développeur')),
  )
  invalid(
    'conversation-id-malformed-percent-escape.json',
    'conversation.schema.json',
    'invalid: identifier with the malformed escape %GG (A18)',
    edited(conversation(), (d) => (d.conversationId = 'urn:mwp:dev:conversation:rate%GGlimit')),
  )
  invalid(
    'artifact-uri-not-an-ip-literal.json',
    'artifact.schema.json',
    'invalid: URI host [not-an-ip] is not an IP literal (A18)',
    edited(signed('artifact'), (d) => (d.uri = 'https://[not-an-ip]/sha256/patch')),
  )
  invalid(
    'work-item-id-leading-zero-embedded-ipv4.json',
    'work-item.schema.json',
    'invalid: IPv6 literal with a leading-zero embedded IPv4 octet (A18)',
    edited(workItem(), (d) => (d.workItemId = 'https://[::ffff:192.168.001.010]/work-items/1')),
  )
  invalid(
    'message-id-with-space.json',
    'message.schema.json',
    'invalid: identifier containing a space (A17)',
    edited(message(), (d) => (d.messageId = 'urn:mwp:dev:message:exemption question')),
  )
  invalid(
    'event-sequence-zero.json',
    'event.schema.json',
    'invalid: Group Event sequence 0; sequences start at 1 (A15)',
    edited(evt, (d) => (d.sequence = 0)),
  )
  invalid(
    'lease-session-epoch-negative.json',
    'lease.schema.json',
    'invalid: negative Session Epoch (A15)',
    edited(lease(), (d) => (d.sessionEpoch = -1)),
  )
  invalid(
    'mission-revision-unsafe-integer.json',
    'mission.schema.json',
    'invalid: revision 2^53 is not a safe integer (A15)',
    edited(mission(), (d) => (d.revision = 9007199254740992)),
  )
  invalid(
    'work-contract-budget-negative.json',
    'work-contract.schema.json',
    'invalid: negative budget limit (A15)',
    edited(workContract(), (d) => ((d.budget as Obj).toolCallLimit = -1)),
  )
  invalid(
    'work-item-revision-fractional.json',
    'work-item.schema.json',
    'invalid: fractional revision (A15)',
    edited(workItem(), (d) => (d.revision = 4.5)),
  )
  invalid(
    'work-item-unknown-core-property.json',
    'work-item.schema.json',
    'invalid: unknown core property "priority" outside extensions (A20)',
    edited(workItem(), (d) => (d.priority = 'high')),
  )
  invalid(
    'command-unknown-core-property.json',
    'command.schema.json',
    'invalid: unknown core Command property "priority" (A20)',
    edited(cmd, (d) => (d.priority = 'high')),
  )

  // --- invalid: B7 and H1-H3 Command epochs -----------------------------------------------
  invalid(
    'human-command-with-session-epoch.json',
    'command.schema.json',
    'invalid: human Command carrying sessionEpoch (B7)',
    edited(humanApprove(), (d) => (d.sessionEpoch = 1)),
  )
  invalid(
    'service-command-with-session-epoch.json',
    'command.schema.json',
    'invalid: service Command carrying sessionEpoch (B7)',
    edited(serviceSessionOpen(), (d) => (d.sessionEpoch = 1)),
  )
  invalid(
    'agent-command-missing-session-epoch.json',
    'command.schema.json',
    'invalid: Agent Group Command without sessionEpoch (H1)',
    edited(cmd, (d) => delete d.sessionEpoch),
  )
  invalid(
    'agent-command-missing-membership-epoch.json',
    'command.schema.json',
    'invalid: Agent Group Command without membershipEpoch (H1)',
    edited(cmd, (d) => delete d.membershipEpoch),
  )
  invalid(
    'agent-command-missing-group-id.json',
    'command.schema.json',
    'invalid: Agent Group Command without groupId (H1)',
    edited(cmd, (d) => delete d.groupId),
  )
  invalid(
    'coordinator-command-missing-coordinator-epoch.json',
    'command.schema.json',
    'invalid: Coordinator-only kind without coordinatorEpoch (H4)',
    edited(cmd, (d) => delete d.coordinatorEpoch),
  )
  invalid(
    'human-command-missing-membership-epoch.json',
    'command.schema.json',
    'invalid: human Command in an existing Group without membershipEpoch (H2)',
    edited(humanApprove(), (d) => delete d.membershipEpoch),
  )
  invalid(
    'human-mission-create-with-membership-epoch.json',
    'command.schema.json',
    'invalid: mission.create carrying a membershipEpoch (H2)',
    edited(humanCreate(), (d) => (d.membershipEpoch = 1)),
  )
  invalid(
    'agent-mission-create.json',
    'command.schema.json',
    'invalid: mission.create issued by an Agent (H2)',
    edited(
      humanCreate(),
      (d) => ((d.actor = principalOf('coordinator')), (d.sessionEpoch = 3), (d.membershipEpoch = 2)),
    ),
  )
  invalid(
    'service-command-with-membership-epoch.json',
    'command.schema.json',
    'invalid: service Command carrying membershipEpoch (H3)',
    edited(serviceSessionOpen(), (d) => (d.membershipEpoch = 1)),
  )
  invalid(
    'service-session-open-with-group-id.json',
    'command.schema.json',
    'invalid: Organization bootstrap Command carrying groupId (H3)',
    edited(serviceSessionOpen(), (d) => (d.groupId = GROUP)),
  )

  // --- invalid: H8 Event authority context -------------------------------------------------
  invalid(
    'group-event-missing-sequence.json',
    'event.schema.json',
    'invalid: Group Event without sequence (H8)',
    edited(evt, (d) => delete d.sequence),
  )
  invalid(
    'group-event-missing-aggregate-revision.json',
    'event.schema.json',
    'invalid: Group Event without aggregateRevision (H8)',
    edited(evt, (d) => delete d.aggregateRevision),
  )
  invalid(
    'group-event-missing-group-id.json',
    'event.schema.json',
    'invalid: Group Event without groupId (H8)',
    edited(evt, (d) => delete d.groupId),
  )
  invalid(
    'organization-event-with-group-id.json',
    'event.schema.json',
    'invalid: Organization-scoped Event carrying groupId and sequence (H8)',
    edited(orgSessionOpened(), (d) => ((d.groupId = GROUP), (d.sequence = 28), (d.aggregateRevision = 16))),
  )

  // --- invalid: D1-D2 First-Admission Record -----------------------------------------------
  invalid(
    'first-admission-record-with-signature.json',
    'first-admission-record.schema.json',
    'invalid: First-Admission Record with a signature member (D1)',
    edited(admissionRecord(), (d) => (d.signature = clone(cmd.signature))),
  )
  invalid(
    'first-admission-record-missing-key-id.json',
    'first-admission-record.schema.json',
    'invalid: First-Admission Record with eight of the nine fields (D1)',
    edited(admissionRecord(), (d) => delete d.keyId),
  )
  invalid(
    'first-admission-record-accepted-by-human.json',
    'first-admission-record.schema.json',
    'invalid: acceptedBy is not a service Principal (D2)',
    edited(admissionRecord(), (d) => (d.acceptedBy = principalOf('mission-owner'))),
  )

  // --- invalid: K3 and G3 --------------------------------------------------------------------
  invalid(
    'extension-profile-overrides-core-invariants.json',
    'extension-profile.schema.json',
    'invalid: Extension Profile that overrides core invariants (K3)',
    edited(signed('extension-profile'), (d) => (d.overridesCoreInvariants = true)),
  )
  invalid(
    'agent-card-with-access-token.json',
    'agent-card.schema.json',
    'invalid: Agent Card carrying an access token (G3)',
    edited(card, (d) => (d.accessToken = 'dev-token-must-never-appear-here')),
  )
  invalid(
    'presence-record-with-credentials.json',
    'presence-record.schema.json',
    'invalid: Presence Record carrying credentials (G3)',
    edited(presenceRecord(), (d) => (d.credentials = {apiKey: 'dev-secret'})),
  )
  invalid(
    'context-package-with-capability-token.json',
    'context-package.schema.json',
    'invalid: Context Package carrying a capability token (G3)',
    edited(signed('context-package'), (d) => (d.capabilityToken = 'dev-token-must-never-appear-here')),
  )
  invalid(
    'artifact-with-inline-secret-content.json',
    'artifact.schema.json',
    'invalid: Artifact manifest with inline content (G3)',
    edited(signed('artifact'), (d) => (d.content = 'API_KEY=dev-secret')),
  )

  // Every vector must come out as declared under OUR schemas; fail the generator otherwise.
  const catalog = schemaCatalog()
  const files: GeneratedFile[] = []
  const seen = new Set<string>()
  const manifest = vectors.map((v) => {
    const dir = v.valid ? 'valid' : 'invalid'
    const instance = `conformance/vectors/${dir}/${v.file}`
    if (seen.has(instance)) throw new Error(`duplicate structural vector ${instance}`)
    seen.add(instance)
    const result = catalog.validate(v.schema, v.instance)
    if (result.valid !== v.valid) {
      const why = result.valid
        ? 'the schema accepts it'
        : result.errors.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')
      throw new Error(`structural vector ${instance} should be ${dir}, but ${why}`)
    }
    files.push({path: instance, bytes: Buffer.from(jsonText(v.instance), 'utf8'), mode: 0o644})
    return {name: v.name, schema: `schemas/${v.schema}`, instance, valid: v.valid}
  })
  const schemasCovered = new Set(manifest.filter((e) => e.valid).map((e) => e.schema.slice('schemas/'.length)))
  for (const name of catalog.names()) {
    if (!schemasCovered.has(`${name}.schema.json`))
      throw new Error(`no valid structural vector for ${name}.schema.json`)
  }
  files.push({path: 'conformance/manifest.json', bytes: Buffer.from(jsonText(manifest), 'utf8'), mode: 0o644})
  return files
}
