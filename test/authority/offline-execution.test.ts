// Bounded offline execution (spec §11.5, §12, §18; ACCEPTANCE F12-F14) through the full ingress
// on SQLite: a Worker that lost the Group service buffers progress Messages and checkpoints with
// the critical bounded-offline-execution binding (agent/offline-binding.ts), reconnects under a
// new Session Epoch and re-signs them. The authority accepts them only inside the historical
// lease/grace window, before the lease closed, for the unchanged owner and in the WorkItem's
// Conversation, and charges the binding's usage delta in the same append — an overflow refuses
// both. The authority's trusted clock is moved forward (skewMs); Commands are signed now, except
// the authority's own (session_open, lease_revoke), signed at its clock: the store's freshness
// window allows that much skew. Reconnecting before the lease expired revokes it (ACCEPTANCE B9):
// progress buffered before the revocation is still reconciled, later progress is refused.

import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {
  type BufferedCommand,
  BOUNDED_OFFLINE_EXECUTION,
  bufferCommand,
  offlineBinding,
  rebaseBuffered,
} from '../../src/agent/offline-binding.js'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {openSession} from '../../src/authority/ingress/sessions.js'
import {type UsageDelta, workItemUsage} from '../../src/authority/model/budget.js'
import {RESOURCE_USAGE_RECORDED} from '../../src/authority/model/mission-tree.js'
import type {OfflineBinding} from '../../src/authority/model/offline-execution.js'
import {EXECUTION_LEASE_SECONDS, plusSeconds} from '../../src/authority/model/work-leases.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityKey,
  codeOf,
  contract,
  coord,
  coordinator,
  developer,
  groupCommand,
  newGroup,
  owner,
  receiptOf,
  registry,
  reviewer,
  sqliteStore,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {treeSteps} from '../support/mission-tree-helpers.js'
import {workDriver} from '../support/work-driver.js'

const GRACE = 120
const H = `sha256:${'d'.repeat(64)}`
const CHECKPOINTED = 'work.checkpointed'

let store: Store
let cleanup: () => Promise<void>
let authority: Authority
/** Offset of the authority's trusted clock from real time. */
let skewMs = 0

// One authority per test: each test replaces the developer's session, and the driver signs at
// Session Epoch 1.
beforeEach(async () => {
  skewMs = 0
  ;({store, cleanup} = await sqliteStore({maxAgeSeconds: 300, maxFutureSkewSeconds: 3600}))
  authority = openAuthority({
    store,
    registry,
    authorityKey,
    policy: {rootMissionOwners: [owner.principal!.id], leases: {offlineGraceSeconds: GRACE}},
    clock: () => new Date(Date.now() + skewMs).toISOString(),
  })
  expect(await openSession(authority, developer.principal!.id)).toBe(1)
}, 60_000)
afterEach(async () => cleanup?.())

const run = (bytes: Buffer) => submit(authority, bytes)
const code = async (bytes: Buffer) => codeOf(await run(bytes))
const head = async (g: string) => (await store.head(g))!.sequence
const item = async (g: string, w: string) => (await authority.current(g))!.workItems[w]!
async function events(g: string) {
  const page = await store.read(g, 0, 1000)
  return page.events.map(
    (e) =>
      JSON.parse(Buffer.from(e.bytes).toString('utf8')) as {
        kind: string
        sequence: number
        payload: Record<string, unknown>
        extensions?: Record<string, unknown>
      },
  )
}
const work = workDriver(() => authority, {
  candidates: [developer, reviewer],
  offerExpiresAt: () => new Date(Date.now() + skewMs + 60_000).toISOString(),
})

/** A Group with one WorkItem the developer is working on under Execution Lease 1 (Session Epoch 1). */
async function activeItem() {
  const g = await missionGroup(run, 'offline')
  return leased(g, await work.drive(g, 'active'))
}
/** WorkItem `w` of `g` under its current Execution Lease, as the Worker knows it when it loses the service. */
async function leased(g: string, w: string) {
  const it = await item(g, w)
  const lease = it.lease!
  return {g, w, conversationId: it.conversationId, lease, start: lease.issuedAt, expiry: lease.expiresAt!}
}
type Active = Awaited<ReturnType<typeof leased>>

