// The aggregate six-dimension budget ledger (spec §12, ACCEPTANCE G5/G6) through the full ingress
// on SQLite: the owner records a nonzero delta against its WorkItem, Ownership Epoch and current
// Execution Lease; the Event carries delta, cumulative usage and remaining budget; the charge
// updates the WorkItem and its complete WorkItem/Mission ancestry across Groups in one atomic
// append; one overflowing dimension anywhere rejects everything with BUDGET_EXCEEDED.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {RESOURCE_USAGE_RECORD, RESOURCE_USAGE_RECORDED} from '../../src/authority/model/mission-tree.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {DEFAULT_FRESHNESS, initStore, openStore, type Store} from '../../src/store/index.js'
import {
  admissionKey,
  authorityKey,
  authorityOn,
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
  uuid,
} from '../support/authority-helpers.js'
import {treeSteps} from '../support/mission-tree-helpers.js'
import {storeBackends} from '../support/store-backends.js'

let store: Store
let cleanup: () => Promise<void>
let authority: Authority
const touched: string[] = []

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  authority = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}})
}, 60_000)
afterAll(async () => cleanup?.())

const t = treeSteps(() => ({authority, store}))
const {run, state, item, head, lastEvent, workItem, createChild, usage, unchanged} = t
const code = async (bytes: Buffer) => codeOf(await run(bytes))
const rootGroup = async (budget?: Record<string, unknown>) => {
  const g = await t.rootGroup(budget)
  touched.push(g)
  return g
}
const ZERO = {
  financial: 0,
  modelTokens: 0,
  toolCalls: 0,
  computeSeconds: 0,
  wallClockSeconds: 0,
  externalSideEffects: 0,
}
const limited = (budget: Record<string, unknown>) => contract({budget})

