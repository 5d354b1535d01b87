// `mwp work list|show` by a member that sees only part of the Group's history (spec §8: a
// just-in-time Worker's Membership sees Events from its offer on). A real server (TLS 1.3 on
// loopback, the dev CA `org init` made) in this process, the `mwp` CLI as a subprocess with the
// Worker's own key: the Worker's view is folded from the Events it receives — its WorkItem from
// the offer, which carries the Work Contract — and says what lies outside its visibility, while
// the Coordinator's (complete visibility) folds the whole Group as before.

import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createDevOrganization, type DevOrganization} from '../../src/config/dev-org.js'
import {devTlsHook} from '../../src/config/dev-tls-hook.js'
import {type ConfiguredAuthority, loadOrgConfig, openAuthorityFromConfig} from '../../src/config/org-config.js'
import {readKeyFile} from '../../src/crypto/keyfile.js'
import {buildCommand} from '../../src/operator/command-builder.js'
import {missionCreatePayload} from '../../src/operator/mission-payloads.js'
import type {Transport} from '../../src/operator/transport.js'
import {foldGroup} from '../../src/operator/views.js'
import {openWireTransport} from '../../src/operator/wire-transport.js'
import {type RunningServer, startServer} from '../../src/wire/server.js'
import {candidateBasis} from '../support/authority-helpers.js'
import {json, mwpAsync} from '../support/cli.js'
import {devContract} from '../support/operator-helpers.js'

let dir: string
let org: DevOrganization
let opened: ConfiguredAuthority
let server: RunningServer
const transports: Transport[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-work-visibility-'))
  org = await createDevOrganization(join(dir, 'org'), {
    organization: 'urn:mwp:test:org:visibility',
    workers: 1,
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
  for (const t of transports) await t.close()
  await server?.close()
  await opened?.close()
  rmSync(dir, {recursive: true, force: true})
})

const keyFile = (name: string) => join(org.dir, 'keys', `${name}.key.json`)

async function connect(name: string): Promise<Transport> {
  const config = loadOrgConfig(org.config)
  const t = await openWireTransport({
    url: server.url,
    key: readKeyFile(keyFile(name)),
    ca: config.server.tls!.ca,
    registry: config.registry,
  })
  transports.push(t)
  return t
}

/**
 * Signs `kind` as `name` on its wire session `t`, epochs from the Group as `view` (a member with
 * complete visibility) sees it, and expects a receipt.
 */
async function issue(
  t: Transport,
  name: string,
  kind: string,
  g: string,
  payload: Record<string, unknown>,
  view: Transport = t,
) {
  const state = kind === 'mission.create' ? null : foldGroup((await view.events(g))!)
  const built = buildCommand(readKeyFile(keyFile(name)), {
    kind,
    groupId: g,
    payload,
    state,
    sessionEpoch: t.sessionEpoch,
  })
  const r = await t.submit(built.bytes)
  if ('error' in r) throw new Error(`${kind} rejected: ${r.error.code}`)
  return r.receipt
}

/** `mwp ARGS` against the server, signing and reading as `name`. */
const cli = (name: string, args: string[]) =>
  mwpAsync([...args, '--config', org.config, '--url', server.url, '--key', keyFile(name)])

describe('work views of a member with late visibility (§8)', () => {
  it('[+cmd:work.offer] [+evt:work.offer.created] a just-in-time Worker lists and shows its WorkItem from the Events it sees, and is told where its visibility starts; the Coordinator sees the whole Group', async () => {
    const owner = await connect('owner')
    const coordinator = await connect('coordinator')
    const worker = `${org.organization}:agent:worker-1`
    const mission = missionCreatePayload({
      organization: org.organization,
      objective: 'Release notes',
      coordinatorAgentId: `${org.organization}:agent:coordinator`,
    })
    const g = mission.groupId as string
    await issue(owner, 'owner', 'mission.create', g, mission)
    const w = 'urn:mwp:test:work-item:notes'
    const other = 'urn:mwp:test:work-item:changelog'
    const capability = {verifiedMatches: [{id: 'mwp.dev.general-work', version: '1.0.0'}]}
    await issue(coordinator, 'coordinator', 'work.authorize', g, {workItemId: w, contract: devContract()})
    await issue(coordinator, 'coordinator', 'work.authorize', g, {
      workItemId: other,
      contract: devContract({goal: 'Write the changelog'}),
    })
    // §8 just-in-time: worker-1 is no member; the offer provisions it, seeing history from here.
    await issue(coordinator, 'coordinator', 'work.offer', g, {
      workItemId: w,
      candidates: [worker],
      expiresAt: new Date(Date.now() + 600_000).toISOString(),
      selectionBasis: {[worker]: candidateBasis(capability)},
      contextPackageId: 'urn:mwp:test:context-package:notes',
    })
    const offerSequence = (await coordinator.events(g))!.at(-1)!.sequence
    expect(offerSequence).toBeGreaterThan(1)
    const workerWire = await connect('worker-1')
    const offerId = foldGroup((await coordinator.events(g))!)!.workItems[w]!.offer!.offerId
    await issue(workerWire, 'worker-1', 'work.accept_offer', g, {workItemId: w, offerId}, coordinator)
    // What the Worker receives starts at its offer.
    expect((await workerWire.events(g))![0]!.sequence).toBe(offerSequence)

    const listed = await cli('worker-1', ['work', 'list', g, '--json'])
    expect(listed.status, listed.stdout + listed.stderr).toBe(0)
    const graph = json(listed).result
    expect(graph.visibleFrom).toBe(offerSequence)
    // Its own WorkItem, folded from the offer on; the other one was authorized outside its visibility.
    expect(graph.items).toEqual([
      expect.objectContaining({workItemId: w, goal: 'Draft the notes', state: 'queued', owner: worker}),
    ])
    const text = await cli('worker-1', ['work', 'list', g])
    expect(text.status, text.stderr).toBe(0)
    expect(text.stdout).toContain(`history before sequence ${offerSequence} is outside your visibility`)

    const shown = await cli('worker-1', ['work', 'show', g, w, '--json'])
    expect(shown.status, shown.stdout + shown.stderr).toBe(0)
    expect(json(shown).result).toMatchObject({
      workItemId: w,
      state: 'queued',
      visibleFrom: offerSequence,
      workItem: {contract: devContract(), owner: {agentId: worker, ownershipEpoch: 1}},
    })
    const unseen = await cli('worker-1', ['work', 'show', g, other])
    expect(unseen.status).toBe(2)
    expect(unseen.stderr).toContain('outside your visibility')

    // The Coordinator has complete visibility: the whole Group, no note.
    const full = await cli('coordinator', ['work', 'list', g, '--json'])
    expect(full.status, full.stderr).toBe(0)
    expect(json(full).result.visibleFrom).toBeUndefined()
    expect(
      json(full)
        .result.items.map((n: {workItemId: string}) => n.workItemId)
        .sort(),
    ).toEqual([other, w].sort())
  })
})
