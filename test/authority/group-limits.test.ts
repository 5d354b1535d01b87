// §20 "Organization policy MUST support limits on … active and queued WorkItems": the Group-wide
// limit on unfinished WorkItems (policy.limits.groupWorkItems, src/authority/decide/rate-limits.ts),
// checked where new work enters the Group (work.authorize). A soft threshold notifies the
// Coordinator; above the hard limit the Coordinator gets RATE_LIMITED with nothing appended, and
// continues only with a one-shot Cooperation Override Grant or once work is finished.

import {describe, expect, it} from 'vitest'
import {openAuthority} from '../../src/authority/authority.js'
import type {Store} from '../../src/store/types.js'
import {
  authorityKey,
  codeOf,
  contract,
  coord,
  coordinator,
  createCommand,
  groupCommand,
  newGroup,
  owner,
  receiptOf,
  registry,
  sqliteSuite,
  uuid,
} from '../support/authority-helpers.js'

const limits = {groupWorkItems: {soft: 2, hard: 2}}
const suite = sqliteSuite((store: Store) =>
  openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id], limits}}),
)

const authorize = (g: string, fields: Record<string, unknown> = {}) =>
  coord('work.authorize', g, {workItemId: uuid(7), contract: contract()}, 1, undefined, fields)
const kinds = async (g: string, after: number) => (await suite.store.read(g, after, 100)).events.map((e) => e.kind)
const head = async (g: string) => (await suite.store.head(g))!.sequence

describe('Group-wide unfinished WorkItem limit (§20)', () => {
  it('the soft threshold notifies the Coordinator; above the hard limit work.authorize is RATE_LIMITED and nothing is appended', async () => {
    const g = newGroup('glimit')
    receiptOf(await suite.run(createCommand(g)))
    receiptOf(await suite.run(authorize(g)))
    const before = await head(g)
    receiptOf(await suite.run(authorize(g)))
    expect(await kinds(g, before)).toEqual(['work.authorized', 'ext.missionweaveprotocol.core.soft_limit_reached'])
    const notice = JSON.parse(Buffer.from((await suite.store.read(g, before + 1, 1)).events[0]!.bytes).toString()) as {
      payload: Record<string, unknown>
    }
    expect(notice.payload).toMatchObject({policy: 'group-work-items', count: 2, softLimit: 2, hardLimit: 2})
    const full = await head(g)
    const refused = await suite.run(authorize(g))
    expect(codeOf(refused)).toBe('RATE_LIMITED')
    expect('error' in refused && refused.error.retryable).toBe(true)
    expect(await head(g)).toBe(full)
  })

  it('a Cooperation Override Grant lets exactly the cited work.authorize past the limit; finished work frees room', async () => {
    const g = newGroup('glimit')
    receiptOf(await suite.run(createCommand(g)))
    const [a, b, c] = [uuid(7), uuid(7), uuid(7)]
    const authorizeItem = (workItemId: string, fields: Record<string, unknown> = {}) =>
      coord('work.authorize', g, {workItemId, contract: contract()}, 1, undefined, fields)
    receiptOf(await suite.run(authorizeItem(a)))
    receiptOf(await suite.run(authorizeItem(b)))
    // The MissionOwner grants the Coordinator one more, for one Action ID.
    const actionId = uuid(41)
    const grantId = uuid(40)
    receiptOf(
      await suite.run(
        groupCommand(owner, 'policy.grant_cooperation_override', g, {
          grantId,
          policy: 'group-work-items',
          beneficiary: coordinator.principal,
          targetKind: 'work.authorize',
          targetActionId: actionId,
          reason: 'A release needs one more WorkItem than the Group limit.',
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        }),
      ),
    )
    receiptOf(await suite.run(authorizeItem(c, {actionId, cooperationOverrideGrantId: grantId})))
    expect(codeOf(await suite.run(authorize(g)))).toBe('RATE_LIMITED') // one-shot: the next is limited again
    // Cancelling WorkItems finishes them: below the limit again, new work enters.
    for (const w of [a, b]) receiptOf(await suite.run(coord('work.cancel', g, {workItemId: w, reason: 'descoped'})))
    receiptOf(await suite.run(authorize(g)))
  })

  it('a limits policy without a hard count is refused when the authority opens', () => {
    expect(() =>
      openAuthority({
        store: suite.store,
        registry,
        authorityKey,
        policy: {rootMissionOwners: [], limits: {groupWorkItems: {soft: 3, hard: 2}}},
      }),
    ).toThrow(/limits.groupWorkItems/)
    expect(() =>
      openAuthority({
        store: suite.store,
        registry,
        authorityKey,
        policy: {rootMissionOwners: [], limits: {groupWorkItems: {} as never}},
      }),
    ).toThrow(/limits.groupWorkItems/)
  })
})