describe('ext.missionweaveprotocol.core.resource_usage_record on one Group', () => {
  it(`[+cmd:ext.missionweaveprotocol.core.resource_usage_record] [+evt:ext.missionweaveprotocol.core.resource_usage_recorded] the charge carries delta, cumulative usage and remaining budget; money sums exactly`, async () => {
    const g = await rootGroup()
    const w = await workItem(
      g,
      'active',
      limited({currency: 'EUR', financialLimit: 0.3, modelTokenLimit: 1000, toolCallLimit: 5}),
    )
    const lease = (await item(g, w)).lease!
    const rev = (await state(g)).revision
    for (const financial of [0.1, 0.2])
      receiptOf(await run(await usage(g, w, {currency: 'EUR', financial, modelTokens: 100})))
    const e = await lastEvent(g)
    expect(e.kind).toBe(RESOURCE_USAGE_RECORDED)
    expect(e.payload).toEqual({
      missionId: (await state(g)).missionId,
      workItemId: w,
      delta: {currency: 'EUR', financial: 0.2, modelTokens: 100},
      cumulative: {
        workItem: {...ZERO, financial: 0.3, modelTokens: 200},
        mission: {...ZERO, financial: 0.3, modelTokens: 200},
      },
      // WorkItem: EUR 0.3 / 1000 tokens / 5 calls; Mission (missionPayload): EUR 100 / 1M tokens.
      remaining: {
        workItem: {financial: 0, modelTokens: 800, toolCalls: 5},
        mission: {financial: 99.7, modelTokens: 999_800},
        effective: {financial: 0, modelTokens: 800, toolCalls: 5},
      },
      agentId: developer.principal!.id,
      ownershipEpoch: 1,
      leaseId: lease.leaseId,
      sessionEpoch: 1,
    })
    const s = await state(g)
    expect(s.budgetLedger).toEqual({
      mission: {...ZERO, financial: 0.3, modelTokens: 200},
      workItems: {[w]: {...ZERO, financial: 0.3, modelTokens: 200}},
    })
    // Structured state: each charge advances the aggregate revision; the WorkItem is unchanged.
    expect(s.revision).toBe(rev + 2)
    expect((await item(g, w)).state).toBe('active')
  })

  it(`[-cmd:ext.missionweaveprotocol.core.resource_usage_record] [-evt:ext.missionweaveprotocol.core.resource_usage_recorded] one overflowing dimension rejects the whole charge with BUDGET_EXCEEDED and changes nothing; the exact limit is accepted`, async () => {
    const g = await rootGroup()
    const w = await workItem(g, 'active', limited({currency: 'EUR', financialLimit: 10, toolCallLimit: 5}))
    receiptOf(await run(await usage(g, w, {toolCalls: 4})))
    const before = [await head(g)]
    const ledger = (await state(g)).budgetLedger
    // toolCalls 4 + 2 > 5 although the money fits: nothing of it is recorded.
    const r = await run(await usage(g, w, {currency: 'EUR', financial: 1, toolCalls: 2}))
    expect(codeOf(r)).toBe('BUDGET_EXCEEDED')
    expect('error' in r && r.error.retryable).toBe(false)
    await unchanged([g], before)
    expect((await state(g)).budgetLedger).toEqual(ledger)
    // Exactly at the limit is within it.
    receiptOf(await run(await usage(g, w, {currency: 'EUR', financial: 10, toolCalls: 1})))
    expect((await state(g)).budgetLedger!.workItems[w]).toEqual({...ZERO, financial: 10, toolCalls: 5})
    expect(await code(await usage(g, w, {currency: 'EUR', financial: 0.000001}))).toBe('BUDGET_EXCEEDED')
  })

  it(`[-cmd:ext.missionweaveprotocol.core.resource_usage_record] the Mission budget bounds the sum over its WorkItems`, async () => {
    const g = await rootGroup({currency: 'EUR', financialLimit: 100})
    const w1 = await workItem(g, 'active', limited({currency: 'EUR', financialLimit: 60}))
    const w2 = await workItem(g, 'active', limited({currency: 'EUR', financialLimit: 60}), coordinator, reviewer)
    receiptOf(await run(await usage(g, w1, {currency: 'EUR', financial: 60})))
    const before = [await head(g)]
    expect(await code(await usage(g, w2, {currency: 'EUR', financial: 41}, reviewer))).toBe('BUDGET_EXCEEDED')
    await unchanged([g], before)
    receiptOf(await run(await usage(g, w2, {currency: 'EUR', financial: 40}, reviewer)))
    expect((await state(g)).budgetLedger!.mission.financial).toBe(100)
  })

  it(`[-cmd:ext.missionweaveprotocol.core.resource_usage_record] [-evt:ext.missionweaveprotocol.core.resource_usage_recorded] only the owner, on its current lease and epoch, with a nonzero delta in the budget currency`, async () => {
    const g = await rootGroup()
    const w = await workItem(g, 'active')
    const lease = (await item(g, w)).lease!
    const before = [await head(g)]
    expect(await code(await usage(g, w, {modelTokens: 0}))).toBe('INVALID_COMMAND') // zero delta
    expect(await code(await usage(g, w, {currency: 'USD', financial: 1}))).toBe('INVALID_COMMAND') // not the budget currency
    expect(await code(await usage(g, w, {financial: 1}))).toBe('SCHEMA_VALIDATION_FAILED') // money without currency
    expect(await code(await usage(g, w, {toolCalls: -1}))).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await code(await usage(g, w, {toolCalls: 1}, reviewer))).toBe('AUTH_FORBIDDEN') // not the owner
    expect(
      await code(
        await usage(g, w, {toolCalls: 1}, developer, {leaseId: 'urn:uuid:00000000-0000-4000-8000-00000000beef'}),
      ),
    ).toBe('WORK_LEASE_EXPIRED')
    expect(await code(await usage(g, w, {toolCalls: 1}, developer, {ownershipEpoch: 2}))).toBe('AUTH_FORBIDDEN') // never issued
    expect(
      await code(
        groupCommand(owner, RESOURCE_USAGE_RECORD, g, {
          workItemId: w,
          ownershipEpoch: 1,
          leaseId: lease.leaseId,
          delta: {toolCalls: 1},
        }),
      ),
    ).toBe('AUTH_FORBIDDEN')
    expect(
      await code(
        await usage(g, w, {toolCalls: 1}, developer, {workItemId: 'urn:uuid:00000000-0000-4000-8000-00000000dead'}),
      ),
    ).toBe('INVALID_COMMAND')
    await unchanged([g], before)
    // A released lease (after a checkpoint) no longer takes charges.
    receiptOf(
      await run(
        groupCommand(developer, 'work.checkpoint', g, {
          workItemId: w,
          ownershipEpoch: 1,
          leaseId: lease.leaseId,
          progress: 'Half done.',
          artifactHashes: [],
        }),
      ),
    )
    expect(
      await code(
        groupCommand(developer, RESOURCE_USAGE_RECORD, g, {
          workItemId: w,
          ownershipEpoch: 1,
          leaseId: lease.leaseId,
          delta: {toolCalls: 1},
        }),
      ),
    ).toBe('WORK_LEASE_EXPIRED')
    expect((await state(g)).budgetLedger).toBeUndefined()
  })
})

