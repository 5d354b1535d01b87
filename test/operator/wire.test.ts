// The operator commands over the wire: a real `startServer` (TLS 1.3 on loopback, the dev CA
// made by `org init`) in this process, and the operator transport / the `mwp` CLI as clients.
// Every Event the views fold arrives through the WebSocket client, verified against the registry.

import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createDevOrganization, type DevOrganization} from '../../src/config/dev-org.js'
import {devTlsHook} from '../../src/config/dev-tls-hook.js'
import {type ConfiguredAuthority, loadOrgConfig, openAuthorityFromConfig} from '../../src/config/org-config.js'
import {readKeyFile} from '../../src/crypto/keyfile.js'
import {buildCommand, buildFinalApproval} from '../../src/operator/command-builder.js'
import {missionCreatePayload} from '../../src/operator/mission-payloads.js'
import type {Transport} from '../../src/operator/transport.js'
import {foldGroup, inspectMission} from '../../src/operator/views.js'
import {openWireTransport} from '../../src/operator/wire-transport.js'
import {type RunningServer, startServer} from '../../src/wire/server.js'
import {json, mwpAsync} from '../support/cli.js'

const H1 = `sha256:${'9'.repeat(64)}`

let dir: string
let org: DevOrganization
let opened: ConfiguredAuthority
let server: RunningServer
const transports: Transport[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-operator-wire-'))
  org = await createDevOrganization(join(dir, 'org'), {
    organization: 'urn:mwp:test:org:wire',
    workers: 1,
    devTls: devTlsHook,
  })
  const config = loadOrgConfig(org.config)
  opened = await openAuthorityFromConfig(config)
  server = await startServer({
    authority: opened.authority,
    host: '127.0.0.1',
    port: 0,
    tls: {cert: readFileText(config.server.tls!.cert), key: readFileText(config.server.tls!.key)},
    log: () => undefined,
  })
}, 60_000)
afterAll(async () => {
  for (const t of transports) await t.close()
  await server?.close()
  await opened?.close()
  rmSync(dir, {recursive: true, force: true})
})

const readFileText = (path: string): string => readFileSync(path, 'utf8')

const keyOf = (name: string) => readKeyFile(join(org.dir, 'keys', `${name}.key.json`))

async function connect(name: string): Promise<Transport> {
  const config = loadOrgConfig(org.config)
  const t = await openWireTransport({
    url: server.url,
    key: keyOf(name),
    ca: config.server.tls!.ca,
    registry: config.registry,
  })
  transports.push(t)
  return t
}

/** The flags that point the CLI at the server (the configuration supplies CA, registry and key). */
const overWire = () => ['--config', org.config, '--url', server.url]

/** `mwp mission create` over --url; returns the new Group ID. */
async function createdByCli(objective: string): Promise<string> {
  const created = await mwpAsync([
    'mission',
    'create',
    '--objective',
    objective,
    '--coordinator',
    'coordinator',
    '--json',
    ...overWire(),
  ])
  expect(created.status, created.stdout + created.stderr).toBe(0)
  return json(created).result.groupId as string
}

