// Explained rejections (issue #18) against a real `mwp authority serve --dev-tls` (TLS 1.3 on
// loopback, SQLite) and the real CLI: a semantic refusal of a member's well-signed Command tells
// its sender why (§19 `details`: detail, and the JSON Pointer of a payload member that fails its
// schema), in human output and in --json; a Command that fails verification still gets its code
// and fixed message only; every refusal is in the authority's audit log and on the server's stderr
// as one JSON line; `mwp validate --schema KIND` checks a Command payload.
// Build first: npx tsc -p tsconfig.json && node dist/scripts/oclif-manifest.js

import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type DevOrganization, createDevOrganization} from '../../src/config/dev-org.js'
import {loadOrgConfig} from '../../src/config/org-config.js'
import {readKeyFile} from '../../src/crypto/keyfile.js'
import {errorMessage, protocolError} from '../../src/errors.js'
import {buildCommand} from '../../src/operator/command-builder.js'
import type {Transport} from '../../src/operator/transport.js'
import {openWireTransport} from '../../src/operator/wire-transport.js'
import {until} from '../support/agent-org.js'
import {serveProcess} from '../support/authority-process.js'
import {json, mwp} from '../support/cli.js'
import {devContract, devSelectionBasis} from '../support/operator-helpers.js'

let dir: string
let org: DevOrganization
let server: ReturnType<typeof serveProcess>
let env: NodeJS.ProcessEnv
let group: string
let worker: string

const key = (name: string) => join(org.dir, org.identities.find((i) => i.name === name)!.keyFile)
const storeUrl = () => `sqlite:${join(org.dir, 'authority.db')}`

/** `mwp command issue` against the server; `payload` on stdin. */
const issue = (signer: string, kind: string, payload: unknown, ...flags: string[]) =>
  mwp(['command', 'issue', '--kind', kind, '--group', group, '--payload', '-', '--key', key(signer), ...flags], {
    env,
    input: JSON.stringify(payload),
  })

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z')
const offer = (extra: Record<string, unknown> = {}) => ({
  workItemId: `${group}:work:notes`,
  candidates: [worker],
  expiresAt: inAnHour(),
  selectionBasis: devSelectionBasis(worker),
  ...extra,
})

/** The server's JSON log line of a rejected Command that `match` picks, once stderr has it. */
const rejectedLine = (match: (line: Record<string, unknown>) => boolean) =>
  until(
    async () =>
      server
        .out()
        .stderr.split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.event === 'command-rejected' && match(l)),
    (line) => line !== undefined,
    'the command-rejected log line',
  )

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-rejections-'))
  org = await createDevOrganization(join(dir, 'org'), {port: 0})
  worker = `${org.organization}:agent:worker-1`
  server = serveProcess(org.config, ['--dev-tls', '--port', '0'])
  const {url, ca} = await server.listening
  env = {MWP_URL: url, MWP_CA: ca!, MWP_CONFIG: org.config}
  const created = mwp(['mission', 'create', '--objective', 'Ship 0.1', '--coordinator', 'coordinator', '--json'], {env})
  expect(created.status, created.stderr).toBe(0)
  group = json(created).result.groupId as string
  const authorized = issue('coordinator', 'work.authorize', {
    workItemId: `${group}:work:notes`,
    contract: devContract(),
  })
  expect(authorized.status, authorized.stdout + authorized.stderr).toBe(0)
}, 90_000)
afterAll(async () => {
  server?.child.kill('SIGTERM')
  await server?.exited
  rmSync(dir, {recursive: true, force: true})
})

const NO_MEMBERSHIP = /^candidate \S+worker-1 has no active Membership/

