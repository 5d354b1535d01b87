// The Coordinator's pure modules one by one, with real parts: the real plan schema, the real
// protocol schema catalog, real /bin/sh child processes for review checks, a real Ed25519 key bound
// in a real registry for the signed Context Package, and the built CLI for the usage errors. The
// planner's decisions are checked on hand-written Group states (a few WorkItems each); the
// end-to-end runs (test/agent/coordinator.test.ts, test/poc/poc-run.test.ts) cover it on Groups
// folded from real Events.

import {spawnSync} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {stringify as toYaml} from 'yaml'
import {type AgentEntry, type RankInput, presenceViews, rank} from '../../src/agent/coordinator/candidates.js'
import {handoverContext, reworkOf, offerContext} from '../../src/agent/coordinator/context.js'
import {DEFAULT_CAPABILITY, contractFor} from '../../src/agent/coordinator/contract.js'
import {type MissionView, handoverOf, newView} from '../../src/agent/coordinator/mission-view.js'
import {type PlanContext, type Step, nextSteps} from '../../src/agent/coordinator/planner.js'
import {type Plan, PlanError, parsePlan, planFor, readPlan} from '../../src/agent/coordinator/plan.js'
import {type Planned, derivedUrn, instantiate, submittedInstances} from '../../src/agent/coordinator/planned.js'
import {type ReviewFile, failures, reviewSubmission} from '../../src/agent/coordinator/review.js'
import type {WorkContract} from '../../src/authority/model/payloads.generated.js'
import type {GroupState, SubmittedEvidence, WorkItemView} from '../../src/authority/model/state.js'
import {generateSigningKey} from '../../src/crypto/keyfile.js'
import {sha256Hex} from '../../src/crypto/hash.js'
import {MwpError} from '../../src/errors.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import type {Principal} from '../../src/signing/profiles.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {addBinding, initRegistry} from '../../src/signing/registry-edit.js'
import {Rejection, verify} from '../../src/signing/verify.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const criterion = (id: string, check?: string) => ({id, description: `criterion ${id}`, ...(check ? {check} : {})})
const item = (key: string, extra: Record<string, unknown> = {}) => ({
  key,
  goal: `Do ${key}`,
  deliverables: [{id: `${key}-out`, description: `${key} output`, mediaType: 'text/plain'}],
  criteria: [criterion(`${key}-ok`)],
  ...extra,
})

/** A plan with every kind of reference, as the user would write it. */
const planDoc = () => ({
  objective: 'Ship the notes',
  defaults: {maxRounds: 2},
  workItems: [
    item('draft'),
    item('polish', {dependsOn: ['draft']}),
    item('review', {dependsOn: ['polish'], inputsFrom: ['draft', 'polish'], independentOf: ['polish']}),
  ],
  onChangeRequest: [
    item('fix', {goal: 'Fix: {reason}', dependsOn: ['polish'], replaces: 'polish'}),
    item('recheck', {dependsOn: ['fix'], independentOf: ['polish']}),
  ],
  submit: ['polish'],
})

type PlanDoc = ReturnType<typeof planDoc>

const planErrorOf = (text: string, where = 'plan.json'): PlanError => {
  try {
    parsePlan(text, where)
  } catch (e) {
    if (e instanceof PlanError) return e
    throw e
  }
  throw new Error('the plan was accepted')
}
const invalid = (mutate: (doc: PlanDoc) => unknown) => planErrorOf(JSON.stringify(mutate(planDoc())))

