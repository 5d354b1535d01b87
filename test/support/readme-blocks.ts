// The README's shell examples and how to run one as a newcomer pastes it: bash with -e and
// pipefail (unless the block itself shows an exit code), no NODE_ENV, NO_COLOR. Shared by the
// README test (this checkout's CLI) and the packed-tarball test (the installed package).

import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {PROJECT_ROOT} from './upstream.js'

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')
export const readmeBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)

export interface BlockResult {
  status: number | null
  stdout: string
  stderr: string
}

export function runBlock(script: string, cwd: string, env: Record<string, string | undefined>): BlockResult {
  const {NODE_ENV: _unset, ...rest} = {...process.env, ...env}
  const strict = script.includes('echo "exit $?"') ? [] : ['-e', '-o', 'pipefail']
  const r = spawnSync('bash', [...strict, '-c', script], {
    cwd,
    encoding: 'utf8',
    env: {...rest, NO_COLOR: '1'},
    timeout: 300_000,
  })
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

export const describeRun = (block: string, r: BlockResult) =>
  `${block}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`
