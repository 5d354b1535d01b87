// `mwp agent run --role coordinator` end to end: a real authority process, a real Coordinator
// process and two real Worker processes over wss. The Coordinator plans a Mission from a plan
// file into WorkItems, offers them by capability and load with a selection basis, feeds each
// WorkItem its dependencies' Artifacts, reviews every submission by running the plan's checks
// on the submitted files, sends a defective result back for rework, and submits the exact
// Artifact set; the human approves it. A change request then reopens the Mission and the plan's
// corrective WorkItem runs before the second submission.

import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type AgentOrg, agentOrg, until} from '../support/agent-org.js'
import type {EventDoc} from '../../src/operator/transport.js'
import {foldGroup} from '../../src/operator/views.js'
import {buildFinalApproval} from '../../src/operator/command-builder.js'

const HANDLER = join(import.meta.dirname, 'fixtures', 'relay-handler.mjs')

const plan = (objective: string) => ({
  objective,
  defaults: {offerSeconds: 20, maxRounds: 3},
  workItems: [
    {
      key: 'draft',
      goal: 'Draft the notes',
      deliverables: [{id: 'draft', description: 'The draft', mediaType: 'text/plain'}],
      criteria: [{id: 'draft-ok', description: 'The draft says ok', check: 'grep -q "^ok" draft.txt'}],
    },
    {
      key: 'polish',
      goal: 'Polish the notes',
      dependsOn: ['draft'],
      deliverables: [{id: 'final', description: 'The final notes', mediaType: 'text/plain'}],
      criteria: [
        {id: 'final-ok', description: 'The notes say ok', check: 'grep -q "^ok" final.txt'},
        {id: 'uses-draft', description: 'The notes include the draft', check: 'grep -q "draft.txt: ok" final.txt'},
      ],
      // The first result is defective: the review's check must catch it and send it back.
      constraints: {defect: true},
    },
  ],
  onChangeRequest: [
    {
      key: 'address',
      goal: 'Address: {reason}',
      dependsOn: ['polish'],
      deliverables: [{id: 'changes', description: 'What changed', mediaType: 'text/plain'}],
      criteria: [{id: 'changes-ok', description: 'Says ok', check: 'grep -q "^ok" changes.txt'}],
    },
  ],
})

let o: AgentOrg
const objective = 'Publish the coordinated notes'
beforeAll(async () => {
  o = await agentOrg('coordinator', {workers: 2})
  writeFileSync(join(o.dir, 'plan.json'), JSON.stringify(plan(objective)))
}, 120_000)
afterAll(() => o?.close())

const kinds = (es: EventDoc[]) => es.map((e) => e.kind)

describe('mwp agent run --role coordinator', () => {
  it('plans, offers, reviews (with a rework round), submits; a change request adds the corrective WorkItem', async () => {
    const coordinator = o.agent('coordinator', ['--role', 'coordinator', '--plan', join(o.dir, 'plan.json')])
    o.agent('worker-1', ['--handler', HANDLER])
    o.agent('worker-2', ['--handler', HANDLER])
    const {groupId} = await o.mission(objective)
    const stderr = () => coordinator.out().stderr.slice(-3000)
    let events = await until(
      () => o.events(groupId),
      (es) => es.some((e) => e.kind === 'mission.submitted_for_approval'),
      `the submission (coordinator stderr: ${stderr()})`,
      1200,
    )
    const state = foldGroup(events)!
    const items = Object.values(state.workItems)
    expect(items.map((w) => w.state)).toEqual(['verified', 'verified'])
    // The defective result was sent back once, by the Coordinator, citing its review report.
    const failed = events.filter((e) => e.kind === 'work.failed')
    expect(failed).toHaveLength(1)
    expect(failed[0]!.actor.id).toBe(`${o.org.organization}:agent:coordinator`)
    expect(String((failed[0]!.payload as {reason: string}).reason)).toMatch(/final-ok/)
    // Every offer recorded a selection basis for its candidate.
    const offers = events.filter((e) => e.kind === 'work.offer.created')
    expect(offers.length).toBeGreaterThanOrEqual(3)
    // The submitted set is exactly the two verified WorkItems' Artifacts.
    const submitted = events.find((e) => e.kind === 'mission.submitted_for_approval')!
    const expected = items.flatMap((w) => w.submission!.artifactHashes).sort()
    expect((submitted.payload as {artifactHashes: string[]}).artifactHashes).toEqual(expected)
    // The polish WorkItem got the draft as input, by name.
    const polish = items.find((w) => w.contract.goal === 'Polish the notes')!
    const draft = items.find((w) => w.contract.goal === 'Draft the notes')!
    expect(polish.contract.inputArtifacts).toEqual(draft.submission!.artifactHashes)
    expect(polish.contract.dependencyWorkItemIds).toEqual([draft.workItemId])

    await o.command('owner', 'mission.request_changes', groupId, {reason: 'mention the date'})
    events = await until(
      () => o.events(groupId),
      (es) => es.filter((e) => e.kind === 'mission.submitted_for_approval').length === 2,
      `the second submission (coordinator stderr: ${stderr()})`,
      1200,
    )
    const reopened = foldGroup(events)!
    const corrective = Object.values(reopened.workItems).find((w) => w.contract.goal === 'Address: mention the date')
    expect(corrective?.state).toBe('verified')
    const owner = o.key('owner')
    const approval = buildFinalApproval(owner, reopened)
    await o.command('owner', 'mission.approve', groupId, {approval})
    expect(kinds(await o.events(groupId))).toContain('mission.approved')
  }, 240_000)
})