describe('plan', () => {
  it('parses the same plan from YAML and from JSON', () => {
    const fromJson = parsePlan(JSON.stringify(planDoc()), 'plan.json')
    const fromYaml = parsePlan(toYaml(planDoc()), 'plan.yaml')
    expect({...fromYaml, source: ''}).toEqual({...fromJson, source: ''})
    expect(fromYaml.source).toBe('plan.yaml')
    expect(fromJson.workItems.map((i) => i.key)).toEqual(['draft', 'polish', 'review'])
    // A .yml file is YAML too; the same text under a .json name is not JSON.
    expect(parsePlan(toYaml(planDoc()), 'p.yml').objective).toBe('Ship the notes')
    expect(planErrorOf(toYaml(planDoc()), 'p.json').message).toMatch(/^p\.json cannot be parsed/)
  })

  it('is a usage error (MwpError plan-invalid)', () => {
    const e = invalid((d) => ({...d, extra: 1}))
    expect(e).toBeInstanceOf(MwpError)
    expect(e.code).toBe('plan-invalid')
  })

  const misspelt = (d: PlanDoc) => ({
    ...d,
    workItems: [{...d.workItems[0], dependson: ['x']}, ...d.workItems.slice(1)],
  })

  it('refuses an unknown member, at the top and inside a WorkItem, saying where', () => {
    // (\S* lets the test outlive the fix below, which appends the member's name to the path.)
    expect(invalid((d) => ({...d, owner: 'me'})).message).toMatch(
      /^plan\.json is not a valid plan: \/\S* must NOT have additional properties$/,
    )
    expect(invalid(misspelt).message).toMatch(
      /^plan\.json is not a valid plan: \/workItems\/0\S* must NOT have additional properties$/,
    )
  })

  // Regression: parsePlan formatted schema errors with `instancePath`, which for an unexpected
  // member is its parent object, so a misspelt `dependson` was never named; it uses the
  // SchemaError's `pointer` (/workItems/0/dependson) now.
  it('names the unknown member itself', () => {
    expect(invalid(misspelt).message).toContain('/workItems/0/dependson')
    expect(invalid((d) => ({...d, owner: 'me'})).message).toContain('/owner')
  })

  it('refuses a key used twice, also across the main graph and the corrective WorkItems', () => {
    expect(invalid((d) => ({...d, workItems: [...d.workItems, item('draft')]})).message).toBe(
      'plan.json: the key "draft" is used twice',
    )
    expect(invalid((d) => ({...d, onChangeRequest: [item('polish')]})).message).toContain('"polish" is used twice')
  })

  /** The plan with one more main WorkItem x. */
  const withX = (extra: Record<string, unknown>) => (d: PlanDoc) => ({
    ...d,
    workItems: [...d.workItems, item('x', extra)],
  })
  it.each([
    ['dependsOn', withX({dependsOn: ['nope']})],
    ['inputsFrom', withX({inputsFrom: ['nope']})],
    ['independentOf', withX({independentOf: ['nope']})],
    ['replaces', (d: PlanDoc) => ({...d, onChangeRequest: [item('x', {replaces: 'nope'})]})],
  ])('refuses an unknown %s reference', (_, mutate) => {
    expect(invalid(mutate).message).toBe('plan.json: x names an unknown WorkItem "nope"')
  })

  it('refuses an unknown submit reference, and a main WorkItem depending on a corrective one', () => {
    expect(invalid((d) => ({...d, submit: ['nope']})).message).toBe(
      'plan.json: submit names an unknown WorkItem "nope"',
    )
    // Corrective WorkItems exist only after a change request: the main graph cannot wait for them.
    expect(invalid((d) => ({...d, submit: ['fix']})).message).toContain('submit names an unknown WorkItem "fix"')
    const e = invalid((d) => ({...d, workItems: [...d.workItems, item('x', {dependsOn: ['fix']})]}))
    expect(e.message).toBe('plan.json: x names an unknown WorkItem "fix"')
  })

  it('refuses a dependency cycle and shows its path', () => {
    const e = invalid((d) => ({
      ...d,
      workItems: [item('a', {dependsOn: ['c']}), item('b', {dependsOn: ['a']}), item('c', {dependsOn: ['b']})],
      onChangeRequest: [],
      submit: [],
    }))
    expect(e.message).toBe('plan.json: dependency cycle a → c → b → a')
    const self = invalid((d) => ({...d, workItems: [item('a', {dependsOn: ['a']})], onChangeRequest: [], submit: []}))
    expect(self.message).toContain('dependency cycle a → a')
  })

  it('refuses unparsable YAML and an unreadable file, naming the file', () => {
    expect(planErrorOf('objective: [unclosed', 'bad.yaml').message).toMatch(/^bad\.yaml cannot be parsed: /)
    const missing = join(tmpdir(), `mwp-no-plan-${randomUUID()}.yaml`)
    expect(() => readPlan(missing)).toThrow(new RegExp(`cannot read the plan ${missing}`))
  })

  it('binds a Mission to the plan naming its Mission ID before the one with its objective', () => {
    const byObjective = parsePlan(JSON.stringify(planDoc()), 'a.json')
    const byId = parsePlan(JSON.stringify({...planDoc(), missionId: 'urn:mwp:test:mission:1'}), 'b.json')
    const mission = {missionId: 'urn:mwp:test:mission:1', objective: 'Ship the notes'}
    // A planFor that takes the first plan matching either way picks a.json here and fails.
    expect(planFor([byObjective, byId], mission)).toBe(byId)
    expect(planFor([byObjective, byId], {...mission, missionId: 'urn:mwp:test:mission:2'})).toBe(byObjective)
    // A plan bound to another Mission ID is never used for its objective alone.
    expect(planFor([byId], {...mission, missionId: 'urn:mwp:test:mission:2'})).toBeNull()
    expect(planFor([byObjective], {...mission, objective: 'Something else'})).toBeNull()
  })
})

/** The environment without MWP_* variables, so MWP_PLAN or MWP_CONFIG of the caller cannot change the run. */
const withoutMwpVariables = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MWP_')))

describe('mwp agent run --role coordinator (usage errors before any configuration is read)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-coordunits-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))
  // No configuration exists in `dir`: the plan is checked first, so these must still be exit 2.
  const run = (args: string[]) =>
    spawnSync(process.execPath, [join(PROJECT_ROOT, 'bin/run.js'), 'agent', 'run', '--agent', 'coordinator', ...args], {
      cwd: dir,
      encoding: 'utf8',
      env: {...withoutMwpVariables(), NO_COLOR: '1'},
    })

  it('exits 2 naming the problem of a bad plan', () => {
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, JSON.stringify({...planDoc(), submit: ['nope']}))
    const r = run(['--role', 'coordinator', '--plan', bad, '--config', join(dir, 'mwp.config.json')])
    expect(r.stderr).toContain('submit names an unknown WorkItem "nope"')
    expect(r.status).toBe(2)
  })

  it('exits 2 for a plan file that does not exist', () => {
    const r = run([
      '--role',
      'coordinator',
      '--plan',
      join(dir, 'absent.yaml'),
      '--config',
      join(dir, 'mwp.config.json'),
    ])
    expect(r.stderr).toContain('cannot read the plan')
    expect(r.status).toBe(2)
  })

  it('exits 2 without --plan', () => {
    const r = run(['--role', 'coordinator', '--config', join(dir, 'mwp.config.json')])
    expect(r.stderr).toContain('a coordinator needs at least one --plan FILE')
    expect(r.status).toBe(2)
  })
})

