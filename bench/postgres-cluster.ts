// A throwaway PostgreSQL cluster for the ingress benchmark. Unlike the test harness it keeps the
// server's durability defaults (fsync=on, synchronous_commit=on, full_page_writes=on): every
// acknowledged Command is committed to disk. MWP_BENCH_POSTGRES_URL uses an existing server
// instead (its database must be empty or fresh). Without server binaries the caller skips.

import {execFile, execFileSync} from 'node:child_process'
import {chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {promisify} from 'node:util'
import postgres from 'postgres'

const run = promisify(execFile)

export interface BenchPostgres {
  url: string
  /** Another empty database on the same server (the warm-up store). */
  newDatabase(): Promise<string>
  stop(): Promise<void>
}

let databases = 0
async function createDatabase(url: string): Promise<string> {
  const name = `mwp_bench_${process.pid}_${++databases}`
  const sql = postgres(url, {max: 1, onnotice: () => {}})
  try {
    await sql.unsafe(`CREATE DATABASE "${name}"`)
  } finally {
    await sql.end({timeout: 5})
  }
  const next = new URL(url)
  next.pathname = `/${name}`
  return next.toString()
}

function binDir(): string | null {
  const base = '/usr/lib/postgresql'
  let versions: string[]
  try {
    versions = readdirSync(base)
  } catch {
    return null
  }
  return (
    versions
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
      .map((v) => join(base, v, 'bin'))
      .find((d) => ['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(join(d, b)))) ?? null
  )
}

function postgresUser(): {uid: number; gid: number} | null {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'))
  if (!line) return null
  const [, , uid, gid] = line.split(':')
  return {uid: Number(uid), gid: Number(gid)}
}

/** Why no cluster can be started here, or null when one can. */
export function postgresUnavailable(): string | null {
  if (process.env.MWP_BENCH_POSTGRES_URL) return null
  if (!binDir()) return 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin'
  if (process.getuid?.() === 0 && (!postgresUser() || !existsSync('/usr/sbin/runuser'))) return 'running as root without a postgres OS user and runuser'
  return null
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

export async function startBenchPostgres(): Promise<BenchPostgres> {
  const external = process.env.MWP_BENCH_POSTGRES_URL
  if (external) return {url: external, newDatabase: () => createDatabase(external), async stop() {}}
  const bin = binDir()!
  const owner = process.getuid?.() === 0 ? postgresUser() : null
  const as = (cmd: string, args: string[]) =>
    owner ? run('/usr/sbin/runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], {timeout: 60_000}) : run(join(bin, cmd), args, {timeout: 60_000})
  const dir = mkdtempSync(join(tmpdir(), 'mwp-bench-pg-'))
  if (owner) chownSync(dir, owner.uid, owner.gid)
  const data = join(dir, 'data')
  let started = false
  const emergencyStop = () => {
    try {
      if (started) {
        const args = ['-D', data, 'stop', '-m', 'immediate', '-w']
        if (owner) execFileSync('/usr/sbin/runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...args], {stdio: 'ignore'})
        else execFileSync(join(bin, 'pg_ctl'), args, {stdio: 'ignore'})
      }
    } catch {
      // best effort
    }
    rmSync(dir, {recursive: true, force: true})
  }
  process.once('exit', emergencyStop)
  await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C'])
  const port = await freePort()
  // Durability stays at the defaults; only connection limits and buffers are sized for the run.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=50 -c shared_buffers=128MB`
  await as('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', '-t', '30', 'start'])
  started = true
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    newDatabase: () => createDatabase(`postgres://postgres@127.0.0.1:${port}/postgres`),
    async stop() {
      process.removeListener('exit', emergencyStop)
      try {
        await as('pg_ctl', ['-D', data, 'stop', '-m', 'fast', '-w', '-t', '30'])
      } finally {
        started = false
        rmSync(dir, {recursive: true, force: true})
      }
    },
  }
}
