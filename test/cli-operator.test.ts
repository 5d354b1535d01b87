// The operator CLI (issue 5) as real subprocesses on a real development Organization: `mwp org
// init`, then mission / command / work / group commands against the embedded SQLite store through
// the local transport (an in-process authority, `--store`). Exit codes: 0 ok, 1 rejected with the
// wire code, 2 usage, 3 environment.

import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {render} from '@inquirer/testing'
import {confirm} from '@inquirer/prompts'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {approvalQuestion} from '../src/operator/prompt.js'
import {json, mwp} from './cli.js'
import {PROJECT_ROOT} from './upstream.js'

const H1 = `sha256:${'f'.repeat(64)}`

let root: string
let org: string
/** Flags every operator call needs here: the org config and the local store. */
let local: string[]

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'mwp-cli-operator-'))
  org = join(root, 'org')
  const r = mwp(['org', 'init', org, '--workers', '1', '--json'])
  if (r.status !== 0) throw new Error(`org init failed: ${r.stdout}${r.stderr}`)
  local = ['--config', join(org, 'mwp.config.json'), '--store', `sqlite:${join(org, 'authority.db')}`]
}, 60_000)
afterAll(() => rmSync(root, {recursive: true, force: true}))

const op = (args: string[], options: {input?: string; env?: NodeJS.ProcessEnv} = {}) => mwp([...args, ...local], options)
const key = (name: string) => join(org, 'keys', `${name}.key.json`)

function createMission(objective = 'Ship the release notes'): string {
  const r = op(['mission', 'create', '--objective', objective, '--coordinator', 'coordinator', '--json'])
  expect(r.status, r.stderr).toBe(0)
  return json(r).result.groupId as string
}

function submitForApproval(g: string) {
  const r = op(['command', 'issue', '--kind', 'mission.submit_for_approval', '--group', g, '--payload', '-', '--key', key('coordinator'), '--json'], {input: JSON.stringify({artifactHashes: [H1]})})
  expect(r.status, r.stdout + r.stderr).toBe(0)
  return json(r).result.receipt
}

function tail(g: string, extra: string[] = []) {
  const r = op(['group', 'tail', g, ...extra])
  expect(r.status, r.stderr).toBe(0)
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as {kind: string; sequence: number; payload: Record<string, unknown>; actor: {id: string}})
}

describe('mwp org init', () => {
  it('creates keys, registry, signed cards and the config; --json lists paths and principals', () => {
    const r = mwp(['org', 'init', join(root, 'second'), '--organization', 'urn:example:org:acme', '--workers', '2', '--json'])
    expect(r.status, r.stderr).toBe(0)
    const result = json(r).result
    expect(result.organization).toBe('urn:example:org:acme')
    expect(result.identities.map((i: {name: string}) => i.name)).toEqual(['organization', 'authority', 'admission', 'owner', 'coordinator', 'worker-1', 'worker-2'])
    for (const i of result.identities) expect(existsSync(join(result.dir, i.keyFile))).toBe(true)
    const check = mwp(['registry', 'check', '--registry', result.registry, '--json'])
    expect(check.status, check.stdout).toBe(0)
    const config = JSON.parse(readFileSync(result.config, 'utf8'))
    expect(config).toMatchObject({organization: 'urn:example:org:acme', store: 'sqlite:authority.db', policy: {rootMissionOwners: ['urn:example:org:acme:human:owner']}})
  })

  it('refuses a non-empty directory (exit 3) unless --force; a bad organization ID is a usage error (exit 2)', () => {
    const dir = join(root, 'taken')
    expect(mwp(['org', 'init', dir]).status).toBe(0)
    const again = mwp(['org', 'init', dir, '--json'])
    expect(again.status).toBe(3)
    expect(json(again)).toMatchObject({status: 'error', error: {code: 'ENVIRONMENT'}})
    expect(mwp(['org', 'init', dir, '--force']).status).toBe(0)
    expect(mwp(['org', 'init', join(root, 'bad'), '--organization', 'not a uri']).status).toBe(2)
  })
})

