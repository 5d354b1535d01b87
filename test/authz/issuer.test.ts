// The Authorization Service issues capability tokens (spec §12, §11.3; ACCEPTANCE G1, G2, G4)
// against a real in-process Group Authority on SQLite: WorkItems are driven through the full
// ingress to real states, and the token is issued or refused on what the folded state says.

import {describe, expect, it} from 'vitest'
import {openSession} from '../../src/authority/ingress/sessions.js'
import {plusSeconds} from '../../src/authority/model/work-leases.js'
import {TOKEN_TTL_SECONDS} from '../../src/authz/issuer.js'
import {decodeToken} from '../../src/authz/token.js'
import {compareTimestampText} from '../../src/json/timestamp.js'
import {coord, coordinator, developer, groupCommand, newGroup, owner, reviewer} from '../support/authority-helpers.js'
import {treeSteps} from '../support/mission-tree-helpers.js'
import {LEASE_SECONDS, MAIL, REPO, as, authzKey, authzSuite, toolContract} from '../support/authz-helpers.js'

const t = authzSuite()
const {s, driver, item, now, group, request, token, recordUsage, checkpoint, restart, run} = t
const issue = async (req: Parameters<typeof s.service.issue>[0], caller = as(developer)) =>
  s.service.issue(req, caller, now())
const codeOf = (r: Awaited<ReturnType<typeof issue>>) => (r.ok ? 'ok' : r.code)

