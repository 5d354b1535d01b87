// `mwp console` as the command a person runs (bin/run.js → dist/): it prints its URL with the
// access token (one JSON line with --json), serves until SIGINT and exits 0; off loopback it
// refuses to run without TLS (usage error, exit 2).

import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {request} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createDevOrganization, type DevOrganization} from '../../src/config/dev-org.js'
import {devTlsHook} from '../../src/config/dev-tls-hook.js'
import {type ConfiguredAuthority, loadOrgConfig, openAuthorityFromConfig} from '../../src/config/org-config.js'
import {type RunningServer, startServer} from '../../src/wire/server.js'
import {mwpAsync} from '../support/cli.js'
import {PROJECT_ROOT} from '../support/upstream.js'

let dir: string
let org: DevOrganization
let opened: ConfiguredAuthority
let server: RunningServer

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-console-cmd-'))
  org = await createDevOrganization(join(dir, 'org'), {
    organization: 'urn:mwp:test:org:console-cmd',
    devTls: devTlsHook,
  })
  const config = loadOrgConfig(org.config)
  opened = await openAuthorityFromConfig(config)
  server = await startServer({
    authority: opened.authority,
    host: '127.0.0.1',
    port: 0,
    tls: {cert: readFileSync(config.server.tls!.cert, 'utf8'), key: readFileSync(config.server.tls!.key, 'utf8')},
    log: () => undefined,
  })
}, 60_000)

afterAll(async () => {
  await server?.close()
  await opened?.close()
  if (dir) rmSync(dir, {recursive: true, force: true})
})

const status = (url: string, headers: Record<string, string> = {}) =>
  new Promise<{status: number; cookie: string}>((resolve, reject) => {
    request(url, {headers}, (res) => {
      res.resume()
      resolve({status: res.statusCode ?? 0, cookie: String(res.headers['set-cookie'] ?? '')})
    })
      .on('error', reject)
      .end()
  })

describe('mwp console', () => {
  it('prints one JSON line with its URL, refuses requests without the token, serves with it, and exits 0 on SIGINT', async () => {
    const child = spawn(
      process.execPath,
      [join(PROJECT_ROOT, 'bin/run.js'), 'console', '--config', org.config, '--url', server.url, '--json'],
      {cwd: dir, env: {...process.env, NO_COLOR: '1'}},
    )
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        stdout += d
        if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')))
      })
      child.on('close', () => reject(new Error(`exited early: ${stderr}`)))
    })
    const printed = JSON.parse(line) as {status: string; result: {url: string}}
    expect(printed.status).toBe('ok')
    const url = new URL(printed.result.url)
    expect(url.hostname).toBe('127.0.0.1')
    const token = url.searchParams.get('token')!
    expect(token).toMatch(/^[\w-]{43}$/)
    expect((await status(`${url.origin}/`)).status).toBe(403)
    const first = await status(url.href)
    expect(first.status).toBe(303)
    expect((await status(`${url.origin}/`, {cookie: first.cookie.split(';')[0]!})).status).toBe(200)
    child.kill('SIGINT')
    expect(await exited, stderr).toBe(0)
    expect(stdout.trim().split('\n')).toHaveLength(1) // --json: that line is the whole output
  })

  it('a non-loopback --host without --tls-cert and --tls-key is a usage error (exit 2)', async () => {
    const r = await mwpAsync(['console', '--config', org.config, '--url', server.url, '--host', '0.0.0.0'])
    expect(r.status, r.stderr).toBe(2)
    expect(r.stderr).toContain('--host 0.0.0.0 is not a loopback address: give --tls-cert and --tls-key')
  })

  it('an unusable --scheduling-policy file is a usage error (exit 2), before anything is served', async () => {
    const r = await mwpAsync([
      'console',
      '--config',
      org.config,
      '--url',
      server.url,
      '--scheduling-policy',
      '/nonexistent/policy.json',
    ])
    expect(r.status, r.stderr).toBe(2)
    expect(r.stderr).toContain('cannot read the scheduling policy /nonexistent/policy.json')
    expect(r.stdout).toBe('')
  })
})
