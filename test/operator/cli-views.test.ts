// The operator CLI (issue 5), second half: `mwp command issue`, `mwp work …`, `mwp group tail`
// and the approval prompt, as real subprocesses on a `mwp org init` Organization, against the embedded SQLite store through
// the local transport (an in-process authority, `--store`). Exit codes: 0 ok, 1 rejected with the
// wire code, 2 usage, 3 environment.

import {spawn} from 'node:child_process'
import {join} from 'node:path'
import {render} from '@inquirer/testing'
import {confirm} from '@inquirer/prompts'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {approvalQuestion} from '../../src/cli/prompt.js'
import {json, mwp, onTerminal} from '../support/cli.js'
import {
  type OperatorOrg,
  devContract,
  givenMission,
  keyPath,
  opOn,
  operatorOrg,
  text,
} from '../support/operator-helpers.js'
import {PROJECT_ROOT} from '../support/upstream.js'

let o: OperatorOrg
let org: string
let root: string
let local: string[]
let op: ReturnType<typeof opOn>

beforeAll(async () => {
  o = await operatorOrg('operator-cli-views')
  ;({root, org, local} = o)
  op = opOn(o)
}, 60_000)
afterAll(async () => o?.close())

const key = (name: string) => keyPath(o, name)
const createMission = () => givenMission(o)

function tail(g: string, extra: string[] = []) {
  const r = op(['group', 'tail', g, ...extra])
  expect(r.status, r.stderr).toBe(0)
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map(
      (l) => JSON.parse(l) as {kind: string; sequence: number; payload: Record<string, unknown>; actor: {id: string}},
    )
}

describe('command issue', async () => {
  it('[-cmd:message.post] an unknown kind is INVALID_COMMAND (exit 1); a bad payload is a usage error; a reused actionId with other content is ACTION_ID_COLLISION', async () => {
    const g = await createMission()
    const unknown = op(
      ['command', 'issue', '--kind', 'ext.example.nothing.here', '--group', g, '--payload', '-', '--json'],
      {input: '{}'},
    )
    expect(unknown.status).toBe(1)
    expect(json(unknown).error.code).toBe('INVALID_COMMAND')
    expect(
      op(['command', 'issue', '--kind', 'message.post', '--group', g, '--payload', '-'], {
        input: '{"text": "a", "text": "b"}',
      }).status,
    ).toBe(2)
    expect(
      op(['command', 'issue', '--kind', 'message.post', '--group', g, '--payload', join(root, 'missing.json')]).status,
    ).toBe(3)
    const first = op(
      [
        'command',
        'issue',
        '--kind',
        'message.post',
        '--group',
        g,
        '--payload',
        '-',
        '--action-id',
        'urn:uuid:11111111-2222-4333-8444-555555555555',
        '--json',
      ],
      {input: '{"text": "once"}'},
    )
    expect(first.status).toBe(0)
    const reused = op(
      [
        'command',
        'issue',
        '--kind',
        'message.post',
        '--group',
        g,
        '--payload',
        '-',
        '--action-id',
        'urn:uuid:11111111-2222-4333-8444-555555555555',
        '--json',
      ],
      {input: '{"text": "twice"}'},
    )
    expect(reused.status).toBe(1)
    expect(json(reused).error.code).toBe('ACTION_ID_COLLISION')
    const schemaBad = op(['command', 'issue', '--kind', 'message.post', '--group', g, '--payload', '-', '--json'], {
      input: '{"text": ""}',
    })
    expect(schemaBad.status).toBe(1)
    expect(json(schemaBad).error.code).toBe('SCHEMA_VALIDATION_FAILED')
    expect(tail(g, ['--event-kind', 'message.posted']).length).toBe(1)
  })
})

