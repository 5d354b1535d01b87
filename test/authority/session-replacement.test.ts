// Session replacement revokes the Agent's active Execution Leases (spec §6.3, §11.3; ACCEPTANCE
// B9) through the full ingress on SQLite: opening Session Epoch n+1 appends, in every Group where
// the Agent holds an active lease of an older session, an
// ext.missionweaveprotocol.core.lease_revoked Event issued by the authority's own service, which
// returns the WorkItem to `queued` under the same owner and Ownership Epoch; the owner then starts
// it under its new session with a new Lease ID, while Commands under the old lease stay refused.
// If the authority stopped between opening the session and revoking, the new session's work.start
// revokes and starts in one decision.

import {randomUUID} from 'node:crypto'
import {describe, expect, it} from 'vitest'
import {ApplyError, type AppliedEvent, apply} from '../../src/authority/apply/index.js'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {SESSION_OPEN, submitOrganizationCommand} from '../../src/authority/ingress/organization.js'
import {openSession, revokeReplacedLeases} from '../../src/authority/ingress/sessions.js'
import {
  LEASE_REVOKE,
  LEASE_REVOKED,
  OWNERSHIP_LEASE_SECONDS,
  plusSeconds,
} from '../../src/authority/model/work-leases.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {sign} from '../../src/signing/sign.js'
import {
  authorityKey,
  developer,
  groupCommand,
  orgService,
  owner,
  receiptOf,
  registry,
  reviewer,
  sqliteSuite,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

const dev = developer.principal!.id
type Logged = {kind: string; sequence: number; actor: {type: string; id: string}; payload: Record<string, unknown>}

/** A Session Epoch issued through the Organization log without the revocations openSession makes: an authority that stopped right after. */
async function sessionOnly(authority: Authority, agentId: string): Promise<number> {
  const unsigned = {
    protocolVersion: '0.1',
    actionId: `urn:uuid:${randomUUID()}`,
    actor: authorityKey.principal,
    kind: SESSION_OPEN,
    correlationId: `urn:uuid:${randomUUID()}`,
    issuedAt: authority.clock(),
    payload: {agentId},
  }
  const {document} = sign('command', unsigned, authorityKey)
  const r = await submitOrganizationCommand(authority, Buffer.from(JSON.stringify(document), 'utf8'))
  if ('error' in r) throw new Error(r.error.code)
  return r.receipt.version
}

/** A lease_revoke Command signed by `signer`, with the epochs its actor type carries. */
const revokeCommand = (signer: SigningKey, groupId: string, payload: Record<string, unknown>) =>
  groupCommand(signer, LEASE_REVOKE, groupId, payload)

function setup(clock?: () => string, leases?: {executionSeconds: number}) {
  const policy = {rootMissionOwners: [owner.principal!.id], ...(leases ? {leases} : {})}
  const suite = sqliteSuite((store) => openAuthority({store, registry, authorityKey, policy, clock}))
  const work = workDriver(() => suite.authority, {candidates: [developer]})
  const item = async (g: string, w: string) => (await suite.authority.current(g))!.workItems[w]!
  const log = async (g: string, after = 0): Promise<Logged[]> =>
    (await suite.store.read(g, after, 1000)).events.map((e) => JSON.parse(Buffer.from(e.bytes).toString('utf8')))
  const head = async (g: string) => (await suite.store.head(g))!.sequence
  return {suite, work, item, log, head}
}

describe('opening a replacement session (B9, §11.3)', () => {
  const {suite, work, item, log, head} = setup()

  it('B9 [+cmd:ext.missionweaveprotocol.core.lease_revoke] [+evt:ext.missionweaveprotocol.core.lease_revoked] [+cmd:work.start] opening Session Epoch 2 revokes the active leases of epoch 1 in every Group, each WorkItem queued under the same owner and Ownership Epoch; the owner starts it under epoch 2 with a new Lease ID, and the old lease stays refused', async () => {
    expect(await openSession(suite.authority, dev)).toBe(1)
    const g1 = await missionGroup(suite.run, 'replaced')
    const g2 = await missionGroup(suite.run, 'replaced')
    const [a, b] = [await work.drive(g1, 'active'), await work.drive(g2, 'active')]
    const queued = await work.drive(g1, 'queued') // owned, never started: no lease to revoke
    const old = (await item(g1, a)).lease!
    const [h1, h2] = [await head(g1), await head(g2)]

    expect(await openSession(suite.authority, dev)).toBe(2)
    for (const [g, w, h] of [
      [g1, a, h1],
      [g2, b, h2],
    ] as const) {
      const appended = await log(g, h)
      expect(appended.map((e) => e.kind)).toEqual([LEASE_REVOKED])
      const revoked = appended[0]!
      const lease = (await item(g, w)).lease!
      expect(revoked.actor).toEqual(authorityKey.principal)
      const revokedAt = revoked.payload.revokedAt as string
      expect(revoked.payload).toEqual({
        workItemId: w,
        revision: (await item(g, w)).revision,
        agentId: dev,
        ownershipEpoch: 1,
        leaseId: lease.leaseId,
        leaseSessionEpoch: 1,
        sessionEpoch: 2,
        reason: 'session-replaced',
        revokedAt,
        ownershipLeaseExpiresAt: plusSeconds(revokedAt, OWNERSHIP_LEASE_SECONDS),
      })
      expect(await item(g, w)).toMatchObject({
        state: 'queued',
        ownershipEpoch: 1,
        owner: {agentId: dev, ownershipEpoch: 1, leaseExpiresAt: plusSeconds(revokedAt, OWNERSHIP_LEASE_SECONDS)},
        lease: {
          leaseId: lease.leaseId,
          state: 'revoked',
          revocation: {reason: 'session-replaced', sessionEpoch: 2, revokedAt},
        },
      })
    }
    expect((await item(g1, queued)).state).toBe('queued')

    // The old lease: refused at epoch 1 (fenced session) and at epoch 2 (revoked lease); nothing appended.
    const checkpoint = (sessionEpoch: number) =>
      groupCommand(
        developer,
        'work.checkpoint',
        g1,
        {workItemId: a, ownershipEpoch: 1, leaseId: old.leaseId, progress: 'half', artifactHashes: []},
        {sessionEpoch},
      )
    const renew = groupCommand(
      developer,
      'ext.missionweaveprotocol.core.lease_renew',
      g1,
      {workItemId: a, ownershipEpoch: 1, leaseId: old.leaseId, progress: {phase: 'drafting'}},
      {sessionEpoch: 2},
    )
    const h = await head(g1)
    expect(await suite.code(checkpoint(1))).toBe('AUTH_STALE_SESSION')
    expect(await suite.code(checkpoint(2))).toBe('WORK_LEASE_EXPIRED')
    expect(await suite.code(renew)).toBe('WORK_LEASE_EXPIRED')
    expect(await head(g1)).toBe(h)

    // The new session starts it again: a new Lease ID under Session Epoch 2, same Ownership Epoch.
    receiptOf(
      await suite.run(groupCommand(developer, 'work.start', g1, {workItemId: a, ownershipEpoch: 1}, {sessionEpoch: 2})),
    )
    const started = await item(g1, a)
    expect(started).toMatchObject({state: 'active', ownershipEpoch: 1, lease: {state: 'active', sessionEpoch: 2}})
    expect(started.lease!.leaseId).not.toBe(old.leaseId)
    expect((await log(g1, h)).map((e) => e.kind)).toEqual(['work.started'])
    expect(await suite.code(checkpoint(2))).toBe('WORK_LEASE_EXPIRED')

    // Replay: a fresh authority folds the same log to the same state.
    const fresh = openAuthority({
      store: suite.store,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id]},
    })
    expect(await fresh.current(g1)).toEqual(await suite.authority.current(g1))
    expect(await fresh.current(g2)).toEqual(await suite.authority.current(g2))
  })
})

