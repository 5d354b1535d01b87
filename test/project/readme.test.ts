// The README's shell examples, run as a newcomer would paste them (in a scratch directory that
// has the project's fixtures), so the documentation stays true at every commit.

import {spawnSync} from 'node:child_process'
import {chmodSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {HAVE_UPSTREAM, PROJECT_ROOT, UPSTREAM} from '../support/upstream.js'

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')
const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1])
// Installing, the whole test suite and the benchmark are what CI itself runs.
const runnable = blocks.filter((b) => !/\bnpm (ci|test|run bench)\b/.test(b))

const dir = mkdtempSync(join(tmpdir(), 'mwp-readme-'))
symlinkSync(join(PROJECT_ROOT, 'fixtures'), join(dir, 'fixtures'))

// `npx mwp …` runs this checkout's CLI: an `npx` on PATH that execs node, so a backgrounded
// `npx mwp authority serve &` is the server process itself and `kill $!` stops it.
const shims = mkdtempSync(join(tmpdir(), 'mwp-readme-bin-'))
const realNpx = spawnSync('bash', ['-c', 'command -v npx'], {encoding: 'utf8'}).stdout.trim()
writeFileSync(
  join(shims, 'npx'),
  `#!/bin/sh\nif [ "$1" = mwp ]; then shift; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(PROJECT_ROOT, 'bin/run.js'))} "$@"; fi\nexec ${JSON.stringify(realNpx)} "$@"\n`,
)
chmodSync(join(shims, 'npx'), 0o755)

function run(block: string): {status: number | null; stdout: string; stderr: string} {
  const script = block
    .replaceAll('../shared/protocol', UPSTREAM)
    .replaceAll('--root .', `--root ${JSON.stringify(PROJECT_ROOT)}`)
  // As a user runs it: no NODE_ENV (vitest sets "test").
  const {NODE_ENV: _unset, ...rest} = process.env
  const env = {...rest, PATH: `${shims}:${rest.PATH ?? ''}`}
  // Every command must succeed, except where the README itself shows the exit code.
  const strict = block.includes('echo "exit $?"') ? [] : ['-e', '-o', 'pipefail']
  const r = spawnSync('bash', [...strict, '-c', script], {
    cwd: dir,
    encoding: 'utf8',
    env: {...env, NO_COLOR: '1'},
    timeout: 120_000,
  })
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
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
    expect(r.status, `${block}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).toBe(0)
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
})
