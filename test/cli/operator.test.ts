// The operator CLI (issue 5) as real subprocesses on a real development Organization: `mwp org
// init`, then mission / command / work / group commands against the embedded SQLite store through
// the local transport (an in-process authority, `--store`). Exit codes: 0 ok, 1 rejected with the
// wire code, 2 usage, 3 environment.

import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {inspectMission} from '../../src/operator/views.js'
import {json, mwp} from '../support/cli.js'
import {
  type OperatorOrg,
  devContract,
  given,
  humanGatedChild,
  inDays,
  givenMission as givenMissionOn,
  keyPath,
  logged as loggedOn,
  opOn,
  operatorOrg,
  text,
} from '../support/operator-helpers.js'

const H1 = `sha256:${'f'.repeat(64)}`

let o: OperatorOrg
let root: string
let org: string
let op: ReturnType<typeof opOn>

beforeAll(async () => {
  o = await operatorOrg('cli-operator')
  ;({root, org} = o)
  op = opOn(o)
}, 60_000)
afterAll(async () => o?.close())

const key = (name: string) => keyPath(o, name)
const givenMission = (objective?: string) => givenMissionOn(o, objective)
const givenSubmission = (g: string) => given(o, 'coordinator', 'mission.submit_for_approval', g, {artifactHashes: [H1]})
const logged = (g: string, kind?: string) => loggedOn(o, g, kind)

function createMission(objective = 'Ship the release notes'): string {
  const r = op(['mission', 'create', '--objective', objective, '--coordinator', 'coordinator', '--json'])
  expect(r.status, r.stderr).toBe(0)
  return json(r).result.groupId as string
}

function submitForApproval(g: string) {
  const r = op(
    [
      'command',
      'issue',
      '--kind',
      'mission.submit_for_approval',
      '--group',
      g,
      '--payload',
      '-',
      '--key',
      key('coordinator'),
      '--json',
    ],
    {input: JSON.stringify({artifactHashes: [H1]})},
  )
  expect(r.status, r.stdout + r.stderr).toBe(0)
  return json(r).result.receipt
}

describe('mwp org init', async () => {
  it('creates keys, registry, signed cards and the config; --json lists paths and principals', async () => {
    const r = mwp([
      'org',
      'init',
      join(root, 'second'),
      '--organization',
      'urn:example:org:acme',
      '--workers',
      '2',
      '--json',
    ])
    expect(r.status, r.stderr).toBe(0)
    const result = json(r).result
    expect(result.organization).toBe('urn:example:org:acme')
    expect(result.identities.map((i: {name: string}) => i.name)).toEqual([
      'organization',
      'authority',
      'admission',
      'owner',
      'coordinator',
      'worker-1',
      'worker-2',
    ])
    for (const i of result.identities) expect(existsSync(join(result.dir, i.keyFile))).toBe(true)
    const check = mwp(['registry', 'check', result.registry, '--json'])
    expect(check.status, check.stdout).toBe(0)
    const config = JSON.parse(readFileSync(result.config, 'utf8'))
    expect(config).toMatchObject({
      organization: 'urn:example:org:acme',
      store: 'sqlite:authority.db',
      policy: {rootMissionOwners: ['urn:example:org:acme:human:owner']},
    })
  })

  it('refuses a non-empty directory (exit 3) unless --force; a bad organization ID is a usage error (exit 2)', async () => {
    const dir = join(root, 'taken')
    expect(mwp(['org', 'init', dir]).status).toBe(0)
    const again = mwp(['org', 'init', dir, '--json'])
    expect(again.status).toBe(3)
    expect(json(again)).toMatchObject({status: 'error', error: {code: 'ENVIRONMENT'}})
    expect(mwp(['org', 'init', dir, '--force']).status).toBe(0)
    expect(mwp(['org', 'init', join(root, 'bad'), '--organization', 'not a uri']).status).toBe(2)
  })
})