describe('planned', () => {
  const plan = parsePlan(JSON.stringify(planDoc()), 'plan.json')
  const m1 = 'urn:mwp:test:mission:one'
  const m2 = 'urn:mwp:test:mission:two'

  it('derives the same WorkItem IDs for the same Mission, distinct ones for another', () => {
    const a = instantiate(plan, m1, [])
    expect(instantiate(plan, m1, []).map((p) => p.workItemId)).toEqual(a.map((p) => p.workItemId))
    const ids = new Set([...a, ...instantiate(plan, m2, [])].map((p) => p.workItemId))
    expect(ids.size).toBe(2 * a.length)
    for (const p of a)
      expect(p.workItemId).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(derivedUrn('x', 'y')).toBe(derivedUrn('x', 'y'))
    // The parts are separated: ("ab","c") and ("a","bc") must not collide.
    expect(derivedUrn('ab', 'c')).not.toBe(derivedUrn('a', 'bc'))
  })

  it('is the main graph, resolved by key, before any change request', () => {
    const p = instantiate(plan, m1, [])
    expect(p.map((x) => [x.instance, x.round, x.dependsOn, x.inputsFrom, x.independentOf])).toEqual([
      ['draft', 0, [], [], []],
      ['polish', 0, ['draft'], ['draft'], []],
      // inputsFrom given explicitly; otherwise it defaults to dependsOn (polish above).
      ['review', 0, ['polish'], ['draft', 'polish'], ['polish']],
    ])
    expect(submittedInstances(plan, p)).toEqual(['polish'])
  })

  it('adds the corrective WorkItems once per change request, as key.cN with the reason', () => {
    const p = instantiate(plan, m1, ['too long', 'still too long'])
    expect(p.map((x) => x.instance)).toEqual([
      'draft',
      'polish',
      'review',
      'fix.c1',
      'recheck.c1',
      'fix.c2',
      'recheck.c2',
    ])
    const c2 = p.find((x) => x.instance === 'fix.c2')!
    expect([c2.round, c2.reason]).toEqual([2, 'still too long'])
    expect(c2.workItemId).toBe(derivedUrn(m1, 'work-item', 'fix.c2'))
    // Earlier rounds keep their IDs when a later round is added (replay finds them again).
    expect(instantiate(plan, m1, ['too long']).map((x) => x.workItemId)).toEqual(p.slice(0, 5).map((x) => x.workItemId))
  })

  it('resolves later dependents and the submitted set to the replacement', () => {
    const p = instantiate(plan, m1, ['a', 'b'])
    const by = new Map(p.map((x) => [x.instance, x]))
    // fix.c1 replaces polish: it builds on polish itself, its successor round on fix.c1.
    expect(by.get('fix.c1')!.dependsOn).toEqual(['polish'])
    expect(by.get('fix.c2')!.dependsOn).toEqual(['fix.c1'])
    expect(by.get('recheck.c1')!.dependsOn).toEqual(['fix.c1'])
    // independentOf names polish; after the replacement that is the latest fix.
    expect(by.get('recheck.c1')!.independentOf).toEqual(['fix.c1'])
    expect(by.get('recheck.c2')!.independentOf).toEqual(['fix.c2'])
    // submit: [polish] is taken by its latest replacement, fix.c2; recheck replaces nothing, so each round's is added.
    // A submittedInstances that ignores `replaces` would return polish here.
    expect(submittedInstances(plan, p)).toEqual(['recheck.c1', 'fix.c2', 'recheck.c2'])
    expect(submittedInstances(plan, instantiate(plan, m1, ['a']))).toEqual(['fix.c1', 'recheck.c1'])
  })

  it('submits every main WorkItem when the plan names none', () => {
    const {submit: _, ...rest} = planDoc()
    const all = parsePlan(JSON.stringify(rest), 'plan.json')
    expect(submittedInstances(all, instantiate(all, m1, []))).toEqual(['draft', 'polish', 'review'])
    expect(submittedInstances(all, instantiate(all, m1, ['x']))).toEqual(['draft', 'review', 'fix.c1', 'recheck.c1'])
  })
})

describe('contract', () => {
  const plan = parsePlan(JSON.stringify(planDoc()), 'plan.json')
  const catalog = schemaCatalog()
  const now = Date.parse('2026-01-02T03:04:05.678Z')
  const h = (c: string) => `sha256:${sha256Hex(c)}`

  it('is a complete Work Contract, inputs named by file, {reason} substituted', () => {
    const fix = instantiate(plan, 'urn:mwp:test:mission:c', ['make it {reason}-proof'])[3]!
    const c = contractFor(
      plan,
      fix,
      {
        dependencyWorkItemIds: [derivedUrn('d')],
        artifacts: [
          {hash: h('a'), name: {name: 'notes.txt', mediaType: 'text/plain'}},
          {hash: h('b'), name: {name: 'dir/data.json', mediaType: 'application/json'}},
          {hash: h('c')},
          {hash: h('a'), name: {name: 'notes.txt', mediaType: 'text/plain'}},
        ],
      },
      now,
    )
    expect(catalog.validate('work-contract', c)).toEqual({valid: true})
    expect(c.goal).toBe('Fix: make it {reason}-proof')
    expect(c.constraints).toEqual({
      inputFiles: {'notes.txt': h('a'), 'dir/data.json': h('b')},
      plan: {instance: 'fix.c1', round: 1},
    })
    expect(c.inputArtifacts).toEqual([h('a'), h('b'), h('c')])
    expect(c.dependencyWorkItemIds).toEqual([derivedUrn('d')])
    expect(c.requiredCapabilities).toEqual([DEFAULT_CAPABILITY])
    expect(c.deadline).toBe('2026-01-02T04:04:05Z')
    expect(c.acceptanceCriteria).toEqual([
      {criterionId: 'fix-ok', description: 'criterion fix-ok', evidenceRequired: ['deterministic_test']},
    ])
  })

  it('leaves {reason} alone in a main WorkItem and takes the item over the defaults', () => {
    const doc = planDoc()
    doc.workItems[0] = item('draft', {
      goal: 'Keep {reason} literally',
      capability: {id: 'mwp.test.writer', version: '2.1.0'},
      deadlineMinutes: 5,
      constraints: {tone: 'dry'},
    })
    const plan2 = parsePlan(
      JSON.stringify({...doc, defaults: {deadlineMinutes: 90, capability: {id: 'x', version: '1'}}}),
      'p.json',
    )
    const c = contractFor(
      plan2,
      instantiate(plan2, 'urn:mwp:test:mission:c', [])[0]!,
      {dependencyWorkItemIds: [], artifacts: []},
      now,
    )
    expect(catalog.validate('work-contract', c)).toEqual({valid: true})
    expect(c.goal).toBe('Keep {reason} literally')
    expect(c.requiredCapabilities).toEqual([{id: 'mwp.test.writer', version: '2.1.0'}])
    expect(c.deadline).toBe('2026-01-02T03:09:05Z')
    expect(c.constraints).toEqual({tone: 'dry', inputFiles: {}, plan: {instance: 'draft', round: 0}})
  })

  it('is refused by the schema when broken (the validation can fail)', () => {
    const c = contractFor(
      plan,
      instantiate(plan, 'urn:mwp:test:mission:c', [])[0]!,
      {dependencyWorkItemIds: [], artifacts: []},
      now,
    )
    expect(catalog.validate('work-contract', {...c, deadline: 'tomorrow'}).valid).toBe(false)
    const {goal: _, ...noGoal} = c
    expect(catalog.validate('work-contract', noGoal).valid).toBe(false)
  })
})

