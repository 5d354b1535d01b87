// `mwp console` in a real browser: a real authority (startServer, TLS 1.3 on loopback, a dev
// Organization), the console server in this process as the dev MissionOwner over wss, and Debian's
// Chromium headless through playwright-core (no browser download). The setup steps (creating
// Missions, the Coordinator's work and submissions, Messages "sent elsewhere") go through the
// operator library as other principals, over their own wire sessions.
//
// Without Chromium the browser tests are skipped locally and FAIL under CI=true (.ci/run installs it).

import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {request} from 'node:http'
import {request as httpsRequest} from 'node:https'
import type {TLSSocket} from 'node:tls'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {type Browser, type Page, chromium} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createDevOrganization, type DevOrganization} from '../../src/config/dev-org.js'
import {devTlsHook} from '../../src/config/dev-tls-hook.js'
import {type ConfiguredAuthority, loadOrgConfig, openAuthorityFromConfig} from '../../src/config/org-config.js'
import {readKeyFile} from '../../src/crypto/keyfile.js'
import {type RunningConsole, startConsole} from '../../src/console/server.js'
import {OperatorContext} from '../../src/operator/cli-context.js'
import {buildCommand, buildFinalApproval} from '../../src/operator/command-builder.js'
import {missionCreatePayload} from '../../src/operator/mission-payloads.js'
import type {EventDoc, Transport} from '../../src/operator/transport.js'
import {foldGroup, inspectFacts, inspectFolded} from '../../src/operator/views.js'
import {openWireTransport} from '../../src/operator/wire-transport.js'
import {WireClient} from '../../src/wire/client.js'
import {type RunningServer, startServer} from '../../src/wire/server.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {contract} from '../support/authority-helpers.js'
import {evidenceDoc} from '../support/evidence.js'
import {devSelectionBasis, humanGatedChild} from '../support/operator-helpers.js'
import {mwpAsync} from '../support/cli.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const CHROMIUM = process.env.MWP_CHROMIUM ?? '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
const SHOTS = join(PROJECT_ROOT, 'test-results', 'console')
const ORG = 'urn:mwp:test:org:console'
const H1 = `sha256:${'a'.repeat(64)}`
const H2 = `sha256:${'b'.repeat(64)}`
const WINDOW = 10

let dir: string
let org: DevOrganization
let opened: ConfiguredAuthority
let server: RunningServer
let ctx: OperatorContext
let consoleServer: RunningConsole
/** The Group the console's scheduling policy weighs (the runtime view's test). */
let weighted = ''
let browser: Browser | undefined
const transports: Transport[] = []
let owner: Transport
let coordinator: Transport
let worker: Transport

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

async function events(g: string): Promise<EventDoc[]> {
  const e = await owner.events(g)
  if (e === null) throw new Error(`${g}: GROUP_NOT_FOUND`)
  return e
}

/** Signs `kind` as `signer` (epochs and revision from the Group's current state) and submits it on `t`. */
async function send(
  t: Pick<Transport, 'sessionEpoch' | 'submit'>,
  signer: string,
  kind: string,
  g: string,
  payload: Record<string, unknown>,
  guard = false,
) {
  const state = kind === 'mission.create' ? null : foldGroup(await events(g))
  const built = buildCommand(keyOf(signer), {
    kind,
    groupId: g,
    payload,
    state,
    ...(t.sessionEpoch !== undefined ? {sessionEpoch: t.sessionEpoch} : {}),
    ...(guard && state ? {expectedRevision: state.revision} : {}),
  })
  const r = await t.submit(built.bytes)
  if ('error' in r) throw new Error(`setup ${kind} rejected: ${r.error.code} ${JSON.stringify(r.error)}`)
  return r.receipt
}

async function mission(objective: string): Promise<string> {
  const payload = missionCreatePayload({organization: ORG, objective, coordinatorAgentId: `${ORG}:agent:coordinator`})
  await send(owner, 'owner', 'mission.create', payload.groupId as string, payload)
  return payload.groupId as string
}

const wi = (n: number) => `urn:uuid:dddddddd-0000-4000-8000-${String(n).padStart(12, '0')}`
const devContract = (extra: Record<string, unknown>) =>
  contract({requiredCapabilities: [{id: 'mwp.dev.general-work', version: '1.0.0'}], ...extra})

async function work(g: string, items: [string, string, string[]][]) {
  for (const [workItemId, goal, deps] of items)
    await send(coordinator, 'coordinator', 'work.authorize', g, {
      workItemId,
      contract: devContract({goal, dependencyWorkItemIds: deps}),
    })
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM && process.env.CI === 'true')
    throw new Error(`Chromium is missing at ${CHROMIUM}: CI must run the console's browser tests (.ci/run installs it)`)
  dir = mkdtempSync(join(tmpdir(), 'mwp-console-'))
  org = await createDevOrganization(join(dir, 'org'), {organization: ORG, workers: 1, devTls: devTlsHook})
  const config = loadOrgConfig(org.config)
  opened = await openAuthorityFromConfig(config)
  server = await startServer({
    authority: opened.authority,
    host: '127.0.0.1',
    port: 0,
    tls: {cert: readFileSync(config.server.tls!.cert, 'utf8'), key: readFileSync(config.server.tls!.key, 'utf8')},
    log: () => undefined,
  })
  owner = await connect('owner')
  coordinator = await connect('coordinator')
  worker = await connect('worker-1')
  // The console acts as the configuration's operator (the dev MissionOwner) over wss.
  ctx = new OperatorContext({config: org.config, url: server.url}, config)
  // A small timeline window, so a test can page back without posting fifty Events.
  // The runtime view's weights: the policy gives the runtime test's Group weight 3 in class 1.
  const policy = (groupId: string) =>
    groupId === weighted ? {weight: 3, priorityClass: 1} : {weight: 1, priorityClass: 0}
  consoleServer = await startConsole({ctx, host: '127.0.0.1', port: 0, timelineWindow: WINDOW, policy})
  if (HAVE_CHROMIUM) browser = await chromium.launch({executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true})
  mkdirSync(SHOTS, {recursive: true})
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await consoleServer?.close()
  await ctx?.close()
  for (const t of transports) await t.close()
  await server?.close()
  await opened?.close()
  if (dir) rmSync(dir, {recursive: true, force: true})
})