describe('a replacement session with nothing to revoke (B9)', () => {
  const {suite, work, head} = setup()

  it('B9 [-evt:ext.missionweaveprotocol.core.lease_revoked] a session opened while the Agent holds no active lease of an older session appends nothing; nor does a lease already revoked, on a second replacement', async () => {
    const g = await missionGroup(suite.run, 'nothing-to-revoke')
    const epoch = await openSession(suite.authority, dev)
    expect(epoch).toBe(1)
    await work.drive(g, 'queued')
    const w = await work.drive(g, 'active')
    await work.advance(g, w, 'active', 'submitted')
    const h = await head(g)
    const next = await openSession(suite.authority, dev)
    expect(next).toBe(epoch + 1)
    expect(await head(g)).toBe(h)
    expect(await revokeReplacedLeases(suite.authority, dev, next)).toEqual([])
  })
})

describe('lease_revoke refused (B9)', () => {
  const {suite, work, item, head} = setup()

  it('B9 [-cmd:ext.missionweaveprotocol.core.lease_revoke] only the authority’s own identity service revokes, only an active lease of an older session for its owner and Ownership Epoch: AUTH_FORBIDDEN, INVALID_COMMAND, WORK_STALE_OWNERSHIP, WORK_LEASE_EXPIRED, and nothing is appended', async () => {
    expect(await openSession(suite.authority, dev)).toBe(1)
    const g = await missionGroup(suite.run, 'revoke-refused')
    const w = await work.drive(g, 'active')
    const lease = (await item(g, w)).lease!
    const payload = {
      workItemId: w,
      agentId: dev,
      ownershipEpoch: 1,
      leaseId: lease.leaseId,
      sessionEpoch: 2,
      reason: 'session-replaced',
    }
    const h = await head(g)
    // Another Organization service, the Agent itself, the MissionOwner.
    expect(await suite.code(revokeCommand(orgService, g, payload))).toBe('AUTH_FORBIDDEN')
    expect(await suite.code(revokeCommand(developer, g, payload))).toBe('AUTH_FORBIDDEN')
    expect(await suite.code(revokeCommand(owner, g, payload))).toBe('AUTH_FORBIDDEN')
    // The lease's own session is no replacement; another owner, epoch or lease is not the one held.
    expect(await suite.code(revokeCommand(authorityKey, g, {...payload, sessionEpoch: 1}))).toBe('INVALID_COMMAND')
    expect(await suite.code(revokeCommand(authorityKey, g, {...payload, agentId: reviewer.principal!.id}))).toBe(
      'WORK_STALE_OWNERSHIP',
    )
    expect(await suite.code(revokeCommand(authorityKey, g, {...payload, ownershipEpoch: 2}))).toBe(
      'WORK_STALE_OWNERSHIP',
    )
    expect(await suite.code(revokeCommand(authorityKey, g, {...payload, leaseId: `urn:uuid:${randomUUID()}`}))).toBe(
      'WORK_LEASE_EXPIRED',
    )
    expect(await suite.code(revokeCommand(authorityKey, g, {...payload, reason: 'because'}))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    )
    expect(await head(g)).toBe(h)
    // Accepted once; the same revocation again finds the lease closed.
    receiptOf(await suite.run(revokeCommand(authorityKey, g, payload)))
    expect((await item(g, w)).state).toBe('queued')
    expect(await suite.code(revokeCommand(authorityKey, g, payload))).toBe('WORK_LEASE_EXPIRED')
    expect(await head(g)).toBe(h + 1)
  })
})