describe('allocation (§12, G5)', () => {
  it('[-cmd:work.authorize] the Coordinator allocates a WorkItem no more than the Mission has left, in the Mission currency', async () => {
    const g = await rootGroup({currency: 'EUR', financialLimit: 100, toolCallLimit: 10})
    const authorize = (budget: Record<string, unknown>) =>
      coord('work.authorize', g, {workItemId: uuid(7), contract: limited(budget)})
    const before = [await head(g)]
    expect(await code(authorize({currency: 'EUR', financialLimit: 101}))).toBe('BUDGET_EXCEEDED')
    expect(await code(authorize({toolCallLimit: 11}))).toBe('BUDGET_EXCEEDED')
    expect(await code(authorize({currency: 'USD', financialLimit: 1}))).toBe('INVALID_COMMAND')
    await unchanged([g], before)
    // After 60 is consumed, 40 is what is left to allocate.
    const w = await workItem(g, 'active', limited({currency: 'EUR', financialLimit: 100}))
    receiptOf(await run(await usage(g, w, {currency: 'EUR', financial: 60})))
    expect(await code(authorize({currency: 'EUR', financialLimit: 41}))).toBe('BUDGET_EXCEEDED')
    receiptOf(await run(authorize({currency: 'EUR', financialLimit: 40})))
  })
})