/** A fresh page that has traded the token for the cookie, at `path`. */
async function open(path = '/', width = 1280, height = 800): Promise<Page> {
  const page = await browser!.newPage({viewport: {width, height}})
  await page.goto(consoleServer.url)
  await page.goto(`${consoleServer.origin}${path}`)
  return page
}

const missionPath = (g: string) => `/mission?group=${encodeURIComponent(g)}`

/** A raw HTTP request to the console (headers as given, no browser rules). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<{status: number; headers: Record<string, string | string[] | undefined>; body: string}> {
  const url = new URL(path, consoleServer.origin)
  return new Promise((resolve, reject) => {
    const req = request(url, {method, headers}, (res) => {
      let data = ''
      res.on('data', (d) => (data += d))
      res.on('end', () => resolve({status: res.statusCode ?? 0, headers: res.headers, body: data}))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const cookie = () => `${consoleServer.cookieName}=${consoleServer.token}`

describe('access', () => {
  it('403 without the token or its cookie; the token is traded for an HttpOnly SameSite=Strict cookie and left out of the address', async () => {
    expect((await raw('GET', '/')).status).toBe(403)
    expect((await raw('GET', '/', {cookie: `${consoleServer.cookieName}=wrong`})).status).toBe(403)
    expect((await raw('GET', '/?token=wrong')).status).toBe(403)
    expect((await raw('GET', '/events')).status).toBe(403)
    const first = await raw('GET', `/?token=${consoleServer.token}`)
    expect(first.status).toBe(303)
    expect(first.headers.location).toBe('/')
    expect(String(first.headers['set-cookie'])).toMatch(
      new RegExp(`^${consoleServer.cookieName}=[\\w-]+; HttpOnly; SameSite=Strict; Path=/`),
    )
    const again = await raw('GET', '/', {cookie: cookie()})
    expect(again.status).toBe(200)
    expect(again.headers['content-security-policy']).toContain("script-src 'self'")
    // Another Host (a DNS-rebinding page) is refused even with the cookie.
    expect(
      (await raw('GET', '/', {cookie: cookie(), host: `evil.example:${new URL(consoleServer.origin).port}`})).status,
    ).toBe(403)
  })

  it('a POST from another origin, or with no Origin, is refused before anything is signed', async () => {
    const g = await mission('Refuse foreign posts')
    const body = new URLSearchParams({group: g, text: 'from elsewhere'}).toString()
    const form = {cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded'}
    expect((await raw('POST', '/action/direct', {...form, origin: 'http://evil.example'}, body)).status).toBe(403)
    expect((await raw('POST', '/action/direct', form, body)).status).toBe(403)
    expect((await events(g)).some((e) => e.kind === 'message.posted')).toBe(false)
    // The same POST from the console's own origin goes through (so the refusals above are the check).
    await waitFor(() => consoleServer.live.get(g)?.state !== null && consoleServer.live.get(g) !== undefined)
    const ok = await raw('POST', '/action/direct', {...form, origin: consoleServer.origin}, body)
    expect(ok.status, ok.body).toBe(200)
    expect((await events(g)).some((e) => e.kind === 'message.posted')).toBe(true)
  })
})

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('HTTPS', () => {
  it('served over HTTPS (TLS 1.3) when given a certificate; the cookie is then Secure', async () => {
    const config = loadOrgConfig(org.config)
    const other = new OperatorContext({config: org.config, url: server.url}, config)
    const tls = {cert: readFileSync(config.server.tls!.cert), key: readFileSync(config.server.tls!.key)}
    const secure = await startConsole({ctx: other, host: '127.0.0.1', port: 0, tls})
    try {
      expect(secure.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/\?token=/)
      const got = await new Promise<{status: number; cookie: string; protocol: string}>((resolve, reject) => {
        const req = httpsRequest(secure.url, {ca: readFileSync(config.server.tls!.ca!)}, (res) => {
          res.resume()
          resolve({
            status: res.statusCode ?? 0,
            cookie: String(res.headers['set-cookie']),
            protocol: (res.socket as TLSSocket).getProtocol() ?? '',
          })
        })
        req.on('error', reject)
        req.end()
      })
      expect(got.status).toBe(303)
      expect(got.cookie).toMatch(/; Secure$/)
      expect(got.protocol).toBe('TLSv1.3')
    } finally {
      await secure.close()
      await other.close()
    }
  })
})

describe('server-sent events', () => {
  it('a reconnecting stream resumes after Last-Event-ID: the next Changes in order, no gap, no duplicate; an unknown ID is a reset', async () => {
    const g = await mission('Resume the stream')
    for (const t of ['one', 'two', 'three']) await send(owner, 'owner', 'message.post', g, {text: t})
    await waitFor(() => (consoleServer.live.get(g)?.state?.sequence ?? 0) >= 5)
    const read = (last: string) =>
      new Promise<string>((resolve, reject) => {
        const req = request(
          new URL(`/events?group=${encodeURIComponent(g)}`, consoleServer.origin),
          {headers: {cookie: cookie(), 'last-event-id': last}},
          (res) => {
            let data = ''
            res.on('data', (d) => {
              data += d
              if (data.includes(`id: ${g}:5`) || data.includes('event: reset')) {
                req.destroy()
                resolve(data)
              }
            })
          },
        )
        req.on('error', (e) => (String(e).includes('socket hang up') ? undefined : reject(e)))
        req.end()
      })
    const ids = [...(await read(`${g}:2`)).matchAll(/^id: (.+)$/gm)].map((m) => m[1])
    expect(ids).toEqual([`${g}:3`, `${g}:4`, `${g}:5`])
    expect(await read(`${g}:999`)).toContain('event: reset')
  })
})

describe.skipIf(!HAVE_CHROMIUM && process.env.CI !== 'true')('in Chromium', () => {
  it('the Mission list shows a created Mission, with what it awaits', async () => {
    const g = await mission('Write the release notes')
    const page = await open('/')
    const row = page.locator(`tr[data-group="${g}"]`)
    await row.waitFor()
    await expect(row.getByRole('link', {name: 'Write the release notes'}).isVisible()).resolves.toBe(true)
    expect(await row.textContent()).toContain('active')
    await send(coordinator, 'coordinator', 'mission.submit_for_approval', g, {artifactHashes: [H1]})
    // Live: the row now says the Mission awaits this operator.
    await page.locator(`tr[data-group="${g}"].yours`).waitFor()
    expect(await page.locator(`tr[data-group="${g}"] .awaits`).textContent()).toBe('awaiting your approval')
    await page.screenshot({path: join(SHOTS, 'missions-1280.png')})
    await page.setViewportSize({width: 420, height: 800})
    await page.screenshot({path: join(SHOTS, 'missions-420.png'), fullPage: true})
    await page.close()
  })

  it('the timeline updates live when a Command is accepted elsewhere; "deploy immediately" is conversation only', async () => {
    const g = await mission('Roll out the feature flag')
    const page = await open(missionPath(g))
    await page.locator('#f-timeline li').first().waitFor()
    expect(await page.locator('#f-timeline').textContent()).not.toContain('deploy immediately')
    await send(coordinator, 'coordinator', 'message.post', g, {text: 'deploy immediately'})
    const bubble = page.locator('#f-timeline li.message', {hasText: 'deploy immediately'})
    await bubble.waitFor()
    expect(await bubble.locator('.msg-label').textContent()).toBe('message — not an instruction')
    // Only in the timeline: not in the actions, the approval panel, the WorkItems or the header.
    const everywhere = await page.locator('body').textContent()
    const timeline = await page.locator('#f-timeline').textContent()
    expect(everywhere!.split('deploy immediately').length).toBe(2)
    expect(timeline).toContain('deploy immediately')
    for (const area of ['#actions', '#f-graph', '#f-header', '#f-leases'])
      expect(await page.locator(area).textContent()).not.toContain('deploy immediately')
    expect(await page.locator('form', {hasText: 'deploy immediately'}).count()).toBe(0)
    // Message text is text: markup in it is shown, never run (and the CSP would refuse it anyway).
    await send(coordinator, 'coordinator', 'message.post', g, {
      text: '<img src=x onerror="document.body.dataset.pwned=1">',
    })
    await page.locator('li.message', {hasText: '<img src=x onerror='}).waitFor()
    expect(await page.locator('li.message img').count()).toBe(0)
    expect(await page.locator('body[data-pwned]').count()).toBe(0)
    await page.close()
  })

  it('the graph shows the critical path; screenshots of the Mission view and the graph at 1280×800 and ~420 px', async () => {
    const g = await mission('Publish the migration guide')
    const [A, B, C, D, E] = [1, 2, 3, 4, 5].map(wi)
    await work(g, [
      [A!, 'Collect the breaking changes', []],
      [B!, 'Draft the guide', [A!]],
      [C!, 'Review the guide', [B!]],
      [D!, 'Write the changelog entry', [A!]],
      [E!, 'Update the website banner', []],
    ])
    await send(owner, 'owner', 'message.post', g, {text: 'Please keep the guide short; the release is on Friday.'})
    const page = await open(missionPath(g))
    await page.locator('svg.workgraph g.workitem').nth(4).waitFor()
    const critical = await page
      .locator('svg.workgraph g.workitem.critical')
      .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-workitem')))
    expect(critical).toEqual([A, B, C])
    expect(await page.locator('svg.workgraph path.edge.critical').count()).toBe(2)
    expect(await page.locator('svg.workgraph path.edge').count()).toBe(3)
    // Drawn red and thick, as the legend says (the page's stylesheet, not the SVG's).
    const stroke = await page.evaluate<string>(
      "getComputedStyle(document.querySelector('svg.workgraph g.workitem.critical rect')).strokeWidth",
    )
    expect(stroke).toBe('3px')
    expect(await page.locator('#f-graph .progress').textContent()).toBe(
      '0 of 5 verified; 5 open; critical path 3 item(s)',
    )
    // Budgets in all six dimensions against their limits (§12), and the Coordinator lease.
    const budget = await page
      .locator('#f-budget tbody tr')
      .evaluateAll((rows) => rows.map((r) => [...r.children].slice(0, 3).map((c) => c.textContent)))
    expect(budget).toEqual([
      ['financial', '0 EUR', '100 EUR'],
      ['model tokens', '0', 'no limit'],
      ['tool calls', '0', 'no limit'],
      ['compute seconds', '0', 'no limit'],
      ['wall-clock seconds', '0', 'no limit'],
      ['external side effects', '0', 'no limit'],
    ])
    expect(await page.locator('#f-leases').textContent()).toContain('Coordinator coordinator (epoch 1)')
    await page.screenshot({path: join(SHOTS, 'mission-1280x800.png')})
    await page.screenshot({path: join(SHOTS, 'mission-full-1280.png'), fullPage: true})
    await page.locator('#f-graph figure').screenshot({path: join(SHOTS, 'graph-1280.png')})
    await page.setViewportSize({width: 420, height: 800})
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')
    expect(overflow).toBeLessThanOrEqual(0) // the graph scrolls in its own box, the page does not
    await page.screenshot({path: join(SHOTS, 'mission-420.png'), fullPage: true})
    await page.close()
  })

  it('approving from the page appends mission.approved with the operator signature, which mwp verify accepts', async () => {
    const g = await mission('Approve the quarterly report')
    await send(coordinator, 'coordinator', 'mission.submit_for_approval', g, {
      artifactHashes: [H1, H2],
      summary: 'Report and figures',
    })
    const page = await open(missionPath(g))
    const panel = page.locator('#approval')
    await panel.waitFor()
    const revision = foldGroup(await events(g))!.mission.submission!.missionRevision
    expect(await panel.textContent()).toContain(`You are approving revision ${revision}`)
    for (const h of [H1, H2]) expect(await panel.textContent()).toContain(h)
    await panel.screenshot({path: join(SHOTS, 'approval-panel.png')})
    await page.getByRole('button', {name: `Approve revision ${revision}`}).press('Enter') // keyboard operable
    await page.getByRole('heading', {name: 'Done'}).waitFor()
    const approved = (await events(g)).find((e) => e.kind === 'mission.approved')!
    expect(approved).toBeDefined()
    const approval = approved.payload.approval as {
      approver: {id: string}
      artifactHashes: string[]
      missionRevision: number
      signature: {keyId: string}
    }
    expect(approval.approver.id).toBe(`${ORG}:human:owner`)
    expect(approval.artifactHashes).toEqual([H1, H2])
    expect(approval.missionRevision).toBe(revision)
    expect(approval.signature.keyId).toBe(keyOf('owner').keyId)
    // `mwp verify` on the Event document and on the Approval it carries.
    const files = {event: join(dir, 'approved-event.json'), approval: join(dir, 'approval.json')}
    writeFileSync(files.event, JSON.stringify(approved))
    writeFileSync(files.approval, JSON.stringify(approved.payload.approval))
    const registry = loadOrgConfig(org.config).registry
    for (const [kind, file] of [
      ['event', files.event],
      ['approval', files.approval],
    ] as const) {
      const r = await mwpAsync(['verify', '--registry', registry, '--document-kind', kind, file, '--json'])
      expect(r.status, r.stdout + r.stderr).toBe(0)
    }
    // A tampered copy fails the same check (so the check can fail).
    writeFileSync(files.approval, JSON.stringify({...(approved.payload.approval as object), comments: 'changed'}))
    expect(
      (await mwpAsync(['verify', '--registry', registry, '--document-kind', 'approval', files.approval])).status,
    ).toBe(1)
    await page.close()
  })

  it('approving a revision that moved on shows REVISION_CONFLICT, and nothing is approved', async () => {
    const g = await mission('Ship the installer')
    await send(coordinator, 'coordinator', 'mission.submit_for_approval', g, {artifactHashes: [H1]})
    const page = await open(missionPath(g))
    const shown = foldGroup(await events(g))!.mission.submission!.missionRevision
    await page.getByRole('button', {name: `Approve revision ${shown}`}).waitFor()
    // Elsewhere: changes are requested and a new revision is submitted.
    await send(owner, 'owner', 'mission.request_changes', g, {reason: 'Sign the binaries'}, true)
    await send(coordinator, 'coordinator', 'mission.submit_for_approval', g, {artifactHashes: [H2]})
    await page.locator('#stale:not([hidden])').waitFor() // the page says it is stale
    await page.getByRole('button', {name: `Approve revision ${shown}`}).click()
    await page.getByRole('heading', {name: 'Refused'}).waitFor()
    expect(await page.locator('code.code').textContent()).toBe('REVISION_CONFLICT')
    expect(await page.locator('main').textContent()).toContain('The Mission changed after the page showed it')
    expect((await events(g)).some((e) => e.kind === 'mission.approved')).toBe(false)
    await page.close()
  })

  it('cancel asks for confirmation first; confirming cancels the Mission', async () => {
    const g = await mission('Cancel me')
    const page = await open(missionPath(g))
    await page.getByLabel('Why cancel').fill('No longer needed')
    await page.getByRole('button', {name: 'Cancel the Mission…'}).click()
    await page.getByRole('heading', {name: /This cannot be undone/}).waitFor()
    expect((await events(g)).some((e) => e.kind === 'mission.cancelled')).toBe(false)
    await page.getByRole('button', {name: 'Yes, do it'}).click()
    await page.getByRole('heading', {name: 'Done'}).waitFor()
    expect((await events(g)).find((e) => e.kind === 'mission.cancelled')?.payload.reason).toBe('No longer needed')
    await page.close()
  })
  it('request changes from the approval panel; replace the Coordinator after a confirmation step', async () => {
    const g = await mission('Prepare the launch')
    await send(coordinator, 'coordinator', 'mission.submit_for_approval', g, {artifactHashes: [H1]})
    const page = await open(missionPath(g))
    await page.getByLabel('What must change').fill('Add the pricing page')
    await page.getByRole('button', {name: 'Request changes'}).click()
    await page.getByRole('heading', {name: 'Done'}).waitFor()
    expect((await events(g)).find((e) => e.kind === 'mission.changes_requested')?.payload.reason).toBe(
      'Add the pricing page',
    )
    await page.goto(`${consoleServer.origin}${missionPath(g)}`)
    await page.getByLabel('New Coordinator (Agent ID or short name)').fill('worker-1')
    await page.getByRole('button', {name: 'Replace the Coordinator…'}).click()
    await page.getByRole('heading', {name: /The current Coordinator is fenced/}).waitFor()
    expect((await events(g)).filter((e) => e.kind === 'mission.coordinator.assigned')).toHaveLength(1)
    await page.getByRole('button', {name: 'Yes, do it'}).click()
    await page.getByRole('heading', {name: 'Done'}).waitFor()
    const assigned = (await events(g)).filter((e) => e.kind === 'mission.coordinator.assigned').at(-1)!
    expect(assigned.payload.coordinator).toMatchObject({agentId: `${ORG}:agent:worker-1`, coordinatorEpoch: 2})
    // An unknown Agent is refused before anything is signed, saying why.
    await page.goto(`${consoleServer.origin}${missionPath(g)}`)
    await page.getByLabel('New Coordinator (Agent ID or short name)').fill('nobody')
    await page.getByRole('button', {name: 'Replace the Coordinator…'}).click()
    await page.getByRole('button', {name: 'Yes, do it'}).click()
    await page.getByRole('heading', {name: 'Not sent'}).waitFor()
    expect(await page.locator('code.code').textContent()).toBe('NOT_SENT')
    expect(await page.locator('p.reason').textContent()).toContain('no Agent')
    await page.close()
  })

  it('a child Mission is listed right below its parent and shown in the Mission tree (§14)', async () => {
    const g = await mission('Localize the product')
    const w = wi(40)
    await work(g, [[w, 'Translate the UI', []]])
    const c = humanGatedChild(g, w, `${ORG}:agent:worker-1`)
    await send(coordinator, 'coordinator', 'mission.create_child', g, c.payload)
    const page = await open('/')
    await page.locator(`tr[data-group="${c.cg}"]`).waitFor()
    const order = await page
      .locator('tr[data-group]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-group')))
    expect(order.indexOf(c.cg)).toBe(order.indexOf(g) + 1)
    expect(await page.locator(`tr[data-group="${c.cg}"] .child-mark`).count()).toBe(1)
    await page.goto(`${consoleServer.origin}${missionPath(g)}`)
    const tree = page.locator('#f-tree ul.tree')
    await tree.getByRole('link', {name: 'Draft the notes'}).waitFor()
    expect(await tree.locator('[aria-current=page]').textContent()).toBe('Localize the product')
    await page.close()
  })

  it(`the timeline keeps the latest ${WINDOW} Events and pages back by sequence range`, async () => {
    const g = await mission('Keep the timeline bounded')
    for (let i = 1; i <= 14; i++) await send(owner, 'owner', 'message.post', g, {text: `note ${i}`})
    const head = 2 + 14
    await waitFor(() => consoleServer.live.get(g)?.state?.sequence === head)
    expect(consoleServer.live.get(g)!.window.map((e) => e.sequence)).toEqual(
      Array.from({length: WINDOW}, (_, i) => head - WINDOW + 1 + i),
    )
    const page = await open(missionPath(g))
    const seqs = () =>
      page.locator('ol.timeline > li').evaluateAll((li) => li.map((x) => Number(x.getAttribute('data-sequence'))))
    expect(await seqs()).toEqual(Array.from({length: WINDOW}, (_, i) => head - WINDOW + 1 + i))
    const first = head - WINDOW + 1
    await page.getByRole('link', {name: `Older Events (before #${first})`}).click()
    await page.getByRole('heading', {name: `Events #1–#${first - 1}`}).waitFor()
    expect(await seqs()).toEqual(Array.from({length: first - 1}, (_, i) => i + 1))
    expect(await page.locator('ol.timeline').textContent()).toContain('note 1')
    await page.close()
  })

  it('an Artifact opened from the page is fetched and checked against its hash; one the authority does not hold is not verified', async () => {
    const g = await mission('Review the design document')
    const bytes = Buffer.from('# Design\n\nThe <b>cache</b> is write-through.\n')
    const hash = await coordinator.artifacts!.put(g, bytes)
    const missing = `sha256:${'c'.repeat(64)}`
    await send(coordinator, 'coordinator', 'mission.submit_for_approval', g, {artifactHashes: [hash, missing]})
    const page = await open(missionPath(g))
    await page.locator('#approval').getByRole('link', {name: hash}).click()
    await page.locator('p.verified').waitFor()
    expect(await page.locator('p.verified').textContent()).toBe(
      `Verified: the ${bytes.length} byte(s) fetched hash to ${hash}.`,
    )
    expect(await page.locator('pre.preview').textContent()).toContain('The <b>cache</b> is write-through.') // as text
    const download = await raw('GET', `/artifact/raw?group=${encodeURIComponent(g)}&hash=${encodeURIComponent(hash)}`, {
      cookie: cookie(),
    })
    expect(download.body).toBe(bytes.toString())
    expect(download.headers['content-disposition']).toMatch(/^attachment/)
    await page.goBack()
    await page.locator('#approval').getByRole('link', {name: missing}).click()
    await page.locator('p.refused').waitFor()
    expect(await page.locator('p.refused').textContent()).toMatch(/^Not verified: /)
    await page.close()
  })

  it("a gated WorkItem is approved for execution from its row (§12); the event names the owner's Ownership Epoch", async () => {
    const g = await mission('Publish the package')
    const w = wi(50)
    const agent = `${ORG}:agent:worker-1`
    await send(coordinator, 'coordinator', 'work.authorize', g, {
      workItemId: w,
      contract: devContract({goal: 'Upload to the registry', executionApproval: 'human_required'}),
    })
    await send(coordinator, 'coordinator', 'work.offer', g, {
      workItemId: w,
      candidates: [agent],
      expiresAt: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      selectionBasis: devSelectionBasis(agent),
      contextPackageId: 'urn:mwp:test:context-package:upload',
    })
    const offerId = foldGroup(await events(g))!.workItems[w]!.offer!.offerId
    await send(worker, 'worker-1', 'work.accept_offer', g, {workItemId: w, offerId})
    const page = await open(missionPath(g))
    const row = page.locator(`#f-graph tr[data-workitem="${w}"]`)
    await row.getByRole('button', {name: 'Approve execution'}).click()
    await page.getByRole('heading', {name: 'Done'}).waitFor()
    const granted = (await events(g)).find((e) => e.kind === 'approval.execution.granted')
    expect(granted?.actor.id).toBe(`${ORG}:human:owner`)
    expect(foldGroup(await events(g))!.workItems[w]!.executionApproval?.ownershipEpoch).toBe(1)
    await page.close()
  })

  it('a cooperation override is granted from the page for one member, limit and refused Action ID (§20)', async () => {
    const g = await mission('Grant an override')
    const page = await open(missionPath(g))
    await page.getByText('Grant a cooperation override (§20)…').click()
    await page.getByLabel('For member').selectOption(`${ORG}:agent:coordinator`)
    await page.getByLabel('Limit and Command kind').selectOption('message-rate message.post')
    const target = 'urn:uuid:0f0f0f0f-0000-4000-8000-000000000001'
    await page.getByLabel('Action ID of the refused Command').fill(target)
    await page.getByLabel('Reason', {exact: true}).fill('Release day: status updates are expected')
    await page.getByRole('button', {name: 'Grant the override'}).click()
    await page.getByRole('heading', {name: 'Done'}).waitFor()
    const grant = (await events(g)).find((e) => e.kind === 'policy.cooperation_override.granted')?.payload.grant as
      Record<string, unknown> | undefined
    expect(grant).toMatchObject({
      policy: 'message-rate',
      targetKind: 'message.post',
      targetActionId: target,
      beneficiary: {type: 'agent', id: `${ORG}:agent:coordinator`},
      approver: {type: 'human', id: `${ORG}:human:owner`},
    })
    await page.close()
  })

  it("the root human signs a child Mission's root Approval on the page (§14); with it the child's MissionOwner approves", async () => {
    const g = await mission('Localize the docs')
    const w = wi(60)
    await work(g, [[w, 'Translate the docs', []]])
    const c = humanGatedChild(g, w, `${ORG}:agent:worker-1`)
    await send(coordinator, 'coordinator', 'mission.create_child', g, c.payload)
    await send(worker, 'worker-1', 'mission.submit_for_approval', c.cg, {artifactHashes: [H1]})
    const page = await open(missionPath(c.cg))
    const revision = foldGroup(await events(c.cg))!.mission.submission!.missionRevision
    // Not this operator's to approve: no Approve button, the root Approval instead.
    expect(await page.getByRole('button', {name: `Approve revision ${revision}`}).count()).toBe(0)
    await page.getByRole('button', {name: `Sign your root Approval of revision ${revision}`}).click()
    await page.getByRole('heading', {name: 'Done'}).waitFor()
    const rootApproval = JSON.parse(await page.getByLabel('The signed document').inputValue()) as Record<
      string,
      unknown
    >
    expect(rootApproval).toMatchObject({kind: 'child_mission', missionRevision: revision, artifactHashes: [H1]})
    expect((await events(c.cg)).some((e) => e.kind === 'mission.approved')).toBe(false) // signed, not sent
    // The child's MissionOwner (the parent Coordinator) approves with it beside its own Approval.
    const state = foldGroup(await events(c.cg))!
    const approval = buildFinalApproval(keyOf('coordinator'), state)
    const r = await coordinator.submit(
      buildCommand(keyOf('coordinator'), {
        kind: 'mission.approve',
        groupId: c.cg,
        payload: {approval, rootApproval},
        state,
        expectedRevision: state.revision,
        ...(coordinator.sessionEpoch !== undefined ? {sessionEpoch: coordinator.sessionEpoch} : {}),
      }).bytes,
    )
    expect('receipt' in r, JSON.stringify(r)).toBe(true)
    await page.close()
  })

  it("the runtime view shows each Agent's Presence (slots, status, queue, heartbeat, re-read every 5 s) beside the work the Events say it holds with its reported phase and next checkpoint, its slot time against the policy's weight, and the authority's delivery (Cursor lag, BACKPRESSURE)", async () => {
    const g = await mission('Run the nightly build')
    weighted = g
    const w = wi(70)
    const agent = `${ORG}:agent:worker-1`
    await send(coordinator, 'coordinator', 'work.authorize', g, {
      workItemId: w,
      contract: devContract({goal: 'Compile the sources'}),
    })
    await send(coordinator, 'coordinator', 'work.offer', g, {
      workItemId: w,
      candidates: [agent],
      expiresAt: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      selectionBasis: devSelectionBasis(agent),
      contextPackageId: 'urn:mwp:test:context-package:build',
    })
    const offerId = foldGroup(await events(g))!.workItems[w]!.offer!.offerId
    // worker-1 works in a real Agent session of its own, which later reports its Presence on a PING
    // (§6.2). Opening it fences the shared `worker` session (a new Session Epoch): reopened at the end.
    const config = loadOrgConfig(org.config)
    const session = await WireClient.connect({
      url: server.url,
      key: keyOf('worker-1'),
      registry: RegistryEvidence.fromBytes(readFileSync(config.registry!)),
      ca: readFileSync(config.server.tls!.ca!),
      reconnect: false,
    })
    try {
      await send(session, 'worker-1', 'work.accept_offer', g, {workItemId: w, offerId})
      await send(session, 'worker-1', 'work.start', g, {workItemId: w, ownershipEpoch: 1})
      await waitFor(() => consoleServer.live.get(g)?.state?.workItems[w]?.state === 'active')
      const page = await open('/runtime')
      const row = page.locator(`table.runtime[data-agent="${agent}"] tr[data-workitem="${w}"]`)
      await row.waitFor()
      const cells = await row.locator('td').allTextContents()
      expect(cells.slice(0, 4)).toEqual(['Run the nightly build', 'Compile the sources', 'active', '1'])
      expect(cells[4]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC · \d+ s$/) // running since the lease was issued, for so long
      expect(cells[5]).toBe('–') // no progress reported yet
      // The holder renews its lease with structured progress (§11.4): the row shows its phase and next checkpoint.
      const leaseId = foldGroup(await events(g))!.workItems[w]!.lease!.leaseId
      await send(session, 'worker-1', 'ext.missionweaveprotocol.core.lease_renew', g, {
        workItemId: w,
        ownershipEpoch: 1,
        leaseId,
        progress: {phase: 'compiling', nextCheckpoint: 'after the object files are linked'},
      })
      await expect
        .poll(() => row.locator('td.progress').textContent(), {timeout: 15_000})
        .toBe('compiling · next checkpoint: after the object files are linked')
      // No session of worker-1 has sent a Presence Record yet.
      const presence = page.locator(`[data-presence="${agent}"]`)
      expect(await presence.textContent()).toContain('No fresh Presence Record')
      expect(await page.locator('p.note').textContent()).toContain('Presence, re-read every 5 s')

      // It reports 3 slots, 2 busy, 4 items queued.
      const now = Date.now()
      const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z')
      await session.ping({
        agentId: agent,
        sessionEpoch: session.sessionEpoch!,
        status: 'busy',
        capacity: {maxSlots: 3, activeSlots: 2, availableSlots: 1, queuedItems: 4},
        capabilityAvailability: [{capability: {id: 'mwp.dev.general-work', version: '1.0.0'}, status: 'degraded'}],
        lastHeartbeat: stamp(now),
        expiresAt: stamp(now + 600_000),
      })
      // No Event announces it: the page's periodic re-read of the fragment brings it.
      const shown = page.locator(`div.presence[data-presence="${agent}"]`)
      await shown.waitFor({timeout: 15_000})
      expect(await shown.locator('.slot.busy').count()).toBe(2)
      expect(await shown.locator('.slot.idle').count()).toBe(1)
      expect(await shown.locator('.slots').getAttribute('aria-label')).toBe('2 of 3 slots busy, 1 available')
      expect(await shown.locator('.badge').textContent()).toBe('busy')
      expect(await shown.locator('.queued').textContent()).toBe('4 queued')
      expect(await shown.locator('time.heartbeat').textContent()).toMatch(/^\d+ s ago$/)
      expect(await shown.textContent()).toContain('mwp.dev.general-work 1.0.0: degraded')
      // Still beside the work the Events say it holds.
      expect(await row.locator('td').nth(2).textContent()).toBe('active')
      // Its slot time over the window: all in this Group so far, against the weight the policy gives it.
      const share = page.locator(`table.slot-time[data-agent="${agent}"] tr[data-group="${g}"]`)
      const shareCells = await share.locator('td').allTextContents()
      expect(shareCells[0]).toBe('Run the nightly build')
      expect(shareCells[1]).toMatch(/^\d+(\.\d)? s$/)
      expect(shareCells.slice(2)).toEqual(['100%', '3 · class 1', '100%', '0', '0'])
      // The authority's delivery of the Group to the console's own subscription: caught up, no
      // BACKPRESSURE. (The owner's test session has subscriptions of its own, one-shot reads.)
      const me = `${ORG}:human:owner`
      const delivery = page
        .locator(`table.delivery tr[data-group="${g}"][data-subscriber="${me}"][data-lag="0"]`)
        .first()
      await delivery.waitFor({timeout: 15_000})
      const head = foldGroup(await events(g))!.sequence
      const deliveryCells = await delivery.locator('td').allTextContents()
      expect(deliveryCells.slice(0, 8)).toEqual([
        'Run the nightly build',
        String(head),
        'owner',
        String(head),
        String(head),
        '0',
        '0',
        '0 signals',
      ])
      await page.screenshot({path: join(SHOTS, 'runtime-1280.png'), fullPage: true})
      await session.close()
      // Its session closed: the record is gone, and the page says so again.
      await page.locator(`p.presence[data-presence="${agent}"]`).waitFor({timeout: 15_000})
      await page.close()
    } finally {
      await session.close()
      worker = await connect('worker-1')
    }
  })

  it('readable contrast and no sideways scrolling: every text on the Missions, Mission and Runtime pages has at least 4.5:1 (3:1 when large), at 1280 px and at 420 px', async () => {
    const g = await mission('Check the contrast of every page')
    await work(g, [[wi(90), 'Measure the colours', []]])
    await send(owner, 'owner', 'message.post', g, {text: 'Please check the badges too.'})
    await send(coordinator, 'coordinator', 'mission.submit_for_approval', g, {artifactHashes: [H1]})
    for (const path of ['/', missionPath(g), '/runtime'])
      for (const width of [1280, 420]) {
        const page = await open(path, width)
        await page.locator('main').waitFor()
        const {failures, texts, scrollWidth} = await page.evaluate<{
          failures: string[]
          texts: number
          scrollWidth: number
        }>(LOW_CONTRAST_TEXTS)
        expect(texts, `${path} at ${width} px: texts measured`).toBeGreaterThan(10)
        expect(failures, `${path} at ${width} px`).toEqual([])
        expect(scrollWidth, `${path} at ${width} px: the page scrolls sideways`).toBeLessThanOrEqual(width)
        await page.close()
      }
  })

  it('Evidence submitted with a WorkItem is shown against the acceptance criteria it covers (§13.2)', async () => {
    const g = await mission('Check the release notes')
    const w = wi(80)
    const agent = `${ORG}:agent:worker-1`
    await send(coordinator, 'coordinator', 'work.authorize', g, {
      workItemId: w,
      contract: devContract({
        goal: 'Verify the notes',
        acceptanceCriteria: [
          {criterionId: 'notes', description: 'Every change is listed', evidenceRequired: ['deterministic_test']},
          {criterionId: 'links', description: 'Every change links its issue', evidenceRequired: ['deterministic_test']},
        ],
      }),
    })
    await send(coordinator, 'coordinator', 'work.offer', g, {
      workItemId: w,
      candidates: [agent],
      expiresAt: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      selectionBasis: devSelectionBasis(agent),
      contextPackageId: 'urn:mwp:test:context-package:notes',
    })
    const offerId = foldGroup(await events(g))!.workItems[w]!.offer!.offerId
    await send(worker, 'worker-1', 'work.accept_offer', g, {workItemId: w, offerId})
    await send(worker, 'worker-1', 'work.start', g, {workItemId: w, ownershipEpoch: 1})
    const state = foldGroup(await events(g))!
    const tests = evidenceDoc(keyOf('worker-1'), {
      missionId: state.missionId,
      groupId: g,
      workItemId: w,
      criterionIds: ['notes', 'links'],
      artifactHashes: [H1],
    })
    await send(worker, 'worker-1', 'work.submit', g, {
      workItemId: w,
      ownershipEpoch: 1,
      leaseId: state.workItems[w]!.lease!.leaseId,
      artifactHashes: [H1],
      evidence: [tests],
    })
    const page = await open(missionPath(g))
    const criteria = page.locator('#f-evidence .evidence li')
    await criteria.first().waitFor()
    const lines = await criteria.allTextContents()
    expect(lines).toHaveLength(2)
    expect(lines[0]).toBe(
      `notes: Every change is listed — requires deterministic_test; covered by deterministic_test (passed) ${String(tests.evidenceId)}`,
    )
    expect(lines[1]).toContain('links: Every change links its issue')
    expect(await page.locator('#f-evidence .uncovered').count()).toBe(0)
    await page.close()
  })

  it("the console's views, folded Event by Event, equal a fold of each Group's whole history", async () => {
    const now = new Date().toISOString()
    const groups = consoleServer.live.all().filter((g) => g.state !== null)
    expect(groups.length).toBeGreaterThan(10)
    for (const g of groups) {
      const all = await events(g.groupId)
      await waitFor(() => g.state!.sequence === all.at(-1)!.sequence)
      expect(g.state).toEqual(foldGroup(all))
      expect(inspectFacts(g.state!, g.facts, now)).toEqual(inspectFolded(foldGroup(all)!, all, now))
      expect(g.window.length).toBeLessThanOrEqual(WINDOW) // and only a window of the Events is kept
    }
  })

  it("a member whose visibility starts late (§8) sees the Mission's timeline and the WorkItems its Events show from its grant on, live, with no way to page before it", async () => {
    const g = await mission('Show a late member what it may see')
    await send(owner, 'owner', 'message.post', g, {text: 'before you joined'})
    const agent = `${ORG}:agent:worker-1`
    await send(owner, 'owner', 'membership.change', g, {member: {type: 'agent', id: agent}, role: 'worker'})
    await send(owner, 'owner', 'message.post', g, {text: 'after you joined'})
    const w = wi(95)
    await send(coordinator, 'coordinator', 'work.authorize', g, {
      workItemId: w,
      contract: devContract({goal: 'Tidy the changelog'}),
    })
    // A console of worker-1 (its session fences the shared `worker` one: reopened at the end).
    const config = loadOrgConfig(org.config)
    const late = new OperatorContext(
      {config: org.config, url: server.url, key: join(org.dir, 'keys', 'worker-1.key.json')},
      config,
    )
    const lateConsole = await startConsole({ctx: late, host: '127.0.0.1', port: 0})
    try {
      const page = await browser!.newPage({viewport: {width: 1280, height: 800}})
      await page.goto(lateConsole.url)
      await page.goto(`${lateConsole.origin}${missionPath(g)}`)
      const timeline = page.locator('ol.timeline')
      await timeline.locator('li.message').first().waitFor()
      expect(await page.locator('p.unavailable').textContent()).toContain('outside your visibility')
      const said = async () => (await timeline.locator('.msg-text').allTextContents()).map((t) => t.trim())
      expect(await said()).toEqual(['after you joined'])
      expect(await page.getByRole('link', {name: /Older Events/}).count()).toBe(0)
      // The WorkItems its Events show, as they stand.
      const item = page.locator(`table.visible-work tr[data-workitem="${w}"]`)
      expect((await item.locator('td').allTextContents()).slice(0, 3)).toEqual(['Tidy the changelog', 'open', '–'])
      // Live, as for any member.
      await send(owner, 'owner', 'message.post', g, {text: 'and later'})
      await expect.poll(said, {timeout: 10_000}).toEqual(['after you joined', 'and later'])
      await send(coordinator, 'coordinator', 'work.offer', g, {
        workItemId: w,
        candidates: [agent],
        expiresAt: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        selectionBasis: devSelectionBasis(agent),
        contextPackageId: 'urn:mwp:test:context-package:changelog',
      })
      await expect.poll(() => item.locator('td').nth(1).textContent(), {timeout: 10_000}).toBe('offered')
      expect(await page.content()).not.toContain('before you joined')
      await page.close()
    } finally {
      await lateConsole.close()
      worker = await connect('worker-1')
    }
  })

  it('the console resumes after the authority restarts: no gap, no duplicate in the live timeline', async () => {
    const g = await mission('Survive a restart')
    await send(owner, 'owner', 'message.post', g, {text: 'before the restart'})
    const page = await open(missionPath(g))
    await page.locator('li.message', {hasText: 'before the restart'}).waitFor()
    const port = Number(new URL(server.url).port)
    await server.close()
    await page.locator('#live', {hasText: 'reconnecting'}).waitFor()
    const config = loadOrgConfig(org.config)
    server = await startServer({
      authority: opened.authority,
      host: '127.0.0.1',
      port,
      tls: {cert: readFileSync(config.server.tls!.cert, 'utf8'), key: readFileSync(config.server.tls!.key, 'utf8')},
      log: () => undefined,
    })
    await page.locator('#live', {hasText: 'live'}).waitFor({timeout: 30_000})
    const fresh = await connect('owner') // the old session may still be reconnecting
    const state = foldGroup((await fresh.events(g))!)
    const r = await fresh.submit(
      buildCommand(keyOf('owner'), {kind: 'message.post', groupId: g, payload: {text: 'after the restart'}, state})
        .bytes,
    )
    expect('receipt' in r).toBe(true)
    await page.locator('li.message', {hasText: 'after the restart'}).waitFor({timeout: 30_000})
    const seqs = await page
      .locator('ol.timeline > li')
      .evaluateAll((li) => li.map((x) => Number(x.getAttribute('data-sequence'))))
    expect(seqs).toEqual(Array.from({length: seqs.length}, (_, i) => seqs[0]! + i))
    await page.close()
  }, 90_000)
})

/**
 * Runs in the page (a script, since these tests compile without the DOM's types): every visible
 * element with text of its own (outside SVG, whose text the graph colours with fill), its colour
 * against the first opaque background behind it, by the WCAG 2 contrast ratio; the texts under
 * 4.5:1, or 3:1 for large text (24 px, or 18.66 px bold).
 */