/** The binding for work buffered `bufferedAfter` seconds into the lease, disconnected 10 s in. */
function bindingFor(a: Active, bufferedAfter: number, delta: UsageDelta = {}, edit: Partial<OfflineBinding> = {}) {
  const binding = offlineBinding(
    {
      agentId: developer.principal!.id,
      groupId: a.g,
      workItemId: a.w,
      sessionEpoch: 1,
      ownershipEpoch: 1,
      leaseId: a.lease.leaseId,
      leaseExpiresAt: a.expiry,
    },
    {disconnectedAt: plusSeconds(a.start, 10), bufferedAt: plusSeconds(a.start, bufferedAfter), graceSeconds: GRACE},
    delta,
  )
  return {...binding, ...edit}
}
const checkpointOf = (a: Active, binding: OfflineBinding): BufferedCommand =>
  bufferCommand(
    'work.checkpoint',
    {
      workItemId: a.w,
      ownershipEpoch: 1,
      leaseId: a.lease.leaseId,
      progress: 'Sections 1-3 drafted.',
      artifactHashes: [H],
    },
    binding,
  )
/** A buffered progress Message, in the WorkItem's Conversation unless `conversationId` is null (the Group's). */
const progressOf = (a: Active, binding: OfflineBinding, conversationId: string | null = a.conversationId) =>
  bufferCommand(
    'message.post',
    {text: 'Phase: drafting; done: outline; next: sections 4-6.', ...(conversationId ? {conversationId} : {})},
    binding,
    conversationId ?? undefined,
  )
/**
 * Reconnects `at` seconds into the lease (the authority's clock): a new Session Epoch for the
 * developer, which revokes its lease if that has not expired yet (B9).
 */
async function reconnect(a: Active, at: number): Promise<number> {
  skewMs = Date.parse(plusSeconds(a.start, at)) - Date.now()
  return openSession(authority, developer.principal!.id)
}
const rebased = (buffered: BufferedCommand, sessionEpoch: number) =>
  rebaseBuffered(developer, buffered, {issuedAt: new Date().toISOString(), sessionEpoch, membershipEpoch: 1}).bytes

/** A re-signed Command with its extension member replaced (what a broken or foreign runtime sends). */
const withExtensions = (buffered: BufferedCommand, sessionEpoch: number, extensions: Record<string, unknown>) =>
  groupCommand(developer, buffered.kind, buffered.binding.groupId, buffered.payload, {sessionEpoch, extensions})
const ext = (data: unknown, critical = true, version = '0.1.0') => ({
  [BOUNDED_OFFLINE_EXECUTION]: {version, critical, data},
})