describe('issuing a capability token (G1)', () => {
  it('is refused while queued and issued once active, bound to Agent, Session, WorkItem, Ownership Epoch and Lease ID, expiring no later than the lease', async () => {
    const g = await group('issue')
    const w = await driver.drive(g, 'queued')
    expect(codeOf(await issue(await request(g, w)))).toBe('WORK_LEASE_EXPIRED')

    await driver.advance(g, w, 'queued', 'active')
    const active = await item(g, w)
    const at = now()
    const headBefore = (await s.store.head(g))!.sequence
    const issued = await s.service.issue(await request(g, w), as(developer), at)
    expect(issued.ok).toBe(true)
    if (!issued.ok) return
    // G3: issuing writes nothing to the Group log, and no Event holds the token or its signature.
    expect((await s.store.head(g))!.sequence).toBe(headBefore)
    const logged = (await s.store.read(g, 0, 1000)).events.map((e) => Buffer.from(e.bytes).toString('utf8'))
    expect(logged.length).toBe(headBefore)
    for (const secret of [issued.token, issued.token.split('.')[1]!])
      expect(logged.filter((e) => e.includes(secret))).toEqual([])
    const state = (await s.authority.current(g))!
    expect(issued.claims).toMatchObject({
      issuer: authzKey.principal!.id,
      keyId: authzKey.keyId,
      agentId: developer.principal!.id,
      sessionEpoch: 1,
      missionId: state.missionId,
      groupId: g,
      workItemId: w,
      ownershipEpoch: 1,
      leaseId: active.lease!.leaseId,
      issuedAt: at,
    })
    // The lease (300 s) ends before a token's 600 s life: the lease boundary wins.
    expect(active.lease!.expiresAt).toBeDefined()
    expect(issued.claims.expiresAt).toBe(active.lease!.expiresAt)
    expect(compareTimestampText(issued.claims.expiresAt, plusSeconds(at, TOKEN_TTL_SECONDS))).toBeLessThan(0)
    // A shorter asked-for life wins over the lease.
    const short = await s.service.issue(await request(g, w, {ttlSeconds: 60}), as(developer), at)
    expect(short.ok && short.claims.expiresAt).toBe(plusSeconds(at, 60))
    expect(compareTimestampText(plusSeconds(at, 60), active.lease!.expiresAt!)).toBeLessThan(0)
    expect(codeOf(await issue(await request(g, w, {ttlSeconds: TOKEN_TTL_SECONDS + 1})))).toBe('INVALID_COMMAND')
    // What is returned is what is signed.
    const decoded = decodeToken(issued.token, authzKey.publicKey)
    expect(decoded.ok && decoded.claims).toEqual(issued.claims)
    expect(LEASE_SECONDS).toBeLessThan(TOKEN_TTL_SECONDS)
  })

  it("grants the contract's allowed resources, or a narrower set; anything outside them is AUTH_FORBIDDEN", async () => {
    const g = await group('grants')
    const w = await driver.drive(g, 'active')
    const all = await token(g, w)
    expect(all.claims.grants).toEqual([
      {resource: REPO, operations: ['read', 'write']},
      {resource: MAIL, operations: ['send'], constraints: {maxRecipients: 3}},
    ])
    const narrow = await token(g, w, {grants: [{resource: REPO, operations: ['read']}]})
    expect(narrow.claims.grants).toEqual([{resource: REPO, operations: ['read']}])

    const forbidden = [
      [{resource: REPO, operations: ['delete']}],
      [{resource: 'urn:mwp:dev:tool:payments', operations: ['read']}],
      [{resource: MAIL, operations: ['send', 'read']}],
      [{resource: REPO, operations: []}],
    ]
    for (const grants of forbidden) expect(codeOf(await issue(await request(g, w, {grants})))).toBe('AUTH_FORBIDDEN')
    // A contract that allows nothing authorizes nothing.
    const none = await driver.drive(g, 'active', {contract: toolContract({allowedResources: []})})
    expect(codeOf(await issue(await request(g, none)))).toBe('AUTH_FORBIDDEN')
  })

  it('caps every limit by both the Work Contract budget and the authoritative remaining budget of the WorkItem and its Mission', async () => {
    const g = await group('limits')
    const a = await driver.drive(g, 'active')
    const b = await driver.drive(g, 'active')
    expect((await token(g, b)).claims.limits).toEqual({
      currency: 'EUR',
      financialLimit: 10,
      toolCallLimit: 5,
      modelTokenLimit: 800,
    })
    // A spends 2 tool calls, 3 EUR and 500 model tokens: its own remainder shrinks, and the
    // Mission (1000 model tokens in all) has only 500 left for B, below B's contract's 800.
    await recordUsage(g, a, {currency: 'EUR', financial: 3, toolCalls: 2, modelTokens: 500})
    expect((await token(g, a)).claims.limits).toEqual({
      currency: 'EUR',
      financialLimit: 7,
      toolCallLimit: 3,
      modelTokenLimit: 300,
    })
    expect((await token(g, b)).claims.limits).toEqual({
      currency: 'EUR',
      financialLimit: 10,
      toolCallLimit: 5,
      modelTokenLimit: 500,
    })
    // A narrower request is granted as asked; one above the cap is BUDGET_EXCEEDED, not silently clamped.
    expect((await token(g, a, {limits: {toolCallLimit: 1}})).claims.limits).toEqual({
      currency: 'EUR',
      financialLimit: 7,
      toolCallLimit: 1,
      modelTokenLimit: 300,
    })
    expect(codeOf(await issue(await request(g, a, {limits: {toolCallLimit: 4}})))).toBe('BUDGET_EXCEEDED')
    expect(codeOf(await issue(await request(g, a, {limits: {currency: 'USD', financialLimit: 1}})))).toBe(
      'INVALID_COMMAND',
    )
    // An exhausted dimension pauses the work: no token at all (§12).
    await recordUsage(g, a, {toolCalls: 3})
    expect(codeOf(await issue(await request(g, a)))).toBe('BUDGET_EXCEEDED')
  })
})

