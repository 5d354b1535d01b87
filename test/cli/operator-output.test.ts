// Output that adapts (issue #18), through the real CLI on a `mwp org init` Organization and its
// embedded store: `mission list` (Group IDs, state, objective, deadline, what each Mission awaits),
// boxed tables fitted to a terminal only on a TTY (a pseudo-terminal from util-linux `script`),
// tab-separated lines when piped, `--output`; `mission inspect` with former Coordinators, the
// approval state of terminal Missions and a "next:" line whose command works as printed; and
// `work graph --format dot|mermaid|svg` on a graph whose critical path is known.

import {spawnSync} from 'node:child_process'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {foldGroup} from '../../src/operator/views.js'
import {candidateBasis} from '../support/authority-helpers.js'
import {json, mwp} from '../support/cli.js'
import {
  type OperatorOrg,
  ORG,
  devContract,
  given,
  givenMission,
  humanGatedChild,
  inDays,
  logged,
  opOn,
  operatorOrg,
} from '../support/operator-helpers.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const H1 = `sha256:${'e'.repeat(64)}`
const COORDINATOR = `${ORG}:agent:coordinator`
const HAVE_SCRIPT = spawnSync('sh', ['-c', 'command -v script'], {encoding: 'utf8'}).status === 0
const HAVE_PYTHON = spawnSync('python3', ['-c', 'import xml.etree.ElementTree'], {encoding: 'utf8'}).status === 0

let o: OperatorOrg
let op: ReturnType<typeof opOn>

beforeAll(async () => {
  o = await operatorOrg('cli-output')
  op = opOn(o)
}, 60_000)
afterAll(async () => o?.close())

const wi = (n: number) => `urn:uuid:cccccccc-0000-4000-8000-${String(n).padStart(12, '0')}`

/** Authorizes WorkItems by the dev Coordinator: [id, goal, dependencies]. */
async function givenWork(g: string, items: [string, string, string[]][]) {
  for (const [workItemId, goal, deps] of items)
    await given(o, 'coordinator', 'work.authorize', g, {
      workItemId,
      contract: devContract({goal, dependencyWorkItemIds: deps}),
    })
}

/** Runs `mwp ARGS` (with the Organization's flags) under a pseudo-terminal `columns` wide; returns the screen. */
function onTerminal(args: string[], columns: number): string {
  const quoted = ['node', 'bin/run.js', ...args, ...o.local].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')
  const r = spawnSync('script', ['-qec', `stty cols ${columns} rows 50; ${quoted}`, '/dev/null'], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    env: {...process.env, NO_COLOR: '1'},
  })
  expect(r.status, r.stdout + r.stderr).toBe(0)
  return r.stdout.replaceAll('\r', '')
}

/** TSV output: the header and rows, split at tabs. */
const tsv = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => l.split('\t'))

