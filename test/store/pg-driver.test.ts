// The vendored PostgreSQL client (vendor/postgres/PATCHES.md, issue #15): a transaction whose
// backend is terminated crashes a process on the npm copy of postgres 3.4.9 with an uncatchable
// `TypeError: Cannot read properties of null (reading 'write')`, and is survived by the patched
// copy, whose pool then reconnects by itself. Each runs in its own child process (the crash would
// otherwise take the test worker down), on a real throwaway PostgreSQL.

import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type PostgresInstance, shouldRunPostgres, startPostgres} from '../support/postgres-harness.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const FIXTURE = join(PROJECT_ROOT, 'test/support/fixtures-pg-closed-socket.mjs')
const TYPES_CUT = join(PROJECT_ROOT, 'test/support/fixtures-pg-types-cut.mjs')
const VENDORED = join(PROJECT_ROOT, 'vendor/postgres/index.js')
// The npm package's ESM entry (its `import` export).
const UPSTREAM = join(PROJECT_ROOT, 'node_modules/postgres/src/index.js')

function drive(modulePath: string, url: string, rounds: number, fixture = FIXTURE) {
  const r = spawnSync(process.execPath, [fixture, modulePath, url, String(rounds)], {encoding: 'utf8', timeout: 60_000})
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

describe.runIf(shouldRunPostgres('pg-driver'))('the PostgreSQL client survives a terminated transaction', () => {
  let pg: PostgresInstance
  beforeAll(async () => {
    pg = await startPostgres()
  }, 120_000)
  afterAll(async () => pg?.stop())

  // Which of the two upstream faults ends the run first is a race: the uncatchable TypeError at
  // nextWrite (patches 1-4), or the dead backend's 57P01 error handed to the next transaction on
  // the reconnected connection (patch 6). Either way the process exits 1.
  it('the npm copy of postgres 3.4.9 crashes the process (the bugs this test guards)', () => {
    const r = drive(UPSTREAM, pg.url, 5)
    // On a loaded machine (CI with the PoC's processes beside it) the npm copy once ended with no
    // exit status: killed by spawnSync's 60 s timeout, so most likely hung. That is not getting
    // through either; the vendored copy below must finish cleanly within the same bound.
    expect([1, null]).toContain(r.status)
    if (r.status === 1)
      expect(r.stderr).toMatch(
        /TypeError: Cannot read properties of null \(reading 'write'\)\s+at Immediate\.nextWrite|PostgresError: terminating connection due to administrator command/,
      )
  }, 90_000)

  it('the vendored copy rejects each killed transaction and reconnects by itself', () => {
    const rounds = 5
    const r = drive(VENDORED, pg.url, rounds)
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const result = JSON.parse(r.stdout) as {killed: string[]; after: [number, number][]}
    expect(result.killed).toEqual(Array.from({length: rounds}, () => 'CONNECTION_CLOSED'))
    expect(result.after).toEqual(Array.from({length: rounds}, (_, i) => [i, 1]))
  }, 90_000)

  // Patch 8: a connection lost while it fetches the array types (stop 22's CI: the server died of
  // an unhandled `CONNECTION_CLOSED` rejection after a postmaster kill). The caller's query runs on
  // the reconnected connection; nothing escapes as an unhandled rejection.
  it('a connection lost during its type fetch reconnects, and the caller’s query succeeds', () => {
    const r = drive(VENDORED, pg.url, 1, TYPES_CUT)
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({cuts: 1, one: 1})
  }, 90_000)
})
