// Shared fixtures for the Group Authority tests: keys, Registry, freshly signed Commands and
// Approvals, and a throwaway SQLite-backed authority.

import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {type Authority, type AuthorityPolicy, openAuthority} from '../../src/authority/authority.js'
import {type SubmitResult, submit} from '../../src/authority/ingress/command.js'
import {readKeyFile, type SigningKey} from '../../src/crypto/keyfile.js'
import {sign} from '../../src/signing/sign.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {DEFAULT_FRESHNESS, type FreshnessWindow, initStore, openStore, type Store} from '../../src/store/index.js'
import {afterAll, beforeAll} from 'vitest'
import {withEvidence} from './evidence.js'
import {PROJECT_ROOT} from './upstream.js'

export const key = (name: string): SigningKey => readKeyFile(join(PROJECT_ROOT, 'fixtures/keys', `${name}.key.json`))
export const admissionKey = key('admission')
export const authorityKey = key('group-authority')
export const owner = key('mission-owner')
export const otherHuman = key('security-owner')
export const coordinator = key('coordinator')
export const developer = key('developer')
export const reviewer = key('reviewer')
export const orgService = key('service')
export const registry = RegistryEvidence.fromBytes(readFileSync(join(PROJECT_ROOT, 'fixtures/registry.json')))

let counter = 0
export const uuid = (prefix: number) =>
  `urn:uuid:${String(prefix).padStart(8, '0')}-0000-4000-8000-${String(++counter).padStart(12, '0')}`

/** A Coordinator's stated selection basis for one candidate (§10.3), as tests offer work by default. */
export const candidateBasis = (extra: Record<string, unknown> = {}) => ({
  verifiedMatches: [{id: 'writing.release-notes', version: '1.0.0'}],
  authorizationEligible: true,
  availabilityEstimate: '2026-12-01T09:00:00Z',
  expectedCost: 2.5,
  reliabilityEvidence: [],
  policyRulesApplied: ['org.assignment.capability-match'],
  ...extra,
})

/**
 * work.offer payloads get a selection basis for every candidate unless the test states one; a
 * `selectionBasis: null` states that the offer has none (for the negative cases).
 */
function withSelectionBasis(payload: Record<string, unknown>): Record<string, unknown> {
  if (payload.selectionBasis === null) {
    const {selectionBasis: _none, ...rest} = payload
    return rest
  }
  if (payload.selectionBasis !== undefined || !Array.isArray(payload.candidates)) return payload
  return {
    ...payload,
    selectionBasis: Object.fromEntries((payload.candidates as string[]).map((c) => [c, candidateBasis()])),
  }
}

/**
 * A freshly signed Command (issuedAt now, inside the freshness window). A work.submit gets
 * Evidence by its signer covering the contract() criterion unless it states its own (evidence.ts).
 */
export function command(signer: SigningKey, fields: Record<string, unknown>): Buffer {
  const unsigned = {
    protocolVersion: '0.1',
    actionId: uuid(1),
    actor: signer.principal,
    correlationId: uuid(2),
    issuedAt: new Date().toISOString(),
    payload: {},
    ...fields,
    ...(fields.kind === 'work.offer' ? {payload: withSelectionBasis(fields.payload as Record<string, unknown>)} : {}),
    ...(fields.kind === 'work.submit' && typeof fields.groupId === 'string'
      ? {payload: withEvidence(signer, fields.groupId, fields.payload as Record<string, unknown>)}
      : {}),
  }
  return Buffer.from(JSON.stringify(sign('command', unsigned, signer).document), 'utf8')
}

export const missionIdOf = (groupId: string) => groupId.replace(':group:', ':mission:')

export const missionPayload = (groupId: string, extra: Record<string, unknown> = {}) => ({
  missionId: missionIdOf(groupId),
  groupId,
  objective: 'Ship the release notes for 0.1',
  definitionOfDone: [
    {criterionId: 'notes', description: 'Release notes published', evidenceRequired: ['human_review']},
  ],
  deadline: '2027-01-31T00:00:00Z',
  budget: {currency: 'EUR', financialLimit: 100, modelTokenLimit: 1_000_000},
  approvalPolicy: {finalHumanApproval: true, highRiskExecutionApproval: true},
  coordinatorAgentId: coordinator.principal!.id,
  ...extra,
})

export const createCommand = (groupId: string) =>
  command(owner, {kind: 'mission.create', groupId, payload: missionPayload(groupId)})

/**
 * A Group-scoped Command with the epochs its actor type needs: Agents get sessionEpoch 1, humans
 * and Agents membershipEpoch (default 1), services none. Override any field through `fields`.
 */
export function groupCommand(
  signer: SigningKey,
  kind: string,
  groupId: string,
  payload: Record<string, unknown>,
  fields: Record<string, unknown> = {},
): Buffer {
  const type = signer.principal!.type
  return command(signer, {
    kind,
    groupId,
    ...(type === 'agent' ? {sessionEpoch: 1} : {}),
    ...(type !== 'service' ? {membershipEpoch: 1} : {}),
    payload,
    ...fields,
  })
}

export const post = (signer: SigningKey, groupId: string, fields: Record<string, unknown> = {}) =>
  groupCommand(signer, 'message.post', groupId, {text: 'Plan: draft, review, publish.'}, fields)