describe('mission commands', () => {
  it('[+cmd:mission.create] [+evt:mission.created] create prints the Group; inspect shows it active with its Coordinator', () => {
    const g = createMission()
    const r = op(['mission', 'inspect', g, '--json'])
    expect(r.status).toBe(0)
    const view = json(r).result
    expect(view).toMatchObject({groupId: g, state: 'active', objective: 'Ship the release notes', coordinator: {agentId: 'urn:mwp:dev:org:local:agent:coordinator', coordinatorEpoch: 1}})
    expect(tail(g).map((e) => e.kind)).toEqual(['mission.created', 'mission.coordinator.assigned'])
    const text = op(['mission', 'inspect', g])
    expect(text.stdout).toContain('Ship the release notes')
    expect(text.stdout).toContain('0 of 0 verified')
  })

  it('[-cmd:mission.create] a key the policy does not name as root MissionOwner is refused: exit 1 with AUTH_FORBIDDEN', () => {
    const r = op(['mission', 'create', '--objective', 'x', '--coordinator', 'coordinator', '--key', key('worker-1'), '--json'])
    // An Agent key cannot even sign mission.create (the schema requires a human): usage, nothing sent.
    expect(r.status).toBe(2)
    const cfg = JSON.parse(readFileSync(join(org, 'mwp.config.json'), 'utf8'))
    const restricted = join(org, 'restricted.config.json')
    writeFileSync(restricted, JSON.stringify({...cfg, policy: {rootMissionOwners: []}}))
    const refused = mwp(['mission', 'create', '--objective', 'x', '--coordinator', 'coordinator', '--json', '--config', restricted, '--store', `sqlite:${join(org, 'authority.db')}`])
    expect(refused.status).toBe(1)
    expect(json(refused)).toMatchObject({status: 'rejected', error: {code: 'AUTH_FORBIDDEN'}})
  })

  it('[+cmd:mission.approve] [+evt:mission.approved] approve --yes signs the Approval locally for the submitted revision', () => {
    const g = createMission()
    submitForApproval(g)
    const noConfirm = op(['mission', 'approve', g])
    expect(noConfirm.status).toBe(2) // not a TTY and no --yes: nothing signed
    expect(tail(g).at(-1)!.kind).toBe('mission.submitted_for_approval')
    const r = op(['mission', 'approve', g, '--yes', '--json', '--comments', 'Checked.'])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    const result = json(r).result
    expect(result.submission.artifactHashes).toEqual([H1])
    const last = tail(g).at(-1)!
    expect(last.kind).toBe('mission.approved')
    expect(last.payload.approval).toMatchObject({approvalId: result.approvalId, artifactHashes: [H1], comments: 'Checked.', approver: {id: 'urn:mwp:dev:org:local:human:owner'}})
    const text = op(['mission', 'inspect', g])
    expect(text.stdout).toContain('approved')
  })

  it('[-cmd:mission.approve] nothing awaiting approval is a usage error; a second approval of a terminal Mission is refused with its code', () => {
    const g = createMission()
    const r = op(['mission', 'approve', g, '--yes', '--json'])
    expect(r.status).toBe(2)
    expect(json(r).error.message).toMatch(/nothing awaiting approval/)
    submitForApproval(g)
    expect(op(['mission', 'approve', g, '--yes']).status).toBe(0)
    const again = op(['mission', 'approve', g, '--yes', '--json'])
    expect(again.status).toBe(1)
    expect(json(again).status).toBe('rejected')
    expect(tail(g, ['--kind', 'mission.approved']).length).toBe(1)
  })

  it('the approval table shows the submitted revision, Artifacts and required Evidence', () => {
    const g = createMission()
    const receipt = submitForApproval(g)
    const r = op(['mission', 'approve', g, '--yes'])
    expect(r.status).toBe(0)
    expect(r.stdout).toContain(H1)
    expect(r.stdout).toContain('human_review')
    expect(r.stdout).toMatch(new RegExp(`approved revision ${receipt.aggregateRevision - 1}\\b`))
  })

  it('[+cmd:mission.request_changes] [+evt:mission.changes_requested] and [+cmd:mission.cancel] [+evt:mission.cancelled] by the MissionOwner', () => {
    const g = createMission()
    submitForApproval(g)
    expect(op(['mission', 'request-changes', g, '--reason', 'Add the migration notes.']).status).toBe(0)
    expect(tail(g).at(-1)).toMatchObject({kind: 'mission.changes_requested', payload: {reason: 'Add the migration notes.'}})
    expect(op(['mission', 'cancel', g, '--reason', 'Superseded.']).status).toBe(0)
    expect(tail(g).at(-1)).toMatchObject({kind: 'mission.cancelled', payload: {reason: 'Superseded.'}})
    expect(json(op(['mission', 'inspect', g, '--json'])).result.state).toBe('cancelled')
  })

  it('[-cmd:mission.request_changes] on an active Mission and [-cmd:mission.cancel] by a worker are refused (exit 1) and append nothing', () => {
    const g = createMission()
    const before = tail(g).length
    const changes = op(['mission', 'request-changes', g, '--reason', 'x', '--json'])
    expect(changes.status).toBe(1)
    expect(json(changes).status).toBe('rejected')
    const cancel = op(['mission', 'cancel', g, '--reason', 'x', '--key', key('coordinator'), '--json'])
    expect(cancel.status).toBe(1)
    expect(json(cancel).error.code).toBe('AUTH_FORBIDDEN')
    expect(tail(g).length).toBe(before)
  })

  it('[+cmd:mission.assign_coordinator] [+evt:mission.coordinator.assigned] replace-coordinator moves the lease; the old Coordinator is fenced', () => {
    const g = createMission()
    const r = op(['mission', 'replace-coordinator', g, '--agent', 'worker-1', '--json'])
    expect(r.status, r.stdout).toBe(0)
    expect(json(op(['mission', 'inspect', g, '--json'])).result.coordinator).toMatchObject({agentId: 'urn:mwp:dev:org:local:agent:worker-1', coordinatorEpoch: 2})
    // The old Coordinator, sending with the epoch it held, is refused with the wire code.
    const stale = op(['command', 'issue', '--kind', 'mission.submit_for_approval', '--group', g, '--payload', '-', '--key', key('coordinator'), '--coordinator-epoch', '1', '--json'], {input: JSON.stringify({artifactHashes: [H1]})})
    expect(stale.status).toBe(1)
    expect(json(stale).error.code).toBe('AUTH_STALE_COORDINATOR')
  })

  it('[-cmd:mission.assign_coordinator] only the MissionOwner may replace the Coordinator', () => {
    const g = createMission()
    const r = op(['mission', 'replace-coordinator', g, '--agent', 'worker-1', '--key', key('worker-1'), '--json'])
    expect(r.status).toBe(1)
    expect(['AUTH_FORBIDDEN', 'MEMBERSHIP_REQUIRED']).toContain(json(r).error.code)
    expect(json(op(['mission', 'inspect', g, '--json'])).result.coordinator.coordinatorEpoch).toBe(1)
  })

  it('[+cmd:message.post] [+evt:message.posted] direct posts the MissionOwner\'s direction into the Group', () => {
    const g = createMission()
    expect(op(['mission', 'direct', g, '--text', 'Prioritize the security notes.']).status).toBe(0)
    expect(tail(g, ['--kind', 'message.posted'])).toMatchObject([{payload: {text: 'Prioritize the security notes.'}, actor: {id: 'urn:mwp:dev:org:local:human:owner'}}])
  })

  it('mission tree shows the root Mission; an unknown Group is a usage error', () => {
    const g = createMission('Root objective')
    const r = op(['mission', 'tree', g])
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('[active] Root objective')
    expect(op(['mission', 'tree', 'urn:mwp:dev:org:local:group:missing']).status).toBe(2)
    expect(op(['mission', 'inspect', 'urn:mwp:dev:org:local:group:missing']).status).toBe(2)
  })
})

