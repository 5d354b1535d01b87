// `mwp poc run` end to end, as a user runs it: a real process of the CLI starts the authority,
// two Coordinators and three Workers (each its own OS process over wss), drives both Missions to
// human Approval and evaluates every check. The run must pass every check, and the JSON report
// must hold the measured numbers the checks recorded; the HTML report is written beside it.

import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {type Proc, cli} from '../support/agent-org.js'
import {CHANGE_REQUEST} from '../../src/poc/run.js'
import type {PocTrace} from '../../src/poc/report/trace.js'
import {type PostgresInstance, shouldRunPostgres, startPostgres} from '../support/postgres-harness.js'

const dir = mkdtempSync(join(tmpdir(), 'mwp-poc-test-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** Each approved Mission's Artifact set by objective: file name → hash. */
const approvedSets = (t: PocTrace) =>
  Object.fromEntries(
    t.missions
      .filter((m) => m.approvedArtifacts !== undefined)
      .map((m) => [m.title, Object.fromEntries(m.approvedArtifacts!.map((a) => [a.name, a.hash]))]),
  )

let faulted: PocTrace | undefined

describe('mwp poc run', () => {
  it('approves both Missions and passes every check, with a JSON and an HTML report', async () => {
    const p = cli(['poc', 'run', '--json', '--seed', '3', '--report', join(dir, 'report'), '--timeout-seconds', '240'])
    const code = await p.exited
    const {stdout, stderr} = p.out()
    const out = JSON.parse(stdout) as {
      status: string
      result: {passed: boolean; checks: number; failed: string[]; trace: PocTrace}
    }
    expect(out.result.failed, stderr.slice(-3000)).toEqual([])
    expect(code).toBe(0)
    expect(out.status).toBe('ok')
    const trace = out.result.trace
    faulted = trace
    expect(trace.checks.length).toBeGreaterThanOrEqual(60)
    expect(trace.checks.every((c) => c.passed)).toBe(true)
    // What the checks measured is in the report, e.g. the real failing tests that forced rework.
    const rework = trace.checks.find((c) => c.id === 'review.rejected-failing-test')!
    expect(rework.detail).toMatch(/^tests: failing: /)
    // A, its child Mission, B and the urgent Mission C.
    expect(trace.missions.filter((m) => m.state === 'approved')).toHaveLength(4)
    expect(trace.runs.some((r) => r.agent === 'worker-1' && r.slot === 1)).toBe(true)
    // Progress went to stderr, the report to files.
    expect(stderr).toMatch(/poc: Mission A approved/)
    expect(JSON.parse(readFileSync(join(dir, 'report', 'report.json'), 'utf8')).seed).toBe(3)
    expect(existsSync(join(dir, 'report', 'report.html'))).toBe(true)
  }, 300_000)
})

describe('mwp poc run --interactive --no-faults', () => {
  /** Waits for the run to print the `nth` (0-based) approval prompt of `mission`; its Group and flags. */
  async function prompt(p: Proc, mission: 'A' | 'B', nth: number): Promise<{group: string; as: string[]}> {
    const pattern = new RegExp(`Mission ${mission} awaits your approval: mwp mission approve (\\S+) (.*)$`, 'gm')
    let found: RegExpExecArray[] = []
    await expect
      .poll(() => (found = [...p.out().stderr.matchAll(pattern)]).length > nth, {timeout: 200_000, interval: 500})
      .toBe(true)
    return {group: found[nth]![1]!, as: found[nth]![2]!.split(' ')}
  }
  /** A person's command in another terminal: a separate process of the CLI. */
  async function person(args: string[]): Promise<void> {
    const c = cli([...args, '--json'])
    expect(await c.exited, c.out().stderr).toBe(0)
  }

  // The person's side of --interactive (issue 17), and its acceptance: the final Artifact hashes
  // equal those of a fault-free run with the same seed.
  it('waits for a person at each approval and approves the same Artifact hashes as the faulted run', async () => {
    const p = cli(['poc', 'run', '--json', '--interactive', '--no-faults', '--seed', '3', '--timeout-seconds', '240'])
    const a1 = await prompt(p, 'A', 0)
    await person(['mission', 'request-changes', a1.group, ...a1.as, '--message', CHANGE_REQUEST])
    const b = await prompt(p, 'B', 0)
    await person(['mission', 'approve', b.group, ...b.as, '--yes'])
    const a2 = await prompt(p, 'A', 1)
    expect(a2.group).toBe(a1.group)
    await person(['mission', 'approve', a2.group, ...a2.as, '--yes'])
    const code = await p.exited
    const {stdout, stderr} = p.out()
    const out = JSON.parse(stdout) as {result: {failed: string[]; trace: PocTrace}}
    expect(out.result.failed, stderr.slice(-3000)).toEqual([])
    expect(code).toBe(0)
    const faultChecks = out.result.trace.checks.filter((c) => c.id.startsWith('fault.'))
    expect(faultChecks.length).toBeGreaterThan(10)
    expect(faultChecks.every((c) => c.detail === 'faults off')).toBe(true)
    expect(faulted, 'the faulted run (the test above) must have run').toBeDefined()
    const clean = approvedSets(out.result.trace)
    // A, its child Mission and B (the urgent Mission C is itself one of the faults).
    expect(Object.keys(clean)).toHaveLength(3)
    const withFaults = approvedSets(faulted!)
    for (const [objective, files] of Object.entries(clean)) {
      expect(Object.keys(files).length).toBeGreaterThan(0)
      expect(withFaults[objective], objective).toEqual(files)
    }
  }, 300_000)
})

describe.runIf(shouldRunPostgres('poc-run'))('mwp poc run --store postgres://', () => {
  let pg: PostgresInstance | undefined
  afterAll(async () => pg?.stop())

  it('passes every check on a throwaway PostgreSQL cluster', async () => {
    pg = await startPostgres()
    const p = cli(['poc', 'run', '--json', '--store', pg.url, '--timeout-seconds', '240'])
    const code = await p.exited
    const {stdout, stderr} = p.out()
    const out = JSON.parse(stdout) as {result: {failed: string[]; trace: PocTrace}}
    expect(out.result.failed, stderr.slice(-3000)).toEqual([])
    expect(code).toBe(0)
    expect(out.result.trace.store).toMatch(/^postgres/)
  }, 300_000)
})

describe('mwp poc run --self-test', () => {
  // Three of the broken runtimes, one per layer (the Coordinator's review, the Agent's Cursor, the
  // Agent's lease handling): each must fail at least one named check, and the real run must pass.
  // `mwp poc run --self-test` without --mutant runs all of src/mutants.ts (about 8 minutes here).
  it('catches each broken runtime with a named check', async () => {
    const mutants = ['review-accepts-anything', 'cursor-never-acked', 'stale-lease-local']
    const p = cli(['poc', 'run', '--json', '--self-test', ...mutants.flatMap((m) => ['--mutant', m])])
    const code = await p.exited
    const {stdout, stderr} = p.out()
    const out = JSON.parse(stdout) as {result: {passed: boolean; uncaughtMutants: string[]; trace: PocTrace}}
    expect(out.result.uncaughtMutants, stderr.slice(-3000)).toEqual([])
    expect(code).toBe(0)
    const caught = Object.fromEntries(out.result.trace.selfTest!.map((m) => [m.mutant, m.caughtBy]))
    expect(Object.keys(caught)).toEqual(mutants)
    expect(caught['review-accepts-anything']).toContain('review.rejected-failing-test')
    expect(caught['cursor-never-acked']).toContain('delivery.cursors-agree')
    expect(caught['stale-lease-local']).toContain('fault.lease-expiry.stopped')
  }, 600_000)
})
