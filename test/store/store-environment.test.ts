// Issue #15: a store that opens but cannot be written is an environment error of every command
// that opens it: exit 3, --json prints exactly one error object, and its message names the file
// (or directory) and the cause. Real files, the built CLI as a child process: an immutable or
// read-only file, a read-only directory, and a full disk (a tiny tmpfs).
//
// Tests may run as root, for whom mode bits never stop a write. Then the file is made immutable
// (`chattr +i`, which stops root too) where the file system allows it, and the read-only
// directory is tried by running the CLI as the `nobody` user (runuser). Without either mechanism
// the test fails rather than skip: it must not pass without having made a store unwritable.

import {spawn, spawnSync} from 'node:child_process'
import {chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createDevOrganization, type DevOrganization} from '../../src/config/dev-org.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const BIN = join(PROJECT_ROOT, 'bin/run.js')
const isRoot = process.getuid?.() === 0
const RUNUSER = '/usr/sbin/runuser'

/** Runs the built CLI, as `nobody` when asked (root only). */
function mwpAs(user: 'self' | 'nobody', args: string[], cwd: string) {
  const argv = [BIN, ...args, '--json']
  const r =
    user === 'nobody'
      ? spawnSync(RUNUSER, ['-u', 'nobody', '--', process.execPath, ...argv], {
          cwd,
          encoding: 'utf8',
          env: {...process.env, NO_COLOR: '1', HOME: cwd},
          timeout: 60_000,
        })
      : spawnSync(process.execPath, argv, {
          cwd,
          encoding: 'utf8',
          env: {...process.env, NO_COLOR: '1'},
          timeout: 60_000,
        })
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

/** Runs the built CLI without blocking this process (a lock holder must keep running meanwhile). */
function mwpAsync(args: string[], cwd: string): Promise<ReturnType<typeof mwpAs>> {
  const child = spawn(process.execPath, [BIN, ...args, '--json'], {cwd, env: {...process.env, NO_COLOR: '1'}})
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  return new Promise((resolve) => child.on('close', (status) => resolve({status, stdout, stderr})))
}

/** Exit 3 and exactly one JSON error object on stdout whose message names `target` and matches `cause`. */
function expectEnvironment(r: ReturnType<typeof mwpAs>, target: string, cause: RegExp) {
  expect(r.status, r.stdout + r.stderr).toBe(3)
  const lines = r.stdout.trim().split('\n')
  expect(lines).toHaveLength(1)
  const out = JSON.parse(lines[0]!) as {status: string; error: {code: string; message: string}}
  expect(out).toMatchObject({status: 'error', error: {code: 'ENVIRONMENT'}})
  expect(out.error.message).toContain(target)
  expect(out.error.message).toMatch(cause)
}

const chattr = (flag: '+i' | '-i', path: string) => spawnSync('chattr', [flag, path], {encoding: 'utf8'}).status === 0

describe('a store that cannot be written (issue #15)', () => {
  let dir: string
  let org: DevOrganization
  let db: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mwp-store-env-'))
    chmodSync(dir, 0o755)
    org = await createDevOrganization(join(dir, 'org'), {port: 0})
    db = join(org.dir, 'authority.db')
    // The `nobody` runs below read the Organization (keys included: a throwaway test Organization).
    spawnSync('chmod', ['-R', 'a+rX', org.dir])
  }, 60_000)
  const mounted: string[] = []
  afterAll(() => {
    if (existsSync(db)) chattr('-i', db)
    for (const m of mounted) spawnSync('umount', [m])
    rmSync(dir, {recursive: true, force: true})
  })

  // A full disk, for real: a tmpfs only a little larger than the store (root, where mount works).
  it('a full disk: mission create and store init exit 3 naming the file and the cause', (ctx) => {
    const full = join(dir, 'full')
    mkdirSync(full)
    const size = Math.ceil(statSync(db).size / 1024) + 16
    const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}k`, 'tmpfs', full], {encoding: 'utf8'})
    if (mount.status !== 0) {
      // Logged, not silent: a non-root machine cannot mount one.
      console.warn(`store-environment: no tmpfs for the full-disk case here: ${mount.stderr.trim()}`)
      ctx.skip()
    }
    mounted.push(full)
    const copy = join(full, 'authority.db')
    copyFileSync(db, copy)
    const create = mwpAs(
      'self',
      [
        'mission',
        'create',
        '--objective',
        'x',
        '--coordinator',
        'coordinator',
        '--config',
        org.config,
        '--store',
        `sqlite:${copy}`,
      ],
      dir,
    )
    expectEnvironment(create, copy, /SQLITE_FULL|SQLITE_IOERR|disk is full|disk I\/O error/)
    const fresh = join(full, 'new.db')
    const init = mwpAs(
      'self',
      [
        'store',
        'init',
        '--store',
        `sqlite:${fresh}`,
        '--organization',
        org.organization,
        '--admission-key',
        join(org.dir, 'keys/admission.key.json'),
      ],
      dir,
    )
    expectEnvironment(init, fresh, /SQLITE_FULL|disk is full/)
  }, 60_000)

  it('an immutable or read-only store file: serve, store init, mission inspect and mission create exit 3 naming the file', () => {
    // As root: the immutable attribute (mode bits do not stop root), else the file read-only for `nobody`.
    let user: 'self' | 'nobody' = 'self'
    let cause = /EACCES|read-only for this user/
    if (!isRoot) chmodSync(db, 0o444)
    else if (chattr('+i', db)) cause = /EPERM|immutable/
    else if (existsSync(RUNUSER)) {
      chmodSync(db, 0o444)
      user = 'nobody'
    } else throw new Error('running as root without chattr or runuser: no way to make the store unwritable here')
    try {
      const config = org.config
      const store = `sqlite:${db}`
      const runs: string[][] = [
        ['authority', 'serve', '--config', config, '--store', store, '--port', '0'],
        [
          'store',
          'init',
          '--store',
          store,
          '--organization',
          org.organization,
          '--admission-key',
          join(org.dir, 'keys/admission.key.json'),
        ],
        ['mission', 'inspect', 'urn:mwp:test:group:none', '--config', config, '--store', store],
        ['mission', 'create', '--objective', 'x', '--coordinator', 'coordinator', '--config', config, '--store', store],
      ]
      for (const args of runs) expectEnvironment(mwpAs(user, args, dir), db, cause)
    } finally {
      chattr('-i', db)
      chmodSync(db, 0o644)
    }
    // Writable again, the same store serves commands (the refusal was the file's state, not the store's).
    const ok = mwpAs(
      'self',
      ['mission', 'inspect', 'urn:mwp:test:group:none', '--config', org.config, '--store', `sqlite:${db}`],
      dir,
    )
    expect(ok.status, ok.stdout + ok.stderr).toBe(1) // GROUP_NOT_FOUND: a rejection, not an environment error
  }, 120_000)

  it('a read-only directory: store init of a new store there exits 3 naming the directory', () => {
    const ro = join(dir, 'read-only')
    mkdirSync(ro)
    chmodSync(ro, 0o555)
    let user: 'self' | 'nobody' = 'self'
    if (isRoot) {
      if (!existsSync(RUNUSER))
        throw new Error('running as root without runuser: cannot make a directory read-only here')
      user = 'nobody'
    }
    const r = mwpAs(
      user,
      [
        'store',
        'init',
        '--store',
        `sqlite:${join(ro, 'new.db')}`,
        '--organization',
        org.organization,
        '--admission-key',
        join(org.dir, 'keys/admission.key.json'),
      ],
      dir,
    )
    expectEnvironment(r, `directory ${ro}`, /EACCES|read-only for this user/)
    expect(existsSync(join(ro, 'new.db'))).toBe(false)
  }, 60_000)

  it('a store another process keeps write-locked: mission create exits 3 naming the file; released, it succeeds', async () => {
    // A real second process holds the write lock (an open BEGIN IMMEDIATE) until its stdin closes.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(process.argv[1]); db.exec('BEGIN IMMEDIATE'); console.log('locked');
         process.stdin.on('end', () => { db.exec('ROLLBACK'); db.close() }); process.stdin.resume()`,
        db,
      ],
      {cwd: PROJECT_ROOT, stdio: ['pipe', 'pipe', 'inherit']},
    )
    const exited = new Promise((resolve) => holder.on('exit', resolve))
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve())
      holder.on('exit', (code) => reject(new Error(`the lock holder exited (${code})`)))
    })
    const create = ['mission', 'create', '--objective', 'x', '--coordinator', 'coordinator', '--config', org.config]
    try {
      const locked = mwpAsync([...create, '--store', `sqlite:${db}`], dir)
      expectEnvironment(await locked, db, /locked by another process/)
    } finally {
      holder.stdin.end()
      await exited
    }
    const ok = await mwpAsync([...create, '--store', `sqlite:${db}`], dir)
    expect(ok.status, ok.stdout + ok.stderr).toBe(0)
  }, 60_000)
})