/** An Approval document signed by `signer` (default: the MissionOwner), as carried in mission.approve. */
export function approval(
  groupId: string,
  missionRevision: number,
  artifactHashes: string[],
  extra: Record<string, unknown> = {},
  signer: SigningKey = owner,
) {
  const unsigned = {
    approvalId: uuid(5),
    kind: 'mission_final',
    decision: 'approved',
    missionId: missionIdOf(groupId),
    groupId,
    missionRevision,
    artifactHashes,
    acceptancePolicyVersion: '1.0.0',
    approver: signer.principal,
    comments: 'Acceptance criteria and evidence reviewed.',
    conditions: [],
    occurredAt: new Date().toISOString(),
    ...extra,
  }
  return sign('approval', unsigned, signer).document
}

/** `store` with some methods replaced (counting, holding, failing reads); every other member is the real store's. */
export function storeWith(store: Store, overrides: Partial<Store>): Store {
  return new Proxy(store, {
    get(target, name, receiver) {
      if (Object.hasOwn(overrides, name)) return overrides[name as keyof Store]
      const value = Reflect.get(target, name, receiver) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

let groups = 0
export const newGroup = (tag = 'g') => `urn:mwp:test:group:${tag}-${++groups}-${Date.now()}`

export const codeOf = (r: SubmitResult) => ('error' in r ? r.error.code : 'ok')
export const receiptOf = (r: SubmitResult) => {
  if ('error' in r) throw new Error(`rejected: ${r.error.code}`)
  return r.receipt
}

/** Initializes the store at `url` for the dev Organization and its admission key, and opens it. */
export async function devStoreAt(url: string, freshness: FreshnessWindow = DEFAULT_FRESHNESS): Promise<Store> {
  await initStore(url, {
    organizationId: 'urn:mwp:dev:org:example',
    admissionService: {
      principal: admissionKey.principal!,
      keyId: admissionKey.keyId,
      publicKey: admissionKey.publicKeyB64,
    },
    freshness,
  })
  return openStore(url, {admissionKey})
}

/**
 * A fresh SQLite store in a temp directory; `cleanup` closes it and removes the directory.
 * `freshness`: the Command freshness window (default DEFAULT_FRESHNESS).
 */
export async function sqliteStore(freshness?: FreshnessWindow): Promise<{store: Store; cleanup(): Promise<void>}> {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-authority-'))
  const store = await devStoreAt(`sqlite:${join(dir, 'authority.db')}`, freshness)
  return {
    store,
    async cleanup() {
      await store.close()
      rmSync(dir, {recursive: true, force: true})
    },
  }
}

/**
 * The SQLite store and Authority one test file shares: opened before its first test (`open` builds
 * the Authority, default authorityOn), closed after its last. `run` submits, `code` gives the
 * outcome's code; read `suite.store` and `suite.authority` inside tests.
 */
export function sqliteSuite(open: (store: Store) => Authority = (store) => authorityOn(store)) {
  const suite = {} as {
    store: Store
    authority: Authority
    run(bytes: Buffer): Promise<SubmitResult>
    code(bytes: Buffer): Promise<string>
  }
  let cleanup: (() => Promise<void>) | undefined
  beforeAll(async () => {
    ;({store: suite.store, cleanup} = await sqliteStore())
    suite.authority = open(suite.store)
  }, 60_000)
  afterAll(async () => cleanup?.())
  suite.run = (bytes) => submit(suite.authority, bytes)
  suite.code = async (bytes) => codeOf(await suite.run(bytes))
  return suite
}

export function authorityOn(store: Store, policy: Partial<AuthorityPolicy> = {}): Authority {
  return openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id], ...policy}})
}

/** A complete Work Contract (§10.1) for tests; `extra` overrides fields. */
export const contract = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  contractVersion: 1,
  goal: 'Draft the release notes for 0.1',
  requiredDeliverables: [
    {
      deliverableId: 'notes',
      description: 'Release notes',
      mediaType: 'text/markdown',
      schema: 'urn:mwp:dev:schema:notes',
    },
  ],
  acceptanceCriteria: [
    {criterionId: 'notes', description: 'Every change is listed', evidenceRequired: ['human_review']},
  ],
  inputArtifacts: [],
  dependencyWorkItemIds: [],
  allowedResources: [],
  requiredCapabilities: [{id: 'writing.release-notes', version: '1.0.0'}],
  deadline: '2027-01-15T00:00:00Z',
  requestedUrgency: 'normal',
  businessImpact: 'Release blocker',
  retryPolicy: {maxAttempts: 2, backoff: 'fixed', maxDelay: 'PT10M', retryableFailures: []},
  budget: {currency: 'EUR', financialLimit: 10},
  sideEffectRisk: 'none',
  executionApproval: 'not_required',
  ...extra,
})

/** A Coordinator command carrying the Coordinator Epoch. */
export const coord = (
  kind: string,
  g: string,
  payload: Record<string, unknown>,
  epoch = 1,
  signer: SigningKey = coordinator,
  fields: Record<string, unknown> = {},
) => groupCommand(signer, kind, g, payload, {coordinatorEpoch: epoch, ...fields})
