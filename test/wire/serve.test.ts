// `mwp authority serve` as a real subprocess (the built CLI): a development Organization from
// createDevOrganization, --dev-tls, a TLS 1.3 client session through the printed CA file, JSON-line
// logs on stderr, graceful shutdown on SIGTERM, and --insecure-loopback refusing a public bind.
// Build first: npx tsc -p tsconfig.json && node dist/scripts/oclif-manifest.js

import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {readKeyFile} from '../../src/crypto/keyfile.js'
import {createDevOrganization, type DevOrganization} from '../../src/config/dev-org.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {WireClient} from '../../src/wire/client.js'
import {serveProcess} from '../support/authority-process.js'
import {mwp, mwpAsync} from '../support/cli.js'
import {devContract, humanGatedChild, inDays} from '../support/operator-helpers.js'

let dir: string
let org: DevOrganization

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-serve-'))
  org = await createDevOrganization(join(dir, 'org'), {port: 0})
}, 60_000)
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const serve = (args: string[]) => serveProcess(org.config, args)

describe('mwp authority serve', () => {
  it('serves wss with a development CA, authenticates a session, logs JSON lines and stops gracefully on SIGTERM', async () => {
    const s = serve(['--dev-tls', '--port', '0'])
    const {url, ca} = await s.listening
    expect(url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/)
    const owner = org.identities.find((i) => i.principal.type === 'human')!
    const coordinator = org.identities.find((i) => i.principal.type === 'agent')!
    const registry = RegistryEvidence.fromBytes(readFileSync(org.registry))
    const human = await WireClient.connect({
      url,
      key: readKeyFile(join(org.dir, owner.keyFile)),
      registry,
      ca: readFileSync(ca!),
      reconnect: false,
    })
    const agent = await WireClient.connect({
      url,
      key: readKeyFile(join(org.dir, coordinator.keyFile)),
      registry,
      ca: readFileSync(ca!),
      reconnect: false,
    })
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

  it('§14 over the wire with the operator CLI: the root human sees and inspects a child Mission it has no Membership in; a stranger does not', async () => {
    const s = serve(['--dev-tls', '--port', '0'])
    try {
      const {url, ca} = await s.listening
      const env = {MWP_URL: url, MWP_CA: ca!, MWP_CONFIG: org.config}
      const run = (args: string[], input?: string) => {
        const r = mwp([...args, '--json'], {env, ...(input !== undefined ? {input} : {})})
        expect(r.status, r.stdout + r.stderr).toBe(0)
        return JSON.parse(r.stdout).result
      }
      const key = (name: string) => join(org.dir, org.identities.find((i) => i.name === name)!.keyFile)
      const g = run(['mission', 'create', '--objective', 'Ship 0.1', '--coordinator', 'coordinator']).groupId as string
      const w = 'urn:uuid:cccccccc-0000-4000-8000-000000000001'
      run(
        ['command', 'issue', '--kind', 'work.authorize', '--group', g, '--payload', '-', '--key', key('coordinator')],
        JSON.stringify({workItemId: w, contract: devContract({deadline: inDays(20)})}),
      )
      const agentId = (name: string) => org.identities.find((i) => i.name === name)!.principal.id
      const {cg, payload} = humanGatedChild(g, w, agentId('worker-1'))
      run(
        [
          'command',
          'issue',
          '--kind',
          'mission.create_child',
          '--group',
          g,
          '--payload',
          '-',
          '--key',
          key('coordinator'),
        ],
        JSON.stringify(payload),
      )
      // The root human (the configuration's operatorKey) reads the child Group it is not a member of.
      const tree = run(['mission', 'tree', g])
      expect(tree.children).toMatchObject([{groupId: cg, state: 'active'}])
      expect(tree.children[0].unavailable).toBeUndefined()
      const child = run(['mission', 'inspect', cg])
      expect(child).toMatchObject({
        groupId: cg,
        missionOwner: {id: agentId('coordinator')},
        approval: {kind: 'child_mission', rootHumanApproval: true},
      })
      // A Worker outside the child's Mission tree learns nothing about it.
      const stranger = mwp(['group', 'tail', cg, '--json', '--key', key('worker-2')], {env})
      expect(stranger.status).toBe(1)
      expect(JSON.parse(stranger.stdout)).toMatchObject({status: 'rejected', error: {code: 'GROUP_NOT_FOUND'}})
    } finally {
      s.child.kill('SIGTERM')
      await s.exited
    }
  })

  it('--insecure-loopback refuses a non-loopback bind (usage error, nothing served)', () => {
    const r = mwp([
      'authority',
      'serve',
      '--config',
      org.config,
      '--insecure-loopback',
      '--host',
      '0.0.0.0',
      '--port',
      '0',
    ])
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/refuses to bind 0\.0\.0\.0/)
  })

  it('a port already in use is an environment error that says so (exit 3), not an EADDRINUSE stack', async () => {
    const first = serve(['--dev-tls', '--port', '0'])
    const {url} = await first.listening
    const port = new URL(url).port
    const r = await mwpAsync(['authority', 'serve', '--config', org.config, '--dev-tls', '--port', port])
    expect(r.status).toBe(3)
    expect(r.stderr).toContain(`cannot serve on 127.0.0.1:${port}: the port is in use`)
    expect(r.stderr).not.toMatch(/node:events|Unhandled|^\s+at /m) // no stack trace
    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)
  })
})