describe('reconciling buffered progress (§11.5, F12/F14)', () => {
  it('[+cmd:work.checkpoint] [+cmd:message.post] [+evt:ext.missionweaveprotocol.core.resource_usage_recorded] [+evt:work.checkpointed] a progress Message and a checkpoint buffered within the grace after the lease expired are reconciled under the new session: each charge precedes its Message or checkpoint in one append, naming the historical and the reconciling session', async () => {
    const a = await activeItem()
    // Offline from 10 s in; the lease expires at 600 s; the grace ends at 720 s.
    const message = progressOf(a, bindingFor(a, 400, {modelTokens: 1200, toolCalls: 3}))
    const checkpoint = checkpointOf(a, bindingFor(a, EXECUTION_LEASE_SECONDS + 60, {currency: 'EUR', financial: 2}))
    const s2 = await reconnect(a, EXECUTION_LEASE_SECONDS + 100)
    expect(s2).toBe(2)
    const before = await head(a.g)

    const messageBytes = rebased(message, s2)
    const m = receiptOf(await run(messageBytes))
    expect([m.firstSequence, m.lastSequence]).toEqual([before + 1, before + 2])
    const c = receiptOf(await run(rebased(checkpoint, s2)))
    expect([c.firstSequence, c.lastSequence]).toEqual([before + 3, before + 4])

    const log = (await events(a.g)).slice(before)
    expect(log.map((e) => [e.sequence, e.kind])).toEqual([
      [before + 1, RESOURCE_USAGE_RECORDED],
      [before + 2, 'message.posted'],
      [before + 3, RESOURCE_USAGE_RECORDED],
      [before + 4, CHECKPOINTED],
    ])
    expect(log[2]!.payload).toMatchObject({
      workItemId: a.w,
      delta: {currency: 'EUR', financial: 2},
      agentId: developer.principal!.id,
      ownershipEpoch: 1,
      leaseId: a.lease.leaseId,
      sessionEpoch: 1,
      reconciliation: {sessionEpoch: s2, bufferedAt: plusSeconds(a.start, EXECUTION_LEASE_SECONDS + 60)},
    })
    // The binding travels, signed, into the Events it produced.
    expect(log[3]!.extensions?.[BOUNDED_OFFLINE_EXECUTION]).toMatchObject({critical: true, data: checkpoint.binding})

    const state = (await authority.current(a.g))!
    expect(workItemUsage(state.budgetLedger, a.w)).toMatchObject({financial: 2, modelTokens: 1200, toolCalls: 3})
    expect(state.workItems[a.w]).toMatchObject({
      state: 'queued',
      lease: {leaseId: a.lease.leaseId, state: 'released'},
      checkpoint: {leaseId: a.lease.leaseId, progress: 'Sections 1-3 drafted.'},
    })
    // Replay: a fresh authority folds the same log to the same state (the Events carry every fact).
    const fresh = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}})
    expect(await fresh.current(a.g)).toEqual(state)
    // A resend of the same re-signed bytes gets the original receipt; a second rebase of the same
    // buffered Command (new issuedAt, same Action ID) is a collision: never a second charge.
    const h = await head(a.g)
    expect(receiptOf(await run(messageBytes))).toEqual(m)
    expect(await code(rebased(checkpoint, s2))).toBe('ACTION_ID_COLLISION')
    expect(await head(a.g)).toBe(h)
  })

  it('[+cmd:work.checkpoint] [+evt:ext.missionweaveprotocol.core.resource_usage_recorded] in a child Mission the offline charge climbs the tree: the child WorkItem and Mission, the parent WorkItem and the root Mission are charged in the same multi-Group append as the checkpoint', async () => {
    const t = treeSteps(() => ({authority, store}))
    const g = await t.rootGroup()
    const w = await t.workItem(g, 'open', contract({budget: {currency: 'EUR', financialLimit: 10}}))
    const cg = newGroup('offline-child')
    receiptOf(await run(t.createChild(g, w, cg, {budget: {currency: 'EUR', financialLimit: 5}})))
    receiptOf(
      await run(groupCommand(coordinator, 'membership.change', cg, {member: developer.principal, role: 'worker'})),
    )
    const cw = await t.workItem(cg, 'active', contract({budget: {currency: 'EUR', financialLimit: 3}}), reviewer)
    const a = await leased(cg, cw)
    const checkpoint = checkpointOf(a, bindingFor(a, 200, {currency: 'EUR', financial: 1.25}))
    const s2 = await reconnect(a, 240)
    const [rootHead, childHead] = [await head(g), await head(cg)]
    const r = receiptOf(await run(rebased(checkpoint, s2)))
    expect([r.firstSequence, r.lastSequence]).toEqual([childHead + 1, childHead + 2])
    expect((await events(cg)).slice(childHead).map((e) => e.kind)).toEqual([RESOURCE_USAGE_RECORDED, CHECKPOINTED])
    const rootEvents = (await events(g)).slice(rootHead)
    expect(rootEvents).toHaveLength(1)
    expect(rootEvents[0]).toMatchObject({
      kind: RESOURCE_USAGE_RECORDED,
      payload: {workItemId: w, delta: {financial: 1.25}, source: {groupId: cg, workItemId: cw}},
    })
    expect(workItemUsage((await authority.current(g))!.budgetLedger, w).financial).toBe(1.25)
    expect(workItemUsage((await authority.current(cg))!.budgetLedger, cw).financial).toBe(1.25)
  })

  it('[+cmd:work.checkpoint] a zero delta reconciles the checkpoint alone; the WorkItem ledger is untouched', async () => {
    const a = await activeItem()
    const checkpoint = checkpointOf(a, bindingFor(a, 300))
    const s2 = await reconnect(a, 320)
    const before = await head(a.g)
    const r = receiptOf(await run(rebased(checkpoint, s2)))
    expect([r.firstSequence, r.lastSequence]).toEqual([before + 1, before + 1])
    expect((await events(a.g)).at(-1)!.kind).toBe(CHECKPOINTED)
    expect(workItemUsage((await authority.current(a.g))!.budgetLedger, a.w).financial).toBe(0)
  })

  it('[-cmd:work.checkpoint] [-evt:ext.missionweaveprotocol.core.resource_usage_recorded] a charge that overflows the WorkItem budget refuses the checkpoint too: BUDGET_EXCEEDED, the Group head does not move, the lease and ledger are unchanged', async () => {
    const a = await activeItem()
    // contract(): budget {currency: EUR, financialLimit: 10}
    const over = checkpointOf(a, bindingFor(a, 500, {currency: 'EUR', financial: 10.5, modelTokens: 10}))
    const s2 = await reconnect(a, 560)
    const h = await head(a.g)
    expect(await code(rebased(over, s2))).toBe('BUDGET_EXCEEDED')
    expect(await head(a.g)).toBe(h)
    const state = (await authority.current(a.g))!
    // The reconnect at 560 s revoked the lease (B9); the refused checkpoint recorded nothing.
    expect(state.workItems[a.w]).toMatchObject({
      state: 'queued',
      lease: {leaseId: a.lease.leaseId, state: 'revoked'},
      checkpoint: null,
    })
    expect(workItemUsage(state.budgetLedger, a.w)).toMatchObject({financial: 0, modelTokens: 0})
    // Within the budget, the same progress is reconciled: it was the charge that refused it.
    receiptOf(await run(rebased(checkpointOf(a, bindingFor(a, 500, {currency: 'EUR', financial: 9.5})), s2)))
    expect((await events(a.g)).slice(h).map((e) => e.kind)).toEqual([RESOURCE_USAGE_RECORDED, CHECKPOINTED])
  })
})

