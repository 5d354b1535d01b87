// The README's shell examples, run as a newcomer would paste them (in a scratch directory that
// has the project's fixtures), so the documentation stays true at every commit.

import {spawn, spawnSync} from 'node:child_process'
import {chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {describeRun, readmeBlocks, runBlock} from '../support/readme-blocks.js'
import {HAVE_UPSTREAM, PROJECT_ROOT, UPSTREAM} from '../support/upstream.js'

// Installing, the whole test suite and the benchmark are what CI itself runs.
const runnable = readmeBlocks.filter((b) => !/\bnpm (ci|test|run bench)\b/.test(b))

const dir = mkdtempSync(join(tmpdir(), 'mwp-readme-'))
symlinkSync(join(PROJECT_ROOT, 'fixtures'), join(dir, 'fixtures'))

// `mwp` is this checkout's CLI: a shim on PATH that execs node, so a backgrounded
// `mwp authority serve &` is the server process itself and `kill $!` stops it. The README's
// `npm link` links into a scratch npm prefix (never the machine's), whose bin/ comes first on
// PATH once it exists; its scripts are not run (the suite has built dist/ already).
const shims = mkdtempSync(join(tmpdir(), 'mwp-readme-bin-'))
writeFileSync(
  join(shims, 'mwp'),
  `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(PROJECT_ROOT, 'bin/run.js'))} "$@"\n`,
)
chmodSync(join(shims, 'mwp'), 0o755)
const prefix = mkdtempSync(join(tmpdir(), 'mwp-readme-prefix-'))

function run(block: string, cwd = block.includes('npm link') ? PROJECT_ROOT : dir) {
  const script = block
    .replaceAll('../shared/protocol', UPSTREAM)
    .replaceAll('--root .', `--root ${JSON.stringify(PROJECT_ROOT)}`)
  return runBlock(script, cwd, {
    PATH: `${join(prefix, 'bin')}:${shims}:${process.env.PATH ?? ''}`,
    npm_config_prefix: prefix,
    npm_config_ignore_scripts: 'true',
  })
}

describe('README examples', () => {
  it('the CLI manifest points at the compiled commands (regression: built under NODE_ENV=test it named .ts sources)', () => {
    const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'oclif.manifest.json'), 'utf8'))
    const paths = Object.values(manifest.commands).map((c) => (c as {relativePath: string[]}).relativePath.join('/'))
    expect(paths.length).toBeGreaterThan(10)
    for (const p of paths) expect(p).toMatch(/^dist\/commands\/.*\.js$/)
  })

  it('has the examples this test expects', () => {
    expect(runnable.length).toBeGreaterThanOrEqual(4)
  })

  it.each(runnable.map((b, i) => [i, b.split('\n')[0]] as const))('block %i (%s) runs as documented', async (i) => {
    const block = runnable[i]
    if (block.includes('../shared/protocol') && !HAVE_UPSTREAM) return
    const r = run(block)
    expect(r.status, describeRun(block, r)).toBe(0)
    if (block.includes('npm link')) {
      // The link is the checkout's CLI under the name the README uses.
      expect(existsSync(join(prefix, 'bin', 'mwp'))).toBe(true)
      expect(r.stdout).toMatch(/^mwp\/0\.1\.0 /m)
    }
    if (block.includes('tampered.json')) {
      expect(r.stdout).toContain('AUTH_INVALID_SIGNATURE\nexit 1')
      expect(r.stdout).toMatch(/stage: signature\n {2}reason: equation-mismatch/)
    }
    if (block.includes('mwp admit')) expect(r.stdout).toMatch(/admitted command sha256:/)
    if (block.includes('--historical')) expect(r.stdout).toMatch(/first admitted: /)
    if (block.includes('authority serve')) {
      // The walkthrough's EXIT trap stops the server it started (regression: it once outlived the test).
      const log = join(dir, /org init (\S+)/.exec(block)![1]!, 'serve.log')
      for (let i = 0; i < 100 && !readFileSync(log, 'utf8').includes('"event":"shutdown"'); i++)
        await new Promise((resolve) => setTimeout(resolve, 50))
      expect(readFileSync(log, 'utf8')).toContain('"event":"shutdown"')
    }
    if (block.includes('agent run')) {
      // The Agent did the WorkItem: the follower saw its submission.
      expect(readFileSync(join(dir, 'agent-org', 'events.ndjson'), 'utf8')).toContain('"work.submitted"')
      expect(r.stdout).toContain('"kind":"work.submitted"')
    }
  })

  it('.gitignore covers everything the examples created (run in the checkout, nothing shows in git status)', () => {
    const created = readdirSync(dir, {withFileTypes: true})
      .filter((f) => f.name !== 'fixtures')
      .map((f) => (f.isDirectory() ? `${f.name}/` : f.name)) // a `dir/` pattern matches directories only
    expect(created.length).toBeGreaterThan(5)
    const r = spawnSync('git', ['check-ignore', '--no-index', '--verbose', '--non-matching', ...created], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    })
    const notIgnored = r.stdout.split('\n').filter((l) => l.startsWith('::'))
    expect(notIgnored).toEqual([])
  })

  it('the quick start (`npm start`) and the walkthrough run one after the other in one directory', async () => {
    // A directory that is the checkout to npm (its package.json and scripts), as a newcomer's is.
    const here = mkdtempSync(join(tmpdir(), 'mwp-quickstart-'))
    for (const f of ['package.json', 'bin', 'scripts']) symlinkSync(join(PROJECT_ROOT, f), join(here, f))
    const {NODE_ENV: _unset, ...env} = process.env
    // MWP_PORT=0: the quick start's port 7443 may be taken on a shared machine.
    const start = spawn('npm', ['start'], {cwd: here, env: {...env, MWP_PORT: '0', NO_COLOR: '1'}, detached: true})
    let out = ''
    start.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')))
    start.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')))
    const exited = new Promise<number | string | null>((resolve) =>
      start.on('exit', (code, signal) => resolve(code ?? signal)),
    )
    try {
      for (let i = 0; i < 600 && !/^listening on /m.test(out); i++) await new Promise((r) => setTimeout(r, 100))
      expect(out).toMatch(/^listening on wss:\/\/127\.0\.0\.1:\d+$/m)
      expect(out).toContain('created Organization')
      expect(out).not.toMatch(/^next: .*authority serve/m) // the script is starting it
      const walkthrough = runnable.find((b) => b.includes('org init my-org'))!
      const r = run(walkthrough, here)
      expect(r.status, describeRun(walkthrough, r)).toBe(0)
    } finally {
      process.kill(-start.pid!, 'SIGTERM')
    }
    expect(await exited).not.toBe(null)
    expect(out).toContain('"event":"shutdown"')
  }, 180_000)
})
