// The installable package (issue #18): `npm pack` gives a tarball that installs on a machine with
// only Node and npm (`npm install -g ./mwp-0.1.0.tgz`, into a scratch prefix) and runs every README
// example that needs no file of the repository, from a directory outside it, with the installed
// `mwp` alone on PATH. The install builds better-sqlite3 from source: minutes, so a slow test.

import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {describeRun, readmeBlocks, runBlock} from '../support/readme-blocks.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const work = mkdtempSync(join(tmpdir(), 'mwp-pack-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

// Blocks that need the checkout (its fixtures, the upstream bundle, npm scripts) are the README
// test's alone.
const standalone = readmeBlocks.filter((b) => !/\bnpm\b|fixtures\/|\.\.\/shared|--root \./.test(b))

describe('the packed package', () => {
  it('installs globally from its tarball and runs the README without the repository', () => {
    // dist/ is built by the suite's global setup; the tarball is what `npm pack` would publish.
    const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', work], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    })
    expect(pack.status, pack.stderr).toBe(0)
    const tarball = join(work, 'mwp-0.1.0.tgz')
    const prefix = join(work, 'prefix')
    const install = spawnSync(
      'npm',
      ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', tarball],
      {cwd: work, encoding: 'utf8', timeout: 900_000},
    )
    expect(install.status, install.stderr).toBe(0)
    const installed = join(prefix, 'lib', 'node_modules', 'mwp')
    // Only what the package needs: no tests, no TypeScript sources, no fixtures.
    for (const absent of ['test', 'src', 'fixtures', 'bench', 'node_modules/vitest'])
      expect(existsSync(join(installed, absent)), absent).toBe(false)

    const home = join(work, 'home')
    mkdirSync(home)
    const env = {PATH: `${join(prefix, 'bin')}:/usr/local/bin:/usr/bin:/bin`, HOME: home}
    const version = runBlock('command -v mwp && mwp --version', home, env)
    expect(version.stdout).toContain(join(prefix, 'bin', 'mwp'))
    expect(version.stdout).toMatch(/^mwp\/0\.1\.0 /m)

    expect(standalone.length).toBeGreaterThanOrEqual(3) // the walkthrough, the Agent, the registry
    for (const block of standalone) {
      const r = runBlock(block, home, env)
      expect(r.status, describeRun(block, r)).toBe(0)
    }
  }, 1_200_000)
})
