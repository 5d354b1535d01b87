// The readable live view of `mwp group tail` (src/operator/event-lines.ts): one line per real
// signed Event of a `mwp org init` Organization — sequence, time, who, what in words, to whom,
// the Message text, the WorkItem goal beside its ID — cut to a width; then the CLI itself against
// a real `mwp authority serve` (TLS on loopback): --output text when piped, a narrow terminal
// under a pseudo-terminal, and NDJSON kept for --json and for a pipe.
// Build first: npx tsc -p tsconfig.json && node dist/scripts/oclif-manifest.js

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {fit} from '../../src/cli/output.js'
import {EventLines, MAX_GOALS, shortName} from '../../src/operator/event-lines.js'
import type {EventDoc} from '../../src/operator/transport.js'
import {foldGroup} from '../../src/operator/views.js'
import {serveProcess} from '../support/authority-process.js'
import {json, mwp, onTerminal} from '../support/cli.js'
import {
  ORG,
  type OperatorOrg,
  devContract,
  devSelectionBasis,
  given,
  givenMission,
  inDays,
  keyPath,
  logged,
  operatorOrg,
} from '../support/operator-helpers.js'

const WORKER = `${ORG}:agent:worker-1`
const W = 'urn:uuid:1a2b3c4d-0000-4000-8000-000000000001'

/** The payloads that authorize W with a goal and offer it to worker-1. */
const authorize = {workItemId: W, contract: devContract({goal: 'Draft the notes'})}
const offer = {
  workItemId: W,
  candidates: [WORKER],
  expiresAt: inDays(1),
  selectionBasis: devSelectionBasis(WORKER),
  contextPackageId: 'urn:mwp:test:context-package:event-lines',
}

