// A just-in-time Worker (spec §8): its provisional Membership starts at the offer, so its local
// store sees the Group only from there — a WorkItem first seen at work.offer.created, never at
// work.authorized. The projection must carry it through to verified without the earlier history.

import {describe, expect, it} from 'vitest'
import {AgentStore} from '../../src/agent/local-store.js'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {contract, coord, developer, receiptOf, sqliteSuite, uuid} from '../support/authority-helpers.js'
import {AGENT, deliveredEvents} from '../support/agent-history.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

const suite = sqliteSuite()
const pkg = 'urn:mwp:test:context-package:release-notes'

describe('late join from the offer (§8 just-in-time Membership)', () => {
  it('sees Events only from its visibility start and projects the offered WorkItem through to verified', async () => {
    const g = await missionGroup(suite.run, 'agent-jit', {members: []})
    const d = workDriver(() => suite.authority)
    // History the late joiner never sees: the work.authorized of the WorkItem it is offered.
    const w = uuid(7)
    const terms = contract({deadline: '2027-01-20T00:00:00Z'})
    receiptOf(await suite.run(coord('work.authorize', g, {workItemId: w, contract: terms})))
    receiptOf(
      await suite.run(
        coord('work.offer', g, {
          workItemId: w,
          candidates: [AGENT],
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
          contextPackageId: pkg,
        }),
      ),
    )
    const all = await deliveredEvents(suite.store, g)
    const offerEvent = all.find((e) => e.kind === 'work.offer.created')!
    const start = (await suite.authority.current(g))!.members[AGENT]!.visibilityStartSequence
    expect(start).toBe(offerEvent.sequence)

    const dir = mkdtempSync(join(tmpdir(), 'mwp-agent-jit-'))
    try {
      const s = AgentStore.open(join(dir, 'agent.db'), {agentId: AGENT})
      s.join(g, start - 1)
      const visible = await deliveredEvents(suite.store, g, start - 1)
      expect(visible.map((e) => e.kind)).not.toContain('work.authorized')
      for (const e of visible) expect(s.apply(e).applied).toBe(1)
      const offered = s.entry(g, w)!
      expect(offered).toMatchObject({
        state: 'offered',
        offer: {candidate: true, contextPackageId: pkg},
        mine: false,
        missionId: expect.stringMatching(/:mission:/),
      })
      // Once the authority puts the WorkItem's contract into the offer, the late joiner knows it;
      // until then it is null, and nothing else depends on it.
      if (offered.contract === null) {
        expect(offered.deadline).toBeNull()
        expect(offered.conversationId).toBeNull()
      } else {
        expect(offered.deadline).toBe('2027-01-20T00:00:00Z')
        expect(offered.conversationId).toMatch(/./)
      }
      expect(s.groups()[0]).toMatchObject({
        cursor: start,
        visibilityStart: start,
        view: {membership: {state: 'provisional', visibilityStartSequence: start}},
      })
      expect(s.pendingIntents().map((i) => i.kind)).toEqual(['evaluate-offer'])

      await d.advance(g, w, 'offered', 'verified', {worker: developer})
      for (const e of await deliveredEvents(suite.store, g, s.cursor(g)!)) s.apply(e)
      const done = s.entry(g, w)!
      expect(done).toMatchObject({state: 'verified', mine: true, ownershipEpoch: 1})
      // §8: the just-in-time Membership ends with the Worker's last WorkItem; the Group ends for it.
      expect(s.groups()[0]).toMatchObject({view: {membership: {state: 'ended'}}, ended: {kind: 'membership.ended'}})
      // Every situation the run passed through closed (the offer taken, the queued item started,
      // the lease released by the submission): only the end of the Group is left to act on.
      expect(s.pendingIntents().map((i) => i.kind)).toEqual(['group-ended'])
      expect(s.cursor(g)).toBe((await suite.store.head(g))!.sequence)
      s.close()
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
