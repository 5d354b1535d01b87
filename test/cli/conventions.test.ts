// The CLI conventions a new user meets first, driven through the real CLI (bin/run.js as a child
// process): documented exit codes (an unknown command is a usage error, with --json one object), a
// cancelled prompt exits 130 and a bug 4 (never 1, "rejected"), help (topic summaries, -h,
// per-command exit codes), flags checked before anything is signed (mission create), confirmation
// of a terminal Command (mission cancel), repeatable flags that leave positionals alone, MWP_URL
// and --url checked as usage, and `group tail --follow` across a server restart.
// Build first: npx tsc -p tsconfig.json && node dist/scripts/oclif-manifest.js

import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {captureOutput} from '@oclif/test'
import {MwpCommand, type Outcome} from '../../src/cli/base.js'
import {deadlineProblem} from '../../src/operator/mission-payloads.js'
import {serveProcess} from '../support/authority-process.js'
import {mwp, onTerminal} from '../support/cli.js'
import {type OperatorOrg, givenMission, keyPath, logged, operatorOrg, opOn} from '../support/operator-helpers.js'
import {PROJECT_ROOT} from '../support/upstream.js'

let o: OperatorOrg
let op: ReturnType<typeof opOn>
beforeAll(async () => {
  o = await operatorOrg('conventions')
  op = opOn(o)
}, 60_000)
afterAll(() => o?.close())

