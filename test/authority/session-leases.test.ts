// Session replacement revokes the older session's Execution Leases (spec §6.3, §11.3; ACCEPTANCE
// B6, B9, F6): after the Agent's runtime opens Session Epoch n+1, its Commands at epoch n are
// AUTH_STALE_SESSION, and the new session cannot keep using a lease issued to the old one: opening
// it appended the lease's revocation (session-replacement.test.ts has the rest of B9).

import {describe, expect, it} from 'vitest'
import {submit} from '../../src/authority/ingress/command.js'
import {openSession} from '../../src/authority/ingress/sessions.js'
import {tipOf} from '../../src/authority/ingress/append-pipeline.js'
import {
  authorityOn,
  codeOf,
  contract,
  coord,
  createCommand,
  developer,
  groupCommand,
  newGroup,
  owner,
  post,
  receiptOf,
  sqliteSuite,
  storeWith,
  uuid,
} from '../support/authority-helpers.js'

describe('Execution Leases and Session Epochs', () => {
  const suite = sqliteSuite()

  const run = suite.run
  const as = (sessionEpoch: number) => ({sessionEpoch})

  it('B9 [-cmd:work.checkpoint] a lease issued to Session Epoch 1 is revoked by Session Epoch 2: the old session is AUTH_STALE_SESSION, the new one WORK_LEASE_EXPIRED', async () => {
    const agent = developer.principal!.id
    const s1 = await openSession(suite.authority, agent)
    const g = newGroup('session-lease')
    receiptOf(await run(createCommand(g)))
    receiptOf(await run(groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'})))
    const w = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
    receiptOf(
      await run(
        coord('work.offer', g, {
          workItemId: w,
          candidates: [agent],
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        }),
      ),
    )
    const offerId = (await suite.authority.current(g))!.workItems[w]!.offer!.offerId
    receiptOf(await run(groupCommand(developer, 'work.accept_offer', g, {workItemId: w, offerId}, as(s1))))
    receiptOf(await run(groupCommand(developer, 'work.start', g, {workItemId: w, ownershipEpoch: 1}, as(s1))))
    const lease = (await suite.authority.current(g))!.workItems[w]!.lease!
    expect(lease.sessionEpoch).toBe(s1)
    const checkpoint = (epoch: number) =>
      groupCommand(
        developer,
        'work.checkpoint',
        g,
        {workItemId: w, ownershipEpoch: 1, leaseId: lease.leaseId, progress: 'half', artifactHashes: []},
        as(epoch),
      )

    const opened = (await suite.store.head(g))!.sequence
    const s2 = await openSession(suite.authority, agent)
    expect(s2).toBeGreaterThan(s1)
    const head = (await suite.store.head(g))!.sequence
    expect(head).toBe(opened + 1)
    expect((await suite.authority.current(g))!.workItems[w]).toMatchObject({
      state: 'queued',
      lease: {leaseId: lease.leaseId, state: 'revoked'},
    })
    expect(codeOf(await run(checkpoint(s1)))).toBe('AUTH_STALE_SESSION')
    expect(codeOf(await run(checkpoint(s2)))).toBe('WORK_LEASE_EXPIRED')
    expect((await suite.store.head(g))!.sequence).toBe(head)
  })
})

describe('retries across a session replacement', () => {
  const suite = sqliteSuite()

  it('[+cmd:message.post] an unchanged retry of a Command accepted under Session Epoch 1 gets its original receipt after Session Epoch 2 opened; a new Command at epoch 1 is AUTH_STALE_SESSION (H5, L2)', async () => {
    const agent = developer.principal!.id
    const s1 = await openSession(suite.authority, agent)
    const g = newGroup('session-retry')
    receiptOf(await submit(suite.authority, createCommand(g)))
    receiptOf(
      await submit(
        suite.authority,
        groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'}),
      ),
    )
    const bytes = post(developer, g, {sessionEpoch: s1})
    const first = receiptOf(await submit(suite.authority, bytes))
    await openSession(suite.authority, agent)
    expect(receiptOf(await submit(suite.authority, bytes))).toEqual(first)
    const fresh = post(developer, g, {sessionEpoch: s1})
    expect(codeOf(await submit(suite.authority, fresh))).toBe('AUTH_STALE_SESSION')
  })
})

describe('a retry racing its original on a new session', () => {
  const suite = sqliteSuite()

  it('[+cmd:message.post] the unchanged retry on Session Epoch 2 of a Command whose append under epoch 1 is still committing waits for that append and gets its receipt, not AUTH_STALE_SESSION (H5, L5)', async () => {
    const agent = developer.principal!.id
    const g = newGroup('session-inflight')
    receiptOf(await submit(suite.authority, createCommand(g)))
    receiptOf(
      await submit(
        suite.authority,
        groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'}),
      ),
    )
    // The same store, with its Group appends held until `release`; once `armed`, reading the
    // Session Epoch releases them (a turn of the loop later): the retry is past its receipt lookup
    // and at the epoch check while the original is still uncommitted.
    const store = suite.store
    const org = store.organizationLog()
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let armed = false
    const racing = storeWith(store, {
      append: (...args) => held.then(() => store.append(...args)),
      organizationLog: () => ({
        ...org,
        currentVersion: async (kind, subjectId) => {
          const version = await org.currentVersion(kind, subjectId)
          if (armed) setImmediate(release)
          return version
        },
      }),
    })
    const authority = authorityOn(racing)
    const s1 = await openSession(authority, agent)
    const bytes = post(developer, g, {sessionEpoch: s1})
    const original = submit(authority, bytes)
    while (tipOf(authority, g) === undefined) await new Promise((resolve) => setImmediate(resolve))
    expect(await openSession(authority, agent)).toBe(s1 + 1)
    armed = true
    const retried = await submit(authority, bytes)
    const first = receiptOf(await original)
    expect(receiptOf(retried)).toEqual(first)
    expect((await store.head(g))!.sequence).toBe(first.lastSequence)
  })
})
