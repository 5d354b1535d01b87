// Context and credential isolation between Groups over real processes (spec §11.1, §12, §16;
// ACCEPTANCE F3, G3): one `mwp agent run` process runs a WorkItem of Group A and one of Group B
// in two slots at the same time. A canary secret in A's Work Contract and A's capability token
// appear zero times in B's slot (what its handler can see), in the Agent's log lines about B, in
// B's Artifacts, and in B's Messages and Events — while A's own probe does see them.

import {createHash, randomUUID} from 'node:crypto'
import {mkdirSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {EventDoc} from '../../src/operator/transport.js'
import {type AgentOrg, agentOrg, until} from '../support/agent-org.js'

const PROBE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'probe-handler.mjs')
const REPO = 'urn:mwp:dev:tool:repo'

let o: AgentOrg
let worker: string
beforeAll(async () => {
  o = await agentOrg('agent-isolation')
  worker = `${o.org.organization}:agent:worker-1`
}, 120_000)
afterAll(() => o?.close())

const submittedHashes = (es: EventDoc[]) =>
  es.filter((e) => e.kind === 'work.submitted').flatMap((e) => (e.payload as {artifactHashes: string[]}).artifactHashes)

describe('mwp agent run: two Groups in two overlapping slots (§11.1, §12)', () => {
  it("a canary in Group A's context and A's capability token reach nothing of Group B", async () => {
    const flagDir = join(o.dir, 'flags')
    mkdirSync(flagDir)
    const canary = `canary-${randomUUID()}`
    const probe = (me: string, other: string) => ({
      extensions: {'urn:mwp:test:probe': {version: '1.0.0', critical: false, data: {me, other, flagDir}}},
    })
    const agent = o.agent('worker-1', ['--handler', PROBE, '--slots', '2'])
    const a = await o.mission('Group A, with a secret')
    const b = await o.mission('Group B')
    const wa = await o.offerWork(a.groupId, a.missionId, worker, {
      goal: `Draft the notes; the vault phrase is ${canary}`,
      allowedResources: [{resource: REPO, operations: ['read']}],
      ...probe('A', 'B'),
    })
    const wb = await o.offerWork(b.groupId, b.missionId, worker, probe('B', 'A'))
    const [ea, eb] = await until(
      () => Promise.all([o.events(a.groupId), o.events(b.groupId)]),
      (es) => es.every((e) => e.some((x) => x.kind === 'work.submitted')),
      `both submissions (agent stderr: ${agent.out().stderr.slice(-3000)})`,
    )
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    const token = readFileSync(join(flagDir, 'A.token'), 'utf8')
    const tokenHash = createHash('sha256').update(token).digest('hex')
    const secrets = [canary, token, tokenHash, token.split('.')[1]!]

    const owner = await o.as('owner')
    const artifact = async (g: string, es: EventDoc[]) =>
      (await owner.artifacts!.get(g, submittedHashes(es)[0]!)).toString('utf8')
    const seenByA = await artifact(a.groupId, ea)
    const seenByB = await artifact(b.groupId, eb)
    // The probe is real: A's slot sees A's context and its own token (as its hash).
    expect(seenByA).toContain(canary)
    expect(seenByA).toContain(tokenHash)
    expect(JSON.parse(seenByA).work.workItemId).toBe(wa)
    expect(JSON.parse(seenByB).work.workItemId).toBe(wb)
    // B's slot (its dump), B's Artifact, B's Events and Messages: none of A's secrets.
    const stderr = agent.out().stderr
    const aboutB = stderr.split('\n').filter((l) => l.includes(wb) || l.includes(b.groupId))
    expect(aboutB.length).toBeGreaterThan(0)
    for (const secret of [...secrets, wa, a.groupId]) {
      expect(seenByB).not.toContain(secret)
      expect(JSON.stringify(eb)).not.toContain(secret)
      expect(aboutB.join('\n')).not.toContain(secret)
    }
    // The token itself is nowhere in any log or Event at all (G3), not even A's.
    expect(stderr).not.toContain(token)
    expect(JSON.stringify(ea)).not.toContain(token)
    expect(JSON.stringify(ea)).not.toContain(wb)
  }, 120_000)
})