/** Waits (bounded, for failure reporting only) until `done()` holds. */
async function until(done: () => boolean, what: string, limitMs = 30_000): Promise<void> {
  const started = Date.now()
  while (!done()) {
    if (Date.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('exit codes', () => {
  it('an unknown command is a usage error (exit 2), suggesting the closest command; with --json one object', () => {
    const r = mwp(['misison', 'create', '--json'])
    expect(r.status).toBe(2)
    const lines = r.stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toEqual({
      status: 'error',
      error: {code: 'USAGE', message: expect.stringContaining('did you mean mission create?')},
    })
    const text = mwp(['nope'])
    expect(text.status).toBe(2)
    expect(text.stdout).toBe('')
    expect(text.stderr).toMatch(/^mwp: nope is not a mwp command/)
  })

  it('a thrown non-MwpError is an internal error (exit 4; --json: one INTERNAL object), never 1', async () => {
    class Crash extends MwpCommand {
      protected async execute(): Promise<Outcome> {
        throw new TypeError('a bug')
      }
    }
    const before = process.exitCode
    const {stdout, stderr} = await captureOutput(() => Crash.run(['--json'], PROJECT_ROOT))
    const code = process.exitCode
    process.exitCode = before
    expect(code).toBe(4)
    expect(JSON.parse(stdout)).toEqual({status: 'error', error: {code: 'INTERNAL', message: 'internal error: a bug'}})
    expect(stderr).toContain('TypeError: a bug')
  })

  it('a malformed --url and an empty MWP_URL are usage errors naming them (exit 2)', () => {
    const config = ['--config', join(o.org, 'mwp.config.json')]
    const bad = mwp(['mission', 'inspect', 'G', ...config, '--url', 'notaurl', '--json'])
    expect(bad.status).toBe(2)
    expect(JSON.parse(bad.stdout).error.message).toMatch(/^--url notaurl is not a URL/)
    const empty = mwp(['mission', 'inspect', 'G', ...config, '--json'], {env: {MWP_URL: ''}})
    expect(empty.status).toBe(2)
    expect(JSON.parse(empty.stdout).error.message).toMatch(/^MWP_URL is set but empty/)
  })
})

describe('help', () => {
  it('each topic has its own summary, not its first command', () => {
    const r = mwp(['--help'])
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^ {2}mission +Create, direct, inspect, approve and cancel Missions/m)
    expect(r.stdout).toMatch(/^ {2}registry +Create, edit, check and show Organization registry files/m)
    expect(r.stdout).not.toMatch(/^ {2}mission +Review the submitted revision/m)
  })

  it('-h is --help', () => {
    const long = mwp(['mission', 'cancel', '--help'])
    const short = mwp(['mission', 'cancel', '-h'])
    expect(short.status).toBe(0)
    expect(short.stdout).toBe(long.stdout)
    expect(short.stdout).toContain('USAGE')
  })

  it("a command's EXIT CODES are its own: key generate is never rejected, mission cancel can be cancelled", () => {
    const key = mwp(['key', 'generate', '-h']).stdout
    expect(key).toContain('EXIT CODES')
    expect(key).not.toMatch(/^ {2}1 /m)
    expect(key).toMatch(/^ {2}3 +environment error: --out exists already/m)
    const cancel = mwp(['mission', 'cancel', '-h']).stdout
    expect(cancel).toMatch(/^ {2}1 +rejected: the authority refused the Command/m)
    expect(cancel).toMatch(/^ {2}130 +cancelled at the prompt/m)
  })
})

describe('mission create checks its flags before signing (usage, exit 2, naming the flag)', () => {
  it.each([
    [
      ['--coordinator', 'worker-9'],
      /^--coordinator worker-9: no Agent urn:mwp:dev:org:local:agent:worker-9 in the Organization registry/,
    ],
    [['--coordinator', 'owner'], /^--coordinator owner: urn:mwp:dev:org:local:human:owner is a human, not an Agent$/],
    [['--deadline', 'tomorrow'], /^--deadline tomorrow: not an RFC 3339 timestamp/],
    [['--deadline', '2001-01-01T00:00:00Z'], /^--deadline 2001-01-01T00:00:00Z: in the past/],
    [['--objective', ' '], /^--objective must say what the Mission is for/],
  ])('%j', async (flags, message) => {
    const base = {'--objective': 'Ship it', '--coordinator': 'coordinator'} as Record<string, string>
    for (let i = 0; i < flags.length; i += 2) base[flags[i]!] = flags[i + 1]!
    const r = op(['mission', 'create', ...Object.entries(base).flat(), '--json'])
    expect(r.status, r.stdout + r.stderr).toBe(2)
    expect(JSON.parse(r.stdout)).toEqual({
      status: 'error',
      error: {code: 'USAGE', message: expect.stringMatching(message)},
    })
  })

  it('a deadline is refused at or before the injected now, accepted one second after', () => {
    const now = new Date('2027-01-31T00:00:00.000Z')
    expect(deadlineProblem('2027-01-30T23:59:59Z', now)).toMatch(/in the past/)
    expect(deadlineProblem('2027-01-31T00:00:00Z', now)).toMatch(/in the past/)
    expect(deadlineProblem('2027-01-31T01:00:00+01:00', now)).toMatch(/in the past/)
    expect(deadlineProblem('2027-01-31T00:00:01Z', now)).toBeNull()
    expect(deadlineProblem('2027-02-30T00:00:00Z', now)).toMatch(/not an RFC 3339 timestamp/)
  })

  it('mission replace-coordinator checks --agent the same way', async () => {
    const g = await givenMission(o)
    const r = op(['mission', 'replace-coordinator', g, '--agent', 'owner', '--json'])
    expect(r.status).toBe(2)
    expect(JSON.parse(r.stdout).error.message).toBe(
      '--agent owner: urn:mwp:dev:org:local:human:owner is a human, not an Agent',
    )
  })

  it('an Agent of the registry and a future deadline are accepted', () => {
    const r = op([
      'mission',
      'create',
      '--objective',
      'Ship it',
      '--coordinator',
      'worker-1',
      '--deadline',
      '2099-01-01T00:00:00Z',
      '--json',
    ])
    expect(r.status, r.stderr).toBe(0)
  })
})

describe('mission cancel asks first (terminal Command)', () => {
  it('without a terminal and without --yes it is a usage error saying to pass --yes, and nothing is sent', async () => {
    const g = await givenMission(o)
    const before = (await logged(o, g)).length
    const r = op(['mission', 'cancel', g, '--message', 'x', '--json'])
    expect(r.status).toBe(2)
    expect(JSON.parse(r.stdout).error.message).toContain('pass --yes')
    expect(await logged(o, g)).toHaveLength(before)
  })

  it('on a terminal: No keeps the Mission (exit 0); Ctrl-C at the prompt exits 130; nothing is sent', async () => {
    const g = await givenMission(o)
    const before = (await logged(o, g)).length
    const args = ['mission', 'cancel', g, '--message', 'x', ...o.local, '--key', keyPath(o, 'owner')]
    const no = await onTerminal(args, 'n\r')
    expect(no.screen).toContain('This cannot be undone.')
    expect(no.status, no.screen).toBe(0)
    expect(no.screen).toContain('not cancelled')
    const interrupted = await onTerminal(args, '\x03')
    expect(interrupted.status, interrupted.screen).toBe(130)
    expect(interrupted.screen).toContain('mwp: cancelled at the prompt')
    expect(await logged(o, g)).toHaveLength(before)
  }, 30_000)

  it('on a terminal: Yes cancels', async () => {
    const g = await givenMission(o)
    const yes = await onTerminal(['mission', 'cancel', g, '--message', 'x', ...o.local], 'y\r')
    expect(yes.status, yes.screen).toBe(0)
    expect((await logged(o, g)).at(-1)!.kind).toBe('mission.cancelled')
  }, 30_000)
})

describe('repeatable flags', () => {
  it('group tail --event-kind mission. G: the Group stays the positional argument; commas give several kinds', async () => {
    const g = await givenMission(o)
    const one = op(['group', 'tail', '--event-kind', 'mission.', g])
    expect(one.status, one.stderr).toBe(0)
    const kinds = one.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).kind as string)
    expect(kinds.length).toBeGreaterThan(0)
    expect(kinds.every((k) => k.startsWith('mission.'))).toBe(true)
    const all = (await logged(o, g)).map((e) => e.kind)
    const two = op(['group', 'tail', '--event-kind', 'mission.,membership.', g])
    expect(
      two.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).kind),
    ).toEqual(all.filter((k) => k.startsWith('mission.') || k.startsWith('membership.')))
  })
})