describe('a lease past its expiry is not revived by a new session (B9, §11.5)', () => {
  let skewMs = 0
  // 30 s leases: the skewed clock stays inside the freshness window of the authority's own Commands.
  const {suite, work, item, head} = setup(() => new Date(Date.now() + skewMs).toISOString(), {executionSeconds: 30})

  it('B9 [-cmd:ext.missionweaveprotocol.core.lease_revoke] [-cmd:work.start] an expired lease of the old session is left for the Coordinator to reassign: the revocation is WORK_LEASE_EXPIRED, the new session’s work.start INVALID_STATE_TRANSITION', async () => {
    expect(await openSession(suite.authority, dev)).toBe(1)
    const g = await missionGroup(suite.run, 'expired')
    const w = await work.drive(g, 'active')
    const expiry = Date.parse((await item(g, w)).lease!.expiresAt!)
    // The store's freshness window allows the authority-signed session_open 60 s ahead of real time.
    skewMs = expiry - Date.now() + 1000
    const h = await head(g)
    const epoch = await sessionOnly(suite.authority, dev)
    // The lease index still lists it (a timeout appends no Event): skipped on the state, and
    // refused by the decider when asked all the same.
    const [outcome] = await revokeReplacedLeases(suite.authority, dev, epoch)
    expect(outcome).toMatchObject({revoked: false, skipped: 'expired'})
    const asked = groupCommand(authorityKey, LEASE_REVOKE, g, {
      workItemId: w,
      agentId: dev,
      ownershipEpoch: 1,
      leaseId: outcome!.lease.leaseId,
      sessionEpoch: epoch,
      reason: 'session-replaced',
    })
    expect(await suite.code(asked)).toBe('WORK_LEASE_EXPIRED')
    const start = groupCommand(developer, 'work.start', g, {workItemId: w, ownershipEpoch: 1}, {sessionEpoch: epoch})
    expect(await suite.code(start)).toBe('INVALID_STATE_TRANSITION')
    expect(await head(g)).toBe(h)
    expect((await item(g, w)).state).toBe('active')
  })
})

