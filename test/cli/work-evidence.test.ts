// The Evidence a WorkItem is submitted with (§10.2, §13.2) as an operator sees it: a real `mwp org
// init` Organization and its embedded SQLite store; the Worker's work.submit goes through `mwp
// command issue` as a subprocess, and `mwp mission inspect` / `mwp work show` (subprocesses too)
// show the Evidence, its producer and hash, and which Evidence covers each acceptance criterion.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {readKeyFile} from '../../src/crypto/keyfile.js'
import {foldGroup} from '../../src/operator/views.js'
import {sign} from '../../src/signing/sign.js'
import {json} from '../support/cli.js'
import {evidenceDoc} from '../support/evidence.js'
import {
  ORG,
  type OperatorOrg,
  devContract,
  devSelectionBasis,
  given,
  givenMission,
  keyPath,
  logged,
  opOn,
  operatorOrg,
} from '../support/operator-helpers.js'

const H1 = `sha256:${'f'.repeat(64)}`
const WORKER = `${ORG}:agent:worker-1`

let o: OperatorOrg
let op: ReturnType<typeof opOn>
beforeAll(async () => {
  o = await operatorOrg('cli-evidence')
  op = opOn(o)
}, 60_000)
afterAll(async () => o?.close())

const twoCriteria = devContract({
  acceptanceCriteria: [
    {criterionId: 'notes', description: 'Every change is listed', evidenceRequired: ['deterministic_test']},
    {criterionId: 'links', description: 'Every change links its issue', evidenceRequired: ['human_review']},
  ],
})

/** A Mission with WorkItem `w` authorized, offered to worker-1, accepted and started; returns the Group and lease. */
async function activeWork(w: string): Promise<{g: string; leaseId: string}> {
  const g = await givenMission(o)
  await given(o, 'owner', 'membership.change', g, {member: {type: 'agent', id: WORKER}, role: 'worker'})
  await given(o, 'coordinator', 'work.authorize', g, {workItemId: w, contract: twoCriteria})
  await given(o, 'coordinator', 'work.offer', g, {
    workItemId: w,
    candidates: [WORKER],
    expiresAt: new Date(Date.now() + 600_000).toISOString(),
    selectionBasis: devSelectionBasis(WORKER),
  })
  const offered = foldGroup(await logged(o, g))!.workItems[w]!
  await given(o, 'worker-1', 'work.accept_offer', g, {workItemId: w, offerId: offered.offer!.offerId})
  await given(o, 'worker-1', 'work.start', g, {workItemId: w, ownershipEpoch: 1})
  return {g, leaseId: foldGroup(await logged(o, g))!.workItems[w]!.lease!.leaseId}
}

/** `mwp command issue --kind work.submit` by worker-1 with `evidence`. */
const issueSubmit = (g: string, w: string, leaseId: string, evidence: unknown[]) =>
  op(
    [
      'command',
      'issue',
      '--kind',
      'work.submit',
      '--group',
      g,
      '--payload',
      '-',
      '--key',
      keyPath(o, 'worker-1'),
      '--json',
    ],
    {input: JSON.stringify({workItemId: w, ownershipEpoch: 1, leaseId, artifactHashes: [H1], evidence})},
  )

