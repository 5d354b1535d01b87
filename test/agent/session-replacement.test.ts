// Session replacement seen by the Agent (spec §11.1, §11.3; ACCEPTANCE B9): the
// ext.missionweaveprotocol.core.lease_revoked Event the authority appends when the Agent opens a
// new session folds, in the Agent's local projection, to its WorkItem queued again — still its
// own, same Ownership Epoch, no lease — with one 'schedule' intent and no 'stop' (which would take
// the re-queued WorkItem out of the Scheduler); the new session's start then asks for 'resume'
// from the checkpoint. A late-joining operator's fold (operator/visible-work.ts) agrees with the
// authority's state.

import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {AgentStore} from '../../src/agent/local-store.js'
import {openSession} from '../../src/authority/ingress/sessions.js'
import {LEASE_REVOKED} from '../../src/authority/model/work-leases.js'
import {visibleWork} from '../../src/operator/visible-work.js'
import type {EventDoc} from '../../src/operator/transport.js'
import {developer, groupCommand, receiptOf, sqliteSuite} from '../support/authority-helpers.js'
import {AGENT, deliveredEvents} from '../support/agent-history.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-agent-b9-'))
})
afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('the Agent projection of a session replacement (B9)', () => {
  const suite = sqliteSuite()
  const work = workDriver(() => suite.authority)

  it('B9 [+evt:ext.missionweaveprotocol.core.lease_revoked] lease_revoked queues the WorkItem again, still mine under the same Ownership Epoch and without a lease: one schedule intent, no stop; the new start asks for resume from the checkpoint; the operator fold agrees', async () => {
    expect(await openSession(suite.authority, AGENT)).toBe(1)
    const g = await missionGroup(suite.run, 'agent-b9')
    const w = await work.drive(g, 'active')
    // A checkpoint and a restart under session 1, so the later start resumes from it.
    const first = (await suite.authority.current(g))!.workItems[w]!.lease!
    const checkpoint = {workItemId: w, ownershipEpoch: 1, leaseId: first.leaseId, progress: 'half', artifactHashes: []}
    receiptOf(await suite.run(groupCommand(developer, 'work.checkpoint', g, checkpoint)))
    receiptOf(await suite.run(groupCommand(developer, 'work.start', g, {workItemId: w, ownershipEpoch: 1})))
    const before = (await suite.store.head(g))!.sequence

    const store = AgentStore.open(join(dir, 'agent.db'), {agentId: AGENT})
    store.join(g, 0)
    for (const e of await deliveredEvents(suite.store, g)) store.apply(e)
    for (const i of store.pendingIntents()) store.resolveIntent(i.id)
    expect(store.entry(g, w)).toMatchObject({state: 'active', mine: true, lease: {leaseId: expect.any(String)}})

    expect(await openSession(suite.authority, AGENT)).toBe(2)
    const revoked = await deliveredEvents(suite.store, g, before)
    expect(revoked.map((e) => e.kind)).toEqual([LEASE_REVOKED])
    for (const e of revoked) store.apply(e)
    const entry = store.entry(g, w)!
    expect(entry).toMatchObject({state: 'queued', mine: true, ownershipEpoch: 1, lease: null})
    expect(entry.owner).toMatchObject({agentId: AGENT, ownershipEpoch: 1, leaseExpiresAt: expect.any(String)})
    expect(entry.checkpoint).toMatchObject({progress: 'half'})
    const intents = store.pendingIntents()
    expect(intents.map((i) => [i.kind, i.workItemId])).toEqual([['schedule', w]])
    store.resolveIntent(intents[0]!.id)

    const started = (await suite.store.head(g))!.sequence
    receiptOf(
      await suite.run(groupCommand(developer, 'work.start', g, {workItemId: w, ownershipEpoch: 1}, {sessionEpoch: 2})),
    )
    for (const e of await deliveredEvents(suite.store, g, started)) store.apply(e)
    const restarted = store.entry(g, w)!
    expect(restarted).toMatchObject({state: 'active', mine: true})
    expect(store.pendingIntents().map((i) => [i.kind, i.payload])).toEqual([
      ['resume', {ownershipEpoch: 1, leaseId: restarted.lease!.leaseId}],
    ])
    store.close()

    // The operator's late-joiner fold, from the WorkItem's first Event on, reaches the authority's state.
    const docs = (await deliveredEvents(suite.store, g)).map((e) => e.document as unknown as EventDoc)
    const fromAuthorize = docs.slice(docs.findIndex((d) => d.kind === 'work.authorized'))
    const folded = visibleWork(fromAuthorize)!.workItems[w]!
    expect(folded).toEqual((await suite.authority.current(g))!.workItems[w]!)
  })
})

describe('the operator fold of a session replacement (B9)', () => {
  const suite = sqliteSuite()
  const work = workDriver(() => suite.authority)

  it('B9 the operator fold of a revocation alone: queued, same owner, lease revoked with when and by which session', async () => {
    expect(await openSession(suite.authority, AGENT)).toBe(1)
    const g = await missionGroup(suite.run, 'operator-b9')
    const w = await work.drive(g, 'active')
    expect(await openSession(suite.authority, AGENT)).toBe(2)
    const docs = (await deliveredEvents(suite.store, g)).map((e) => e.document as unknown as EventDoc)
    const item = visibleWork(docs.slice(docs.findIndex((d) => d.kind === 'work.authorized')))!.workItems[w]!
    expect(item).toMatchObject({
      state: 'queued',
      owner: {agentId: AGENT, ownershipEpoch: 1},
      lease: {state: 'revoked', sessionEpoch: 1, revocation: {reason: 'session-replaced', sessionEpoch: 2}},
    })
  })
})