describe('limits up the Mission tree (§12, §14)', () => {
  const tree = treeSteps(() => ({authority: s.authority, store: s.store}))

  it("caps a child Mission's WorkItem by what its ancestors have left: here the root Mission", async () => {
    const eur = (financialLimit: number) => ({budget: {currency: 'EUR', financialLimit}})
    const g = await group('tree-root')
    const parent = await driver.drive(g, 'open', {contract: toolContract(eur(60))})
    const other = await driver.drive(g, 'active', {contract: toolContract(eur(60))})
    const cg = newGroup('tree-child')
    await run(tree.createChild(g, parent, cg, {budget: {currency: 'EUR', financialLimit: 60}}))
    await run(groupCommand(coordinator, 'membership.change', cg, {member: developer.principal, role: 'worker'}))
    const cw = await driver.drive(cg, 'active', {contract: toolContract(eur(60)), coordinator: reviewer})
    expect((await token(cg, cw)).claims.limits).toMatchObject({financialLimit: 60})
    // Another root WorkItem spends 50 of the root Mission's 100: the child execution may spend only 50.
    await recordUsage(g, other, {currency: 'EUR', financial: 50})
    expect((await token(cg, cw)).claims.limits).toMatchObject({financialLimit: 50})
    // And a charge in the child climbs to the root: both the child and the root see it.
    await recordUsage(cg, cw, {currency: 'EUR', financial: 5})
    expect((await token(cg, cw)).claims.limits).toMatchObject({financialLimit: 45})
    expect((await token(g, other)).claims.limits).toMatchObject({financialLimit: 10})
  })
})