describe('the charge climbs the Mission tree atomically (§12, G6)', () => {
  /** Root g → WorkItem w → child Mission cg (budget `childBudget`) → active WorkItem cw owned by developer. */
  async function tree(g: string, w: string, childBudget: Record<string, unknown>, cwBudget: Record<string, unknown>) {
    const cg = newGroup('budget-child')
    touched.push(cg)
    receiptOf(await run(createChild(g, w, cg, {budget: childBudget})))
    // The child MissionOwner (the Parent Coordinator) admits developer as a Worker of the child Group.
    receiptOf(
      await run(groupCommand(coordinator, 'membership.change', cg, {member: developer.principal, role: 'worker'})),
    )
    const cw = await workItem(cg, 'active', limited(cwBudget), reviewer, developer)
    return {cg, cw}
  }

  it(`[+cmd:ext.missionweaveprotocol.core.resource_usage_record] [+evt:ext.missionweaveprotocol.core.resource_usage_recorded] a grandchild-level charge updates the child WorkItem, the child Mission, the parent WorkItem and the root Mission in one append`, async () => {
    const g = await rootGroup()
    const w = await workItem(g, 'open', limited({currency: 'EUR', financialLimit: 10, modelTokenLimit: 1000}))
    const {cg, cw} = await tree(
      g,
      w,
      {currency: 'EUR', financialLimit: 5, modelTokenLimit: 500},
      {currency: 'EUR', financialLimit: 3, modelTokenLimit: 300},
    )
    const rootHead = await head(g)
    const r = receiptOf(await run(await usage(cg, cw, {currency: 'EUR', financial: 1.5, modelTokens: 120})))
    expect((r as unknown as {linkedGroups: {groupId: string; firstSequence: number}[]}).linkedGroups).toEqual([
      {groupId: g, eventIds: expect.any(Array), firstSequence: rootHead + 1, lastSequence: rootHead + 1},
    ])
    const used = {...ZERO, financial: 1.5, modelTokens: 120}
    expect((await state(cg)).budgetLedger).toEqual({mission: used, workItems: {[cw]: used}})
    expect((await state(g)).budgetLedger).toEqual({mission: used, workItems: {[w]: used}})
    // The execution's effective remainder is the tightest one up the tree (here: its own WorkItem's).
    expect((await lastEvent(cg)).payload.remaining).toMatchObject({effective: {financial: 1.5, modelTokens: 180}})
    const rootEvent = await lastEvent(g)
    expect(rootEvent).toMatchObject({
      kind: RESOURCE_USAGE_RECORDED,
      payload: {
        workItemId: w,
        delta: {currency: 'EUR', financial: 1.5, modelTokens: 120},
        remaining: {workItem: {financial: 8.5, modelTokens: 880}},
        source: {groupId: cg, workItemId: cw},
      },
    })
  })

  it(`[-cmd:ext.missionweaveprotocol.core.resource_usage_record] [-evt:ext.missionweaveprotocol.core.resource_usage_recorded] an overflow at an ancestor (the root Mission) rejects the charge in every Group`, async () => {
    const g = await rootGroup({currency: 'EUR', financialLimit: 100})
    const w1 = await workItem(g, 'open', limited({currency: 'EUR', financialLimit: 60}))
    const w2 = await workItem(g, 'open', limited({currency: 'EUR', financialLimit: 60}))
    const a = await tree(g, w1, {currency: 'EUR', financialLimit: 60}, {currency: 'EUR', financialLimit: 60})
    const b = await tree(g, w2, {currency: 'EUR', financialLimit: 60}, {currency: 'EUR', financialLimit: 60})
    receiptOf(await run(await usage(a.cg, a.cw, {currency: 'EUR', financial: 60})))
    const before = [await head(g), await head(a.cg), await head(b.cg)]
    // 50 fits the child WorkItem, the child Mission and the parent WorkItem, but not the root Mission (60 + 50 > 100).
    expect(await code(await usage(b.cg, b.cw, {currency: 'EUR', financial: 50}))).toBe('BUDGET_EXCEEDED')
    await unchanged([g, a.cg, b.cg], before)
    expect((await state(b.cg)).budgetLedger).toBeUndefined()
    expect((await state(g)).budgetLedger!.mission.financial).toBe(60)
  })

  it('concurrent charges from two child Groups against one root budget: exactly one fits, and the ledger agrees everywhere', async () => {
    const g = await rootGroup({currency: 'EUR', financialLimit: 100})
    const w1 = await workItem(g, 'open', limited({currency: 'EUR', financialLimit: 70}))
    const w2 = await workItem(g, 'open', limited({currency: 'EUR', financialLimit: 70}))
    const a = await tree(g, w1, {currency: 'EUR', financialLimit: 70}, {currency: 'EUR', financialLimit: 70})
    const b = await tree(g, w2, {currency: 'EUR', financialLimit: 70}, {currency: 'EUR', financialLimit: 70})
    const results = await Promise.all([
      run(await usage(a.cg, a.cw, {currency: 'EUR', financial: 60})),
      run(await usage(b.cg, b.cw, {currency: 'EUR', financial: 60})),
    ])
    expect(results.map(codeOf).sort()).toEqual(['BUDGET_EXCEEDED', 'ok'])
    const winner = codeOf(results[0]!) === 'ok' ? a : b
    const loser = winner === a ? b : a
    expect((await state(g)).budgetLedger!.mission.financial).toBe(60)
    expect((await state(winner.cg)).budgetLedger!.mission.financial).toBe(60)
    expect((await state(loser.cg)).budgetLedger).toBeUndefined()
  })

  it('every Group replays to the live state (ledger included)', async () => {
    const fresh = authorityOn(store, {rootMissionOwners: []})
    for (const g of touched) {
      const live = await authority.current(g)
      expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash(live!))
    }
  })
})