describe('candidates', () => {
  const cap = {id: 'mwp.test.writer', version: '1.0.0'}
  const agent = (name: string, extra: Partial<AgentEntry> = {}): AgentEntry => ({
    agentId: `urn:mwp:test:agent:${name}`,
    name,
    capabilities: [{...cap, verifiedEvidence: [`urn:mwp:test:evidence:${name}`]}],
    maxConcurrency: 1,
    active: true,
    ...extra,
  })
  const input = (extra: Partial<RankInput> = {}): RankInput => ({
    required: [cap],
    exclude: new Set(),
    load: new Map(),
    cost: 3,
    nowMs: Date.parse('2026-01-01T00:00:00Z'),
    runMs: 60_000,
    ...extra,
  })
  const names = (agents: AgentEntry[], r: Partial<RankInput> = {}) => rank(agents, input(r)).map((x) => x.agent.name)

  it('keeps only active Agents with the capability at the exact version', () => {
    const agents = [
      agent('ok'),
      // A rank that compares ids only (or versions by prefix) offers to this one.
      agent('older', {capabilities: [{id: cap.id, version: '1.0', verifiedEvidence: []}]}),
      agent('newer', {capabilities: [{id: cap.id, version: '1.0.1', verifiedEvidence: []}]}),
      agent('other', {capabilities: [{id: 'mwp.test.painter', version: '1.0.0', verifiedEvidence: []}]}),
      agent('retired', {active: false}),
    ]
    expect(names(agents)).toEqual(['ok'])
    expect(names(agents, {required: [{id: cap.id, version: '1.0.1'}]})).toEqual(['newer'])
    // Every required capability must match, not just one.
    expect(names(agents, {required: [cap, {id: 'mwp.test.painter', version: '1.0.0'}]})).toEqual([])
  })

  it('leaves out excluded Agents', () => {
    expect(names([agent('a'), agent('b')], {exclude: new Set([agent('a').agentId])})).toEqual(['b'])
  })

  it('orders by plan preference (name or ID), then least loaded, then name', () => {
    const agents = [agent('d'), agent('c'), agent('b'), agent('a')]
    const load = new Map([
      [agent('a').agentId, 2],
      [agent('b').agentId, 1],
    ])
    // No preference: c and d have no load (by name), then b (1), then a (2).
    expect(names(agents, {load})).toEqual(['c', 'd', 'b', 'a'])
    // Preference wins over load, in the plan's order, by name or by Agent ID.
    expect(names(agents, {load, prefer: [agent('a').agentId, 'b']})).toEqual(['a', 'b', 'c', 'd'])
    expect(names(agents, {load, prefer: ['nobody']})).toEqual(['c', 'd', 'b', 'a'])
  })

  it('records the selection basis', () => {
    const b = agent('b', {
      maxConcurrency: 2,
      capabilities: [
        {...cap, verifiedEvidence: ['urn:mwp:test:evidence:b']},
        {id: 'mwp.test.other', version: '9', verifiedEvidence: ['urn:mwp:test:evidence:unrelated']},
      ],
    })
    const [first, second] = rank([agent('a'), b], input({prefer: ['b'], load: new Map([[b.agentId, 5]])}))
    expect(first!.agent.name).toBe('b')
    expect(first!.basis).toEqual({
      verifiedMatches: [cap],
      authorizationEligible: true,
      // 5 ahead over 2 slots: two runs of 60 s.
      availabilityEstimate: '2026-01-01T00:02:00Z',
      expectedCost: 3,
      reliabilityEvidence: ['urn:mwp:test:evidence:b'],
      policyRulesApplied: [
        'plan preference #1',
        'capability-match: id and exact version',
        'presence: no fresh record',
        'least-loaded first',
      ],
    })
    expect(second!.basis.availabilityEstimate).toBe('2026-01-01T00:00:00Z')
    expect(second!.basis.policyRulesApplied).toEqual([
      'capability-match: id and exact version',
      'presence: no fresh record',
      'least-loaded first',
    ])
  })

  it('ranks by Presence after preference: free slots, busy, no record, then away / draining / offline', () => {
    const agents = ['free', 'busy', 'unknown', 'offline', 'draining'].map((n) => agent(n))
    const records = [
      {agentId: agent('free').agentId, status: 'online', capacity: {maxSlots: 2, availableSlots: 1, queuedItems: 0}},
      {agentId: agent('busy').agentId, status: 'busy', capacity: {maxSlots: 2, availableSlots: 0, queuedItems: 3}},
      {
        agentId: agent('offline').agentId,
        status: 'offline',
        capacity: {maxSlots: 1, availableSlots: 1, queuedItems: 0},
      },
      {
        agentId: agent('draining').agentId,
        status: 'draining',
        capacity: {maxSlots: 1, availableSlots: 1, queuedItems: 0},
      },
    ]
    const presence = presenceViews(records)
    // Load alone would put 'free' last; Presence ranks before it.
    const load = new Map([[agent('free').agentId, 4]])
    expect(names(agents, {presence, load})).toEqual(['free', 'busy', 'unknown', 'draining', 'offline'])
    // The plan's preference still comes first: an offline Worker may get a durable offer (§10.3).
    expect(names(agents, {presence, prefer: ['offline']})[0]).toBe('offline')
    const [free, busy] = rank(agents, input({presence, load}))
    // A free slot now: available now, whatever the Coordinator's own count says.
    expect(free!.basis.availabilityEstimate).toBe('2026-01-01T00:00:00Z')
    expect(free!.basis.policyRulesApplied).toContain('presence: online, 1 of 2 slots free, 0 queued')
    // 3 queued and no slot free: 4 ahead over 2 slots, two runs of 60 s.
    expect(busy!.basis.availabilityEstimate).toBe('2026-01-01T00:02:00Z')
  })
})