describe('a semantic refusal tells its sender why', () => {
  it('work.offer to a non-member: INVALID_COMMAND with the cause, printed and in --json', () => {
    const human = issue('coordinator', 'work.offer', offer())
    expect(human.status).toBe(1)
    const [code, detail] = human.stdout.trimEnd().split('\n')
    expect(code).toBe('INVALID_COMMAND')
    expect(detail).toMatch(/^ {2}detail: candidate \S+worker-1 has no active Membership/)

    const r = issue('coordinator', 'work.offer', offer(), '--json')
    expect(r.status).toBe(1)
    const out = json(r)
    expect(out.status).toBe('rejected')
    expect(out.error).toMatchObject({
      code: 'INVALID_COMMAND',
      message: errorMessage('INVALID_COMMAND'),
      retryable: false,
      details: {detail: expect.stringMatching(NO_MEMBERSHIP)},
    })
    expect(out.error.message).not.toBe('INVALID_COMMAND')
    expect(out.error.details).not.toHaveProperty('pointer')
  })

  it('a payload that fails its schema: SCHEMA_VALIDATION_FAILED with the JSON Pointer of the member', () => {
    const human = issue('coordinator', 'work.offer', offer({expiresAt: 'tomorrow'}))
    expect(human.status).toBe(1)
    expect(human.stdout).toMatch(/^SCHEMA_VALIDATION_FAILED\n {2}detail: .+\n {2}pointer: \/payload\/expiresAt\n$/)
    const r = issue('coordinator', 'work.offer', offer({expiresAt: 'tomorrow'}), '--json')
    expect(json(r).error).toMatchObject({
      code: 'SCHEMA_VALIDATION_FAILED',
      details: {pointer: '/payload/expiresAt', detail: expect.stringContaining('/payload/expiresAt')},
    })
    // A missing member is pointed at by its own name, not at the object that lacks it.
    const {candidates: _dropped, ...noCandidates} = offer()
    const missing = issue('coordinator', 'work.offer', noCandidates, '--json')
    expect(json(missing).error.details.pointer).toBe('/payload/candidates')
  })
})

describe('what a refusal must not tell', () => {
  const transports: Transport[] = []
  afterAll(async () => {
    for (const t of transports) await t.close()
  })
  /** A wire transport authenticated as `name`, straight to the server (the CLI would refuse first). */
  const connect = async (name: string) => {
    const t = await openWireTransport({
      url: env.MWP_URL!,
      key: readKeyFile(key(name)),
      ca: env.MWP_CA!,
      registry: loadOrgConfig(org.config).registry,
    })
    transports.push(t)
    return t
  }
  const post = (t: Transport, name: string, g: string, text: string) =>
    buildCommand(readKeyFile(key(name)), {
      kind: 'message.post',
      groupId: g,
      payload: {text},
      state: null,
      membershipEpoch: 1,
      ...(t.sessionEpoch !== undefined ? {sessionEpoch: t.sessionEpoch} : {}),
    })
  const errorOf = async (t: Transport, bytes: Uint8Array) => {
    const r = await t.submit(bytes)
    expect('error' in r).toBe(true)
    return (r as {error: Record<string, unknown>}).error
  }

  it('a stranger gets GROUP_NOT_FOUND without details, exactly as for a Group that does not exist (no existence oracle)', async () => {
    const t = await connect('worker-2')
    const strip = (e: Record<string, unknown>) => ({...e, occurredAt: 0, relatedActionId: 0, relatedFrameId: 0})
    const stranger = await errorOf(t, post(t, 'worker-2', group, 'hello?').bytes)
    const absent = await errorOf(t, post(t, 'worker-2', `${group}-absent`, 'hello?').bytes)
    expect(stranger).toMatchObject({code: 'GROUP_NOT_FOUND', message: errorMessage('GROUP_NOT_FOUND')})
    expect(stranger).not.toHaveProperty('details')
    expect(strip(stranger)).toEqual(strip(absent))
  })

  it("a Command of another principal than the session's is AUTH_FORBIDDEN, code only, and audited", async () => {
    const t = await connect('worker-2')
    const built = post(t, 'owner', group, 'not mine to send')
    const error = await errorOf(t, built.bytes)
    expect(error).toEqual({
      ...protocolError('AUTH_FORBIDDEN', error.occurredAt as string),
      relatedFrameId: expect.any(String),
      relatedActionId: built.actionId,
    })
    const entries = json(mwp(['audit', 'list', '--store', storeUrl(), '--json'])).result.entries as Record<
      string,
      string
    >[]
    expect(entries.find((e) => e.subject?.includes(built.actionId))).toMatchObject({
      stage: 'session',
      reason: 'AUTH_FORBIDDEN',
      documentKind: 'command message.post',
    })
  })

  it('a Command whose signature does not match gets the code and the fixed message only: no details', async () => {
    const t = await connect('owner')
    const built = post(t, 'owner', group, 'signed')
    const tampered = Buffer.from(Buffer.from(built.bytes).toString('utf8').replace('"signed"', '"forged"'))
    expect(await errorOf(t, tampered)).toEqual({
      code: 'AUTH_INVALID_SIGNATURE',
      message: 'Signed document signature, key validity, admission proof or freshness check failed.',
      retryable: false,
      occurredAt: expect.any(String),
      relatedFrameId: expect.any(String),
      relatedActionId: built.actionId,
    })
    const line = await rejectedLine((l) => l.actionId === built.actionId)
    expect(line).toMatchObject({code: 'AUTH_INVALID_SIGNATURE', kind: 'message.post', groupId: group})
    expect(line).not.toHaveProperty('details')
  })
})

