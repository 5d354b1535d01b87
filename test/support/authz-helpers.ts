// Fixtures for the capability-token tests (src/authz/): a real SQLite-backed Group Authority with
// a movable trusted clock, Session Epoch 1 opened for every Agent the tests sign as (so the
// Commands groupCommand signs at epoch 1 are current), an Authorization Service with its own
// Ed25519 key, and WorkItems driven to real states through the full ingress.

import {afterAll, beforeAll} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {openSession} from '../../src/authority/ingress/sessions.js'
import {RESOURCE_USAGE_RECORD} from '../../src/authority/model/mission-tree.js'
import type {WorkItemView} from '../../src/authority/model/state.js'
import {AuthorizationService, type Caller, type TokenRequest} from '../../src/authz/issuer.js'
import {generateSigningKey, type SigningKey} from '../../src/crypto/keyfile.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityKey,
  contract,
  coordinator,
  developer,
  groupCommand,
  owner,
  receiptOf,
  registry,
  reviewer,
  sqliteStore,
} from './authority-helpers.js'
import {missionGroup} from './groups.js'
import {workDriver} from './work-driver.js'

export const REPO = 'urn:mwp:dev:tool:repo'
export const MAIL = 'urn:mwp:dev:tool:mail'

/** §10.1: a contract allowing reads and writes on the repository and sending mail, within a small budget. */
export const toolContract = (extra: Record<string, unknown> = {}) =>
  contract({
    allowedResources: [
      {resource: REPO, operations: ['read', 'write']},
      {resource: MAIL, operations: ['send'], constraints: {maxRecipients: 3}},
    ],
    budget: {currency: 'EUR', financialLimit: 10, toolCallLimit: 5, modelTokenLimit: 800},
    ...extra,
  })

/** The Mission's budget: more money than any one WorkItem, but only 1000 model tokens in all. */
export const MISSION_BUDGET = {currency: 'EUR', financialLimit: 100, modelTokenLimit: 1000}

/** The execution lease length the suite's Authority grants (shorter than a token's 600 s life). */
export const LEASE_SECONDS = 300

/** The Authorization Service's own key: not the Group Authority's. */
export const authzKey: SigningKey = generateSigningKey({
  keyId: 'urn:mwp:dev:key:authz-1',
  principal: {type: 'service', id: 'urn:mwp:dev:service:authorization'},
})

export const as = (key: SigningKey, sessionEpoch = 1): Caller => ({agentId: key.principal!.id, sessionEpoch})

/** One file's Authority, clock, Authorization Service and WorkItem driver. */
export function authzSuite() {
  const s = {skewMs: 0} as {
    store: Store
    authority: Authority
    service: AuthorizationService
    skewMs: number
  }
  let cleanup: (() => Promise<void>) | undefined
  beforeAll(async () => {
    ;({store: s.store, cleanup} = await sqliteStore())
    s.authority = openAuthority({
      store: s.store,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id], leases: {executionSeconds: LEASE_SECONDS}},
      clock: () => new Date(Date.now() + s.skewMs).toISOString(),
    })
    for (const agent of [developer, reviewer, coordinator]) await openSession(s.authority, agent.principal!.id)
    s.service = new AuthorizationService(s.authority, {key: authzKey})
  }, 60_000)
  afterAll(async () => cleanup?.())

  const run = async (bytes: Buffer) => receiptOf(await submit(s.authority, bytes))
  const driver = workDriver(() => s.authority, {
    contract: toolContract(),
    offerExpiresAt: () => new Date(Date.now() + s.skewMs + 60_000).toISOString(),
  })
  const item = (g: string, w: string): Promise<WorkItemView> => driver.item(g, w)
  const now = () => s.authority.clock()
  const group = (tag: string) => missionGroup((b) => submit(s.authority, b), tag, {mission: {budget: MISSION_BUDGET}})

  /** The request of WorkItem `w`'s current owner under its current lease (`extra` overrides). */
  async function request(g: string, w: string, extra: Partial<TokenRequest> = {}): Promise<TokenRequest> {
    const it = await item(g, w)
    return {
      groupId: g,
      workItemId: w,
      ownershipEpoch: it.ownershipEpoch,
      leaseId: it.lease?.leaseId ?? 'urn:uuid:00000000-0000-4000-8000-000000000000',
      ...extra,
    }
  }

  /** Issues a token to `worker` (default developer) for its current execution of `w`; fails the test if refused. */
  async function token(g: string, w: string, extra: Partial<TokenRequest> = {}, worker = developer) {
    const issued = await s.service.issue(await request(g, w, extra), as(worker), now())
    if (!issued.ok) throw new Error(`refused: ${issued.code} ${issued.reason}`)
    return issued
  }

  /** The owner's signed usage record against its current lease (decide/budget.ts). */
  async function recordUsage(g: string, w: string, delta: Record<string, unknown>, worker = developer) {
    const it = await item(g, w)
    await run(
      groupCommand(worker, RESOURCE_USAGE_RECORD, g, {
        workItemId: w,
        ownershipEpoch: it.ownershipEpoch,
        leaseId: it.lease!.leaseId,
        delta,
      }),
    )
  }

  /** work.checkpoint: releases the lease (active → queued). */
  async function checkpoint(g: string, w: string, worker = developer) {
    const it = await item(g, w)
    await run(
      groupCommand(worker, 'work.checkpoint', g, {
        workItemId: w,
        ownershipEpoch: it.ownershipEpoch,
        leaseId: it.lease!.leaseId,
        progress: 'half done',
        artifactHashes: [],
      }),
    )
  }

  /** work.start again after a checkpoint: a new Execution Lease under the same ownership. */
  const restart = async (g: string, w: string, worker = developer) =>
    run(groupCommand(worker, 'work.start', g, {workItemId: w, ownershipEpoch: (await item(g, w)).ownershipEpoch}))

  return {s, run, driver, item, now, group, request, token, recordUsage, checkpoint, restart}
}
