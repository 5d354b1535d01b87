// The Authorization Service's HTTPS routes (spec §12, §11.3; ACCEPTANCE G1, G2, G4) on the
// binding's own TLS 1.3 listener: a real server over a throwaway SQLite store, real WebSocket
// sessions whose tokens authenticate the request, WorkItems driven through the full ingress. The
// caller is the session's Agent at the session's epoch, never what the body says; the token the
// owner gets verifies offline against the key the server serves.

import {request} from 'node:https'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {verifyToken} from '../../src/authz/verifier.js'
import {compareTimestampText} from '../../src/json/timestamp.js'
import type {Store} from '../../src/store/index.js'
import {WireClient, WireError} from '../../src/wire/client.js'
import {fetchAuthzKey} from '../../src/wire/token-client.js'
import {tokenPath} from '../../src/wire/token-routes.js'
import {
  authorityKey,
  coordinator,
  developer,
  groupCommand,
  owner,
  receiptOf,
  registry,
  reviewer,
  sqliteStore,
} from '../support/authority-helpers.js'
import {REPO, authzKey, toolContract} from '../support/authz-helpers.js'
import {missionGroup} from '../support/groups.js'
import {type Running, connect, serve, tls} from '../support/wire-helpers.js'
import {workDriver} from '../support/work-driver.js'

let store: Store
let cleanup: () => Promise<void>
let running: Running
let url: string
/** One session each, opened first: Session Epoch 1, the epoch groupCommand signs at. */
let dev: WireClient
let coord: WireClient
let rev: WireClient
let g: string

const run = (bytes: Buffer) => submit(running.authority, bytes)
const driver = workDriver(() => running.authority, {contract: toolContract()})
const now = () => running.authority.clock()

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  const authority = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}})
  running = await serve(store, {authority})
  url = running.server.url
  dev = await connect(url, developer, {reconnect: false})
  coord = await connect(url, coordinator, {reconnect: false})
  rev = await connect(url, reviewer, {reconnect: false})
  g = await missionGroup(run, 'tokens', {members: [developer]})
}, 60_000)
afterAll(async () => {
  for (const c of [dev, coord, rev]) await c?.close()
  await running?.server.close()
  await cleanup?.()
})

/** One raw HTTPS exchange: status and parsed JSON body. */
function raw(method: string, path: string, token?: string, body?: unknown): Promise<{status: number; json: any}> {
  const {port} = new URL(url)
  const bytes = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname: '127.0.0.1',
        port,
        method,
        path,
        ca: tls().ca,
        minVersion: 'TLSv1.3',
        agent: false,
        headers: {
          ...(token === undefined ? {} : {authorization: `Bearer ${token}`}),
          ...(bytes ? {'content-type': 'application/json', 'content-length': bytes.length} : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString('utf8'))}),
        )
      },
    )
    req.on('error', reject)
    req.end(bytes)
  })
}

async function wireCode(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (e: unknown) => e,
  )
  expect(e).toBeInstanceOf(WireError)
  return (e as WireError).code
}

/** The lease fields of WorkItem `w` now (ownershipEpoch, leaseId). */
async function leaseOf(w: string) {
  const item = await driver.item(g, w)
  return {ownershipEpoch: item.ownershipEpoch, leaseId: item.lease?.leaseId ?? 'urn:uuid:no-lease'}
}

