// The proof of concept's worker handler (`mwp agent run --handler dist/src/poc/work/handler.js`):
// it reads the stage its contract asks for (constraints.poc, stage.ts), lays the input files out
// in its working directory, does the stage's work in `steps` safe steps (checkpointing after each,
// yielding at a safe point when preempted), stores every file it made as an Artifact and states
// Evidence for each acceptance criterion from what its checks actually measured.

import {appendFile, mkdir, readFile, writeFile} from 'node:fs/promises'
import {dirname, isAbsolute, join, normalize} from 'node:path'
import {contentHash} from '../../crypto/hash.js'
import type {AgentHandler, EvidenceClaim, Outcome, WorkContext, WorkSpec} from '../../agent/handler.js'
import type {AcceptanceCriterion, EvidenceType} from '../../authority/model/payloads.generated.js'
import {REVIEW_CHECKS, integrate} from './builds.js'
import type {CheckResult} from './check-result.js'
import {CHECKS, declaredTestNames, runSourceTests, testRunResult, type CheckName} from './checks.js'
import {project as catalogueProject, type Project} from './projects.js'
import {parseRequirements, type Requirements} from './requirements.js'
import {reworkOf} from '../../agent/coordinator/context.js'
import {DEFAULT_STEPS, STAGE_NAMES, isRecord, pocStage, type PocStage} from './stage.js'
import {REQUIREMENTS_PATH, docs, implement, requirements, reviewReport, tests, type Files} from './stages.js'
import {writeFiles, type TestRun} from './toolchain.js'

/**
 * One line per run, appended in the run's working directory: which Group's WorkItem ran there. The
 * proof of concept's isolation check reads every slot directory afterwards and must find one
 * WorkItem of one Group in each (a slot's files never reach another Group's run).
 */
export const SLOT_RUNS_FILE = '.mwp-slot-runs.jsonl'

/** What a checkpoint holds: the steps done, the files made so far and what their checks measured. */
interface State {
  /**
   * The rework round the checkpoint was made in (0: the first attempt). A rework never resumes from
   * an earlier round's checkpoint: that one holds the rejected files, all steps done.
   */
  round: number
  step: number
  files: Files
  checks: CheckResult[]
  /** node:test results by test name, from the runs this stage made. */
  tests: Record<string, boolean>
  /** Test names the test files declare (the tests stage cannot run them: no implementation yet). */
  declared: string[]
}

function isState(value: unknown): value is State {
  return (
    isRecord(value) &&
    typeof value.round === 'number' &&
    typeof value.step === 'number' &&
    Number.isSafeInteger(value.step) &&
    isRecord(value.files) &&
    Object.values(value.files).every((v) => typeof v === 'string') &&
    Array.isArray(value.checks) &&
    value.checks.every((c) => isRecord(c) && typeof c.check === 'string' && typeof c.passed === 'boolean') &&
    isRecord(value.tests) &&
    Object.values(value.tests).every((v) => typeof v === 'boolean') &&
    Array.isArray(value.declared) &&
    value.declared.every((v) => typeof v === 'string')
  )
}

/** What a stage's tasks work with. */
interface Job {
  dir: string
  poc: PocStage
  project: Project
  requirements: Requirements | null
}

type Task = (job: Job, state: State) => Promise<void>

function fail(code: string, reason: string): Outcome {
  return {type: 'fail', code, reason}
}

/** A task that writes generated files into the working directory and the state. */
const generate =
  (make: (job: Job, req: Requirements) => Files): Task =>
  async (job, state) => {
    // The handler refuses every stage but requirements without a well-formed requirements.json.
    if (job.requirements === null) return
    const files = make(job, job.requirements)
    await writeFiles(job.dir, files)
    Object.assign(state.files, files)
  }

const check =
  (name: CheckName): Task =>
  async (job, state) => {
    state.checks.push(await CHECKS[name](job.dir))
  }

function recordRun(state: State, run: TestRun): void {
  for (const r of run.results) state.tests[r.name] = r.ok
}

const testRun: Task = async (job, state) => {
  const run = await runSourceTests(job.dir)
  recordRun(state, run)
  state.checks.push(testRunResult('tests', run))
}

