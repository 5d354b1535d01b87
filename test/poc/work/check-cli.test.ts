// check.js as the Coordinator runs it, in a real child process (the TypeScript source through tsx,
// so the test does not depend on a fresh dist/): one JSON line, exit 0 passed, 1 failed, 2 usage.

import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {projectDir} from './layout.js'

const root = fileURLToPath(new URL('../../..', import.meta.url))

function check(...args: string[]): {status: number | null; stdout: string; stderr: string} {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/poc/work/check.ts', ...args], {
    cwd: root,
    encoding: 'utf8',
  })
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

describe('check.js', () => {
  it('exits 0 with one JSON line for a passing check, 1 for a failing one', async () => {
    const good = await projectDir('textkit', 9)
    const passed = check('rule', good)
    expect(passed.status).toBe(0)
    const lines = passed.stdout.split('\n').filter((l) => l !== '')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({check: 'rule', passed: true, measured: {violations: 0}})

    const broken = await projectDir('textkit', 9, {defect: 'truncate-off-by-one'})
    const failed = check('tests', broken)
    expect(failed.status).toBe(1)
    const result = JSON.parse(failed.stdout)
    expect(result).toMatchObject({check: 'tests', passed: false})
    expect(result.detail).toContain('failing: truncate-cuts-with-ellipsis')
  })

  it('exits 2 with nothing on stdout for an unknown check, a missing directory or missing arguments', async () => {
    const dir = await projectDir('textkit', 9)
    for (const args of [['lint', dir], ['rule', `${dir}/nowhere`], ['rule'], []]) {
      const r = check(...args)
      expect(r.status).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toContain('usage: check <typecheck|tests|rule|requirements|review-verdict|package|docs> <dir>')
    }
  })
})
