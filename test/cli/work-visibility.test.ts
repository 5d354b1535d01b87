// The operator CLI run by a member that sees only part of the Group's history (spec §8: a
// just-in-time Worker's Membership sees Events from its offer on, a member granted by
// membership.change from that grant on). A real server (TLS 1.3 on loopback, the dev CA `org init`
// made, the embedded SQLite store) in this process, the `mwp` CLI as a subprocess with the
// member's own key:
//   - `mwp work list|show`: the Worker's view is folded from the Events it receives — its WorkItem
//     from the offer, which carries the Work Contract — and says what lies outside its
//     visibility, while the Coordinator's (complete visibility) folds the whole Group as before;
//   - `mwp command issue` and `mwp mission direct|cancel`: signed under the Membership Epoch the
//     member finds in the Events it sees (they folded the Group from sequence 1 and died with an
//     ApplyError before); what the member may not do is the authority's refusal, exit 1;
//   - `mwp mission inspect|tree`, which need the whole history: AUTH_FORBIDDEN, exit 1, saying why.

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
    workers: 2,
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

/** `mwp ARGS` against the server, signing and reading as `name`; `input` is its stdin. */
const cli = (name: string, args: string[], input?: string) =>
  mwpAsync([...args, '--config', org.config, '--url', server.url, '--key', keyFile(name)], {input})

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

/** No ApplyError, no stack trace: a refusal is the code and one note (or the --json envelope). */
const noStack = (r: {stderr: string}) => expect(r.stderr).not.toMatch(/ApplyError|\n\s+at /)