/** Each stage's work as an ordered list of tasks; the steps are contiguous runs of them. */
const PLANS: Record<PocStage['stage'], Task[]> = {
  requirements: [
    async (job, state) => {
      const files = requirements(job.project, job.poc.seed)
      await writeFiles(job.dir, files)
      Object.assign(state.files, files)
    },
    check('requirements'),
  ],
  tests: [
    generate((_, req) => tests(req)),
    async (job, state) => {
      state.declared = await declaredTestNames(job.dir)
    },
    check('rule'),
  ],
  implement: [
    generate((job, req) => {
      const options = job.poc.rework === undefined ? {} : {rework: job.poc.rework}
      return implement(req, job.project, job.poc.defect === undefined ? options : {...options, defect: job.poc.defect})
    }),
    check('typecheck'),
    testRun,
    check('rule'),
  ],
  review: [
    // REVIEW_CHECKS, the tests as testRun so that each test's result is kept for the Evidence.
    ...REVIEW_CHECKS.map((name) => (name === 'tests' ? testRun : check(name))),
    async (job, state) => {
      const files = reviewReport(state.checks)
      await writeFiles(job.dir, files)
      Object.assign(state.files, files)
    },
    check('review-verdict'),
  ],
  integrate: [
    async (job, state) => {
      const built = await integrate(job.dir, job.project.name)
      Object.assign(state.files, built.files)
      recordRun(state, built.run)
      state.checks.push({
        check: 'compile',
        passed: built.compileErrors.length === 0,
        measured: {errors: built.compileErrors.length},
        ...(built.compileErrors.length > 0 ? {detail: built.compileErrors.slice(0, 5).join('; ')} : {}),
      })
    },
    check('package'),
  ],
  docs: [generate((job, req) => docs(req, job.project)), check('docs')],
}

/** `tasks` split into `steps` contiguous runs, as even as they go (a run may be empty when steps > tasks). */
function spread<T>(tasks: readonly T[], steps: number): T[][] {
  return Array.from({length: steps}, (_, i) =>
    tasks.slice(Math.floor((i * tasks.length) / steps), Math.floor(((i + 1) * tasks.length) / steps)),
  )
}

function safePath(path: string): boolean {
  const n = normalize(path)
  return path !== '' && !isAbsolute(path) && n === path && !n.startsWith('..') && !path.includes('\\')
}

function mediaType(path: string): string {
  if (path.endsWith('.json')) return 'application/json'
  if (path.endsWith('.md')) return 'text/markdown'
  if (path.endsWith('.js')) return 'text/javascript'
  if (path.endsWith('.ts')) return 'text/x-typescript'
  return 'text/plain'
}

const EVIDENCE_TYPE: Record<string, EvidenceType> = {
  typecheck: 'deterministic_test',
  tests: 'deterministic_test',
  compile: 'deterministic_test',
  rule: 'business_rule',
  docs: 'business_rule',
  requirements: 'schema_validation',
  'review-verdict': 'reviewer_assessment',
  package: 'artifact_integrity',
}

/** evidence.schema.json's bound on `method`. */
const METHOD_MAX = 4000

function summary(c: CheckResult): string {
  const measured = Object.entries(c.measured)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ')
  return `${c.check} ${c.passed ? 'passed' : 'failed'} (${measured})`
}

/** The Evidence one acceptance criterion gets from what the stage measured. */
function claimFor(criterion: AcceptanceCriterion, job: Job, state: State, artifactHashes: string[]): EvidenceClaim {
  const id = criterion.criterionId
  const where = `src/${job.project.name}.ts`
  const ran = state.tests[id]
  if (ran !== undefined)
    return {
      method: `node --test: test ${id} of test/${job.project.name}.test.ts against ${job.poc.stage === 'integrate' ? 'the compiled dist/' : where}`,
      result: ran ? 'passed' : 'failed',
      type: 'deterministic_test',
      artifactHashes,
    }
  if (job.poc.stage === 'tests' && job.requirements?.acceptanceCriteria.some((c) => c.criterionId === id))
    return {
      method: `test/${job.project.name}.test.ts declares a node:test test named ${id} (run once an implementation exists)`,
      result: state.declared.includes(id) ? 'passed' : 'failed',
      type: 'business_rule',
      artifactHashes,
    }
  const named = state.checks.find((c) => c.check === id)
  const typed = criterion.evidenceRequired.flatMap((t) => state.checks.filter((c) => EVIDENCE_TYPE[c.check] === t))
  const basis = named !== undefined ? [named] : typed.length > 0 ? typed : state.checks
  if (basis.length === 0)
    return {method: `poc ${job.poc.stage}: no check measured this`, result: 'inconclusive', artifactHashes}
  const types = new Set<EvidenceType>(basis.map((c) => EVIDENCE_TYPE[c.check] ?? 'deterministic_test'))
  const [onlyType] = types
  return {
    method: `poc ${job.poc.stage} checks: ${basis.map(summary).join('; ')}`.slice(0, METHOD_MAX),
    result: basis.every((c) => c.passed) ? 'passed' : 'failed',
    type: types.size === 1 && onlyType !== undefined ? onlyType : 'deterministic_test',
    artifactHashes,
  }
}

/**
 * The stage as the mwp Coordinator hands it over: the input files by name in
 * `constraints.inputFiles` (coordinator/contract.ts), and a rework request as decisions of the
 * offer's Context Package (coordinator/context.ts reworkOf). What constraints.poc says itself wins.
 */