describe('review', () => {
  const file = (name: string, text: string): ReviewFile => ({
    name,
    hash: `sha256:${sha256Hex(text)}`,
    bytes: Buffer.from(text),
  })
  const evidence = (criterionIds: string[], result: SubmittedEvidence['result']): SubmittedEvidence => ({
    evidenceId: derivedUrn('evidence', ...criterionIds, result),
    signingHash: `sha256:${sha256Hex(result)}`,
    type: 'reviewer_assessment',
    subject: {type: 'work_item', id: derivedUrn('w')},
    criterionIds,
    result,
    artifactHashes: [],
    generatedBy: {type: 'agent', id: 'urn:mwp:test:agent:reviewer'},
    createdAt: '2026-01-01T00:00:00Z',
  })
  const review = (over: Partial<Parameters<typeof reviewSubmission>[0]>) =>
    reviewSubmission({
      workItemId: derivedUrn('w'),
      ownershipEpoch: 1,
      submitted: [file('out.txt', 'ok\n')],
      inputs: [],
      criteria: [],
      evidence: [],
      ...over,
    })

  it('runs the checks in a directory holding the submitted files and inputs; the last JSON line is measured', async () => {
    const r = await review({
      submitted: [file('out.txt', 'ok\n'), file('sub/more.txt', 'more\n')],
      inputs: [file('input.txt', 'from the draft\n'), file('out.txt', 'the old out\n')],
      criteria: [
        criterion('says-ok', 'grep -qx ok out.txt'),
        criterion('has-all', 'test -f sub/more.txt && test -f input.txt'),
        criterion('counts', 'echo running; echo \'{"passed":3,"failed":0}\''),
      ],
    })
    expect(r.criteria).toEqual([
      {criterionId: 'says-ok', method: 'check', passed: true, exitCode: 0, output: ''},
      {criterionId: 'has-all', method: 'check', passed: true, exitCode: 0, output: ''},
      {
        criterionId: 'counts',
        method: 'check',
        passed: true,
        exitCode: 0,
        measured: {passed: 3, failed: 0},
        output: 'running\n{"passed":3,"failed":0}\n',
      },
    ])
    expect(r.integrity).toEqual({passed: true, mismatched: []})
    expect(r.verdict).toBe('accept')
    expect(r.artifacts).toEqual([
      {name: 'out.txt', hash: file('out.txt', 'ok\n').hash},
      {name: 'sub/more.txt', hash: file('x', 'more\n').hash},
    ])
    expect(failures(r)).toEqual([])
  })

  it('sends back a failing check with its exit status, output and detail', async () => {
    const r = await review({
      criteria: [
        criterion('says-ok', 'grep -qx ok out.txt'),
        criterion('says-done', 'echo "no done in out.txt" >&2; exit 3'),
        criterion('detail', 'echo \'{"detail":"2 of 5 tests failed"}\'; exit 1'),
        criterion('not-json', 'echo "{not json"; exit 1'),
      ],
    })
    expect(r.verdict).toBe('rework')
    expect(r.criteria.map((c) => [c.criterionId, c.passed, c.exitCode])).toEqual([
      ['says-ok', true, 0],
      ['says-done', false, 3],
      ['detail', false, 1],
      ['not-json', false, 1],
    ])
    expect(r.criteria[3]!.measured).toBeUndefined()
    expect(failures(r)).toEqual(['says-done: no done in out.txt', 'detail: 2 of 5 tests failed', 'not-json: {not json'])
  })

  it('falls back to the submitted Evidence for a criterion without a check', async () => {
    const criteria = [criterion('judged')]
    const verdictWith = async (e: SubmittedEvidence[]) => (await review({criteria, evidence: e})).criteria[0]!
    expect(await verdictWith([evidence(['judged', 'other'], 'passed')])).toEqual({
      criterionId: 'judged',
      method: 'submitted-evidence',
      passed: true,
    })
    // Any Evidence for it that does not say passed fails it; none at all fails it too.
    expect((await verdictWith([evidence(['judged'], 'passed'), evidence(['judged'], 'failed')])).passed).toBe(false)
    expect((await verdictWith([evidence(['judged'], 'inconclusive')])).passed).toBe(false)
    expect((await verdictWith([evidence(['other'], 'passed')])).passed).toBe(false)
    const none = await review({criteria, evidence: []})
    expect(none.verdict).toBe('rework')
    expect(failures(none)).toEqual(['judged: no passing Evidence'])
  })

  it('sends back a submission whose bytes do not match their hash, even when every check passes', async () => {
    const tampered = {...file('out.txt', 'ok\n'), bytes: Buffer.from('ok, changed\n')}
    const r = await review({submitted: [tampered], criteria: [criterion('runs', 'true')]})
    expect(r.criteria[0]!.passed).toBe(true)
    expect(r.integrity).toEqual({passed: false, mismatched: ['out.txt']})
    expect(r.verdict).toBe('rework')
    expect(failures(r)).toEqual(['artifact integrity: out.txt'])
    // An input is checked too.
    const input = {...file('in.txt', 'a'), hash: file('x', 'b').hash}
    expect((await review({inputs: [input]})).integrity.mismatched).toEqual(['in.txt'])
  })

  it('keeps a file named ../x or /x inside the review directory', async () => {
    const marker = `mwp-escape-${randomUUID()}`
    const up = file(`../${marker}`, 'escaped\n')
    const abs = file(join(tmpdir(), `${marker}-abs`), 'escaped too\n')
    const r = await review({
      submitted: [up, abs],
      // Placed under its hash instead of its name: a place() that trusts the name writes into tmpdir().
      criteria: [
        criterion('up-inside', `test -f ${up.hash.replace(':', '-')} && test ! -e ../${marker}`),
        criterion('abs-inside', `test -f ${abs.hash.replace(':', '-')}`),
      ],
    })
    expect(r.criteria.map((c) => [c.criterionId, c.passed])).toEqual([
      ['up-inside', true],
      ['abs-inside', true],
    ])
    const escaped = existsSync(join(tmpdir(), marker))
    rmSync(join(tmpdir(), marker), {force: true}) // left behind only by a broken place()
    expect(escaped).toBe(false)
    expect(existsSync(join(tmpdir(), `${marker}-abs`))).toBe(false)
  })

  it('fails a check that outlives its timeout', async () => {
    const r = await review({criteria: [criterion('slow', 'exec sleep 5')], timeoutMs: 200})
    expect(r.criteria[0]).toMatchObject({passed: false, exitCode: null})
    expect(r.verdict).toBe('rework')
  })
})