describe('command issue', () => {
  it('[-cmd:message.post] an unknown kind is INVALID_COMMAND (exit 1); a bad payload file is a usage error; a reused actionId returns the same receipt', () => {
    const g = createMission()
    const unknown = op(['command', 'issue', '--kind', 'mission.nonexistent', '--group', g, '--payload', '-', '--json'], {input: '{}'})
    expect(unknown.status).toBe(1)
    expect(json(unknown).error.code).toBe('INVALID_COMMAND')
    expect(op(['command', 'issue', '--kind', 'message.post', '--group', g, '--payload', '-'], {input: '{"text": "a", "text": "b"}'}).status).toBe(2)
    expect(op(['command', 'issue', '--kind', 'message.post', '--group', g, '--payload', join(root, 'missing.json')]).status).toBe(3)
    const first = op(['command', 'issue', '--kind', 'message.post', '--group', g, '--payload', '-', '--action-id', 'urn:uuid:11111111-2222-4333-8444-555555555555', '--json'], {input: '{"text": "once"}'})
    expect(first.status).toBe(0)
    const schemaBad = op(['command', 'issue', '--kind', 'message.post', '--group', g, '--payload', '-', '--json'], {input: '{"text": ""}'})
    expect(schemaBad.status).toBe(1)
    expect(json(schemaBad).error.code).toBe('SCHEMA_VALIDATION_FAILED')
    expect(tail(g, ['--kind', 'message.posted']).length).toBe(1)
  })
})