describe('buffered progress the authority rejects (§11.5, F13)', () => {
  it('[-cmd:work.checkpoint] outside the historical lease/grace window: buffered before the lease started, after the Organization grace, or against a lease expiry later than granted — WORK_LEASE_EXPIRED', async () => {
    const a = await activeItem()
    const s2 = await reconnect(a, EXECUTION_LEASE_SECONDS + GRACE + 30)
    const h = await head(a.g)
    const early = bindingFor(
      a,
      30,
      {},
      {disconnectedAt: plusSeconds(a.start, -20), bufferedAt: plusSeconds(a.start, -5)},
    )
    expect(await code(rebased(checkpointOf(a, early), s2))).toBe('WORK_LEASE_EXPIRED')
    // A Worker that granted itself a longer grace than leases.offlineGraceSeconds.
    const late = {
      ...bindingFor(a, 300),
      bufferedAt: plusSeconds(a.expiry, GRACE + 10),
      graceDeadline: plusSeconds(a.expiry, GRACE + 20),
    }
    expect(await code(rebased(checkpointOf(a, late), s2))).toBe('WORK_LEASE_EXPIRED')
    // A Worker that believes its lease was renewed further than the authority granted.
    const claimed = plusSeconds(a.expiry, 300)
    const renewed = {
      ...bindingFor(a, 300),
      bufferedAt: plusSeconds(a.expiry, GRACE + 10),
      leaseExpiresAt: claimed,
      graceDeadline: plusSeconds(claimed, GRACE),
    }
    expect(await code(rebased(checkpointOf(a, renewed), s2))).toBe('WORK_LEASE_EXPIRED')
    expect(await head(a.g)).toBe(h)
    // The same work buffered inside the window is reconciled.
    receiptOf(await run(rebased(checkpointOf(a, bindingFor(a, EXECUTION_LEASE_SECONDS + GRACE - 10)), s2)))
  })

  it('[-cmd:message.post] after lease closure: progress buffered against a lease the WorkItem already released by a checkpoint or a submission is WORK_LEASE_EXPIRED', async () => {
    const a = await activeItem()
    const b = await activeItem()
    const afterCheckpoint = progressOf(a, bindingFor(a, 200, {toolCalls: 1}))
    const afterSubmission = progressOf(b, bindingFor(b, 200))
    // The checkpoint and the submission reached the authority before the connection dropped.
    receiptOf(
      await run(
        groupCommand(developer, 'work.checkpoint', a.g, {
          workItemId: a.w,
          ownershipEpoch: 1,
          leaseId: a.lease.leaseId,
          progress: 'outline',
          artifactHashes: [],
        }),
      ),
    )
    await work.advance(b.g, b.w, 'active', 'submitted')
    expect((await item(b.g, b.w)).state).toBe('submitted')
    const s2 = await reconnect(a, 260)
    const [ha, hb] = [await head(a.g), await head(b.g)]
    expect(await code(rebased(afterCheckpoint, s2))).toBe('WORK_LEASE_EXPIRED')
    expect(await code(rebased(afterSubmission, s2))).toBe('WORK_LEASE_EXPIRED')
    expect([await head(a.g), await head(b.g)]).toEqual([ha, hb])
  })

  it('[-cmd:work.checkpoint] for a changed owner: after the WorkItem was reassigned at a higher Ownership Epoch, the old owner’s buffered checkpoint is WORK_STALE_OWNERSHIP and charges nothing', async () => {
    const a = await activeItem()
    const checkpoint = checkpointOf(a, bindingFor(a, EXECUTION_LEASE_SECONDS + 30, {currency: 'EUR', financial: 1}))
    skewMs = Date.parse(plusSeconds(a.expiry, 60)) - Date.now()
    receiptOf(
      await run(
        coord('work.offer', a.g, {
          workItemId: a.w,
          candidates: [reviewer.principal!.id],
          expiresAt: new Date(Date.now() + skewMs + 60_000).toISOString(),
        }),
      ),
    )
    const offerId = (await item(a.g, a.w)).offer!.offerId
    receiptOf(await run(groupCommand(reviewer, 'work.accept_offer', a.g, {workItemId: a.w, offerId})))
    expect((await item(a.g, a.w)).owner).toMatchObject({agentId: reviewer.principal!.id, ownershipEpoch: 2})
    const s2 = await reconnect(a, EXECUTION_LEASE_SECONDS + 90)
    const h = await head(a.g)
    expect(await code(rebased(checkpoint, s2))).toBe('WORK_STALE_OWNERSHIP')
    expect(await head(a.g)).toBe(h)
    expect(workItemUsage((await authority.current(a.g))!.budgetLedger, a.w).financial).toBe(0)
  })

  it('[-cmd:message.post] outside the bound WorkItem Conversation: buffered progress posted to the Group Conversation is INVALID_COMMAND; in the WorkItem’s it is accepted', async () => {
    const a = await activeItem()
    const s2 = await reconnect(a, 300)
    const h = await head(a.g)
    expect(await code(rebased(progressOf(a, bindingFor(a, 200), null), s2))).toBe('INVALID_COMMAND')
    expect(await head(a.g)).toBe(h)
    receiptOf(await run(rebased(progressOf(a, bindingFor(a, 200)), s2)))
    expect((await events(a.g)).at(-1)!.kind).toBe('message.posted')
  })

  it('[-cmd:work.checkpoint] a missing or malformed binding: the historical lease without a binding, binding data lacking a member, a noncritical binding, or one on a kind that cannot be buffered', async () => {
    const a = await activeItem()
    const checkpoint = checkpointOf(a, bindingFor(a, 300))
    const s2 = await reconnect(a, 320)
    const h = await head(a.g)
    // Without the binding the historical lease is just a lease the replacing session revoked.
    expect(await code(groupCommand(developer, 'work.checkpoint', a.g, checkpoint.payload, {sessionEpoch: s2}))).toBe(
      'WORK_LEASE_EXPIRED',
    )
    const {leaseId: _dropped, ...partial} = checkpoint.binding
    expect(await code(withExtensions(checkpoint, s2, ext(partial)))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await code(withExtensions(checkpoint, s2, ext({...checkpoint.binding, bufferedAt: 'yesterday'})))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    )
    expect(await code(withExtensions(checkpoint, s2, ext(checkpoint.binding, false)))).toBe('INVALID_COMMAND')
    const submitted = {workItemId: a.w, ownershipEpoch: 1, leaseId: a.lease.leaseId, artifactHashes: [H]}
    expect(
      await code(
        groupCommand(developer, 'work.submit', a.g, submitted, {sessionEpoch: s2, extensions: ext(checkpoint.binding)}),
      ),
    ).toBe('INVALID_COMMAND')
    // A binding that contradicts its Command: another lease cited, a later session than the Command's.
    const otherLease = {
      ...checkpoint,
      payload: {...checkpoint.payload, leaseId: 'urn:uuid:00000000-0000-4000-8000-00000000beef'},
    }
    expect(await code(rebased(otherLease, s2))).toBe('INVALID_COMMAND')
    expect(await code(withExtensions(checkpoint, s2, ext({...checkpoint.binding, sessionEpoch: s2 + 1})))).toBe(
      'INVALID_COMMAND',
    )
    expect(await head(a.g)).toBe(h)
    receiptOf(await run(rebased(checkpoint, s2)))
  })

  it('[-cmd:work.checkpoint] an unknown critical extension is still UNKNOWN_CRITICAL_EXTENSION, beside a valid binding or as a binding of an unimplemented major version', async () => {
    const a = await activeItem()
    const checkpoint = checkpointOf(a, bindingFor(a, 300))
    const s2 = await reconnect(a, 320)
    const h = await head(a.g)
    const unknown = {'urn:example:extension:teleport': {version: '1.0.0', critical: true, data: {}}}
    expect(await code(withExtensions(checkpoint, s2, {...ext(checkpoint.binding), ...unknown}))).toBe(
      'UNKNOWN_CRITICAL_EXTENSION',
    )
    expect(await code(withExtensions(checkpoint, s2, ext(checkpoint.binding, true, '1.0.0')))).toBe(
      'UNKNOWN_CRITICAL_EXTENSION',
    )
    expect(await head(a.g)).toBe(h)
  })
})

