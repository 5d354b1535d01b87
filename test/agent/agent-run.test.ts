// `mwp agent run` end to end: a real authority process, a real Agent process over wss, a
// just-in-time offer, and the README's exec handler driving the WorkItem through start,
// checkpoint, Artifact, Evidence and submission.

import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {contentHash} from '../../src/crypto/hash.js'
import {type AgentOrg, agentOrg, until} from '../support/agent-org.js'
import {PROJECT_ROOT} from '../support/upstream.js'

/** The README's exec handler, as the README shows it. */
const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')
const WORK_SH = /cat > work\.sh <<'SCRIPT'\n([\s\S]*?\n)SCRIPT\n/.exec(readme)![1]!

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
    // §13.1: before submitting, the bytes went to the authority's Artifact store and the signed
    // manifest was published, with the producer's Agent Card and capability versions.
    const published = events.filter((e) => e.kind === 'artifact.published')
    expect(published.map((e) => (e.payload as {artifact: {contentHash: string}}).artifact.contentHash)).toEqual(
      p.artifactHashes,
    )
    expect(events.indexOf(published[0]!)).toBeLessThan(events.indexOf(submitted))
    const manifest = (published[0]!.payload as {artifact: Record<string, unknown>}).artifact
    expect(manifest).toMatchObject({
      mediaType: 'text/markdown',
      sizeBytes: Buffer.byteLength('# Draft the notes\n\nDone.\n'),
      producer: {agentId: worker, agentCardVersion: 1, capabilities: [{id: 'mwp.dev.general-work', version: '1.0.0'}]},
      workItemId: (started.payload as {workItemId: string}).workItemId,
      toolVersions: [{name: 'mwp agent run', version: '0.1.0'}],
    })
    const owner = await o.as('owner')
    expect((await owner.artifacts!.get(groupId, p.artifactHashes[0]!)).toString()).toBe('# Draft the notes\n\nDone.\n')
    // §11.2: the schedule disclosure, posted on acceptance to the WorkItem's Conversation.
    const disclosure = events.find((e) => e.kind === 'message.posted' && e.actor.id === worker)
    expect(disclosure).toBeDefined()
    const message = (disclosure!.payload as {message: {conversationId: string; content: {text: string}[]}}).message
    expect(Object.keys(JSON.parse(message.content[0]!.text))).toEqual(['scheduleEstimate', 'startWindow'])
    const authorized = events.find((e) => e.kind === 'work.authorized')!
    expect(message.conversationId).toBe(
      (authorized.payload as {workItem: {conversationId: string}}).workItem.conversationId,
    )
    expect(JSON.parse(message.content[0]!.text).scheduleEstimate).toMatchObject({capacityStatus: 'available'})
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    // The Presence PINGs (free slots) and every frame were accepted: the server sent no ERROR notice.
    const log = agent
      .out()
      .stderr.split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as {event: string})
    expect(log.filter((l) => l.event === 'notice')).toEqual([])
    expect(log.map((l) => l.event)).toEqual(
      expect.arrayContaining(['connected', 'offer-accepted', 'run-started', 'run-ended']),
    )
  })

  it('declines an offer it has no capability for, with the structured reason in the WorkItem Conversation', async () => {
    const agent = o.agent('worker-1', ['--exec', 'exit 1'])
    const {groupId, missionId} = await o.mission('Translate the notes')
    const worker = `${o.org.organization}:agent:worker-1`
    await o.offerWork(groupId, missionId, worker, {
      requiredCapabilities: [{id: 'mwp.dev.translation', version: '1.0.0'}],
    })
    const events = await until(
      () => o.events(groupId),
      (es) => es.some((e) => e.kind === 'message.posted' && e.actor.id === worker),
      'the decline',
    )
    const text = (events.find((e) => e.kind === 'message.posted')!.payload as {message: {content: {text: string}[]}})
      .message.content[0]!.text
    expect(JSON.parse(text)).toMatchObject({reason: 'capability', detail: 'no capability mwp.dev.translation'})
    expect(events.some((e) => e.kind === 'work.offer.accepted')).toBe(false)
    expect(JSON.stringify(events)).not.toContain('"work.started"')
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
  })

  it('fails the WorkItem with the reason when the authority refuses its submission (no Evidence)', async () => {
    const agent = o.agent('worker-1', ['--exec', `read -r work; echo '{"type":"submit"}'`])
    const {groupId, missionId} = await o.mission('Submit without Evidence')
    const worker = `${o.org.organization}:agent:worker-1`
    await o.offerWork(groupId, missionId, worker)
    const events = await until(
      () => o.events(groupId),
      (es) => es.some((e) => e.kind === 'work.failed'),
      `work.failed (agent stderr: ${agent.out().stderr.slice(-1500)})`,
    )
    const failed = events.find((e) => e.kind === 'work.failed')!
    expect(failed.actor.id).toBe(worker)
    expect((failed.payload as {reason: string}).reason).toBe('the submission was refused: SCHEMA_VALIDATION_FAILED')
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
  })
})