describe('work.submit Evidence through the operator CLI', () => {
  it('[+cmd:work.submit] [+row:t10.2:active->submitted:work.submit] the submitted Evidence appears in mwp mission inspect, mwp work show and the final approval review, mapped to the acceptance criteria', async () => {
    const w = 'urn:uuid:eeeeeeee-0000-4000-8000-000000000001'
    const {g, leaseId} = await activeWork(w)
    const worker = readKeyFile(keyPath(o, 'worker-1'))
    const tests = evidenceDoc(worker, {
      missionId: foldGroup(await logged(o, g))!.missionId,
      groupId: g,
      workItemId: w,
      criterionIds: ['notes', 'links'],
      artifactHashes: [H1],
    })
    const r = issueSubmit(g, w, leaseId, [tests])
    expect(r.status, r.stdout + r.stderr).toBe(0)

    const inspect = op(['mission', 'inspect', g, '--json'])
    expect(inspect.status, inspect.stderr).toBe(0)
    const signingHash = sign('evidence', tests, worker).signingHash
    expect(json(inspect).result.workEvidence).toEqual([
      {
        workItemId: w,
        state: 'submitted',
        artifactHashes: [H1],
        evidence: [
          {
            evidenceId: tests.evidenceId,
            signingHash,
            type: 'deterministic_test',
            subject: {type: 'work_item', id: w},
            criterionIds: ['notes', 'links'],
            result: 'passed',
            artifactHashes: [H1],
            generatedBy: {type: 'agent', id: WORKER},
            createdAt: tests.createdAt,
          },
        ],
        criteria: [
          {
            criterionId: 'notes',
            description: 'Every change is listed',
            evidenceRequired: ['deterministic_test'],
            coveredBy: [tests.evidenceId],
          },
          {
            criterionId: 'links',
            description: 'Every change links its issue',
            evidenceRequired: ['human_review'],
            coveredBy: [tests.evidenceId],
          },
        ],
      },
    ])
    const text = op(['mission', 'inspect', g])
    expect(text.status, text.stderr).toBe(0)
    for (const shown of [
      tests.evidenceId as string,
      signingHash,
      WORKER,
      'deterministic_test',
      'Every change links its issue',
    ])
      expect(text.stdout).toContain(shown)

    const show = op(['work', 'show', g, w])
    expect(show.status, show.stderr).toBe(0)
    expect(show.stdout).toContain(tests.evidenceId as string)
    expect(show.stdout).toContain(signingHash)

    // The Coordinator accepts the result and submits the Mission: the final Approval's review
    // names the Evidence behind each Artifact and prints the Evidence itself (§13.2 step 5).
    await given(o, 'coordinator', 'work.accept_result', g, {workItemId: w})
    await given(o, 'coordinator', 'mission.submit_for_approval', g, {artifactHashes: [H1]})
    const review = json(op(['mission', 'inspect', g, '--json'])).result
    expect(review.submission.evidence).toEqual([
      {artifactHash: H1, producedBy: [{workItemId: w, state: 'verified'}], evidenceIds: [tests.evidenceId]},
    ])
    expect(review.workEvidence[0].state).toBe('verified')
    const approve = op(['mission', 'approve', g, '--yes'])
    expect(approve.status, approve.stderr).toBe(0)
    expect(approve.stdout).toContain(tests.evidenceId as string)
    expect(approve.stdout).toContain(signingHash)
  })

  it('[-cmd:work.submit] [-row:t10.2:active->submitted:work.submit] Evidence missing for a criterion: exit 1, INVALID_COMMAND saying which, nothing appended and nothing shown', async () => {
    const w = 'urn:uuid:eeeeeeee-0000-4000-8000-000000000002'
    const {g, leaseId} = await activeWork(w)
    const worker = readKeyFile(keyPath(o, 'worker-1'))
    const missionId = foldGroup(await logged(o, g))!.missionId
    const partial = evidenceDoc(worker, {
      missionId,
      groupId: g,
      workItemId: w,
      criterionIds: ['notes'],
      artifactHashes: [H1],
    })
    const before = (await logged(o, g)).length
    const r = issueSubmit(g, w, leaseId, [partial])
    expect(r.status, r.stdout + r.stderr).toBe(1)
    expect(json(r)).toMatchObject({status: 'rejected', error: {code: 'INVALID_COMMAND'}})
    expect(json(r).error.details.detail).toContain('links')
    expect((await logged(o, g)).length).toBe(before)
    const inspect = op(['mission', 'inspect', g, '--json'])
    expect(json(inspect).result.workEvidence).toEqual([])
  })
})
