// A throwaway PostgreSQL for tests and benchmarks: never depends on a system service being up.
//
// Given an existing server's admin URL (MWP_TEST_POSTGRES_URL / MWP_BENCH_POSTGRES_URL), each
// start creates a fresh, uniquely named database there (the URL's user needs CREATEDB) and drops
// it on stop(). Otherwise it runs a private cluster from the highest /usr/lib/postgresql/*/bin:
// initdb into a temporary directory, a server on a free loopback port (unix socket inside that
// directory), stopped and removed on stop(). Tests run it with fsync off; benchmarks keep fsync on,
// because every acknowledged Command must be durable. The server refuses to run as root, so as
// root every server binary runs as the `postgres` OS user via runuser.

import {execFile, execFileSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {promisify} from 'node:util'
import postgres from '#postgres' // the patched copy in vendor/postgres (PATCHES.md)

const run = promisify(execFile)

export interface PostgresInstance {
  /** URL of a fresh empty database. */
  url: string
  /** Creates another fresh empty database on the same server and returns its URL. */
  newDatabase(): Promise<string>
  /** Stops the server (or drops the databases) and removes every trace. */
  stop(): Promise<void>
  /**
   * A private cluster only (undefined on an existing server): SIGKILLs the postmaster this
   * cluster started, as a crash would, and resolves with its PID once it is gone. Its backends
   * exit by themselves when they notice (PostgreSQL's postmaster-death check).
   */
  killPostmaster?(): Promise<number>
  /** A private cluster only: starts the server again on the same data directory and port. */
  restart?(): Promise<void>
}

/** The highest-versioned /usr/lib/postgresql/N/bin holding initdb, pg_ctl and postgres. */
export function postgresBinDir(): string | null {
  const base = '/usr/lib/postgresql'
  let versions: string[]
  try {
    versions = readdirSync(base)
  } catch {
    return null
  }
  const dirs = versions
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(base, v, 'bin'))
  return dirs.find((d) => ['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(join(d, b)))) ?? null
}

function postgresUid(): {uid: number; gid: number} | null {
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('postgres:'))
    if (!line) return null
    const [, , uid, gid] = line.split(':')
    return {uid: Number(uid), gid: Number(gid)}
  } catch {
    return null
  }
}

const isRoot = () => process.getuid?.() === 0

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Whether a process with this PID exists (signal 0 only checks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Whether startPostgres() can work here (with `external` an existing server's admin URL), and why not. */
export function postgresSupport(external?: string): {available: true} | {available: false; reason: string} {
  if (external) return {available: true}
  if (!postgresBinDir())
    return {available: false, reason: 'no /usr/lib/postgresql/*/bin/initdb and no existing server URL'}
  if (isRoot() && (!postgresUid() || !existsSync('/usr/sbin/runuser'))) {
    return {
      available: false,
      reason: 'running as root but there is no `postgres` OS user (or no runuser) to run the server',
    }
  }
  return {available: true}
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

async function createDatabase(adminUrl: string, name: string): Promise<string> {
  const sql = postgres(adminUrl, {max: 1, onnotice: () => {}, connect_timeout: 10})
  try {
    await sql.unsafe(`CREATE DATABASE "${name}"`)
  } finally {
    await sql.end({timeout: 5})
  }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const sql = postgres(adminUrl, {max: 1, onnotice: () => {}, connect_timeout: 10})
  try {
    await sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  } finally {
    await sql.end({timeout: 5})
  }
}

const uniqueName = () => `mwp_${randomBytes(6).toString('hex')}`

async function onExistingServer(adminUrl: string): Promise<PostgresInstance> {
  const names: string[] = []
  const newDatabase = async () => {
    const name = uniqueName()
    names.push(name)
    return createDatabase(adminUrl, name)
  }
  const url = await newDatabase()
  return {
    url,
    newDatabase,
    async stop() {
      for (const name of names.splice(0)) await dropDatabase(adminUrl, name)
    },
  }
}

async function throwawayCluster(durable: boolean): Promise<PostgresInstance> {
  const bin = postgresBinDir()
  if (!bin) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin')
  const owner = isRoot() ? postgresUid() : null
  const as = (cmd: string, args: string[], timeout: number) =>
    owner
      ? run('/usr/sbin/runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], {timeout})
      : run(join(bin, cmd), args, {timeout})

  const dir = mkdtempSync(join(tmpdir(), 'mwp-pg-'))
  if (owner) chownSync(dir, owner.uid, owner.gid)
  const data = join(dir, 'data')
  const log = join(dir, 'server.log')
  let started = false
  const serverOptions = (port: number) =>
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1${durable ? '' : ' -c fsync=off'}`
  // If the test process dies without stop(), do not leave a server running.
  const emergencyStop = () => {
    try {
      if (started) {
        const args = ['-D', data, 'stop', '-m', 'immediate', '-w', '-t', '10']
        if (owner)
          execFileSync('/usr/sbin/runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...args], {
            stdio: 'ignore',
            timeout: 15_000,
          })
        else execFileSync(join(bin, 'pg_ctl'), args, {stdio: 'ignore', timeout: 15_000})
      }
    } catch {
      // best effort
    }
    rmSync(dir, {recursive: true, force: true})
  }
  process.once('exit', emergencyStop)

  try {
    await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'], 60_000)
    let port = 0
    for (let attempt = 1; !started; attempt++) {
      port = await freePort()
      try {
        await as('pg_ctl', ['-D', data, '-l', log, '-o', serverOptions(port), '-w', '-t', '30', 'start'], 45_000)
        started = true
      } catch (e) {
        if (attempt >= 3) {
          const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : ''
          throw new Error(`pg_ctl start failed: ${(e as Error).message}\n${tail}`)
        }
      }
    }
    const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`
    const newDatabase = () => createDatabase(adminUrl, uniqueName())
    const url = await newDatabase()
    return {
      url,
      newDatabase,
      async killPostmaster() {
        // postmaster.pid's first line is the postmaster's PID (the cluster this process started).
        const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
        if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster PID in ${data}/postmaster.pid`)
        process.kill(pid, 'SIGKILL')
        for (let i = 0; i < 200 && alive(pid); i++) await sleep(25)
        if (alive(pid)) throw new Error(`postmaster ${pid} did not exit after SIGKILL`)
        return pid
      },
      async restart() {
        // The killed postmaster's backends may still hold its shared memory for a moment, and
        // the new postmaster refuses to start until they have exited: try again a few times.
        for (let attempt = 1; ; attempt++) {
          try {
            await as('pg_ctl', ['-D', data, '-l', log, '-o', serverOptions(port), '-w', '-t', '30', 'start'], 45_000)
            started = true
            return
          } catch (e) {
            if (attempt >= 40) {
              const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : ''
              throw new Error(`pg_ctl start (restart) failed: ${(e as Error).message}\n${tail}`)
            }
            await sleep(250)
          }
        }
      },
      async stop() {
        process.removeListener('exit', emergencyStop)
        try {
          await as('pg_ctl', ['-D', data, 'stop', '-m', 'fast', '-w', '-t', '30'], 45_000)
        } finally {
          started = false
          rmSync(dir, {recursive: true, force: true})
        }
      },
    }
  } catch (e) {
    process.removeListener('exit', emergencyStop)
    emergencyStop()
    throw e
  }
}

/** Starts a throwaway PostgreSQL, or a fresh database on the `external` server. */
export async function startPostgres(options: {external?: string; durable: boolean}): Promise<PostgresInstance> {
  return options.external ? onExistingServer(options.external) : throwawayCluster(options.durable)
}
