// Dependency insertion (spec §10.4, §10.1, §15.2): ext.missionweaveprotocol.core.dependency_insert
// from the Coordinator revises the Work Contract (work.contract.revised), keeps the WorkItem graph
// acyclic, and gates a WorkItem — running or not — until its new dependencies are verified.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityOn,
  codeOf,
  contract,
  coord,
  developer,
  groupCommand,
  owner,
  receiptOf,
  registry,
  authorityKey,
  reviewer,
  sqliteStore,
  uuid,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

const H1 = `sha256:${'d'.repeat(64)}`
const INSERT = 'ext.missionweaveprotocol.core.dependency_insert'

let store: Store
let cleanup: () => Promise<void>
let authority: Authority

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  authority = authorityOn(store)
}, 60_000)
afterAll(async () => cleanup?.())

const run = (bytes: Buffer) => submit(authority, bytes)
const code = async (bytes: Buffer) => codeOf(await run(bytes))
const head = async (g: string) => (await store.head(g))!.sequence
const item = async (g: string, w: string) => (await authority.current(g))!.workItems[w]!
async function events(g: string) {
  const page = await store.read(g, 0, 1000)
  return page.events.map(
    (e) => JSON.parse(Buffer.from(e.bytes).toString('utf8')) as {kind: string; payload: Record<string, unknown>},
  )
}
const lastEvent = async (g: string) => (await events(g)).at(-1)!
const insert = (
  g: string,
  w: string,
  deps: string[],
  extra: Record<string, unknown> = {},
  fields: Record<string, unknown> = {},
) => coord(INSERT, g, {workItemId: w, dependencyWorkItemIds: deps, ...extra}, 1, undefined, fields)

const group = () => missionGroup(run, 'deps')
const offer = (g: string, w: string, who: SigningKey) =>
  coord('work.offer', g, {
    workItemId: w,
    candidates: [who.principal!.id],
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
  })
const work = workDriver(() => authority, {artifactHashes: [H1]})
const authorize = (g: string, deps: string[] = []): Promise<string> =>
  work.drive(g, 'open', {contract: contract({dependencyWorkItemIds: deps})})
async function activate(g: string, w: string, who: SigningKey = developer): Promise<string> {
  await work.advance(g, w, 'open', 'active', {worker: who})
  return (await item(g, w)).lease!.leaseId
}
const verifyItem = (g: string, w: string, who: SigningKey = reviewer): Promise<void> =>
  work.advance(g, w, 'open', 'verified', {worker: who})