// A Group as the Coordinator sees it, written out by hand: folding real Events would need a whole
// authority, and these modules read only a few members. The rest hold what a folded Group would.
const groupStateOf = (
  m: {missionId: string; groupId: string; objective: string; coordinator: string; leaseExpiresAt?: string | null},
  workItems: WorkItemView[],
): GroupState => ({
  groupId: m.groupId,
  missionId: m.missionId,
  revision: 5,
  sequence: 9,
  conversationId: derivedUrn(m.groupId, 'planning'),
  mission: {
    missionId: m.missionId,
    state: 'active',
    missionOwner: {type: 'human', id: 'urn:mwp:test:human:owner'},
    objective: m.objective,
    definitionOfDone: [],
    deadline: '2026-02-01T00:00:00Z',
    budget: {},
    approvalPolicy: {},
    createdAt: '2026-01-01T00:00:00Z',
    coordinator: {
      agentId: m.coordinator,
      coordinatorEpoch: 1,
      leaseId: derivedUrn(m.groupId, 'lease'),
      leaseExpiresAt: m.leaseExpiresAt ?? null,
    },
    submission: null,
  },
  members: {},
  proposals: {},
  workItems: Object.fromEntries(workItems.map((w) => [w.workItemId, w])),
})

const workItemView = (
  p: Planned,
  contract: WorkContract,
  by: Principal,
  over: Partial<WorkItemView> = {},
): WorkItemView => ({
  workItemId: p.workItemId,
  conversationId: derivedUrn(p.workItemId, 'conversation'),
  revision: 3,
  state: 'open',
  exclusive: true,
  contract,
  createdBy: by,
  authorizedBy: by,
  createdAt: '2026-01-01T00:00:00Z',
  offer: null,
  owner: null,
  ownershipEpoch: 0,
  lease: null,
  submission: null,
  checkpoint: null,
  blocker: null,
  executionApproval: null,
  failure: null,
  ...over,
})

const missionView = (state: GroupState): MissionView => {
  const view = newView(state.groupId)
  view.state = state
  view.first = {sequence: 1, eventId: derivedUrn(state.groupId, 'event', 'first')}
  view.last = {sequence: state.sequence, eventId: derivedUrn(state.groupId, 'event', 'last')}
  return view
}