function fromCoordinator(stage: PocStage, constraints: unknown, contextPackage: WorkSpec['contextPackage']): PocStage {
  const named = isRecord(constraints) && isRecord(constraints.inputFiles) ? constraints.inputFiles : {}
  const files: Record<string, string> = {}
  for (const [name, hash] of Object.entries(named)) if (typeof hash === 'string') files[name] = hash
  const rework = stage.rework ?? reworkOf(contextPackage) ?? undefined
  return {
    ...stage,
    files: {...files, ...stage.files},
    ...(rework !== undefined ? {rework: {round: rework.round, failures: rework.failures}} : {}),
  }
}

/** Copies each input file (content hash => path the runtime gave) into `dir` under its repository path. */
async function materialize(work: WorkSpec, poc: PocStage, dir: string): Promise<Outcome | undefined> {
  for (const [path, hash] of Object.entries(poc.files)) {
    if (!safePath(path)) return fail('POC_BAD_INPUT', `input path ${path} is not a relative repository path`)
    const source = work.inputs?.[hash]
    if (source === undefined) return fail('POC_MISSING_INPUT', `no input file for ${path} (${hash})`)
    const bytes = await readFile(source)
    if (contentHash(bytes) !== hash) return fail('POC_BAD_INPUT', `input file for ${path} does not hash to ${hash}`)
    await mkdir(dirname(join(dir, path)), {recursive: true})
    await writeFile(join(dir, path), bytes)
  }
  return undefined
}

async function execute(work: WorkSpec, ctx: WorkContext): Promise<Outcome | void> {
  const constraints = work.contract.constraints
  const raw = isRecord(constraints) && isRecord(constraints.poc) ? constraints.poc.stage : undefined
  if (typeof raw === 'string' && !(STAGE_NAMES as readonly string[]).includes(raw))
    return fail('POC_UNKNOWN_STAGE', `unknown poc stage ${raw}`)
  const stage = pocStage(constraints)
  if (stage === null) return fail('POC_BAD_CONTRACT', 'the contract has no well-formed constraints.poc')
  const poc = fromCoordinator(stage, constraints, work.contextPackage)
  const project = catalogueProject(poc.project)
  if (project === undefined) return fail('POC_UNKNOWN_PROJECT', `unknown poc project ${poc.project}`)
  if (poc.defect !== undefined && !Object.hasOwn(project.defects, poc.defect))
    return fail('POC_UNKNOWN_DEFECT', `project ${project.name} has no defect ${poc.defect}`)

  // The slot host has already changed into the working directory: a relative workDir is the cwd.
  const dir = isAbsolute(ctx.workDir) ? ctx.workDir : process.cwd()
  await appendFile(
    join(dir, SLOT_RUNS_FILE),
    `${JSON.stringify({groupId: work.groupId, workItemId: work.workItemId})}\n`,
  )
  const refused = await materialize(work, poc, dir)
  if (refused !== undefined) return refused
  let req: Requirements | null = null
  if (poc.stage !== 'requirements') {
    const text = await readFile(join(dir, REQUIREMENTS_PATH), 'utf8').catch(() => '')
    req = parseRequirements(text)
    if (req === null) return fail('POC_BAD_INPUT', `stage ${poc.stage} needs a well-formed ${REQUIREMENTS_PATH} input`)
  }
  const job: Job = {dir, poc, project, requirements: req}

  const resumed = work.resume === null ? undefined : work.resume.state
  const round = poc.rework?.round ?? 0
  const state: State =
    isState(resumed) && resumed.round === round
      ? resumed
      : {round, step: 0, files: {}, checks: [], tests: {}, declared: []}
  await writeFiles(dir, state.files) // a resumed run (perhaps a new slot) continues from the checkpointed files
  const steps = spread(PLANS[poc.stage], poc.steps ?? DEFAULT_STEPS)
  for (let i = state.step; i < steps.length; i++) {
    if (ctx.signal.aborted) return {type: 'yield'} // the last checkpoint is this safe point
    for (const task of steps[i] ?? []) await task(job, state)
    state.step = i + 1
    ctx.progress({phase: poc.stage, milestones: [`step ${i + 1} of ${steps.length}`]})
    await ctx.checkpoint(state)
    if (poc.stepMs) await effort(poc.stepMs, ctx.signal)
  }
  // Preempted after the last step: storing the outputs is all a resumed run has left to do.
  if (ctx.signal.aborted) return {type: 'yield'}

  const inputHashes = [...new Set(Object.values(poc.files))]
  const hashes: string[] = []
  for (const path of Object.keys(state.files).sort()) {
    const meta = {mediaType: mediaType(path), name: path}
    const text = state.files[path] ?? ''
    hashes.push(await ctx.artifact(text, inputHashes.length > 0 ? {...meta, sourceArtifactHashes: inputHashes} : meta))
  }
  const unique = [...new Set(hashes)] // Evidence lists each Artifact once (two files may have equal bytes)
  for (const criterion of work.contract.acceptanceCriteria)
    ctx.evidence(criterion.criterionId, claimFor(criterion, job, state, unique))
}

const handler: AgentHandler = {execute}

export default handler

/** Waits `ms`, or less when the runtime asks the handler to stop (the next step's check yields). */
function effort(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done)
  })
}
