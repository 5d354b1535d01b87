// Behavior rows (behavior/rows.json) of already-implemented transitions whose positive
// or negative case no other test file proves.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityKey,
  codeOf,
  contract,
  coord,
  createCommand,
  developer,
  groupCommand,
  newGroup,
  owner,
  receiptOf,
  registry,
  sqliteStore,
  uuid,
} from '../support/authority-helpers.js'

let store: Store
let cleanup: () => Promise<void>
let authority: Authority
/** The authority clock, moved by the tests (the offer expiry is judged by the authority's time). */
let now = Date.now()

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  authority = openAuthority({
    store,
    registry,
    authorityKey,
    policy: {rootMissionOwners: [owner.principal!.id]},
    clock: () => new Date(now).toISOString(),
  })
}, 60_000)
afterAll(async () => cleanup?.())

const run = (bytes: Buffer) => submit(authority, bytes)

describe('offer expiry (§10.2 offered → offered, no Event)', () => {
  it('[-row:t10.2:offered->offered:offer_expiry] an offer not yet expired by the authority clock is still accepted — expiry never fires early', async () => {
    now = Date.now()
    const g = newGroup('expiry')
    receiptOf(await run(createCommand(g)))
    receiptOf(await run(groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'})))
    const w = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
    const expiresAt = new Date(now + 10_000).toISOString()
    receiptOf(await run(coord('work.offer', g, {workItemId: w, candidates: [developer.principal!.id], expiresAt})))
    const offerId = (await authority.current(g))!.workItems[w]!.offer!.offerId
    // One millisecond before the expiry instant the offer is live.
    now = Date.parse(expiresAt) - 1
    const r = await run(groupCommand(developer, 'work.accept_offer', g, {workItemId: w, offerId}))
    expect(codeOf(r)).toBe('ok')
    expect((await authority.current(g))!.workItems[w]).toMatchObject({
      state: 'queued',
      owner: {agentId: developer.principal!.id},
    })
  })
})