describe('the operator sees every refusal', () => {
  it('`mwp audit list` on the server’s store holds the semantic refusal: stage, code, kind, actor, detail', () => {
    const r = mwp(['audit', 'list', '--store', storeUrl(), '--json'])
    expect(r.status, r.stderr).toBe(0)
    const entries = json(r).result.entries as Record<string, string>[]
    const refusal = entries.find((e) => e.reason === 'INVALID_COMMAND' && e.stage === 'decision')
    expect(refusal).toMatchObject({
      documentKind: 'command work.offer',
      subject: expect.stringContaining(`agent ${org.organization}:agent:coordinator`),
      detail: expect.stringMatching(NO_MEMBERSHIP),
    })
    expect(refusal!.subject).toContain(`in ${group}`)
    const schema = entries.find((e) => e.reason === 'SCHEMA_VALIDATION_FAILED')
    expect(schema).toMatchObject({stage: 'payload', detail: expect.stringContaining('(at /payload/expiresAt)')})
    const text = mwp(['audit', 'list', '--store', storeUrl()])
    expect(text.stdout).toMatch(/decision.+INVALID_COMMAND/)
  })

  it('the server logs each rejected Command as one JSON line on stderr', async () => {
    const line = await rejectedLine((l) => l.code === 'INVALID_COMMAND')
    expect(line).toMatchObject({
      level: 'info',
      code: 'INVALID_COMMAND',
      kind: 'work.offer',
      actor: `${org.organization}:agent:coordinator`,
      groupId: group,
      details: {detail: expect.stringMatching(NO_MEMBERSHIP)},
    })
  })
})

describe('mwp validate --schema KIND', () => {
  it('checks a Command payload: a valid one passes, an invalid one fails with the pointer', () => {
    const ok = mwp(['validate', '--schema', 'work.offer', '-'], {input: JSON.stringify(offer())})
    expect([ok.status, ok.stdout]).toEqual([0, 'valid work.offer\n'])
    const bad = mwp(['validate', '--schema', 'work.offer', '-', '--json'], {
      input: JSON.stringify(offer({expiresAt: 'tomorrow'})),
    })
    expect(bad.status).toBe(1)
    expect(json(bad).result.errors[0]).toMatchObject({pointer: '/expiresAt'})
    const text = mwp(['validate', '--schema', 'work.offer', '-'], {input: JSON.stringify({workItemId: 'urn:w:1'})})
    expect(text.stdout).toMatch(/^SCHEMA_VALIDATION_FAILED\n {2}\/candidates: /)
  })

  it('an unknown name is a usage error that lists document schemas and Command kinds', () => {
    const r = mwp(['validate', '--schema', 'work.nope', '-'], {input: '{}'})
    expect(r.status).toBe(2)
    expect(r.stderr).toContain('unknown schema work.nope')
    expect(r.stderr).toMatch(/command,.*work-item/)
    expect(r.stderr).toContain('work.offer')
  })
})

describe('error messages', () => {
  it('every code has a message of its own, never the code itself', async () => {
    const {ERROR_CODES} = await import('../../src/errors.js')
    for (const code of ERROR_CODES) expect(errorMessage(code)).not.toBe(code)
    expect(new Set(ERROR_CODES.map(errorMessage)).size).toBe(ERROR_CODES.length)
  })
})