describe('the authority stopped after opening the session (B9 crash safety)', () => {
  const {suite, work, item, log, head} = setup()

  it('B9 [+cmd:work.start] [+evt:ext.missionweaveprotocol.core.lease_revoked] [+evt:work.started] the new session’s work.start on a WorkItem still active under the old session’s lease revokes it and starts under a new lease in one append; the old lease stays refused before and after', async () => {
    expect(await openSession(suite.authority, dev)).toBe(1)
    const g = await missionGroup(suite.run, 'crash')
    const w = await work.drive(g, 'active')
    const old = (await item(g, w)).lease!
    const s2 = await sessionOnly(suite.authority, dev)
    expect(s2).toBe(2)
    const h = await head(g)
    expect((await item(g, w)).state).toBe('active') // no revocation was appended

    // Renewal and checkpoint under the old lease stay fenced (§11.3), at either epoch.
    const renew = (sessionEpoch: number) =>
      groupCommand(
        developer,
        'ext.missionweaveprotocol.core.lease_renew',
        g,
        {workItemId: w, ownershipEpoch: 1, leaseId: old.leaseId, progress: {phase: 'drafting'}},
        {sessionEpoch},
      )
    expect(await suite.code(renew(1))).toBe('AUTH_STALE_SESSION')
    expect(await suite.code(renew(2))).toBe('WORK_LEASE_EXPIRED')
    // Another member cannot start it, and the old session cannot either.
    const start = (signer: SigningKey, sessionEpoch: number) =>
      groupCommand(signer, 'work.start', g, {workItemId: w, ownershipEpoch: 1}, {sessionEpoch})
    expect(await suite.code(start(developer, 1))).toBe('AUTH_STALE_SESSION')
    expect(await head(g)).toBe(h)

    const r = receiptOf(await suite.run(start(developer, 2)))
    expect([r.firstSequence, r.lastSequence]).toEqual([h + 1, h + 2])
    const appended = await log(g, h)
    expect(appended.map((e) => e.kind)).toEqual([LEASE_REVOKED, 'work.started'])
    expect(appended[0]!.payload).toMatchObject({leaseId: old.leaseId, leaseSessionEpoch: 1, sessionEpoch: 2})
    const now = await item(g, w)
    expect(now).toMatchObject({state: 'active', ownershipEpoch: 1, owner: {agentId: dev, ownershipEpoch: 1}})
    expect(now.lease).toMatchObject({state: 'active', sessionEpoch: 2})
    expect(now.lease!.leaseId).not.toBe(old.leaseId)
    expect(now.owner!.leaseExpiresAt).toBeUndefined()
    expect(await suite.code(renew(2))).toBe('WORK_LEASE_EXPIRED')
    // Started under the current session: a second start is no replacement.
    expect(await suite.code(start(developer, 2))).toBe('INVALID_STATE_TRANSITION')
    // The index lists the new lease only; a later session revokes it as usual.
    expect((await suite.store.leases().olderThan(dev, 3, undefined, 10)).map((l) => l.leaseId)).toEqual([
      now.lease!.leaseId,
    ])
    const replay = openAuthority({
      store: suite.store,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id]},
    })
    expect(await replay.current(g)).toEqual(await suite.authority.current(g))
  })
})

