// A Mission-level end reaches every unfinished WorkItem of the Agent's queue (spec §10.2 "parent
// Mission failure or cancellation"): the item it was running ends and its lease must stop, the
// Group is marked ended, and a WorkItem that was already finished is left as it was.

import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {AgentStore} from '../../src/agent/local-store.js'
import {coord, groupCommand, owner, sqliteSuite} from '../support/authority-helpers.js'
import {AGENT, deliveredEvents} from '../support/agent-history.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

const suite = sqliteSuite()

async function endedBy(kind: 'mission.cancel' | 'mission.terminate', to: 'cancelled' | 'failed') {
  const g = await missionGroup(suite.run, 'agent-end')
  const d = workDriver(() => suite.authority)
  const done = await d.drive(g, 'verified')
  const running = await d.drive(g, 'active')
  const leaseId = (await d.item(g, running)).lease!.leaseId
  const waiting = await d.drive(g, 'open')
  const end =
    kind === 'mission.cancel'
      ? groupCommand(owner, kind, g, {reason: 'Priorities changed.'})
      : coord(kind, g, {reason: 'Cannot finish.'})
  const r = await suite.run(end)
  if ('error' in r) throw new Error(r.error.code)

  const dir = mkdtempSync(join(tmpdir(), 'mwp-agent-end-'))
  try {
    const s = AgentStore.open(join(dir, 'agent.db'), {agentId: AGENT})
    s.join(g, 0)
    for (const e of await deliveredEvents(suite.store, g)) s.apply(e)
    const authoritative = (await suite.authority.current(g))!.workItems
    expect(s.entry(g, done)).toMatchObject({state: 'verified', revision: authoritative[done]!.revision})
    expect(s.entry(g, running)).toMatchObject({state: to, lease: null, revision: authoritative[running]!.revision})
    expect(s.entry(g, waiting)).toMatchObject({state: to, revision: authoritative[waiting]!.revision})
    expect(s.groups()[0]!.ended).toEqual({
      kind: kind === 'mission.cancel' ? 'mission.cancelled' : 'mission.terminated',
      reason: expect.any(String),
    })
    const intents = s.pendingIntents()
    expect(intents.filter((i) => i.kind === 'stop').map((i) => [i.workItemId, i.payload])).toEqual([
      [
        running,
        {ownershipEpoch: 1, leaseId, cause: kind === 'mission.cancel' ? 'mission.cancelled' : 'mission.terminated'},
      ],
    ])
    expect(intents.filter((i) => i.kind === 'group-ended').length).toBe(1)
    s.close()
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

describe('a Mission end in the Agent’s queue', () => {
  it('mission.cancelled cancels the unfinished WorkItems, stops the running lease and ends the Group', async () => {
    await endedBy('mission.cancel', 'cancelled')
  })
  it('mission.terminated fails the unfinished WorkItems, stops the running lease and ends the Group', async () => {
    await endedBy('mission.terminate', 'failed')
  })
})
