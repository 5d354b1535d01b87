// A tiny test project in a temp directory, run by this project's vitest with the options of a
// recorded run (vitest.config.ts's recordRun), so tests can check what the behavior report makes
// of real results rather than of results written by hand.

import {spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import type {CliResult} from './cli.js'
import {PROJECT_ROOT} from './upstream.js'

const VITEST = join(PROJECT_ROOT, 'node_modules', 'vitest', 'vitest.mjs')

/**
 * A checkout root holding behavior/rows.json with `rows` and the test files `tests` (paths
 * relative to the root), configured like this project's recorded run. Returns the root.
 */
export function fixtureProject(
  rows: {id: string; category: string; section: string}[],
  tests: Record<string, string>,
): string {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-behavior-run-'))
  mkdirSync(join(dir, 'behavior'))
  writeFileSync(join(dir, 'behavior', 'rows.json'), JSON.stringify({rows}))
  for (const [file, source] of Object.entries(tests)) {
    mkdirSync(dirname(join(dir, file)), {recursive: true})
    writeFileSync(join(dir, file), source)
  }
  // The fixture's tests import vitest; resolve it to this project's copy.
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(dir, 'node_modules'))
  writeFileSync(
    join(dir, 'vitest.config.ts'),
    `import {recordRun} from ${JSON.stringify(join(PROJECT_ROOT, 'vitest.config.ts'))}\n` +
      `export default {test: {include: ['test/**/*.test.ts'], ...recordRun}}\n`,
  )
  return dir
}

/** Runs the fixture's suite once with this project's vitest; its results land in the fixture. */
export function runFixture(dir: string): Promise<CliResult> {
  // The outer run's VITEST_* variables would make the inner vitest think it is one of its workers.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')))
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [VITEST, 'run'], {cwd: dir, env: {...env, NO_COLOR: '1'}})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (status) => resolve({status, stdout, stderr}))
  })
}
