// Where the upstream protocol bundle lives, and how suites that need it behave without it:
// skipped with a message locally, a failure under CI=true.

import {existsSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const UPSTREAM = process.env.MWP_UPSTREAM_PROTOCOL ?? join(PROJECT_ROOT, '..', 'shared', 'protocol')
export const HAVE_UPSTREAM = existsSync(join(UPSTREAM, 'PIN.json'))

if (!HAVE_UPSTREAM) {
  if (process.env.CI === 'true')
    throw new Error(`the upstream protocol bundle is missing at ${UPSTREAM}; CI requires it`)
  console.warn(`upstream protocol bundle not found at ${UPSTREAM}: skipping the suites that need it`)
}