describe('work and group views', async () => {
  it('work list / graph / show derive progress from the WorkItem graph', async () => {
    const g = await createMission()
    const w1 = 'urn:uuid:aaaaaaaa-0000-4000-8000-000000000001'
    const w2 = 'urn:uuid:aaaaaaaa-0000-4000-8000-000000000002'
    for (const [w, deps] of [
      [w1, []],
      [w2, [w1]],
    ] as const) {
      const r = op(
        ['command', 'issue', '--kind', 'work.authorize', '--group', g, '--payload', '-', '--key', key('coordinator')],
        {input: JSON.stringify({workItemId: w, contract: devContract({dependencyWorkItemIds: deps})})},
      )
      expect(r.status, r.stdout + r.stderr).toBe(0)
    }
    const list = json(op(['work', 'list', g, '--json'])).result
    expect(list.summary).toMatchObject({total: 2, done: 0, criticalPath: [w1, w2]})
    expect(list.items.find((n: {workItemId: string}) => n.workItemId === w2)).toMatchObject({
      waitingOn: [w1],
      blockers: [`waits for ${w1}`],
    })
    const graph = op(['work', 'graph', g])
    expect(graph.stdout).toContain(`critical path: ${w1} -> ${w2}`)
    expect(graph.stdout).not.toMatch(/%/)
    const show = json(op(['work', 'show', g, w2, '--json'])).result
    expect(show).toMatchObject({
      workItemId: w2,
      state: 'open',
      dependsOn: [w1],
      workItem: {contract: {goal: 'Draft the notes'}},
    })
    expect(op(['work', 'show', g, 'urn:uuid:00000000-0000-4000-8000-000000000000']).status).toBe(2)
  })

  it('group tail: NDJSON when piped, --after and --kind filter, env twins MWP_CONFIG / MWP_STORE', async () => {
    const g = await createMission()
    for (const text of ['one', 'two']) expect(op(['mission', 'direct', g, '--message', text]).status).toBe(0)
    const all = tail(g)
    expect(all.map((e) => e.sequence)).toEqual([1, 2, 3, 4])
    expect(tail(g, ['--after', '2']).map((e) => e.sequence)).toEqual([3, 4])
    expect(tail(g, ['--event-kind', 'mission.']).map((e) => e.kind)).toEqual([
      'mission.created',
      'mission.coordinator.assigned',
    ])
    const viaEnv = mwp(['group', 'tail', g, '--event-kind', 'message.posted'], {
      env: {MWP_CONFIG: join(org, 'mwp.config.json'), MWP_STORE: `sqlite:${join(org, 'authority.db')}`},
    })
    expect(viaEnv.status, viaEnv.stderr).toBe(0)
    expect(
      viaEnv.stdout
        .trim()
        .split('\n')
        .map((l) => text(JSON.parse(l))),
    ).toEqual(['one', 'two'])
  })

  it('group tail on a terminal prints one readable line per Event instead of NDJSON', async () => {
    const g = await createMission()
    expect(op(['mission', 'direct', g, '--message', 'hello team']).status).toBe(0)
    const {status, screen} = await onTerminal(['group', 'tail', g, ...local])
    expect(status).toBe(0)
    const lines = screen.split(/\r?\n/).filter((l) => l.startsWith('#'))
    expect(lines.map((l) => l.split(' ').slice(2, 4).join(' '))).toEqual([
      'owner created',
      'owner assigned',
      'owner posted:',
    ])
    expect(lines[2]).toMatch(/^#3 \d\d:\d\d:\d\d owner posted: hello team$/)
    expect(screen).not.toContain('"protocolVersion"')
  })

  it('group tail --follow prints new Events as they are accepted and stops on SIGINT', async () => {
    const g = await createMission()
    const child = spawn(
      process.execPath,
      [join(PROJECT_ROOT, 'bin/run.js'), 'group', 'tail', g, '--follow', '--after', '2', ...local],
      {env: {...process.env, NO_COLOR: '1'}},
    )
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    // Wait (bounded) until the follower is running, then accept a new Event.
    const until = async (pred: () => boolean) => {
      for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 50))
    }
    expect(op(['mission', 'direct', g, '--message', 'live']).status).toBe(0)
    await until(() => out.includes('"live"'))
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((e: {sequence: number}) => e.sequence)).toEqual([3])
    expect(text(lines[0])).toBe('live')
  })

  it('missing configuration is an environment error (exit 3); no target is a usage error (exit 2)', async () => {
    const r = mwp(['mission', 'inspect', 'urn:x:group:g', '--config', join(root, 'absent.json'), '--json'])
    expect(r.status).toBe(3)
    expect(json(r).error.code).toBe('ENVIRONMENT')
    const none = mwp(['mission', 'inspect', 'urn:x:group:g', '--json'], {env: {MWP_CONFIG: '', MWP_STORE: ''}})
    expect(none.status).toBe(2)
  })
})

describe('approval prompt', async () => {
  it('[+cmd:mission.approve] on a terminal, approve asks first: Enter (the default No) signs nothing, y approves', async () => {
    const g = await createMission()
    const submitted = op(
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
        join(org, 'keys', 'coordinator.key.json'),
      ],
      {
        input: JSON.stringify({artifactHashes: [`sha256:${'7'.repeat(64)}`]}),
      },
    )
    expect(submitted.status, submitted.stderr).toBe(0)
    const declined = await onTerminal(['mission', 'approve', g, ...local], '\r')
    expect(declined.status).toBe(0)
    expect(declined.screen).toContain(`sha256:${'7'.repeat(64)}`) // the review table came first
    expect(declined.screen).toContain('not approved')
    expect(tail(g).at(-1)!.kind).toBe('mission.submitted_for_approval')
    const accepted = await onTerminal(['mission', 'approve', g, ...local], 'y\r')
    expect(accepted.status, accepted.screen).toBe(0)
    expect(accepted.screen).toMatch(/approved revision \d+/)
    expect(tail(g).at(-1)!.kind).toBe('mission.approved')
  })

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
