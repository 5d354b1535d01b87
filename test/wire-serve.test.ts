// `mwp authority serve` as a real subprocess (the built CLI): a development Organization from
// createDevOrganization, --dev-tls, a TLS 1.3 client session through the printed CA file, JSON-line
// logs on stderr, graceful shutdown on SIGTERM, and --insecure-loopback refusing a public bind.
// Build first: npx tsc -p tsconfig.json && node dist/scripts/oclif-manifest.js

import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {readKeyFile} from '../src/crypto/keyfile.js'
import {createDevOrganization, type DevOrganization} from '../src/config/dev-org.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {WireClient} from '../src/wire/client.js'
import {mwp} from './cli.js'
import {PROJECT_ROOT} from './upstream.js'

let dir: string
let org: DevOrganization

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-serve-'))
  org = await createDevOrganization(join(dir, 'org'), {port: 0})
}, 60_000)
afterAll(() => rmSync(dir, {recursive: true, force: true}))

function serve(args: string[]) {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/run.js'), 'authority', 'serve', '--config', org.config, ...args], {env: {...process.env, NO_COLOR: '1'}})
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  const listening = new Promise<{url: string; ca?: string}>((resolve, reject) => {
    const check = () => {
      const url = /listening on (\S+)/.exec(stdout)?.[1]
      if (url && (!args.includes('--dev-tls') || /CA file: (\S+)/.test(stdout))) resolve({url, ca: /CA file: (\S+)/.exec(stdout)?.[1]})
    }
    child.stdout.on('data', check)
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)))
  })
  return {child, listening, exited, out: () => ({stdout, stderr})}
}

describe('mwp authority serve', () => {
  it('serves wss with a development CA, authenticates a session, logs JSON lines and stops gracefully on SIGTERM', async () => {
    const s = serve(['--dev-tls', '--port', '0'])
    const {url, ca} = await s.listening
    expect(url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/)
    const owner = org.identities.find((i) => i.principal.type === 'human')!
    const coordinator = org.identities.find((i) => i.principal.type === 'agent')!
    const registry = RegistryEvidence.fromBytes(readFileSync(org.registry))
    const human = await WireClient.connect({url, key: readKeyFile(join(org.dir, owner.keyFile)), registry, ca: readFileSync(ca!), reconnect: false})
    const agent = await WireClient.connect({url, key: readKeyFile(join(org.dir, coordinator.keyFile)), registry, ca: readFileSync(ca!), reconnect: false})
    expect(agent.sessionEpoch).toBe(1)
    await human.ping()
    await human.close()
    await agent.close()
    s.child.kill('SIGTERM')
    expect(await s.exited).toBe(0)
    const {stdout, stderr} = s.out()
    expect(stdout).toContain('stopped (SIGTERM)')
    const logs = stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as {event: string})
    expect(logs.map((l) => l.event)).toEqual(expect.arrayContaining(['listening', 'session-accepted', 'shutdown']))
  })

  it('--insecure-loopback refuses a non-loopback bind (usage error, nothing served)', () => {
    const r = mwp(['authority', 'serve', '--config', org.config, '--insecure-loopback', '--host', '0.0.0.0', '--port', '0'])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/refuses to bind 0\.0\.0\.0/)
  })
})
