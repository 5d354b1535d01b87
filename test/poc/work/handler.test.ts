// The worker handler driven in-process through a whole Mission's worth of stages, with a small fake
// WorkContext that records what the handler reports (the only fake in this folder): it really
// generates, checks, compiles and tests, stores every file as an Artifact and states Evidence from
// what it measured; it yields at a safe point and resumes without redoing finished steps.

import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {EvidenceClaim, Outcome, Progress, WorkContext} from '../../../src/agent/handler.js'
import {contentHash} from '../../../src/crypto/hash.js'
import {CHECKS} from '../../../src/poc/work/checks.js'
import handler from '../../../src/poc/work/handler.js'
import type {PocStage} from '../../../src/poc/work/stage.js'
import {requirements, sourcePath, testPath} from '../../../src/poc/work/stages.js'
import {blobPath, criterion, spec, type PocWork} from './contracts.js'
import {catalogue, requirementsOf, tempDir} from './layout.js'

interface Recorded {
  outcome: Outcome | void
  artifacts: {hash: string; name: string; mediaType: string; text: string}[]
  evidence: {ids: string[]; claim: EvidenceClaim}[]
  checkpoints: unknown[]
  progress: Progress[]
}

/** Runs the handler once; `yieldAfter` checkpoints in, the fake runtime asks it to yield. */
async function run(work: PocWork, options: {yieldAfter?: number} = {}): Promise<Recorded> {
  const controller = new AbortController()
  const r: Recorded = {outcome: undefined, artifacts: [], evidence: [], checkpoints: [], progress: []}
  const ctx: WorkContext = {
    work,
    workDir: tempDir('slot'),
    signal: controller.signal,
    checkpoint: async (state) => {
      r.checkpoints.push(JSON.parse(JSON.stringify(state)))
      if (r.checkpoints.length === options.yieldAfter) controller.abort('yield')
      return contentHash(JSON.stringify(state))
    },
    progress: (p) => void r.progress.push(p),
    artifact: async (content, meta) => {
      const hash = contentHash(content)
      writeFileSync(blobPath(hash), content)
      r.artifacts.push({hash, name: meta.name ?? '', mediaType: meta.mediaType, text: content.toString()})
      return hash
    },
    evidence: (ids, claim) => void r.evidence.push({ids: [ids].flat(), claim}),
    usage: () => undefined,
    idempotencyKey: (op) => op,
    attemptKey: (op) => `${op}#${work.attempt}`,
  }
  r.outcome = await handler.execute(work, ctx)
  return r
}

const files = (r: Recorded): Record<string, string> => Object.fromEntries(r.artifacts.map((a) => [a.name, a.hash]))
const results = (r: Recorded): Record<string, string> =>
  Object.fromEntries(r.evidence.flatMap((e) => e.ids.map((id) => [id, e.claim.result])))

/** A directory as the Coordinator lays one out for a check: the inputs and the submitted Artifacts by name. */
function submitted(inputs: Record<string, string>, r: Recorded): string {
  const dir = tempDir('coordinator')
  for (const [path, hash] of Object.entries({...inputs, ...files(r)})) {
    mkdirSync(join(dir, path, '..'), {recursive: true})
    writeFileSync(join(dir, path), readFileSync(blobPath(hash)))
  }
  return dir
}

const SEED = 21
const p = catalogue('textkit')
const reqCriteria = requirementsOf(p, SEED).acceptanceCriteria.map((c) => c.criterionId)