describe('POST …/work-items/{workItemId}/token (§12)', () => {
  it('gives the owner of an active lease a token that verifies against the served key, bound to its session and lease', async () => {
    const w = await driver.drive(g, 'active')
    const item = await driver.item(g, w)
    const served = await fetchAuthzKey({url, ca: tls().ca})
    // Default: the authority key signs tokens (server.ts authorizationKey).
    expect(Buffer.from(served.publicKey)).toEqual(Buffer.from(authorityKey.publicKey))
    expect([served.issuer, served.keyId]).toEqual([authorityKey.principal!.id, authorityKey.keyId])

    const headBefore = (await store.head(g))!.sequence
    const issued = await dev.requestToken(g, w, await leaseOf(w))
    expect(issued.claims).toMatchObject({
      agentId: developer.principal!.id,
      sessionEpoch: dev.sessionEpoch,
      groupId: g,
      workItemId: w,
      ownershipEpoch: item.ownershipEpoch,
      leaseId: item.lease!.leaseId,
    })
    expect(issued.expiresAt).toBe(issued.claims.expiresAt)
    expect(compareTimestampText(issued.expiresAt, item.lease!.expiresAt!)).toBeLessThanOrEqual(0)
    const verdict = await verifyToken(issued.token, {
      publicKey: served.publicKey,
      now: now(),
      operation: 'write',
      resource: REPO,
    })
    expect(verdict).toMatchObject({ok: true, claims: {leaseId: item.lease!.leaseId}})
    // Not under another key (the check can fail).
    const forgedKey = Buffer.from(served.publicKey)
    forgedKey[0] = forgedKey[0]! ^ 1
    expect(
      (await verifyToken(issued.token, {publicKey: forgedKey, now: now(), operation: 'write', resource: REPO})).ok,
    ).toBe(false)
    // G3: issuing appends nothing, and the server's log names the token's ID, never the token.
    expect((await store.head(g))!.sequence).toBe(headBefore)
    const logged = JSON.stringify(running.logs)
    expect(logged).toContain(issued.claims.tokenId)
    expect(logged).not.toContain(issued.token.split('.')[1]!)

    // A narrower ask is honoured; one outside the contract is AUTH_FORBIDDEN.
    const narrow = await dev.requestToken(g, w, {
      ...(await leaseOf(w)),
      grants: [{resource: REPO, operations: ['read']}],
    })
    expect(narrow.claims.grants).toEqual([{resource: REPO, operations: ['read']}])
    const wide = await raw('POST', tokenPath(g, w), dev.sessionToken, {
      ...(await leaseOf(w)),
      grants: [{resource: REPO, operations: ['delete']}],
    })
    expect([wide.status, wide.json.code]).toEqual([403, 'AUTH_FORBIDDEN'])
  })

  it("refuses another Agent, the Coordinator (even naming the owner in the body) and an unreadable Group's caller", async () => {
    const w = await driver.drive(g, 'active')
    const ask = await leaseOf(w)
    // The Coordinator is a member: not the owner, so AUTH_FORBIDDEN; naming the owner changes nothing.
    expect(await wireCode(coord.requestToken(g, w, ask))).toBe('AUTH_FORBIDDEN')
    const spoof = await raw('POST', tokenPath(g, w), coord.sessionToken, {...ask, agentId: developer.principal!.id})
    expect([spoof.status, spoof.json.code]).toEqual([403, 'AUTH_FORBIDDEN'])
    // The reviewer cannot read the Group: the same 404 as an unknown Group.
    const outsider = await raw('POST', tokenPath(g, w), rev.sessionToken, ask)
    const unknown = await raw('POST', tokenPath('urn:mwp:test:group:nobody', w), rev.sessionToken, ask)
    expect([outsider.status, outsider.json.code]).toEqual([404, 'GROUP_NOT_FOUND'])
    expect(unknown).toEqual(outsider)
    // A body that is not a TokenRequest, or that tries to set what the path or session says.
    for (const body of ['{', [], {...ask, ownershipEpoch: 'one'}, {...ask, groupId: 'urn:mwp:test:group:other'}]) {
      const r = await raw('POST', tokenPath(g, w), dev.sessionToken, body)
      expect([r.status, r.json.code]).toEqual([400, 'INVALID_COMMAND'])
    }
    // A stale lease ID is not this execution.
    const stale = await raw('POST', tokenPath(g, w), dev.sessionToken, {...ask, leaseId: 'urn:uuid:not-the-lease'})
    expect([stale.status, stale.json.code]).toEqual([409, 'WORK_LEASE_EXPIRED'])
  })

  it('an execution-approval-gated WorkItem is APPROVAL_REQUIRED until approval.grant_execution (G4)', async () => {
    const w = await driver.drive(g, 'queued', {contract: toolContract({executionApproval: 'human_required'})})
    const gated = await raw('POST', tokenPath(g, w), dev.sessionToken, await leaseOf(w))
    expect([gated.status, gated.json.code]).toEqual([403, 'APPROVAL_REQUIRED'])
    const {ownershipEpoch} = await driver.item(g, w)
    receiptOf(await run(groupCommand(owner, 'approval.grant_execution', g, {workItemId: w, ownershipEpoch})))
    // Approved but not started: no lease yet.
    expect(await wireCode(dev.requestToken(g, w, await leaseOf(w)))).toBe('WORK_LEASE_EXPIRED')
    await driver.advance(g, w, 'queued', 'active')
    const issued = await dev.requestToken(g, w, await leaseOf(w))
    expect(issued.claims.workItemId).toBe(w)
  })

  it('no token, a forged one and a superseded session are AUTH_REQUIRED (401); the new session does not own the old lease', async () => {
    const w = await driver.drive(g, 'active')
    const ask = await leaseOf(w)
    const none = await raw('POST', tokenPath(g, w), undefined, ask)
    expect([none.status, none.json.code]).toEqual([401, 'AUTH_REQUIRED'])
    const forged = await raw('POST', tokenPath(g, w), 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', ask)
    expect([forged.status, forged.json.code]).toEqual([401, 'AUTH_REQUIRED'])
    // Last test: a newer HELLO of the developer supersedes the epoch-1 session.
    const older = dev.sessionToken
    const newer = await connect(url, developer, {reconnect: false})
    try {
      expect(newer.sessionEpoch).toBeGreaterThan(1)
      const superseded = await raw('POST', tokenPath(g, w), older, ask)
      expect([superseded.status, superseded.json.code]).toEqual([401, 'AUTH_REQUIRED'])
      // The lease was issued to session 1: the new session gets no token for it.
      expect(await wireCode(newer.requestToken(g, w, ask))).toBe('WORK_LEASE_EXPIRED')
    } finally {
      await newer.close()
    }
  })

  it('GET /mwp/0.1/authz/key needs no session; other methods on the routes are 405', async () => {
    const key = await raw('GET', '/mwp/0.1/authz/key')
    expect(key.status).toBe(200)
    expect(key.json).toMatchObject({algorithm: 'Ed25519', keyId: authorityKey.keyId})
    const get = await raw('GET', tokenPath(g, 'urn:uuid:any'), dev.sessionToken)
    expect(get.status).toBe(405)
  })

  it('a server given its own authorizationKey serves that key, not the authority key', async () => {
    const other = await serve(store, {authority: running.authority, authorizationKey: authzKey})
    try {
      const served = await fetchAuthzKey({url: other.server.url, ca: tls().ca})
      expect(Buffer.from(served.publicKey)).toEqual(Buffer.from(authzKey.publicKey))
      expect(served.issuer).toBe(authzKey.principal!.id)
    } finally {
      await other.server.close()
    }
    await expect(serve(store, {authority: running.authority, authorizationKey: developer})).rejects.toThrow(
      /service Principal/,
    )
  })
})