describe('refusals (G1, G2, G4)', () => {
  it('refuses anyone but the owner: another Worker, the Coordinator asking for itself or naming the Worker (AUTH_FORBIDDEN)', async () => {
    const g = await group('not-owner')
    const w = await driver.drive(g, 'active')
    const req = await request(g, w)
    expect(codeOf(await issue(req, as(reviewer)))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(await issue(req, as(coordinator)))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(await issue({...req, agentId: developer.principal!.id}, as(coordinator)))).toBe('AUTH_FORBIDDEN')
    // The owner naming another Agent gets nothing (no token is minted for, or handed to, someone else).
    expect(codeOf(await issue({...req, agentId: reviewer.principal!.id}))).toBe('AUTH_FORBIDDEN')
    // The Worker itself, naming itself, is issued one.
    expect(codeOf(await issue({...req, agentId: developer.principal!.id}))).toBe('ok')
  })

  it('refuses an older Lease ID of the same ownership, and released leases (checkpoint, submission)', async () => {
    const g = await group('old-lease')
    const w = await driver.drive(g, 'active')
    const first = await request(g, w)
    await checkpoint(g, w)
    expect(codeOf(await issue(first))).toBe('WORK_LEASE_EXPIRED')
    await restart(g, w)
    const second = await request(g, w)
    expect(second.leaseId).not.toBe(first.leaseId)
    expect(second.ownershipEpoch).toBe(first.ownershipEpoch)
    expect(codeOf(await issue(first))).toBe('WORK_LEASE_EXPIRED')
    expect(codeOf(await issue(second))).toBe('ok')

    const submitted = await driver.drive(g, 'active')
    const live = await request(g, submitted)
    await driver.advance(g, submitted, 'active', 'submitted')
    expect(codeOf(await issue(live))).toBe('WORK_LEASE_EXPIRED')
  })

  it('refuses an expired lease, and after reassignment the old owner at the stale Ownership Epoch; the new owner is issued one', async () => {
    const g = await group('reassign')
    const w = await driver.drive(g, 'active')
    const old = await request(g, w)
    s.skewMs = (LEASE_SECONDS + 5) * 1000
    try {
      expect(codeOf(await issue(old))).toBe('WORK_LEASE_EXPIRED')
      await run(
        coord('work.offer', g, {
          workItemId: w,
          candidates: [reviewer.principal!.id],
          expiresAt: plusSeconds(now(), 60),
        }),
      )
      await driver.advance(g, w, 'offered', 'active', {worker: reviewer})
      const current = await request(g, w)
      expect(current.ownershipEpoch).toBe(2)
      expect(codeOf(await issue(old))).toBe('WORK_STALE_OWNERSHIP')
      expect(codeOf(await issue({...old, leaseId: current.leaseId}))).toBe('WORK_STALE_OWNERSHIP')
      expect(codeOf(await issue(current))).toBe('AUTH_FORBIDDEN') // the old owner at the new epoch
      expect(codeOf(await issue(current, as(reviewer)))).toBe('ok')
    } finally {
      s.skewMs = 0
    }
  })

  it('withholds the token of an execution-approval-gated WorkItem until the signed approval exists (APPROVAL_REQUIRED, G4)', async () => {
    const g = await group('gated')
    const w = await driver.drive(g, 'queued', {contract: toolContract({executionApproval: 'human_required'})})
    expect((await item(g, w)).executionApproval).toBeNull()
    expect(codeOf(await issue(await request(g, w)))).toBe('APPROVAL_REQUIRED')
    // The driver grants the execution approval (approval.grant_execution) before work.start.
    await driver.advance(g, w, 'queued', 'active')
    expect((await item(g, w)).executionApproval).toMatchObject({ownershipEpoch: 1})
    expect(codeOf(await issue(await request(g, w)))).toBe('ok')
  })

  it('refuses a Group or WorkItem that does not exist, a cancelled WorkItem (its lease revoked) and a cancelled Mission (G7)', async () => {
    const g = await group('missing')
    const w = await driver.drive(g, 'active')
    const req = await request(g, w)
    expect(codeOf(await issue({...req, groupId: 'urn:mwp:test:group:none'}))).toBe('GROUP_NOT_FOUND')
    // A request of the wrong shape (it comes from outside) is INVALID_COMMAND before any lookup.
    const malformed: unknown[] = [
      {...req, ownershipEpoch: '1'},
      {...req, leaseId: ''},
      {...req, grants: [{resource: REPO}]},
      {...req, limits: {toolCallLimit: '3'}},
    ]
    for (const bad of malformed) expect(codeOf(await issue(bad as typeof req))).toBe('INVALID_COMMAND')
    expect(codeOf(await issue({...req, workItemId: 'urn:uuid:00000000-0000-4000-8000-00000000abcd'}))).toBe(
      'INVALID_COMMAND',
    )
    await run(coord('work.cancel', g, {workItemId: w, reason: 'no longer needed'}))
    expect((await item(g, w)).state).toBe('cancelled')
    expect((await item(g, w)).lease!.state).toBe('revoked')
    expect(codeOf(await issue(req))).toBe('WORK_LEASE_EXPIRED')
    // G7: cancelling the Mission revokes the leases of its active work, and nothing is issued in it.
    const other = await driver.drive(g, 'active')
    const otherReq = await request(g, other)
    expect(codeOf(await issue(otherReq))).toBe('ok')
    await run(groupCommand(owner, 'mission.cancel', g, {reason: 'stopped by the MissionOwner'}))
    expect(codeOf(await issue(otherReq))).toBe('INVALID_STATE_TRANSITION')
  })
})

describe('Session Epochs (§6.3, §11.3)', () => {
  const u = authzSuite()

  it('refuses a stale Session Epoch; after session replacement the old lease is revoked for the new session too', async () => {
    const g = await u.group('session')
    const w = await u.driver.drive(g, 'active')
    const req = await u.request(g, w)
    const at = () => u.now()
    expect((await u.s.service.issue(req, as(developer, 1), at())).ok).toBe(true)
    expect(await u.s.service.issue(req, as(developer, 2), at())).toMatchObject({code: 'AUTH_STALE_SESSION'})
    const epoch = await openSession(u.s.authority, developer.principal!.id)
    expect(epoch).toBe(2)
    expect(await u.s.service.issue(req, as(developer, 1), at())).toMatchObject({code: 'AUTH_STALE_SESSION'})
    expect(await u.s.service.issue(req, as(developer, 2), at())).toMatchObject({code: 'WORK_LEASE_EXPIRED'})
  })
})