describe('apply() of lease_revoked (B9)', () => {
  const {suite, work, item, log} = setup()

  it('B9 [+evt:ext.missionweaveprotocol.core.lease_revoked] folds only onto the active lease it names at the next WorkItem revision; a reconciled checkpoint after it keeps the lease revoked', async () => {
    expect(await openSession(suite.authority, dev)).toBe(1)
    const g = await missionGroup(suite.run, 'apply-revoked')
    const w = await work.drive(g, 'active')
    const h = (await suite.store.head(g))!.sequence
    const before = (await suite.authority.current(g))!
    expect(await openSession(suite.authority, dev)).toBe(2)
    const [revoked] = await log(g, h)
    const event = revoked as unknown as AppliedEvent
    const after = apply(before, event)
    expect(after).toEqual(await suite.authority.current(g))
    expect(after.workItems[w]).toMatchObject({state: 'queued', lease: {state: 'revoked'}})
    // At a stale WorkItem revision, applied again (the lease is no longer active), or naming another lease: a corrupt log.
    const again = {...event, sequence: event.sequence + 1, aggregateRevision: event.aggregateRevision + 1}
    expect(() => apply(after, again)).toThrow(ApplyError)
    expect(() => apply(after, again)).toThrow(/revision/)
    const nextRevision = {...again, payload: {...again.payload, revision: (again.payload.revision as number) + 1}}
    expect(() => apply(after, nextRevision)).toThrow(/does not hold active/)
    const other = {...event, payload: {...event.payload, leaseId: `urn:uuid:${randomUUID()}`}}
    expect(() => apply(before, other)).toThrow(/does not hold active/)
    // A checkpoint folded onto the revoked lease (decide/offline.ts reconciled it) leaves it revoked.
    const it = after.workItems[w]!
    const checkpointed = {
      kind: 'work.checkpointed',
      groupId: g,
      sequence: after.sequence + 1,
      aggregateRevision: after.revision + 1,
      payload: {
        workItemId: w,
        revision: it.revision + 1,
        leaseId: it.lease!.leaseId,
        checkpoint: {progress: 'offline half', artifactHashes: []},
        ownershipLeaseExpiresAt: it.owner!.leaseExpiresAt,
      },
    }
    expect(apply(after, checkpointed).workItems[w]).toMatchObject({
      state: 'queued',
      lease: {state: 'revoked', revocation: {sessionEpoch: 2}},
      checkpoint: {progress: 'offline half', leaseId: it.lease!.leaseId},
      owner: {leaseExpiresAt: it.owner!.leaseExpiresAt},
    })
    expect((await item(g, w)).checkpoint).toBeNull()
  })
})