describe('wire transport', () => {
  it('[+cmd:mission.create] [+cmd:mission.submit_for_approval] [+cmd:mission.approve] a Mission created, submitted and approved over TLS; the views fold the delivered Events', async () => {
    const owner = await connect('owner')
    const coordinator = await connect('coordinator')
    const payload = missionCreatePayload({
      organization: org.organization,
      objective: 'Wire walkthrough',
      coordinatorAgentId: `${org.organization}:agent:coordinator`,
    })
    const g = payload.groupId as string
    const created = await owner.submit(
      buildCommand(keyOf('owner'), {kind: 'mission.create', groupId: g, payload}).bytes,
    )
    expect('receipt' in created).toBe(true)

    // The Coordinator's Agent Command carries the Session Epoch of its wire session.
    const state1 = foldGroup((await coordinator.events(g))!)!
    expect(coordinator.sessionEpoch).toBeGreaterThanOrEqual(1)
    const submitted = await coordinator.submit(
      buildCommand(keyOf('coordinator'), {
        kind: 'mission.submit_for_approval',
        groupId: g,
        payload: {artifactHashes: [H1]},
        state: state1,
        sessionEpoch: coordinator.sessionEpoch,
      }).bytes,
    )
    expect('receipt' in submitted, JSON.stringify(submitted)).toBe(true)

    const events = (await owner.events(g))!
    expect(events.map((e) => e.kind)).toEqual([
      'mission.created',
      'mission.coordinator.assigned',
      'mission.submitted_for_approval',
    ])
    const state = foldGroup(events)!
    expect(inspectMission(events)!.submission).toMatchObject({artifactHashes: [H1]})
    const approval = buildFinalApproval(keyOf('owner'), state)
    const approved = await owner.submit(
      buildCommand(keyOf('owner'), {
        kind: 'mission.approve',
        groupId: g,
        payload: {approval},
        state,
        expectedRevision: state.revision,
      }).bytes,
    )
    expect('receipt' in approved).toBe(true)
    expect(foldGroup((await owner.events(g))!)!.mission.state).toBe('approved')
  })

  it('[-cmd:mission.approve] an Approval from a stale view is REVISION_CONFLICT over the wire; an unknown Group reads as null, not as an empty Group', async () => {
    const owner = await connect('owner')
    const coordinator = await connect('coordinator')
    const payload = missionCreatePayload({
      organization: org.organization,
      objective: 'Stale view',
      coordinatorAgentId: `${org.organization}:agent:coordinator`,
    })
    const g = payload.groupId as string
    await owner.submit(buildCommand(keyOf('owner'), {kind: 'mission.create', groupId: g, payload}).bytes)
    await coordinator.submit(
      buildCommand(keyOf('coordinator'), {
        kind: 'mission.submit_for_approval',
        groupId: g,
        payload: {artifactHashes: [H1]},
        state: foldGroup((await coordinator.events(g))!),
        sessionEpoch: coordinator.sessionEpoch,
      }).bytes,
    )
    const seen = foldGroup((await owner.events(g))!)!
    await owner.submit(
      buildCommand(keyOf('owner'), {
        kind: 'membership.change',
        groupId: g,
        payload: {member: {type: 'agent', id: `${org.organization}:agent:worker-1`}, role: 'worker'},
        state: seen,
      }).bytes,
    )
    const r = await owner.submit(
      buildCommand(keyOf('owner'), {
        kind: 'mission.approve',
        groupId: g,
        payload: {approval: buildFinalApproval(keyOf('owner'), seen)},
        state: seen,
        expectedRevision: seen.revision,
      }).bytes,
    )
    expect('error' in r && r.error.code).toBe('REVISION_CONFLICT')
    expect(await owner.events(`${org.organization}:group:nothing-here`)).toBeNull()
    expect(await owner.events(`${org.organization}:group:nothing-here`, 7)).toBeNull()
    expect(await owner.events(g, 99)).toEqual([]) // a known Group with nothing after 99
  })

  it('the CLI over --url: mission create, inspect and group tail reach the server (config supplies CA, registry and key)', async () => {
    const g = await createdByCli('From the CLI')
    const inspected = await mwpAsync(['mission', 'inspect', g, '--json', ...overWire()])
    expect(inspected.status, inspected.stderr).toBe(0)
    expect(json(inspected).result).toMatchObject({state: 'active', objective: 'From the CLI'})
    const tail = await mwpAsync(['group', 'tail', g, ...overWire()])
    expect(
      tail.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).kind),
    ).toEqual(['mission.created', 'mission.coordinator.assigned'])
  })

  it('mission list over --url: the Groups the server announces for the key (its live Memberships), each with what it awaits', async () => {
    const g = await createdByCli('Listed over the wire')
    const listed = await mwpAsync(['mission', 'list', ...overWire()])
    expect(listed.status, listed.stderr).toBe(0)
    const row = listed.stdout.split('\n').find((l) => l.startsWith(`${g}\t`))
    expect(row?.split('\t')).toEqual([
      g,
      'active',
      'Listed over the wire',
      expect.stringMatching(/^\d{4}-/),
      'running: no WorkItems yet',
    ])
    // The Coordinator holds a Membership there too; a Worker without one does not see the Group.
    const byKey = async (name: string) => {
      const r = await mwpAsync([
        'mission',
        'list',
        '--json',
        '--key',
        join(org.dir, 'keys', `${name}.key.json`),
        ...overWire(),
      ])
      expect(r.status, r.stderr).toBe(0)
      return (json(r).result.missions as {groupId: string}[]).map((m) => m.groupId)
    }
    expect(await byKey('coordinator')).toContain(g)
    expect(await byKey('worker-1')).not.toContain(g)
  })

  it('group tail --follow on a Group the principal cannot see ends with GROUP_NOT_FOUND (exit 1) instead of waiting forever', async () => {
    const r = await mwpAsync([
      'group',
      'tail',
      'urn:mwp:test:group:nowhere',
      '--follow',
      '--config',
      org.config,
      '--url',
      server.url,
    ])
    expect(r.status, r.stderr).toBe(1)
    expect(r.stdout.trim()).toBe('GROUP_NOT_FOUND')
  })

  it('group tail of a Group the principal cannot see is GROUP_NOT_FOUND (exit 1), not an empty success, whatever --after says', async () => {
    for (const after of [[], ['--after', '5']]) {
      const r = await mwpAsync([
        'group',
        'tail',
        'urn:mwp:test:group:nowhere',
        ...after,
        '--config',
        org.config,
        '--url',
        server.url,
      ])
      expect(r.status, r.stderr).toBe(1)
      expect(r.stdout.trim()).toBe('GROUP_NOT_FOUND')
    }
  })

  it('an unreachable server is an environment error (exit 3)', async () => {
    const r = await mwpAsync([
      'mission',
      'inspect',
      'urn:x:group:g',
      '--json',
      '--config',
      org.config,
      '--url',
      'wss://127.0.0.1:1',
    ])
    expect(r.status).toBe(3)
    expect(json(r).error.code).toBe('ENVIRONMENT')
  })
})