describe('the poc worker handler', () => {
  it('does a whole textkit Mission: requirements, tests, a defect caught in review, rework, integration, docs', async () => {
    const base = {project: 'textkit', seed: SEED}
    const req = await run(
      spec({...base, stage: 'requirements', files: {}}, [criterion('requirements', 'schema_validation')]),
    )
    expect(req.outcome).toBeUndefined()
    expect(req.artifacts.map((a) => [a.name, a.mediaType, a.text])).toEqual([
      ['requirements.json', 'application/json', requirements(p, SEED)['requirements.json']],
    ])
    expect(req.evidence).toEqual([
      {
        ids: ['requirements'],
        claim: expect.objectContaining({
          result: 'passed',
          type: 'schema_validation',
          artifactHashes: [req.artifacts[0]!.hash],
        }),
      },
    ])
    expect(req.checkpoints.map((c) => (c as {step: number}).step)).toEqual([1, 2, 3])

    const afterReq = files(req)
    const tests = await run(
      spec(
        {...base, stage: 'tests', files: afterReq},
        reqCriteria.map((id) => criterion(id)),
      ),
    )
    expect(tests.artifacts.map((a) => a.name)).toEqual([testPath('textkit')])
    expect(Object.values(results(tests))).toEqual(reqCriteria.map(() => 'passed'))

    const afterTests = {...afterReq, ...files(tests)}
    const implCriteria = [...reqCriteria, 'typecheck', 'rule'].map((id) => criterion(id))
    const defective = await run(
      spec({...base, stage: 'implement', files: afterTests, defect: 'truncate-off-by-one'}, implCriteria),
    )
    expect(defective.outcome).toBeUndefined()
    expect(defective.artifacts.map((a) => a.name)).toEqual([sourcePath('textkit')])
    const measured = results(defective)
    expect(measured['truncate-cuts-with-ellipsis']).toBe('failed')
    expect(measured).toMatchObject({typecheck: 'passed', rule: 'passed', 'truncate-keeps-short': 'passed'})
    expect(defective.evidence.find((e) => e.ids[0] === 'truncate-cuts-with-ellipsis')?.claim.method).toContain(
      'node --test: test truncate-cuts-with-ellipsis',
    )

    const reviewCriteria = [criterion('review-verdict', 'reviewer_assessment')]
    const rejected = await run(
      spec({...base, stage: 'review', files: {...afterTests, ...files(defective)}}, reviewCriteria),
    )
    expect(rejected.artifacts.map((a) => a.name)).toEqual(['review.json'])
    expect(JSON.parse(rejected.artifacts[0]!.text).verdict).toBe('changes-requested')
    expect(results(rejected)).toEqual({'review-verdict': 'failed'})

    const rework = {round: 1, failures: ['tests: truncate-cuts-with-ellipsis']}
    const fixed = await run(
      spec({...base, stage: 'implement', files: afterTests, defect: 'truncate-off-by-one', rework}, implCriteria),
    )
    expect(Object.values(results(fixed)).every((r) => r === 'passed')).toBe(true)
    const afterImpl = {...afterTests, ...files(fixed)}
    const approved = await run(spec({...base, stage: 'review', files: afterImpl}, reviewCriteria))
    expect(JSON.parse(approved.artifacts[0]!.text).verdict).toBe('approve')
    expect((await CHECKS['review-verdict'](submitted(afterImpl, approved))).passed).toBe(true)

    const integrated = await run(
      spec({...base, stage: 'integrate', files: afterImpl}, [criterion('package', 'artifact_integrity')]),
    )
    expect(integrated.artifacts.map((a) => a.name)).toEqual([
      'dist/textkit.d.ts',
      'dist/textkit.js',
      'integration.json',
      'package.json',
    ])
    expect(results(integrated)).toEqual({package: 'passed'})
    // The Coordinator's own check over the submission agrees with the Evidence.
    const pkg = await CHECKS.package(submitted(afterImpl, integrated))
    expect(pkg.passed).toBe(true)
    expect(pkg.measured.rerunPassed).toBe(reqCriteria.length)

    const docs = await run(spec({...base, stage: 'docs', files: afterReq}, [criterion('readme', 'business_rule')]))
    expect(docs.artifacts.map((a) => a.name)).toEqual(['README.md'])
    expect(results(docs)).toEqual({readme: 'passed'})
    expect((await CHECKS.docs(submitted(afterReq, docs))).passed).toBe(true)
  })

  it('yields at a safe point when preempted and, resumed, finishes without redoing finished steps', async () => {
    const req = await run(spec({project: 'textkit', seed: SEED, stage: 'requirements', files: {}}, []))
    const tests = await run(spec({project: 'textkit', seed: SEED, stage: 'tests', files: files(req)}, []))
    const poc = {project: 'textkit', seed: SEED, stage: 'implement', files: {...files(req), ...files(tests)}, steps: 4}
    const criteria = ['typecheck', 'rule', 'tests'].map((id) => criterion(id))
    const whole = await run(spec(poc, criteria))
    expect(whole.progress.map((s) => s.milestones)).toEqual([1, 2, 3, 4].map((i) => [`step ${i} of 4`]))

    const preempted = await run(spec(poc, criteria), {yieldAfter: 2})
    expect(preempted.outcome).toEqual({type: 'yield'})
    expect(preempted.checkpoints).toHaveLength(2)
    expect(preempted.artifacts).toEqual([])
    expect(preempted.evidence).toEqual([])
    const state = preempted.checkpoints[1]
    expect(state).toMatchObject({step: 2, files: {[sourcePath('textkit')]: expect.any(String)}})

    const resumed = await run(spec(poc, criteria, {state, checkpointHash: contentHash(JSON.stringify(state))}))
    expect(resumed.outcome).toBeUndefined()
    expect(resumed.progress.map((s) => s.milestones)).toEqual([['step 3 of 4'], ['step 4 of 4']])
    expect(resumed.artifacts).toEqual(whole.artifacts)
    expect(resumed.evidence).toEqual(whole.evidence)
  })

  // Regression (PoC run under heavy preemption): a rework offered with the rejected round's last
  // checkpoint as resumeFrom resumed at "all steps done" and submitted the rejected files again.
  it("a rework never resumes from an earlier round's checkpoint: it starts over and fixes the defect", async () => {
    const req = await run(spec({project: 'textkit', seed: SEED, stage: 'requirements', files: {}}, []))
    const tests = await run(spec({project: 'textkit', seed: SEED, stage: 'tests', files: files(req)}, []))
    const poc = {
      project: 'textkit',
      seed: SEED,
      stage: 'implement',
      files: {...files(req), ...files(tests)},
      defect: 'truncate-off-by-one',
    }
    const criteria = ['typecheck', 'rule', 'tests'].map((id) => criterion(id))
    const first = await run(spec(poc, criteria))
    expect(results(first).tests).toBe('failed')
    const last = first.checkpoints.at(-1)
    const resume = {state: last, checkpointHash: contentHash(JSON.stringify(last))}
    const rework = {round: 1, failures: ['tests: truncate-cuts-with-ellipsis']}
    const fixed = await run(spec({...poc, rework}, criteria, resume))
    expect(fixed.progress.length).toBeGreaterThan(0)
    expect(Object.values(results(fixed)).every((r) => r === 'passed')).toBe(true)
    // Within one round a checkpoint is still resumed from (nothing redone).
    const again = await run(spec(poc, criteria, resume))
    expect(again.progress).toEqual([])
  })

  it('preempted after its last step, yields; resumed, only stores the outputs and states the Evidence', async () => {
    const req = await run(spec({project: 'semver-lite', seed: SEED, stage: 'requirements', files: {}}, []))
    const poc = {project: 'semver-lite', seed: SEED, stage: 'docs', files: files(req), steps: 2}
    const preempted = await run(spec(poc, [criterion('docs')]), {yieldAfter: 2})
    expect(preempted.outcome).toEqual({type: 'yield'})
    expect(preempted.artifacts).toEqual([])
    const state = preempted.checkpoints[1]
    const resumed = await run(
      spec(poc, [criterion('docs')], {state, checkpointHash: contentHash(JSON.stringify(state))}),
    )
    expect(resumed.outcome).toBeUndefined()
    expect(resumed.progress).toEqual([])
    expect(resumed.artifacts.map((a) => a.name)).toEqual(['README.md'])
    expect(results(resumed)).toEqual({docs: 'passed'})
  })

  it('refuses an unknown stage, an unknown project or defect and a missing input with a coded failure', async () => {
    const base: Omit<PocStage, 'stage'> = {project: 'textkit', seed: 1, files: {}}
    expect((await run(spec({...base, stage: 'deploy'}, []))).outcome).toMatchObject({
      type: 'fail',
      code: 'POC_UNKNOWN_STAGE',
    })
    expect((await run(spec({...base, stage: 'docs', project: 'leftpad'}, []))).outcome).toMatchObject({
      code: 'POC_UNKNOWN_PROJECT',
    })
    expect((await run(spec({...base, stage: 'implement', defect: 'nope'}, []))).outcome).toMatchObject({
      code: 'POC_UNKNOWN_DEFECT',
    })
    const missing = spec({...base, stage: 'docs', files: {'requirements.json': `sha256:${'1'.repeat(64)}`}}, [])
    expect((await run({...missing, inputs: {}})).outcome).toMatchObject({code: 'POC_MISSING_INPUT'})
    expect((await run(spec({...base, stage: 'docs'}, []))).outcome).toMatchObject({code: 'POC_BAD_INPUT'})
  })
})