// Two Group Authorities (as two processes would) sharing one PostgreSQL store: the multi-Group
// append locks the involved Group rows in sorted order, so two charges racing for one root budget
// from different child Groups serialize in the database; the loser's head-moved retry decides
// again on the winner's ledger and gets BUDGET_EXCEEDED.
describe.each(storeBackends('authority budget').filter((b) => b.name === 'postgres' && b.enabled))(
  'two authorities sharing $name',
  (pg) => {
    const stores: Store[] = []
    let a: {authority: Authority; store: Store}
    let b: {authority: Authority; store: Store}
    beforeAll(async () => {
      await pg.start()
      const url = await pg.fresh()
      await initStore(url, {
        organizationId: 'urn:mwp:dev:org:example',
        admissionService: {
          principal: admissionKey.principal!,
          keyId: admissionKey.keyId,
          publicKey: admissionKey.publicKeyB64,
        },
        freshness: DEFAULT_FRESHNESS,
      })
      for (let i = 0; i < 2; i++) stores.push(await openStore(url, {admissionKey}))
      a = {store: stores[0]!, authority: authorityOn(stores[0]!)}
      b = {store: stores[1]!, authority: authorityOn(stores[1]!)}
    }, 120_000)
    afterAll(async () => {
      for (const st of stores) await st.close()
      await pg.stop()
    })

    it('concurrent charges through two authorities against one root budget: exactly one fits, both authorities agree', async () => {
      const ta = treeSteps(() => a)
      const tb = treeSteps(() => b)
      const g = await ta.rootGroup({currency: 'EUR', financialLimit: 100})
      const children = []
      for (const tag of ['x', 'y']) {
        const w = await ta.workItem(g, 'open', limited({currency: 'EUR', financialLimit: 70}))
        const cg = newGroup(`pg-${tag}`)
        receiptOf(await ta.run(ta.createChild(g, w, cg, {budget: {currency: 'EUR', financialLimit: 70}})))
        receiptOf(
          await ta.run(
            groupCommand(coordinator, 'membership.change', cg, {member: developer.principal, role: 'worker'}),
          ),
        )
        children.push({
          cg,
          cw: await ta.workItem(cg, 'active', limited({currency: 'EUR', financialLimit: 70}), reviewer, developer),
        })
      }
      const [x, y] = children as [{cg: string; cw: string}, {cg: string; cw: string}]
      const results = await Promise.all([
        ta.run(await ta.usage(x.cg, x.cw, {currency: 'EUR', financial: 60})),
        tb.run(await ta.usage(y.cg, y.cw, {currency: 'EUR', financial: 60})),
      ])
      expect(results.map(codeOf).sort()).toEqual(['BUDGET_EXCEEDED', 'ok'])
      for (const t of [ta, tb]) expect((await t.state(g)).budgetLedger!.mission.financial).toBe(60)
      const winner = codeOf(results[0]!) === 'ok' ? x : y
      const loser = winner === x ? y : x
      expect((await tb.state(winner.cg)).budgetLedger!.workItems[winner.cw]!.financial).toBe(60)
      expect((await tb.state(loser.cg)).budgetLedger).toBeUndefined()
      for (const group of [g, x.cg, y.cg])
        expect(canonicalHash(await ta.state(group))).toBe(canonicalHash(await tb.state(group)))
    }, 60_000)
  },
)