describe('planner', () => {
  const self = 'urn:mwp:test:agent:coordinator'
  const coordinatorPrincipal: Principal = {type: 'agent', id: self}
  const plan = parsePlan(JSON.stringify(planDoc()), 'plan.json')
  const mission = {missionId: 'urn:mwp:test:mission:p', groupId: 'urn:mwp:test:group:p', objective: plan.objective}
  const nowMs = Date.parse('2026-01-01T12:00:00Z')
  const later = '2026-01-01T13:00:00Z'
  const planned = new Map(instantiate(plan, mission.missionId, []).map((p) => [p.instance, p]))
  const at = (instance: string) => planned.get(instance)!
  const contractOf = (instance: string) =>
    contractFor(plan, at(instance), {dependencyWorkItemIds: [], artifacts: []}, nowMs)
  const cap = DEFAULT_CAPABILITY
  const agent = (name: string): AgentEntry => ({
    agentId: `urn:mwp:test:agent:${name}`,
    name,
    capabilities: [{...cap, verifiedEvidence: []}],
    maxConcurrency: 1,
    active: true,
  })
  const agents = [agent('coordinator'), agent('worker-a'), agent('worker-b')]
  const hashOf = (text: string) => `sha256:${sha256Hex(text)}`
  const ctx = (extra: Partial<PlanContext> = {}): PlanContext => ({
    self,
    plans: [plan],
    agents,
    names: new Map([[hashOf('draft'), {name: 'draft.txt', mediaType: 'text/plain'}]]),
    load: new Map(),
    nowMs,
    renewBeforeMs: 60_000,
    runMs: 60_000,
    ...extra,
  })
  const workItemAt = (instance: string, over: Partial<WorkItemView> = {}) =>
    workItemView(at(instance), contractOf(instance), coordinatorPrincipal, over)
  const verified = (instance: string, text: string, author = 'worker-a') =>
    workItemAt(instance, {
      state: 'verified',
      submission: {
        artifactHashes: [hashOf(text)],
        evidence: [
          {
            evidenceId: derivedUrn(instance, 'evidence'),
            signingHash: hashOf(`${instance} evidence`),
            type: 'deterministic_test',
            subject: {type: 'work_item', id: at(instance).workItemId},
            criterionIds: [`${instance}-ok`],
            result: 'passed',
            artifactHashes: [hashOf(text)],
            generatedBy: {type: 'agent', id: agent(author).agentId},
            createdAt: '2026-01-01T11:00:00Z',
          },
        ],
      },
    })
  const steps = (items: WorkItemView[], extra: Partial<PlanContext> = {}, leaseExpiresAt: string | null = later) =>
    nextSteps(ctx(extra), missionView(groupStateOf({...mission, coordinator: self, leaseExpiresAt}, items)))
  const summary = (s: Step) => ('planned' in s ? `${s.kind} ${s.planned.instance}` : s.kind)

  it('does nothing in a Group it does not coordinate, and says so when no plan fits', () => {
    expect(
      nextSteps(ctx({self: agent('worker-a').agentId}), missionView(groupStateOf({...mission, coordinator: self}, []))),
    ).toEqual([])
    expect(steps([], {plans: [{...plan, objective: 'Another objective'}]}).map(summary)).toEqual(['no-plan'])
    // A lease with no expiry yet, or about to run out, is renewed first.
    expect(steps([], {}, null).map(summary)).toEqual(['renew', 'authorize draft'])
    expect(steps([], {}, '2026-01-01T12:00:30Z').map(summary)).toEqual(['renew', 'authorize draft'])
  })

  it('authorizes a WorkItem once its dependencies are verified, with their Artifacts as inputs', () => {
    // Only draft has no dependencies; polish waits for it.
    expect(steps([]).map(summary)).toEqual(['authorize draft'])
    const s = steps([verified('draft', 'draft')])
    expect(s.map(summary)).toEqual(['authorize polish'])
    expect(s[0]).toMatchObject({
      inputs: [{hash: hashOf('draft'), name: {name: 'draft.txt', mediaType: 'text/plain'}}],
      dependencyWorkItemIds: [at('draft').workItemId],
    })
    // A dependency that is only submitted is not enough (a planner that checks for a submission fails here).
    expect(steps([workItemAt('draft', {state: 'submitted'})]).map(summary)).toEqual(['review draft'])
  })

  it('offers an open WorkItem to the best candidate, never to itself nor to the author it must be independent of', () => {
    const open = steps([verified('draft', 'draft'), verified('polish', 'polish', 'worker-a'), workItemAt('review')])
    expect(open.map(summary)).toEqual(['offer review'])
    const offer = open[0]
    if (offer?.kind !== 'offer') throw new Error('no offer')
    // worker-a wrote polish, which review is independentOf: a planner ignoring independentOf offers it to worker-a.
    expect([offer.why, offer.candidate.agent.name]).toEqual(['first', 'worker-b'])
    // Without that constraint worker-a (first by name) gets it; the Coordinator itself never does.
    const first = steps([workItemAt('draft')])[0]
    expect(first?.kind === 'offer' && first.candidate.agent.name).toBe('worker-a')
    expect(steps([workItemAt('draft')], {agents: [agent('coordinator')]}).map(summary)).toEqual([])
  })

  it('sends a failed WorkItem back for rework while rounds are left, then gives it up', () => {
    const failed = workItemAt('draft', {state: 'failed', failure: {reason: 'draft-ok: exit 1', evidenceHashes: []}})
    const withFailures = (n: number) => {
      const view = missionView(groupStateOf({...mission, coordinator: self, leaseExpiresAt: later}, [failed]))
      view.failures.set(
        failed.workItemId,
        Array.from({length: n}, (_, i) => derivedUrn('failed', String(i))),
      )
      return nextSteps(ctx(), view)
    }
    const rework = withFailures(1)[0]
    expect(rework?.kind === 'offer' && rework.why).toBe('rework')
    // The plan's maxRounds is 2.
    expect(withFailures(2).map(summary)).toEqual(['give-up draft'])
  })

  it('submits the planned Artifact set once every WorkItem is verified', () => {
    const all = [verified('draft', 'draft'), verified('polish', 'polish'), verified('review', 'review', 'worker-b')]
    expect(steps(all).at(-1)).toEqual({kind: 'submit', artifactHashes: [hashOf('polish')]})
    expect(steps(all.slice(0, 2)).map(summary)).toEqual(['authorize review'])
  })
})

