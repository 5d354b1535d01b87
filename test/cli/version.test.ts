// `mwp --version` is answered by bin/run.js without loading oclif (its start-up cost, see
// bench/startup.ts): the line must stay the one oclif prints (config.userAgent), under oclif's
// rule (the first argument, whatever follows), and oclif must indeed not be loaded.
// Build first: npx tsc -p tsconfig.json && node dist/scripts/oclif-manifest.js

import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {Config} from '@oclif/core'
import {describe, expect, it} from 'vitest'
import {mwp} from '../support/cli.js'
import {PROJECT_ROOT} from '../support/upstream.js'

/** Loaded before bin/run.js: on exit, says on stderr whether any @oclif/core module was loaded. */
const reportOclif =
  'data:text/javascript,import {createRequire} from "node:module"; const r = createRequire("/"); ' +
  'process.on("exit", () => process.stderr.write("oclif loaded: " + Object.keys(r.cache).some((k) => k.includes("@oclif/core"))))'

const run = (args: string[]) =>
  spawnSync(process.execPath, ['--import', reportOclif, join(PROJECT_ROOT, 'bin/run.js'), ...args], {
    encoding: 'utf8',
    env: {...process.env, NO_COLOR: '1'},
  })

describe('mwp --version', () => {
  it("prints oclif's user agent line, whatever follows the flag", async () => {
    const {userAgent} = await Config.load(PROJECT_ROOT)
    for (const args of [['--version'], ['--version', '--json'], ['--version', 'verify']]) {
      const r = mwp(args)
      expect(r.status, r.stderr).toBe(0)
      expect(r.stdout).toBe(`${userAgent}\n`)
    }
  })

  it('does not load oclif; anything else does', () => {
    const version = run(['--version'])
    expect(version.status).toBe(0)
    expect(version.stderr).toBe('oclif loaded: false')
    // The same probe sees oclif when a command runs, and -v is still an unknown command (usage).
    const other = run(['-v'])
    expect(other.status).toBe(2)
    expect(other.stderr).toContain('oclif loaded: true')
  })
})