describe('mwp mission list', () => {
  let running: string
  let awaiting: string
  let child: string
  beforeAll(async () => {
    running = await givenMission(o, 'Write the migration guide')
    await givenWork(running, [
      [wi(1), 'Collect the breaking changes', []],
      [wi(2), 'Draft the guide', [wi(1)]],
    ])
    awaiting = await givenMission(o, 'Publish the release notes')
    await given(o, 'coordinator', 'mission.submit_for_approval', awaiting, {artifactHashes: [H1]})
    const parentItem = wi(3)
    await givenWork(running, [[parentItem, 'Translate the guide', []]])
    const c = humanGatedChild(running, parentItem, `${ORG}:agent:worker-1`)
    await given(o, 'coordinator', 'mission.create_child', running, c.payload)
    child = c.cg
  }, 60_000)

  it('piped: one tab-separated line per Mission with its Group ID, state, objective, deadline and what it awaits; a child Mission follows its parent', () => {
    const r = op(['mission', 'list'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).not.toMatch(/[┌│└]/)
    const [head, ...rows] = tsv(r.stdout)
    expect(head).toEqual(['Group', 'state', 'objective', 'deadline', 'awaiting'])
    const row = (g: string) => rows.find((x) => x[0] === g)
    expect(row(running)).toEqual([
      running,
      'active',
      'Write the migration guide',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      'running: 0/3 WorkItems verified, 1 blocked/failed',
    ])
    expect(row(awaiting)?.slice(1, 3)).toEqual(['awaiting_approval', 'Publish the release notes'])
    expect(row(awaiting)?.[4]).toBe('awaiting your approval')
    // The owner of the root reads the child Group below it without a Membership (§14).
    expect(rows.findIndex((x) => x[0] === child)).toBe(rows.findIndex((x) => x[0] === running) + 1)
    expect(row(child)?.[2]).toBe('↳ Draft the notes')
  })

  it('--output json is the --json envelope; the rows name the parent Group of a child Mission', () => {
    const viaOutput = json(op(['mission', 'list', '--output', 'json']))
    expect(viaOutput).toEqual(json(op(['mission', 'list', '--json'])))
    expect(viaOutput.status).toBe('ok')
    const missions = viaOutput.result.missions as {groupId: string; parentGroupId?: string; awaiting: string}[]
    expect(missions.find((m) => m.groupId === child)).toMatchObject({parentGroupId: running})
    expect(missions.find((m) => m.groupId === running)!.parentGroupId).toBeUndefined()
    // A principal that is no member of these Groups does not see them.
    const stranger = json(op(['mission', 'list', '--json', '--key', `${o.org}/keys/worker-1.key.json`]))
    const seen = (stranger.result.missions as {groupId: string}[]).map((m) => m.groupId)
    expect(seen).not.toContain(awaiting)
    expect(seen).not.toContain(running)
  })

  it.skipIf(!HAVE_SCRIPT)(
    'on a terminal: boxed, no line wider than the terminal, long cells cut with an ellipsis, Group IDs whole',
    () => {
      for (const columns of [120, 160]) {
        const screen = onTerminal(['mission', 'list'], columns)
        const lines = screen.trimEnd().split('\n')
        expect(lines[0]).toMatch(/^┌/)
        for (const l of lines) expect([...l].length, l).toBeLessThanOrEqual(columns)
        expect(screen).toContain('…')
        for (const g of [running, awaiting, child]) expect(screen).toContain(g)
      }
      // --output tsv on a terminal is still TSV.
      expect(onTerminal(['mission', 'list', '--output', 'tsv'], 80)).toContain(`${awaiting}\tawaiting_approval`)
    },
  )

  it('mission tree shows each Mission by its Group ID; work list shows goals beside WorkItem IDs', () => {
    const tree = op(['mission', 'tree', running])
    expect(tree.status, tree.stderr).toBe(0)
    expect(tree.stdout).toContain(`${running} [active] Write the migration guide`)
    expect(tree.stdout).toContain(`  ${child} [active] Draft the notes`)
    const list = op(['work', 'list', running])
    const [head, ...rows] = tsv(list.stdout).slice(1) // after the progress line
    expect(head.slice(0, 3)).toEqual(['WorkItem', 'goal', 'state'])
    expect(rows.find((x) => x[0] === wi(2))?.[1]).toBe('Draft the guide')
  })
})

describe('mwp mission inspect', () => {
  it('after replace-coordinator: the current Coordinator and the former one with their epochs', async () => {
    const g = await givenMission(o)
    expect(op(['mission', 'replace-coordinator', g, '--agent', 'worker-1']).status).toBe(0)
    const view = json(op(['mission', 'inspect', g, '--json'])).result
    expect(view.coordinators).toEqual([
      {agentId: COORDINATOR, coordinatorEpoch: 1, current: false, sequence: 2},
      {agentId: `${ORG}:agent:worker-1`, coordinatorEpoch: 2, current: true, sequence: 3},
    ])
    const text = op(['mission', 'inspect', g]).stdout
    expect(text).toContain(`Coordinator\t${ORG}:agent:worker-1 (epoch 2)`)
    expect(text).toContain(`former Coordinators\t${COORDINATOR} (epoch 1, fenced)`)
    expect(text).toContain(`${COORDINATOR}\tagent\tcoordinator (former)`)
    expect(text).toContain(`${ORG}:agent:worker-1\tagent\tcoordinator\t`)
  })

  it('awaiting approval: the next: line names the command, and the command works as printed', async () => {
    const g = await givenMission(o)
    await given(o, 'coordinator', 'mission.submit_for_approval', g, {artifactHashes: [H1]})
    const r = op(['mission', 'inspect', g])
    expect(r.stdout).toMatch(/^approval\tawaiting the mission_final Approval by the MissionOwner .* of revision \d+$/m)
    const next = json(op(['mission', 'inspect', g, '--json'])).result.next
    expect(next.command).toBe(`mwp mission approve ${g}`)
    expect(r.stdout.trimEnd().split('\n').slice(-2)).toEqual([`next: ${next.what}`, `  ${next.command}`])
    const [, ...args] = next.command.split(' ')
    const approved = op([...args, '--yes'])
    expect(approved.status, approved.stdout + approved.stderr).toBe(0)
    const after = op(['mission', 'inspect', g])
    expect(after.stdout).toMatch(/^approval\tapproved: Approval urn:uuid:\S+ by urn:mwp:dev:org:local:human:owner at /m)
    expect(after.stdout).toMatch(/^next: nothing: the Mission is approved \(terminal\)/m)
  })

  it('a WorkItem waiting for execution approval: next: is the grant for its Ownership Epoch, and it is accepted as printed', async () => {
    const g = await givenMission(o)
    const w = wi(21)
    const worker = `${ORG}:agent:worker-1`
    await given(o, 'coordinator', 'work.authorize', g, {
      workItemId: w,
      contract: devContract({goal: 'Publish the package', executionApproval: 'human_required'}),
    })
    await given(o, 'coordinator', 'work.offer', g, {
      workItemId: w,
      candidates: [worker],
      expiresAt: inDays(1),
      selectionBasis: {[worker]: candidateBasis({verifiedMatches: [{id: 'mwp.dev.general-work', version: '1.0.0'}]})},
      contextPackageId: 'urn:mwp:test:context-package:publish',
    })
    const offerId = foldGroup(await logged(o, g))!.workItems[w]!.offer!.offerId
    await given(o, 'worker-1', 'work.accept_offer', g, {workItemId: w, offerId})
    const view = json(op(['mission', 'inspect', g, '--json'])).result
    expect(view.work.awaitingApproval).toEqual([w])
    expect(view.next.what).toBe(`approve the execution of ${w} (Publish the package)`)
    // The printed pipeline, run by a shell as the operator would paste it (with the Organization's flags).
    const pasted = spawnSync(
      'sh',
      ['-c', `${view.next.command.replace(/\bmwp /, 'node bin/run.js ')} ${o.local.join(' ')}`],
      {
        cwd: PROJECT_ROOT,
        encoding: 'utf8',
      },
    )
    expect(pasted.status, pasted.stdout + pasted.stderr).toBe(0)
    expect((await logged(o, g)).at(-1)!.kind).toBe('approval.execution.granted')
  })

  it('a cancelled Mission shows no pending approval: the approval line says none follows', async () => {
    const g = await givenMission(o)
    expect(json(op(['mission', 'inspect', g, '--json'])).result.next.command).toBe(`mwp group tail ${g} --follow`)
    expect(op(['mission', 'cancel', g, '--message', 'Superseded.', '--yes']).status).toBe(0)
    const text = op(['mission', 'inspect', g]).stdout
    expect(text).toMatch(
      /^approval\tnone: the Mission was cancelled at \S+ by \S+ \(Superseded\.\); no Approval follows$/m,
    )
    expect(text).not.toContain('on submission')
    expect(json(op(['mission', 'inspect', g, '--json'])).result.ended).toMatchObject({
      state: 'cancelled',
      reason: 'Superseded.',
    })
  })
})

describe('mwp work graph --format', () => {
  // A hand-built graph: A <- B <- C is the longest chain of unfinished work; D waits for A, E stands alone.
  const [A, B, C, D, E] = [11, 12, 13, 14, 15].map(wi)
  let g: string
  beforeAll(async () => {
    g = await givenMission(o, 'Graph pictures')
    await givenWork(g, [
      [A, 'Collect "inputs" & <notes>', []],
      [B, 'Draft', [A]],
      [C, 'Review', [B]],
      [D, 'Announce', [A]],
      [E, 'Tidy up', []],
    ])
  }, 60_000)
  const draw = (format: string) => {
    const r = op(['work', 'graph', g, '--format', format])
    expect(r.status, r.stderr).toBe(0)
    return r.stdout
  }

  it('text stays the default; an unknown format is a usage error (exit 2)', () => {
    expect(draw('text')).toBe(op(['work', 'graph', g]).stdout)
    expect(draw('text')).toContain(`critical path: ${A} -> ${B} -> ${C}`)
    expect(draw('text')).toContain(`* ${B} [open] Draft <- ${A} (waiting)`)
    expect(op(['work', 'graph', g, '--format', 'png']).status).toBe(2)
  })

  it('DOT: one node statement per WorkItem, one edge per dependency, the critical path in its class', () => {
    const dot = draw('dot')
    expect(dot).toMatch(/^digraph "[^"]+" \{\n[\s\S]*\n\}\n$/)
    const q = '"((?:[^"\\\\]|\\\\.)*)"'
    const nodes = [...dot.matchAll(new RegExp(`^  ${q} \\[label=.*\\];$`, 'gm'))]
    const edges = [...dot.matchAll(new RegExp(`^  ${q} -> ${q}( \\[.*\\])?;$`, 'gm'))]
    expect(nodes.map((m) => m[1]).sort()).toEqual([A, B, C, D, E].sort())
    expect(edges.map((m) => `${m[1]}>${m[2]}`).sort()).toEqual([`${A}>${B}`, `${A}>${D}`, `${B}>${C}`].sort())
    expect(nodes.filter((m) => m[0].includes('class="critical"')).map((m) => m[1])).toEqual([A, B, C])
    expect(edges.filter((m) => m[3]?.includes('critical')).map((m) => `${m[1]}>${m[2]}`)).toEqual([
      `${A}>${B}`,
      `${B}>${C}`,
    ])
    expect(dot).toContain('Collect \\"inputs\\" & <notes>')
  })

  it('Mermaid: a flowchart with every dependency edge and the critical class on the path', () => {
    const mermaid = draw('mermaid')
    expect(mermaid.split('\n')[0]).toBe('flowchart LR')
    const id = new Map(
      [...mermaid.matchAll(/^ {2}(n\d+)\["[^"]*<br\/>(urn:uuid:[^<]+)<br\/>/gm)].map((m) => [m[2], m[1]]),
    )
    expect(id.size).toBe(5)
    const edges = [...mermaid.matchAll(/^ {2}(n\d+) --> (n\d+)$/gm)].map((m) => `${m[1]}>${m[2]}`)
    expect(edges.sort()).toEqual(
      [`${id.get(A)}>${id.get(B)}`, `${id.get(A)}>${id.get(D)}`, `${id.get(B)}>${id.get(C)}`].sort(),
    )
    expect(mermaid).toContain(`class ${[A, B, C].map((w) => id.get(w)).join(',')} critical`)
    expect(mermaid).toContain('#quot;inputs#quot;')
  })

  it.skipIf(!HAVE_PYTHON)(
    'SVG: well-formed XML (parsed), one <g> with one <rect> per WorkItem in columns by depth, critical on exactly A, B, C',
    () => {
      const svg = draw('svg')
      // Python's XML parser (a real one) reads the picture and reports what it holds.
      const parsed = spawnSync(
        'python3',
        [
          '-c',
          `import json, sys, xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
root = ET.fromstring(sys.stdin.buffer.read())
groups = [g for g in root.iter(NS + 'g') if 'data-workitem' in g.attrib]
print(json.dumps({
  'tag': root.tag,
  'items': [{'id': g.get('data-workitem'), 'cls': g.get('class'), 'transform': g.get('transform'),
             'rects': len(g.findall(NS + 'rect'))} for g in groups],
  'rects': len(list(root.iter(NS + 'rect'))),
  'edges': [p.get('class') for p in root.findall(NS + 'path')],
}))`,
        ],
        {input: svg, encoding: 'utf8'},
      )
      expect(parsed.status, parsed.stderr).toBe(0)
      const doc = JSON.parse(parsed.stdout) as {
        tag: string
        items: {id: string; cls: string; transform: string; rects: number}[]
        rects: number
        edges: string[]
      }
      expect(doc.tag).toBe('{http://www.w3.org/2000/svg}svg')
      expect(doc.items.map((i) => i.id).sort()).toEqual([A, B, C, D, E].sort())
      expect(doc.items.every((i) => i.rects === 1)).toBe(true)
      expect(doc.rects).toBe(5)
      expect(doc.items.filter((i) => i.cls.split(' ').includes('critical')).map((i) => i.id)).toEqual([A, B, C])
      expect(doc.edges.sort()).toEqual(['edge', 'edge critical', 'edge critical'])
      // Columns by dependency depth: A and E first, B and D second, C third.
      const x = (w: string) => Number(/translate\((\d+),/.exec(doc.items.find((i) => i.id === w)!.transform)![1])
      expect(x(A)).toBe(x(E))
      expect(x(B)).toBe(x(D))
      expect(x(A)).toBeLessThan(x(B))
      expect(x(B)).toBeLessThan(x(C))
    },
  )
})

describe('output style', () => {
  it('work show and mission inspect accept --output table and draw boxes even when piped, at natural width', async () => {
    const g = await givenMission(o)
    const r = op(['mission', 'inspect', g, '--output', 'table'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^┌/)
    expect(r.stdout).toContain(g) // not cut: a pipe has no width
    expect(mwp(['mission', 'list', '--output', 'yaml', ...o.local]).status).toBe(2)
  })
})