describe('EventLines over real signed Events', () => {
  let o: OperatorOrg
  let events: EventDoc[]
  beforeAll(async () => {
    o = await operatorOrg('event-lines')
    const g = await givenMission(o)
    await given(o, 'owner', 'message.post', g, {text: 'hello team'})
    await given(o, 'coordinator', 'work.authorize', g, authorize)
    await given(o, 'coordinator', 'work.offer', g, offer)
    const offerId = foldGroup(await logged(o, g))!.workItems[W]!.offer!.offerId
    await given(o, 'worker-1', 'work.accept_offer', g, {workItemId: W, offerId})
    events = await logged(o, g)
  }, 60_000)
  afterAll(async () => o?.close())

  it('each Event in words: sequence, HH:MM:SS, who, what, to whom, the Message text and the goal', () => {
    const lines = new EventLines()
    const rendered = events.map((e) => lines.line(e))
    const prefix = (e: EventDoc) => `#${e.sequence} ${e.occurredAt.slice(11, 19)} `
    expect(rendered).toEqual([
      `${prefix(events[0]!)}owner created Mission "Ship the release notes"`,
      `${prefix(events[1]!)}owner assigned Coordinator coordinator (epoch 1)`,
      `${prefix(events[2]!)}owner posted: hello team`,
      `${prefix(events[3]!)}coordinator authorized WorkItem 1a2b3c4d "Draft the notes"`,
      `${prefix(events[4]!)}coordinator offered WorkItem 1a2b3c4d "Draft the notes" to worker-1`,
      `${prefix(events[5]!)}worker-1 accepted the offer of WorkItem 1a2b3c4d "Draft the notes"`,
    ])
    expect(rendered[0]).toMatch(/^#1 \d\d:\d\d:\d\d owner /)
  })

  it('a tail that starts after the goal was named shows it only when seeded from the folded WorkItems', () => {
    const accepted = events.at(-1)!
    expect(new EventLines().line(accepted)).toMatch(/accepted the offer of WorkItem 1a2b3c4d$/)
    const seeded = new EventLines()
    seeded.learn(foldGroup(events.slice(0, -1))!.workItems)
    expect(seeded.line(accepted)).toMatch(/accepted the offer of WorkItem 1a2b3c4d "Draft the notes"$/)
  })

  it(`remembers at most ${MAX_GOALS} goals, forgetting the least recently learnt`, () => {
    const lines = new EventLines()
    const authorized = events.find((e) => e.kind === 'work.authorized')!
    lines.line(authorized)
    const others = Object.fromEntries(
      Array.from({length: MAX_GOALS - 1}, (_, i) => [`urn:uuid:other-${i}`, {contract: {goal: `goal ${i}`}}]),
    )
    lines.learn(others as never)
    expect(lines.line(events.at(-1)!)).toContain('"Draft the notes"') // still within the bound
    lines.learn({'urn:uuid:one-more': {contract: {goal: 'one more'}}} as never)
    expect(lines.line(events.at(-1)!)).not.toContain('"Draft the notes"')
  })

  it('cuts a line to the width with an ellipsis, leaves a short one whole', () => {
    const line = new EventLines().line(events[0]!, 20)
    expect([...line]).toHaveLength(20)
    expect(line.endsWith('…')).toBe(true)
    expect(fit('short', 20)).toBe('short')
    expect(fit('exactly ten', 11)).toBe('exactly ten')
    expect(shortName(`${ORG}:human:owner`)).toBe('owner')
  })
})

describe('mwp group tail against mwp authority serve', () => {
  let o: OperatorOrg
  let server: ReturnType<typeof serveProcess>
  let wire: string[]
  let g: string
  beforeAll(async () => {
    o = await operatorOrg('event-lines-cli')
    const config = o.local[1]!
    server = serveProcess(config, ['--port', '0'])
    const {url} = await server.listening
    wire = ['--config', config, '--url', url]
    const run = (args: string[], input = '') => {
      const r = mwp([...args, ...wire], {input})
      if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stdout}${r.stderr}`)
      return r
    }
    g = json(run(['mission', 'create', '--objective', 'Ship the notes', '--coordinator', 'coordinator', '--json']))
      .result.groupId
    run(['mission', 'direct', g, '--message', 'hello team'])
    const issue = (signer: string, kind: string, payload: object) =>
      run(
        ['command', 'issue', '--kind', kind, '--group', g, '--payload', '-', '--key', keyPath(o, signer)],
        JSON.stringify(payload),
      )
    issue('coordinator', 'work.authorize', authorize)
    issue('coordinator', 'work.offer', offer)
    const offered = mwp(['group', 'tail', g, '--event-kind', 'work.offer.created', ...wire]).stdout
    issue('worker-1', 'work.accept_offer', {workItemId: W, offerId: JSON.parse(offered).payload.offer.offerId})
  }, 90_000)
  afterAll(async () => {
    server?.child.kill('SIGTERM')
    await server?.exited
    await o?.close()
  })

  it('--output text when piped: readable lines, uncut; a goal named before the first line shown still appears', () => {
    const r = mwp(['group', 'tail', g, '--output', 'text', ...wire])
    expect(r.status, r.stderr).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines.map((l) => l.replace(/^#(\d+) \d\d:\d\d:\d\d /, '#$1 '))).toEqual([
      '#1 owner created Mission "Ship the notes"',
      '#2 owner assigned Coordinator coordinator (epoch 1)',
      '#3 owner posted: hello team',
      '#4 coordinator authorized WorkItem 1a2b3c4d "Draft the notes"',
      '#5 coordinator offered WorkItem 1a2b3c4d "Draft the notes" to worker-1',
      '#6 worker-1 accepted the offer of WorkItem 1a2b3c4d "Draft the notes"',
    ])
    const accepted = /^#6 \d\d:\d\d:\d\d worker-1 accepted the offer of WorkItem 1a2b3c4d "Draft the notes"\n$/
    // From sequence 6 on: the goal from the WorkItems folded before it.
    const after = mwp(['group', 'tail', g, '--output', 'text', '--after', '5', ...wire])
    expect(after.status, after.stderr).toBe(0)
    expect(after.stdout).toMatch(accepted)
    // From the start, --kind leaving out the Events that name the goal: learnt from them all the same.
    const only = mwp(['group', 'tail', g, '--output', 'text', '--event-kind', 'work.offer.accepted', ...wire])
    expect(only.status, only.stderr).toBe(0)
    expect(only.stdout).toMatch(accepted)
  })

  it('on a 40-column terminal: one line per Event, none wider than 40, long ones ending in …; --json keeps NDJSON', async () => {
    const {status, screen} = await onTerminal(['group', 'tail', g, ...wire], undefined, 40)
    expect(status).toBe(0)
    const lines = screen.split(/\r?\n/).filter((l) => l.startsWith('#'))
    expect(lines.map((l) => l.split(' ')[0])).toEqual(['#1', '#2', '#3', '#4', '#5', '#6'])
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(40)
    expect(lines.filter((l) => l.endsWith('…')).length).toBeGreaterThan(0)
    expect(screen).not.toContain('"protocolVersion"')
    const asJson = await onTerminal(['group', 'tail', g, '--json', ...wire])
    expect(asJson.status).toBe(0)
    const ndjson = asJson.screen.split(/\r?\n/).filter((l) => l.startsWith('{'))
    expect(ndjson.map((l) => JSON.parse(l).sequence)).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('piped without --output: NDJSON, exactly the verified Events', () => {
    const r = mwp(['group', 'tail', g, ...wire])
    expect(r.status, r.stderr).toBe(0)
    const kinds = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).kind)
    expect(kinds).toEqual([
      'mission.created',
      'mission.coordinator.assigned',
      'message.posted',
      'work.authorized',
      'work.offer.created',
      'work.offer.accepted',
    ])
  })
})