describe('ext.missionweaveprotocol.core.dependency_insert (§10.4)', () => {
  it('[+cmd:ext.missionweaveprotocol.core.dependency_insert] [+evt:work.contract.revised] the Coordinator adds a dependency: a new contract revision, and the WorkItem is not offered until the dependency is verified', async () => {
    const g = await group()
    const a = await authorize(g)
    const b = await authorize(g)
    const before = await item(g, a)
    const rev = (await authority.current(g))!.revision
    expect(
      receiptOf(await run(insert(g, a, [b], {reason: 'The notes need the changelog first.'}))).aggregateRevision,
    ).toBe(rev + 1)
    const ev = await lastEvent(g)
    expect(ev).toMatchObject({
      kind: 'work.contract.revised',
      payload: {
        workItemId: a,
        revision: before.revision + 1,
        addedDependencyWorkItemIds: [b],
        reason: 'The notes need the changelog first.',
      },
    })
    const revised = ev.payload.contract as Record<string, unknown>
    expect(revised).toEqual({...before.contract, contractVersion: 2, dependencyWorkItemIds: [b]})
    expect(schemaCatalog().validate('work-contract', revised).valid).toBe(true)
    expect(await item(g, a)).toMatchObject({state: 'open', revision: before.revision + 1, contract: revised})
    // §10.4: ineligible until the dependency is verified.
    expect(await code(offer(g, a, developer))).toBe('INVALID_STATE_TRANSITION')
    await verifyItem(g, b)
    receiptOf(await run(offer(g, a, developer)))
    expect((await item(g, a)).state).toBe('offered')
  })

  it('[+cmd:ext.missionweaveprotocol.core.dependency_insert] a running WorkItem that gains an unmet dependency loses its Execution Lease and waits queued until the dependency is verified', async () => {
    const g = await group()
    const a = await authorize(g)
    const b = await authorize(g)
    const leaseId = await activate(g, a)
    receiptOf(await run(insert(g, a, [b])))
    expect((await lastEvent(g)).payload).toMatchObject({revokedLeaseId: leaseId})
    expect(await item(g, a)).toMatchObject({
      state: 'queued',
      owner: {agentId: developer.principal!.id, ownershipEpoch: 1},
      lease: {leaseId, state: 'revoked'},
    })
    expect(
      await code(
        groupCommand(developer, 'work.submit', g, {workItemId: a, ownershipEpoch: 1, leaseId, artifactHashes: [H1]}),
      ),
    ).toBe('WORK_LEASE_EXPIRED')
    expect(await code(groupCommand(developer, 'work.start', g, {workItemId: a, ownershipEpoch: 1}))).toBe(
      'INVALID_STATE_TRANSITION',
    )
    await verifyItem(g, b)
    receiptOf(await run(groupCommand(developer, 'work.start', g, {workItemId: a, ownershipEpoch: 1})))
    expect((await item(g, a)).state).toBe('active')
    // A dependency that is already verified changes only the contract: the lease stays active.
    const c = await authorize(g)
    await verifyItem(g, c)
    const running = await item(g, a)
    receiptOf(await run(insert(g, a, [c])))
    expect((await lastEvent(g)).payload.revokedLeaseId).toBeUndefined()
    expect(await item(g, a)).toMatchObject({
      state: 'active',
      lease: {leaseId: running.lease!.leaseId, state: 'active'},
      contract: {contractVersion: 3, dependencyWorkItemIds: [b, c]},
    })
    // Replay reproduces the live state.
    const fresh = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}})
    expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash((await authority.current(g))!))
  })

  it('[-cmd:ext.missionweaveprotocol.core.dependency_insert] [-evt:work.contract.revised] cycles, unknown or repeated dependencies, closed WorkItems, non-Coordinators, a stale revision and malformed payloads are refused and append nothing', async () => {
    const g = await group()
    const b = await authorize(g)
    const a = await authorize(g, [b]) // a → b
    const c = await authorize(g, [a]) // c → a → b
    const h = await head(g)
    expect(await code(insert(g, b, [a]))).toBe('INVALID_COMMAND') // b → a → b
    expect(await code(insert(g, b, [c]))).toBe('INVALID_COMMAND') // b → c → a → b
    expect(await code(insert(g, b, [b]))).toBe('INVALID_COMMAND') // self
    expect(await code(insert(g, a, [b]))).toBe('INVALID_COMMAND') // already a dependency
    expect(await code(insert(g, a, [uuid(7)]))).toBe('INVALID_COMMAND') // not a WorkItem
    expect(await code(insert(g, uuid(7), [b]))).toBe('INVALID_COMMAND')
    expect(await code(insert(g, a, []))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await code(insert(g, a, [b, b]))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await code(groupCommand(developer, INSERT, g, {workItemId: b, dependencyWorkItemIds: [c]}))).toBe(
      'AUTH_FORBIDDEN',
    )
    expect(await code(groupCommand(owner, INSERT, g, {workItemId: b, dependencyWorkItemIds: [c]}))).toBe(
      'AUTH_FORBIDDEN',
    )
    expect(await code(coord(INSERT, g, {workItemId: c, dependencyWorkItemIds: [b]}, 2))).toBe('AUTH_FORBIDDEN') // an epoch never issued
    const d = await authorize(g)
    const h2 = await head(g)
    expect(h2).toBe(h + 1)
    expect(await code(insert(g, c, [d], {}, {expectedRevision: 1}))).toBe('REVISION_CONFLICT')
    await verifyItem(g, b)
    const h3 = await head(g)
    expect(await code(insert(g, b, [d]))).toBe('INVALID_STATE_TRANSITION') // verified is terminal
    expect(await head(g)).toBe(h3)
    expect((await events(g)).map((e) => e.kind)).not.toContain('work.contract.revised')
  })
})