describe('context', () => {
  const organization = `urn:mwp:test:org:${randomUUID()}`
  const principal = {type: 'agent' as const, id: `${organization}:agent:coordinator`}
  const key = generateSigningKey({keyId: `${organization}:key:coordinator`, principal})
  const registry = RegistryEvidence.fromSnapshot(
    addBinding(initRegistry(organization), {
      keyId: key.keyId,
      principal,
      publicKey: key.publicKeyB64,
      validFrom: '2020-01-01T00:00:00Z',
    }),
  )
  const plan: Plan = parsePlan(JSON.stringify(planDoc()), 'plan.json')
  const missionId = `${organization}:mission:m`
  const groupId = `${organization}:group:g`
  const planned = instantiate(plan, missionId, [])[1]!
  const contract = contractFor(
    plan,
    planned,
    {dependencyWorkItemIds: [], artifacts: [{hash: `sha256:${sha256Hex('in')}`}]},
    Date.parse('2026-01-01T00:00:00Z'),
  )
  const failedEvent = derivedUrn('event', 'failed')
  const reportHash = `sha256:${sha256Hex('report')}`

  const workItem = (failure: WorkItemView['failure']): WorkItemView =>
    workItemView(planned, contract, principal, failure ? {state: 'failed', ownershipEpoch: 1, failure} : {})
  const viewWith = (w: WorkItemView, failedEvents: string[]): MissionView => {
    const view = missionView(
      groupStateOf({missionId, groupId, objective: plan.objective, coordinator: principal.id}, [w]),
    )
    if (failedEvents.length > 0) view.failures.set(w.workItemId, failedEvents)
    return view
  }
  const verified = (doc: Record<string, unknown>) => {
    const v = verify('context-package', Buffer.from(JSON.stringify(doc)), registry)
    if (!v.ok) throw new Error(`the Context Package does not verify: ${JSON.stringify(v)}`)
    return v.document
  }

  it('signs a first offer with no rework decisions, and reworkOf reads it as first work', () => {
    const doc = verified(offerContext(key, viewWith(workItem(null), []), workItem(null)))
    expect(doc).toMatchObject({missionId, groupId, workItemId: planned.workItemId, decisions: []})
    expect(doc.summary).toBe('Do polish')
    expect(doc.artifactHashes).toEqual(contract.inputArtifacts)
    expect(reworkOf(doc)).toBeNull()
    expect(reworkOf(undefined)).toBeNull()
  })

  it('carries the review findings of the last failure, and reworkOf gets them back', () => {
    const w = workItem({reason: 'says-ok: exit 1\n\nartifact integrity: out.txt\n', evidenceHashes: [reportHash]})
    const doc = verified(offerContext(key, viewWith(w, [derivedUrn('event', 'older'), failedEvent]), w))
    expect(doc.summary).toBe('Do polish (rework round 2: the last result did not pass review)')
    expect(doc.decisions).toEqual([
      {description: 'rework round 2: says-ok: exit 1', sourceEventIds: [failedEvent]},
      {description: 'rework round 2: artifact integrity: out.txt', sourceEventIds: [failedEvent]},
    ])
    // A reworkOf that drops the prefix check, or keeps the first round seen, fails here.
    expect(reworkOf(doc)).toEqual({
      round: 2,
      failures: ['says-ok: exit 1', 'artifact integrity: out.txt'],
      artifactHashes: [...contract.inputArtifacts, reportHash],
    })
  })

  it('is refused by the verifier once altered, and by a registry without the key', () => {
    const w = workItem({reason: 'x: exit 1', evidenceHashes: []})
    const doc = offerContext(key, viewWith(w, [failedEvent]), w)
    const altered = Buffer.from(JSON.stringify({...doc, summary: 'Do something else'}))
    expect(verify('context-package', altered, registry).ok).toBe(false)
    const empty = RegistryEvidence.fromSnapshot(initRegistry(organization))
    expect(verify('context-package', Buffer.from(JSON.stringify(doc)), empty).ok).toBe(false)
  })

  it('ignores decisions that are not rework requests', () => {
    expect(reworkOf({decisions: [{description: 'use British spelling', sourceEventIds: []}]})).toBeNull()
    expect(reworkOf({decisions: [{description: 'rework round x: nope'}, {description: 7}]})).toBeNull()
    expect(reworkOf({decisions: 'not a list'})).toBeNull()
  })
})

describe('handover (§7.2)', () => {
  const organization = `urn:mwp:test:org:${randomUUID()}`
  const principal = {type: 'agent' as const, id: `${organization}:agent:coordinator-3`}
  const key = generateSigningKey({keyId: `${organization}:key:coordinator-3`, principal})
  const registry = RegistryEvidence.fromSnapshot(
    addBinding(initRegistry(organization), {
      keyId: key.keyId,
      principal,
      publicKey: key.publicKeyB64,
      validFrom: '2020-01-01T00:00:00Z',
    }),
  )
  const plan = parsePlan(JSON.stringify(planDoc()), 'plan.json')
  const mission = {
    missionId: `${organization}:mission:h`,
    groupId: `${organization}:group:h`,
    objective: plan.objective,
  }
  const replacement = (epoch: number) => {
    const state = groupStateOf({...mission, coordinator: principal.id, leaseExpiresAt: '2099-01-01T00:00:00Z'}, [])
    state.mission.coordinator!.coordinatorEpoch = epoch
    const view = missionView(state)
    view.assignedBy.set(epoch, derivedUrn('assigned', String(epoch)))
    return view
  }
  const ctx = {
    self: principal.id,
    plans: [plan],
    agents: [],
    names: new Map(),
    load: new Map(),
    nowMs: Date.parse('2026-01-01T12:00:00Z'),
    renewBeforeMs: 1000,
    runMs: 1000,
  }

  it('a replacement hands over before anything else, once per epoch; the first Coordinator never does', () => {
    // A planner that lets a replacement assign straight away (no reconciliation record) fails the first line.
    expect(nextSteps(ctx, replacement(2)).map((s) => s.kind)).toEqual(['handover'])
    const done = replacement(2)
    done.handedOver.add(2)
    expect(nextSteps(ctx, done).map((s) => s.kind)).toContain('authorize')
    expect(nextSteps(ctx, replacement(1)).map((s) => s.kind)).not.toContain('handover')
  })

  it('the handover Context Package verifies, is Mission-scoped and cites the assignment', () => {
    const view = replacement(2)
    const doc = handoverContext(key, view)
    const r = verify('context-package', Buffer.from(JSON.stringify(doc)), registry)
    expect(r).not.toBeInstanceOf(Rejection)
    expect(doc.workItemId).toBeUndefined()
    expect((doc.sourceEventRange as {eventIds: string[]}).eventIds).toContain(view.assignedBy.get(2))
    expect(reworkOf(doc)).toBeNull()
  })

  it('reads a handover notice and nothing else', () => {
    const message = (text: string) => ({content: [{type: 'text', text}]})
    const notice = {
      coordinatorHandover: {coordinatorEpoch: 2, contextPackageId: 'urn:uuid:x', contextPackageHash: 'sha256:y'},
    }
    expect(handoverOf(message(JSON.stringify(notice)))).toEqual(notice.coordinatorHandover)
    expect(handoverOf(message('{"coordinatorHandover": {"coordinatorEpoch": "2"}}'))).toBeNull()
    expect(handoverOf(message('hand over, please'))).toBeNull()
  })
})
