// `mwp agent run` end to end: a real authority process, a real Agent process over wss, a
// just-in-time offer, and the README's exec handler driving the WorkItem through start,
// checkpoint, Artifact, Evidence and submission.

import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {contentHash} from '../../src/crypto/hash.js'
import {type AgentOrg, agentOrg, until} from '../support/agent-org.js'

/** The README's exec handler (kept equal to it by test/project/readme.test.ts). */
export const WORK_SH = `read -r work   # the WorkItem, as one JSON line
goal=$(node -pe 'JSON.parse(process.argv[1]).work.contract.goal' "$work")
criteria=$(node -pe 'JSON.stringify(JSON.parse(process.argv[1]).work.contract.acceptanceCriteria.map(c => c.criterionId))' "$work")
echo '{"type":"progress","phase":"writing","nextCheckpoint":"draft saved"}'
printf '# %s\\n\\nDone.\\n' "$goal" > result.md
echo '{"type":"checkpoint","state":{"draft":"result.md"}}'
echo '{"type":"artifact","path":"result.md","mediaType":"text/markdown"}'
echo "{\\"type\\":\\"evidence\\",\\"criteria\\":$criteria,\\"method\\":\\"wrote result.md\\",\\"result\\":\\"passed\\"}"
echo '{"type":"submit"}'
`

let o: AgentOrg
beforeAll(async () => {
  o = await agentOrg('agent-run')
}, 120_000)
afterAll(() => o?.close())

describe('mwp agent run --exec', () => {
  it('takes a just-in-time offer and submits the script’s Artifact and Evidence under its lease', async () => {
    writeFileSync(join(o.dir, 'work.sh'), WORK_SH)
    const agent = o.agent('worker-1', ['--exec', `bash ${join(o.dir, 'work.sh')}`])
    const {groupId, missionId} = await o.mission('Publish the release notes')
    const worker = `${o.org.organization}:agent:worker-1`
    await o.offerWork(groupId, missionId, worker)
    const events = await until(
      () => o.events(groupId),
      (es) => es.some((e) => e.kind === 'work.submitted'),
      `work.submitted (agent stderr: ${agent.out().stderr.slice(-2000)})`,
    )
    const kinds = events.map((e) => e.kind)
    expect(kinds).toEqual(expect.arrayContaining(['work.offer.accepted', 'work.started', 'work.submitted']))
    const submitted = events.find((e) => e.kind === 'work.submitted')!
    expect(submitted.actor.id).toBe(worker)
    const started = events.find((e) => e.kind === 'work.started')!
    const p = submitted.payload as {
      leaseId: string
      artifactHashes: string[]
      evidence: {document: {criterionIds: string[]}}[]
    }
    expect(p.leaseId).toBe((started.payload as {lease: {leaseId: string}}).lease.leaseId)
    expect(p.artifactHashes).toEqual([contentHash(Buffer.from('# Draft the notes\n\nDone.\n'))])
    expect(p.evidence[0]!.document.criterionIds).toEqual(['notes'])
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
  })
})