describe('mission commands', async () => {
  it('[+cmd:mission.create] [+evt:mission.created] [+row:t7.1:none->active:mission.create] create prints the Group; inspect shows it active with its Coordinator', async () => {
    const g = createMission()
    const r = op(['mission', 'inspect', g, '--json'])
    expect(r.status).toBe(0)
    const view = json(r).result
    expect(view).toMatchObject({
      groupId: g,
      state: 'active',
      objective: 'Ship the release notes',
      coordinator: {agentId: 'urn:mwp:dev:org:local:agent:coordinator', coordinatorEpoch: 1},
    })
    expect((await logged(g)).map((e) => e.kind)).toEqual(['mission.created', 'mission.coordinator.assigned'])
    const text = op(['mission', 'inspect', g])
    expect(text.stdout).toContain('Ship the release notes')
    expect(text.stdout).toContain('0 of 0 verified')
  })

  it('[-cmd:mission.create] [-row:t7.1:none->active:mission.create] a human the policy does not name as root MissionOwner is refused: exit 1 with AUTH_FORBIDDEN', async () => {
    const r = op([
      'mission',
      'create',
      '--objective',
      'x',
      '--coordinator',
      'coordinator',
      '--key',
      key('worker-1'),
      '--json',
    ])
    // An Agent key cannot even sign mission.create (the schema requires a human): usage, nothing sent.
    expect(r.status).toBe(2)
    expect(json(r).error.message).toMatch(/cannot sign/)
    const cfg = JSON.parse(readFileSync(join(org, 'mwp.config.json'), 'utf8'))
    const restricted = join(org, 'restricted.config.json')
    writeFileSync(restricted, JSON.stringify({...cfg, policy: {rootMissionOwners: []}}))
    const refused = mwp([
      'mission',
      'create',
      '--objective',
      'x',
      '--coordinator',
      'coordinator',
      '--json',
      '--config',
      restricted,
      '--store',
      `sqlite:${join(org, 'authority.db')}`,
    ])
    expect(refused.status).toBe(1)
    expect(json(refused)).toMatchObject({status: 'rejected', error: {code: 'AUTH_FORBIDDEN'}})
  })

  it('[+cmd:mission.approve] [+evt:mission.approved] [+row:t7.1:awaiting_approval->approved:mission.approve] approve --yes signs the Approval locally for the submitted revision', async () => {
    const g = await givenMission()
    submitForApproval(g)
    const noConfirm = op(['mission', 'approve', g])
    expect(noConfirm.status).toBe(2) // not a TTY and no --yes: nothing signed
    expect((await logged(g)).at(-1)!.kind).toBe('mission.submitted_for_approval')
    const r = op(['mission', 'approve', g, '--yes', '--json', '--message', 'Checked.'])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    const result = json(r).result
    expect(result.submission.artifactHashes).toEqual([H1])
    const last = (await logged(g)).at(-1)!
    expect(last.kind).toBe('mission.approved')
    expect(last.payload.approval).toMatchObject({
      approvalId: result.approvalId,
      artifactHashes: [H1],
      comments: 'Checked.',
      approver: {id: 'urn:mwp:dev:org:local:human:owner'},
    })
    expect(inspectMission(await logged(g))!.state).toBe('approved')
  })

  it('[-cmd:mission.approve] [-evt:mission.approved] [-row:t7.1:awaiting_approval->approved:mission.approve] nothing awaiting approval is a usage error; a second approval of a terminal Mission is refused with its code', async () => {
    const g = await givenMission()
    const r = op(['mission', 'approve', g, '--yes', '--json'])
    expect(r.status).toBe(2)
    expect(json(r).error.message).toMatch(/nothing awaiting approval/)
    await givenSubmission(g)
    expect(op(['mission', 'approve', g, '--yes']).status).toBe(0)
    const again = op(['mission', 'approve', g, '--yes', '--json'])
    expect(again.status).toBe(1)
    expect(json(again).status).toBe('rejected')
    expect((await logged(g, 'mission.approved')).length).toBe(1)
  })

  it("a child Mission that asks for final human approval (§14): the root human signs with --sign-only, the child's MissionOwner approves with --root-approval", async () => {
    const g = await givenMission()
    const w = 'urn:uuid:bbbbbbbb-0000-4000-8000-000000000001'
    await given(o, 'coordinator', 'work.authorize', g, {
      workItemId: w,
      contract: devContract({goal: 'Draft the notes as a child Mission', deadline: inDays(20)}),
    })
    const {cg, payload} = humanGatedChild(g, w, 'urn:mwp:dev:org:local:agent:worker-1')
    await given(o, 'coordinator', 'mission.create_child', g, payload)
    await given(o, 'worker-1', 'mission.submit_for_approval', cg, {artifactHashes: [H1]})

    // The child's MissionOwner alone is refused: the root human's Approval must come too.
    const alone = op(['mission', 'approve', cg, '--key', key('coordinator'), '--yes', '--json'])
    expect(alone.status, alone.stdout + alone.stderr).toBe(1)
    expect(json(alone)).toMatchObject({status: 'rejected', error: {code: 'INVALID_COMMAND'}})
    // The root human signs without sending: stdout is the Approval alone, the review on stderr.
    const signed = op(['mission', 'approve', cg, '--sign-only', '--yes'])
    expect(signed.status, signed.stderr).toBe(0)
    expect(signed.stderr).toContain(H1)
    const rootApproval = JSON.parse(signed.stdout)
    expect(rootApproval).toMatchObject({
      kind: 'child_mission',
      decision: 'approved',
      groupId: cg,
      artifactHashes: [H1],
      approver: {type: 'human', id: 'urn:mwp:dev:org:local:human:owner'},
    })
    expect((await logged(cg)).at(-1)!.kind).toBe('mission.submitted_for_approval') // nothing was sent
    const file = join(root, 'root-approval.json')
    writeFileSync(file, signed.stdout)
    const r = op(['mission', 'approve', cg, '--key', key('coordinator'), '--root-approval', file, '--yes', '--json'])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    const approved = (await logged(cg)).at(-1)!
    expect(approved.kind).toBe('mission.approved')
    expect(approved.payload).toMatchObject({
      approval: {kind: 'child_mission', approver: {id: 'urn:mwp:dev:org:local:agent:coordinator'}},
      rootApproval: {approvalId: rootApproval.approvalId},
    })
    expect(op(['mission', 'approve', cg, '--sign-only', '--root-approval', file, '--yes']).status).toBe(2) // one or the other
  })

  it('the approval table shows the submitted revision, Artifacts and required Evidence', async () => {
    const g = await givenMission()
    const receipt = await givenSubmission(g)
    const r = op(['mission', 'approve', g, '--yes'])
    expect(r.status).toBe(0)
    expect(r.stdout).toContain(H1)
    expect(r.stdout).toContain('human_review')
    expect(r.stdout).toMatch(new RegExp(`approved revision ${receipt.aggregateRevision - 1}\\b`))
  })

  it('[+cmd:mission.request_changes] [+evt:mission.changes_requested] [+row:t7.1:awaiting_approval->active:mission.request_changes] and [+cmd:mission.cancel] [+evt:mission.cancelled] [+row:t7.1:non_terminal->cancelled:mission.cancel] by the MissionOwner', async () => {
    const g = await givenMission()
    await givenSubmission(g)
    expect(op(['mission', 'request-changes', g, '--message', 'Add the migration notes.']).status).toBe(0)
    expect((await logged(g)).at(-1)).toMatchObject({
      kind: 'mission.changes_requested',
      payload: {reason: 'Add the migration notes.'},
    })
    expect(op(['mission', 'cancel', g, '--message', 'Superseded.', '--yes']).status).toBe(0)
    expect((await logged(g)).at(-1)).toMatchObject({kind: 'mission.cancelled', payload: {reason: 'Superseded.'}})
    expect(inspectMission(await logged(g))!.state).toBe('cancelled')
  })

  it('[-cmd:mission.request_changes] [-row:t7.1:awaiting_approval->active:mission.request_changes] on an active Mission and [-cmd:mission.cancel] [-evt:mission.cancelled] [-row:t7.1:non_terminal->cancelled:mission.cancel] by a worker are refused (exit 1) and append nothing', async () => {
    const g = await givenMission()
    const before = (await logged(g)).length
    const changes = op(['mission', 'request-changes', g, '--message', 'x', '--json'])
    expect(changes.status).toBe(1)
    expect(json(changes).status).toBe('rejected')
    const cancel = op(['mission', 'cancel', g, '--message', 'x', '--yes', '--key', key('coordinator'), '--json'])
    expect(cancel.status).toBe(1)
    expect(json(cancel).error.code).toBe('AUTH_FORBIDDEN')
    expect((await logged(g)).length).toBe(before)
  })

  it('[+cmd:mission.assign_coordinator] [+evt:mission.coordinator.assigned] replace-coordinator moves the lease; the old Coordinator is fenced', async () => {
    const g = await givenMission()
    const r = op(['mission', 'replace-coordinator', g, '--agent', 'worker-1', '--json'])
    expect(r.status, r.stdout).toBe(0)
    expect(inspectMission(await logged(g))!.coordinator).toMatchObject({
      agentId: 'urn:mwp:dev:org:local:agent:worker-1',
      coordinatorEpoch: 2,
    })
    // The old Coordinator, sending with the epoch it held, is refused with the wire code.
    const stale = op(
      [
        'command',
        'issue',
        '--kind',
        'mission.submit_for_approval',
        '--group',
        g,
        '--payload',
        '-',
        '--key',
        key('coordinator'),
        '--coordinator-epoch',
        '1',
        '--json',
      ],
      {input: JSON.stringify({artifactHashes: [H1]})},
    )
    expect(stale.status).toBe(1)
    expect(json(stale).error.code).toBe('AUTH_STALE_COORDINATOR')
  })

  it('[-cmd:mission.assign_coordinator] only the MissionOwner may replace the Coordinator', async () => {
    const g = await givenMission()
    // The builder will not invent a Membership Epoch for a non-member (usage, nothing sent) …
    const r = op(['mission', 'replace-coordinator', g, '--agent', 'worker-1', '--key', key('worker-1'), '--json'])
    expect(r.status).toBe(2)
    expect(json(r).error.message).toMatch(/no Membership/)
    // … and sent anyway with an explicit epoch, the authority refuses it with the wire code.
    const sent = op(
      [
        'command',
        'issue',
        '--kind',
        'mission.assign_coordinator',
        '--group',
        g,
        '--payload',
        '-',
        '--key',
        key('worker-1'),
        '--membership-epoch',
        '1',
        '--session-epoch',
        '1',
        '--json',
      ],
      {
        input: JSON.stringify({agentId: 'urn:mwp:dev:org:local:agent:worker-1'}),
      },
    )
    expect(sent.status).toBe(1)
    expect(json(sent).status).toBe('rejected')
    expect((await logged(g)).length).toBe(2)
    expect(inspectMission(await logged(g))!.coordinator?.coordinatorEpoch).toBe(1)
  })

  it("[+cmd:message.post] [+evt:message.posted] direct posts the MissionOwner's direction into the Group", async () => {
    const g = await givenMission()
    expect(op(['mission', 'direct', g, '--message', 'Prioritize the security notes.']).status).toBe(0)
    const posted = await logged(g, 'message.posted')
    expect(posted).toMatchObject([{actor: {id: 'urn:mwp:dev:org:local:human:owner'}}])
    expect(posted.map(text)).toEqual(['Prioritize the security notes.'])
  })

  it('mission tree shows the root Mission; an unknown Group is GROUP_NOT_FOUND (exit 1) for every view, tail --after and --follow included', async () => {
    const g = await givenMission('Root objective')
    const r = op(['mission', 'tree', g])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toContain('[active] Root objective')
    const missing = 'urn:mwp:dev:org:local:group:missing'
    for (const args of [
      ['mission', 'tree', missing],
      ['mission', 'inspect', missing],
      ['mission', 'approve', missing, '--yes'],
      ['work', 'list', missing],
      ['group', 'tail', missing, '--after', '3'],
      ['group', 'tail', missing, '--follow'],
    ]) {
      const r = op(args)
      expect(r.status, args.join(' ') + r.stderr).toBe(1)
      expect(r.stdout.trim()).toBe('GROUP_NOT_FOUND')
      const j = op([...args, '--json'])
      expect(JSON.parse(j.stdout)).toMatchObject({status: 'rejected', error: {code: 'GROUP_NOT_FOUND'}})
    }
    expect(op(['group', 'tail', g, '--after', '99']).stdout).toBe('') // a known Group with nothing after 99: empty success
    expect(op(['group', 'tail', g, '--after', '99']).status).toBe(0)
  })
})