describe('work and group views', () => {
  it('work list / graph / show derive progress from the WorkItem graph', () => {
    const g = createMission()
    const w1 = 'urn:uuid:aaaaaaaa-0000-4000-8000-000000000001'
    const w2 = 'urn:uuid:aaaaaaaa-0000-4000-8000-000000000002'
    const base = {
      contractVersion: 1,
      goal: 'Draft the notes',
      requiredDeliverables: [{deliverableId: 'notes', description: 'Notes', mediaType: 'text/markdown', schema: 'urn:mwp:dev:schema:notes'}],
      acceptanceCriteria: [{criterionId: 'notes', description: 'Complete', evidenceRequired: ['human_review']}],
      inputArtifacts: [],
      dependencyWorkItemIds: [] as string[],
      allowedResources: [],
      requiredCapabilities: [{id: 'mwp.dev.general-work', version: '1.0.0'}],
      deadline: '2027-01-15T00:00:00Z',
      requestedUrgency: 'normal',
      businessImpact: 'Release',
      retryPolicy: {maxAttempts: 1, backoff: 'fixed', maxDelay: 'PT1M', retryableFailures: []},
      budget: {currency: 'EUR', financialLimit: 5},
      sideEffectRisk: 'none',
      executionApproval: 'not_required',
    }
    for (const [w, deps] of [
      [w1, []],
      [w2, [w1]],
    ] as const) {
      const r = op(['command', 'issue', '--kind', 'work.authorize', '--group', g, '--payload', '-', '--key', key('coordinator')], {input: JSON.stringify({workItemId: w, contract: {...base, dependencyWorkItemIds: deps}})})
      expect(r.status, r.stdout + r.stderr).toBe(0)
    }
    const list = json(op(['work', 'list', g, '--json'])).result
    expect(list.summary).toMatchObject({total: 2, done: 0, criticalPath: [w1, w2]})
    expect(list.items.find((n: {workItemId: string}) => n.workItemId === w2)).toMatchObject({waitingOn: [w1], blockers: [`waits for ${w1}`]})
    const graph = op(['work', 'graph', g])
    expect(graph.stdout).toContain(`critical path: ${w1} -> ${w2}`)
    expect(graph.stdout).not.toMatch(/%/)
    const show = json(op(['work', 'show', g, w2, '--json'])).result
    expect(show).toMatchObject({workItemId: w2, state: 'open', dependsOn: [w1], workItem: {contract: {goal: 'Draft the notes'}}})
    expect(op(['work', 'show', g, 'urn:uuid:00000000-0000-4000-8000-000000000000']).status).toBe(2)
  })

  it('group tail: NDJSON when piped, --after and --kind filter, env twins MWP_CONFIG / MWP_STORE', () => {
    const g = createMission()
    for (const text of ['one', 'two']) expect(op(['mission', 'direct', g, '--text', text]).status).toBe(0)
    const all = tail(g)
    expect(all.map((e) => e.sequence)).toEqual([1, 2, 3, 4])
    expect(tail(g, ['--after', '2']).map((e) => e.sequence)).toEqual([3, 4])
    expect(tail(g, ['--kind', 'mission.']).map((e) => e.kind)).toEqual(['mission.created', 'mission.coordinator.assigned'])
    const viaEnv = mwp(['group', 'tail', g, '--kind', 'message.posted'], {env: {MWP_CONFIG: join(org, 'mwp.config.json'), MWP_STORE: `sqlite:${join(org, 'authority.db')}`}})
    expect(viaEnv.status, viaEnv.stderr).toBe(0)
    expect(viaEnv.stdout.trim().split('\n').map((l) => JSON.parse(l).payload.text)).toEqual(['one', 'two'])
  })

  it('group tail --follow prints new Events as they are accepted and stops on SIGINT', async () => {
    const g = createMission()
    const child = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/run.js'), 'group', 'tail', g, '--follow', '--after', '2', ...local], {env: {...process.env, NO_COLOR: '1'}})
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    // Wait (bounded) until the follower is running, then accept a new Event.
    const until = async (pred: () => boolean) => {
      for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 50))
    }
    expect(op(['mission', 'direct', g, '--text', 'live']).status).toBe(0)
    await until(() => out.includes('"live"'))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    const lines = out.trim().split('\n').map((l) => JSON.parse(l))
    expect(lines.map((e: {sequence: number}) => e.sequence)).toEqual([3])
    expect(lines[0].payload.text).toBe('live')
  })

  it('missing configuration is an environment error (exit 3); no target is a usage error (exit 2)', () => {
    const r = mwp(['mission', 'inspect', 'urn:x:group:g', '--config', join(root, 'absent.json'), '--json'])
    expect(r.status).toBe(3)
    expect(json(r).error.code).toBe('ENVIRONMENT')
    const none = mwp(['mission', 'inspect', 'urn:x:group:g', '--json'], {env: {MWP_CONFIG: '', MWP_STORE: ''}})
    expect(none.status).toBe(2)
  })
})

describe('approval prompt', () => {
  it('asks about the exact revision and defaults to No', async () => {
    const {answer, events, getScreen} = await render(confirm, approvalQuestion('urn:x:mission:m', 7))
    expect(getScreen()).toContain('Approve revision 7 of urn:x:mission:m with your signature?')
    expect(getScreen()).toContain('y/N')
    events.keypress('enter')
    expect(await answer).toBe(false)
    const second = await render(confirm, approvalQuestion('urn:x:mission:m', 7))
    second.events.type('y')
    second.events.keypress('enter')
    expect(await second.answer).toBe(true)
  })
})