const LOW_CONTRAST_TEXTS = `(() => {
  const rgba = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/)
    const [r = 0, g = 0, b = 0, a = 1] = m ? m[1].split(/[ ,/]+/).filter(Boolean).map(Number) : []
    return {r, g, b, a}
  }
  const lin = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
  const luminance = ({r, g, b}) => 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
  const background = (el) => {
    for (let e = el; e !== null; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor)
      if (c.a > 0.5) return c
    }
    return {r: 255, g: 255, b: 255}
  }
  const failures = []
  let texts = 0
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('svg')) continue
    if (![...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim() !== '')) continue
    const style = getComputedStyle(el)
    const box = el.getBoundingClientRect()
    if (style.visibility === 'hidden' || box.width === 0 || box.height === 0 || box.left < -1000) continue
    texts++
    const [fg, bg] = [luminance(rgba(style.color)), luminance(background(el))]
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)
    const size = parseFloat(style.fontSize)
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700)
    if (ratio < (large ? 3 : 4.5))
      failures.push(el.tagName.toLowerCase() + '.' + el.className + ' "' + el.textContent.trim().slice(0, 40) + '": ' + ratio.toFixed(2) + ':1')
  }
  return {failures, texts, scrollWidth: document.documentElement.scrollWidth}
})()`