/** A TCP port free right now on loopback (the restarted server must come back on the same one). */
async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const port = (s.address() as {port: number}).port
  await new Promise((r) => s.close(r))
  return port
}

describe('group tail --follow across a server restart', () => {
  let dir: string
  afterAll(() => dir && rmSync(dir, {recursive: true, force: true}))

  it('reconnects with backoff and resumes right after its last printed sequence: contiguous, no duplicates, still running', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mwp-tail-restart-'))
    const port = await freePort()
    // `mwp org init` writes TLS material the restarted server serves again (--dev-tls would mint a new CA).
    const init = mwp(['org', 'init', join(dir, 'org'), '--workers', '1', '--port', String(port), '--json'])
    expect(init.status, init.stdout + init.stderr).toBe(0)
    const org = {config: join(dir, 'org', 'mwp.config.json')}
    const env = {MWP_CONFIG: org.config}
    let server = serveProcess(org.config, [])
    await server.listening
    const created = mwp(['mission', 'create', '--objective', 'Restart', '--coordinator', 'coordinator', '--json'], {
      env,
    })
    expect(created.status, created.stdout + created.stderr).toBe(0)
    const g = JSON.parse(created.stdout).result.groupId as string
    const direct = (text: string) => {
      const r = mwp(['mission', 'direct', g, '--message', text], {env})
      expect(r.status, r.stderr).toBe(0)
    }
    direct('one')

    const tail = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/run.js'), 'group', 'tail', g, '--follow'], {
      env: {...process.env, NO_COLOR: '1', ...env},
    })
    let out = ''
    let err = ''
    tail.stdout.on('data', (d) => (out += d))
    tail.stderr.on('data', (d) => (err += d))
    let tailExit: number | null | undefined
    tail.on('close', (code) => (tailExit = code))
    const sequences = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).sequence as number)
    try {
      const first = (await logged0(org.config, g)).length
      await until(() => sequences().length >= first, 'the replay')

      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
      await until(() => err.includes('connection to the authority lost'), 'the tail to notice')
      // An outage longer than a few attempts (the transport's default gives up after 5).
      await until(() => err.includes('reconnecting (attempt 7)'), 'seven reconnect attempts')
      server = serveProcess(org.config, [])
      await server.listening
      direct('two')
      direct('three')
      const total = (await logged0(org.config, g)).length
      await until(() => sequences().length >= total, 'the Events after the restart')
      await until(() => err.includes('reconnected; resuming after sequence'), 'the reconnect notice')
      expect(sequences()).toEqual(Array.from({length: total}, (_, i) => i + 1))
      expect(tailExit).toBeUndefined()
    } finally {
      tail.kill('SIGTERM')
      await until(() => tailExit !== undefined, 'the tail to stop')
      server.child.kill('SIGTERM')
      await server.exited
    }
    expect(tailExit).toBe(0)
  }, 90_000)
})

/** The Group's Events as the CLI reads them (a one-shot tail over the wire). */
async function logged0(config: string, g: string): Promise<unknown[]> {
  const r = mwp(['group', 'tail', g], {env: {MWP_CONFIG: config}})
  if (r.status !== 0) throw new Error(r.stderr)
  return r.stdout.split('\n').filter(Boolean)
}