describe('operator Commands of members with late visibility (§8)', () => {
  let g: string
  let worker: string
  let observer: string
  let conversationId: string
  let offerSequence: number
  let grantSequence: number
  let coordinator: Transport

  // A Mission with two late members: worker-1, offered its WorkItem just in time (visibility from
  // the offer), which it accepted; worker-2, granted a Membership by the MissionOwner
  // (membership.change, visibility from the grant) whose epoch was then raised to 2.
  beforeAll(async () => {
    worker = `${org.organization}:agent:worker-1`
    observer = `${org.organization}:agent:worker-2`
    const owner = await connect('owner')
    coordinator = await connect('coordinator')
    const mission = missionCreatePayload({
      organization: org.organization,
      objective: 'Security review',
      coordinatorAgentId: `${org.organization}:agent:coordinator`,
    })
    g = mission.groupId as string
    await issue(owner, 'owner', 'mission.create', g, mission)
    const w = 'urn:mwp:test:work-item:review'
    await issue(coordinator, 'coordinator', 'work.authorize', g, {workItemId: w, contract: devContract()})
    await issue(coordinator, 'coordinator', 'message.post', g, {text: 'Before anyone else joins.'})
    await issue(coordinator, 'coordinator', 'work.offer', g, {
      workItemId: w,
      candidates: [worker],
      expiresAt: new Date(Date.now() + 600_000).toISOString(),
      selectionBasis: {[worker]: candidateBasis({verifiedMatches: [{id: 'mwp.dev.general-work', version: '1.0.0'}]})},
      contextPackageId: 'urn:mwp:test:context-package:review',
    })
    const offered = foldGroup((await coordinator.events(g))!)!
    offerSequence = offered.sequence
    conversationId = offered.workItems[w]!.conversationId
    const workerWire = await connect('worker-1')
    const offerId = offered.workItems[w]!.offer!.offerId
    await issue(workerWire, 'worker-1', 'work.accept_offer', g, {workItemId: w, offerId}, coordinator)
    const member = {type: 'agent', id: observer}
    await issue(owner, 'owner', 'membership.change', g, {member, role: 'observer'})
    grantSequence = foldGroup((await owner.events(g))!)!.sequence
    await issue(owner, 'owner', 'membership.change', g, {
      member,
      role: 'observer',
      scopes: ['group.read', 'mission.comment'],
    })
    const state = foldGroup((await owner.events(g))!)!
    expect(state.members[worker]).toMatchObject({
      membershipEpoch: 1,
      active: true,
      visibilityStartSequence: offerSequence,
    })
    expect(state.members[observer]).toMatchObject({membershipEpoch: 2, visibilityStartSequence: grantSequence})
    expect(offerSequence).toBeGreaterThan(1)
    expect((await workerWire.events(g))![0]!.sequence).toBe(offerSequence)
  })

  const posted = async (author: string) =>
    (await coordinator.events(g))!
      .filter((e) => e.kind === 'message.posted')
      .map((e) => e.payload.message as {author: {id: string}; conversationId: string; content: {text: string}[]})
      .filter((m) => m.author.id === author)

  it('[+cmd:message.post] [+evt:message.posted] `mwp command issue` by a just-in-time Worker is signed under the Membership Epoch it finds in the Events it sees, and accepted', async () => {
    const payload = JSON.stringify({conversationId, text: 'Starting the review.'})
    const r = await cli(
      'worker-1',
      ['command', 'issue', '--kind', 'message.post', '--group', g, '--payload', '-', '--json'],
      payload,
    )
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(json(r)).toMatchObject({status: 'ok', result: {receipt: {eventIds: [expect.any(String)]}}})
    expect(await posted(worker)).toEqual([
      expect.objectContaining({conversationId, content: [{type: 'text', text: 'Starting the review.'}]}),
    ])
  })

  it('[+cmd:message.post] `mwp mission direct` by a member granted late signs under its raised Membership Epoch (2) and is accepted', async () => {
    const r = await cli('worker-2', ['mission', 'direct', g, '--message', 'Watching the review.', '--json'])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect((await posted(observer)).map((m) => m.content[0]!.text)).toEqual(['Watching the review.'])
  })

  it('[-cmd:mission.cancel] a late member issuing what it may not is refused by the authority with the protocol code, exit 1, no stack', async () => {
    const issued = await cli(
      'worker-1',
      ['command', 'issue', '--kind', 'mission.cancel', '--group', g, '--payload', '-', '--json'],
      JSON.stringify({reason: 'not mine to cancel'}),
    )
    expect(issued.status, issued.stdout + issued.stderr).toBe(1)
    expect(json(issued)).toMatchObject({status: 'rejected', error: {code: 'AUTH_FORBIDDEN'}})
    noStack(issued)
    // The same through `mission cancel`, guarded by the revision the Worker sees (the Group's).
    const cancelled = await cli('worker-1', ['mission', 'cancel', g, '--message', 'not mine to cancel', '--yes'])
    expect(cancelled.status, cancelled.stdout + cancelled.stderr).toBe(1)
    // The code, then the authority's reason for this member (a well-signed Command, refused on its merits).
    expect(cancelled.stdout.split('\n')[0]).toBe('AUTH_FORBIDDEN')
    expect(cancelled.stdout).toMatch(/^ {2}detail: mission\.cancel/m)
    noStack(cancelled)
    // A stale Membership Epoch is fenced (§8): MEMBERSHIP_STALE.
    const stale = await cli(
      'worker-2',
      [
        'command',
        'issue',
        '--kind',
        'message.post',
        '--group',
        g,
        '--membership-epoch',
        '1',
        '--payload',
        '-',
        '--json',
      ],
      JSON.stringify({text: 'under the old epoch'}),
    )
    expect(stale.status, stale.stdout + stale.stderr).toBe(1)
    expect(json(stale)).toMatchObject({status: 'rejected', error: {code: 'MEMBERSHIP_STALE'}})
    expect(foldGroup((await coordinator.events(g))!)!.mission.state).toBe('active')
  })

  it('`mwp mission inspect|approve|tree`, which need the whole history, refuse a late member with AUTH_FORBIDDEN and say why', async () => {
    const inspected = await cli('worker-1', ['mission', 'inspect', g, '--json'])
    expect(inspected.status, inspected.stdout + inspected.stderr).toBe(1)
    expect(json(inspected)).toMatchObject({
      status: 'rejected',
      error: {code: 'AUTH_FORBIDDEN'},
      note: `mission inspect needs the whole history of ${g}, and history before sequence ${offerSequence} is outside your visibility (§8)`,
    })
    noStack(inspected)
    const approve = await cli('worker-1', ['mission', 'approve', g, '--yes', '--json'])
    expect(approve.status, approve.stdout + approve.stderr).toBe(1)
    expect(json(approve)).toMatchObject({status: 'rejected', error: {code: 'AUTH_FORBIDDEN'}})
    expect(json(approve).note).toContain('mission approve needs the whole history')
    noStack(approve)
    const tree = await cli('worker-2', ['mission', 'tree', g])
    expect(tree.status, tree.stdout + tree.stderr).toBe(1)
    expect(tree.stdout.trim()).toBe('AUTH_FORBIDDEN')
    expect(tree.stderr).toContain(`history before sequence ${grantSequence} is outside your visibility`)
    noStack(tree)
    // The MissionOwner sees the whole Group: inspect works as before.
    const full = await cli('owner', ['mission', 'inspect', g, '--json'])
    expect(full.status, full.stderr).toBe(0)
    expect(json(full).result).toMatchObject({groupId: g, objective: 'Security review'})
  })
})
