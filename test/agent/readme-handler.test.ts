// The README's module handler, run as written in a real slot process: one Artifact and one
// Evidence per acceptance criterion, a checkpoint after each, and a resumed run that continues
// after the last checkpoint.

import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import type {WorkSpec} from '../../src/agent/handler.js'
import {type SlotReports, startSlot} from '../../src/agent/slots.js'
import type {WorkContract} from '../../src/authority/model/payloads.generated.js'
import {contentHash} from '../../src/crypto/hash.js'
import {contract} from '../support/authority-helpers.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')
const source = /```js\n([\s\S]*?)```/.exec(readme)![1]!
const dir = mkdtempSync(join(tmpdir(), 'mwp-readme-handler-'))
const module = join(dir, 'handler.mjs')
writeFileSync(module, source)
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const criteria = [
  {criterionId: 'listed', description: 'Every change is listed', evidenceRequired: ['deterministic_test']},
  {criterionId: 'linked', description: 'Every change links its issue', evidenceRequired: ['deterministic_test']},
]
const spec = (resume: WorkSpec['resume']): WorkSpec => ({
  groupId: 'urn:mwp:test:group:readme',
  missionId: 'urn:mwp:test:mission:readme',
  workItemId: 'urn:mwp:test:work:readme',
  conversationId: 'urn:mwp:test:conversation:readme',
  ownershipEpoch: 1,
  leaseId: 'urn:mwp:test:lease:readme',
  contract: contract({acceptanceCriteria: criteria}) as unknown as WorkContract,
  resume,
  attempt: 1,
})

function run(resume: WorkSpec['resume']) {
  const seen: {kind: string; value: unknown}[] = []
  const reports: SlotReports = {
    checkpoint: async (state) => (seen.push({kind: 'checkpoint', value: state}), contentHash(JSON.stringify(state))),
    artifact: async (content) => (seen.push({kind: 'artifact', value: content.toString()}), contentHash(content)),
    progress: (p) => seen.push({kind: 'progress', value: p.phase}),
    evidence: (ids, claim) =>
      seen.push({kind: 'evidence', value: {ids, result: claim.result, n: claim.artifactHashes}}),
    usage: () => undefined,
    log: (line) => seen.push({kind: 'log', value: line}),
  }
  return {seen, done: startSlot({module}, spec(resume), dir, reports).done}
}

describe("the README's module handler", () => {
  it('covers every criterion with an Artifact and Evidence, checkpointing after each', async () => {
    const r = run(null)
    expect(await r.done).toEqual({type: 'submit'})
    expect(r.seen.filter((s) => s.kind === 'evidence').map((s) => (s.value as {ids: string[]}).ids)).toEqual([
      ['listed'],
      ['linked'],
    ])
    expect(r.seen.filter((s) => s.kind === 'checkpoint').map((s) => s.value)).toEqual([{done: 1}, {done: 2}])
    expect(r.seen.filter((s) => s.kind === 'artifact').map((s) => s.value)).toEqual([
      'Every change is listed: checked\n',
      'Every change links its issue: checked\n',
    ])
  })

  it('resumed from its checkpoint, does only what is left', async () => {
    const r = run({state: {done: 1}, checkpointHash: contentHash('{"done":1}')})
    expect(await r.done).toEqual({type: 'submit'})
    expect(r.seen.filter((s) => s.kind === 'progress').map((s) => s.value)).toEqual(['checking linked'])
  })
})