describe('buffered progress and a session replacement that revoked the lease (§11.3, §11.5, B9)', () => {
  it('B9 [+cmd:work.checkpoint] [+cmd:message.post] [+evt:work.checkpointed] progress buffered before the reconnect revoked the lease is reconciled: the charge, then the Message or the checkpoint, recorded on the queued WorkItem under the same owner and Ownership Epoch; the owner’s new lease resumes from it', async () => {
    const a = await activeItem()
    const message = progressOf(a, bindingFor(a, 150, {toolCalls: 2}))
    const checkpoint = checkpointOf(a, bindingFor(a, 200, {modelTokens: 500}))
    const s2 = await reconnect(a, 300)
    const afterRevocation = await item(a.g, a.w)
    expect(afterRevocation).toMatchObject({
      state: 'queued',
      lease: {leaseId: a.lease.leaseId, state: 'revoked', revocation: {sessionEpoch: s2}},
    })
    // Revoked at the reconnect, by the authority's clock (300 s into the lease, and a few ms).
    const revokedAt = afterRevocation.lease!.revocation!.revokedAt
    expect(Date.parse(revokedAt) - Date.parse(plusSeconds(a.start, 300))).toBeLessThan(1000)
    const before = await head(a.g)
    receiptOf(await run(rebased(message, s2)))
    receiptOf(await run(rebased(checkpoint, s2)))
    expect((await events(a.g)).slice(before).map((e) => e.kind)).toEqual([
      RESOURCE_USAGE_RECORDED,
      'message.posted',
      RESOURCE_USAGE_RECORDED,
      CHECKPOINTED,
    ])
    const state = (await authority.current(a.g))!
    expect(workItemUsage(state.budgetLedger, a.w)).toMatchObject({toolCalls: 2, modelTokens: 500})
    const reconciled = state.workItems[a.w]!
    expect(reconciled).toMatchObject({
      state: 'queued',
      ownershipEpoch: 1,
      owner: {agentId: developer.principal!.id, ownershipEpoch: 1},
      lease: {leaseId: a.lease.leaseId, state: 'revoked', revocation: {revokedAt}},
      checkpoint: {leaseId: a.lease.leaseId, progress: 'Sections 1-3 drafted.', artifactHashes: [H]},
    })
    // The start-by deadline the revocation set stands: reconciling does not extend ownership.
    expect(reconciled.owner!.leaseExpiresAt).toBe(afterRevocation.owner!.leaseExpiresAt)

    const h = await head(a.g)
    receiptOf(
      await run(groupCommand(developer, 'work.start', a.g, {workItemId: a.w, ownershipEpoch: 1}, {sessionEpoch: s2})),
    )
    const [started] = (await events(a.g)).slice(h)
    expect(started!.kind).toBe('work.started')
    expect(started!.payload.resumeFrom).toEqual(reconciled.checkpoint)
    const lease = (started!.payload as {lease: {leaseId: string; sessionEpoch: number}}).lease
    expect(lease.sessionEpoch).toBe(s2)
    expect(lease.leaseId).not.toBe(a.lease.leaseId)
    const fresh = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}})
    expect(await fresh.current(a.g)).toEqual(await authority.current(a.g))
  })

  it('B9 [-cmd:work.checkpoint] [-cmd:message.post] progress buffered at or after the revocation is after lease closure: WORK_LEASE_EXPIRED, nothing charged or appended', async () => {
    const a = await activeItem()
    const s2 = await reconnect(a, 300)
    const revokedAt = (await item(a.g, a.w)).lease!.revocation!.revokedAt
    skewMs = Date.parse(plusSeconds(a.start, 400)) - Date.now()
    const h = await head(a.g)
    for (const bufferedAt of [revokedAt, plusSeconds(a.start, 350)]) {
      const binding = bindingFor(a, 350, {toolCalls: 1}, {bufferedAt})
      expect(await code(rebased(checkpointOf(a, binding), s2))).toBe('WORK_LEASE_EXPIRED')
      expect(await code(rebased(progressOf(a, binding), s2))).toBe('WORK_LEASE_EXPIRED')
    }
    expect(await head(a.g)).toBe(h)
    const state = (await authority.current(a.g))!
    expect(workItemUsage(state.budgetLedger, a.w).toolCalls).toBe(0)
    expect(state.workItems[a.w]!.checkpoint).toBeNull()
    // Just before it, the same checkpoint is reconciled.
    receiptOf(await run(rebased(checkpointOf(a, bindingFor(a, 299, {toolCalls: 1})), s2)))
  })

  it('B9 [-cmd:message.post] a lease revoked otherwise — by cancellation — still refuses progress buffered before it; so does the checkpoint the session replacement itself revoked once a new lease was started', async () => {
    const a = await activeItem()
    const b = await activeItem()
    const beforeCancel = progressOf(a, bindingFor(a, 100))
    const beforeRestart = checkpointOf(b, bindingFor(b, 100))
    receiptOf(await run(coord('work.cancel', a.g, {workItemId: a.w, reason: 'Not needed.'})))
    expect(await item(a.g, a.w)).toMatchObject({state: 'cancelled', lease: {state: 'revoked'}})
    const s2 = await reconnect(b, 200)
    receiptOf(
      await run(groupCommand(developer, 'work.start', b.g, {workItemId: b.w, ownershipEpoch: 1}, {sessionEpoch: s2})),
    )
    const [ha, hb] = [await head(a.g), await head(b.g)]
    expect(await code(rebased(beforeCancel, s2))).toBe('WORK_LEASE_EXPIRED')
    // §11.5: the Worker reconciles before it starts; once a new lease exists, the historical one is not the last.
    expect(await code(rebased(beforeRestart, s2))).toBe('WORK_LEASE_EXPIRED')
    expect([await head(a.g), await head(b.g)]).toEqual([ha, hb])
  })
})
