// An external tool service behind capability tokens (spec §12, §11.4, §16): a small HTTP server on
// 127.0.0.1 that performs "repository writes" only for a valid token (verifyToken, with its own
// usage meter and the Authorization Service's lease check), and keeps exactly one receipt per
// logical operation under the WorkItem execution idempotency key — so retries, and a resumed run
// under a new lease of the same ownership, never repeat the side effect.

import {once} from 'node:events'
import {type IncomingMessage, type Server, type ServerResponse, createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {idempotencyKey} from '../../src/agent/idempotency.js'
import {type UsageDelta, addUsage, ZERO_USAGE} from '../../src/authority/model/budget.js'
import type {AuthorizationService} from '../../src/authz/issuer.js'
import {verifyToken} from '../../src/authz/verifier.js'
import type {CapabilityClaims} from '../../src/authz/token.js'
import {compareTimestampText} from '../../src/json/timestamp.js'
import {LEASE_SECONDS, REPO, authzSuite} from '../support/authz-helpers.js'

interface Receipt {
  receiptId: number
  idempotencyKey: string
  operationId: string
  workItemId: string
  ownershipEpoch: number
}

/** What one call costs the service's meter: one tool call. */
const COST: UsageDelta = {toolCalls: 1}

/** §11.4: the WorkItem execution idempotency key of one logical operation under a token's binding. */
const keyOf = (c: CapabilityClaims, operationId: string) =>
  idempotencyKey(c.missionId, c.workItemId, c.ownershipEpoch, operationId)

/** The fake tool service: receipts by idempotency key, usage by token, every side effect counted. */
class RepoTool {
  readonly receipts = new Map<string, Receipt>()
  readonly usedByToken = new Map<string, UsageDelta>()
  performed = 0
  readonly #server: Server

  constructor(
    readonly authz: AuthorizationService,
    readonly clock: () => string,
  ) {
    this.#server = createServer((req, res) => void this.#handle(req, res))
  }

  async listen(): Promise<string> {
    this.#server.listen(0, '127.0.0.1')
    await once(this.#server, 'listening')
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()))
  }

  async #handle(req: IncomingMessage, res: ServerResponse) {
    const answer = (status: number, body: unknown) =>
      res.writeHead(status, {'content-type': 'application/json'}).end(JSON.stringify(body))
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const {operationId} = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {operationId: string}
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
    if (bearer === undefined) return answer(401, {error: {code: 'AUTH_REQUIRED'}})
    const now = this.clock()
    const verdict = await verifyToken(bearer, {
      publicKey: this.authz.publicKey,
      now,
      operation: 'write',
      resource: REPO,
      revoked: (id) => this.authz.revoked(id),
      leaseCheck: (claims) => this.authz.leaseStatus(claims, now),
      // A replayed operation performs nothing, so it costs nothing.
      usage: (claims) => ({
        used: this.#used(claims.tokenId),
        cost: this.receipts.has(keyOf(claims, operationId)) ? {} : COST,
      }),
    })
    if (!verdict.ok) return answer(403, {error: {code: verdict.code, rejection: verdict.rejection}})
    const c = verdict.claims
    // The key is derived from the token's own binding, so a caller cannot present another execution's key.
    const key = keyOf(c, operationId)
    if (req.headers['idempotency-key'] !== key) return answer(409, {error: {code: 'INVALID_COMMAND'}})
    const existing = this.receipts.get(key)
    if (existing !== undefined) return answer(200, {receipt: existing, replayed: true})
    this.performed += 1
    this.usedByToken.set(c.tokenId, addUsage(addUsage(ZERO_USAGE, this.#used(c.tokenId)), COST))
    const receipt: Receipt = {
      receiptId: this.performed,
      idempotencyKey: key,
      operationId,
      workItemId: c.workItemId,
      ownershipEpoch: c.ownershipEpoch,
    }
    this.receipts.set(key, receipt)
    return answer(200, {receipt, replayed: false})
  }

  #used(tokenId: string): UsageDelta {
    return this.usedByToken.get(tokenId) ?? {}
  }
}

const {s, driver, now, group, token, checkpoint, restart} = authzSuite()
let tool: RepoTool
let url: string

beforeAll(async () => {
  tool = new RepoTool(s.service, now)
  url = await tool.listen()
})
afterAll(async () => tool?.close())

/** One call as a Worker would make it: the token as bearer, the key derived from its binding. */
async function write(t: string, operationId: string, key?: string) {
  const claims = JSON.parse(Buffer.from(t.split('.')[0]!, 'base64url').toString('utf8')) as {
    missionId: string
    workItemId: string
    ownershipEpoch: number
  }
  const res = await fetch(`${url}/write`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${t}`,
      'idempotency-key': key ?? idempotencyKey(claims.missionId, claims.workItemId, claims.ownershipEpoch, operationId),
      'content-type': 'application/json',
    },
    body: JSON.stringify({operationId}),
  })
  return {
    status: res.status,
    body: (await res.json()) as {receipt?: Receipt; replayed?: boolean; error?: {code: string; rejection?: string}},
  }
}

describe('a tool service behind capability tokens', () => {
  it('holds exactly one receipt per logical operation when it is retried three times, and across a resumed lease of the same ownership', async () => {
    const g = await group('tool-retry')
    const w = await driver.drive(g, 'active')
    const {token: t} = await token(g, w)
    const first = await write(t, 'publish-notes')
    expect(first).toMatchObject({status: 200, body: {replayed: false}})
    for (let retry = 0; retry < 3; retry++) {
      const again = await write(t, 'publish-notes')
      expect(again).toMatchObject({status: 200, body: {replayed: true}})
      expect(again.body.receipt).toEqual(first.body.receipt)
    }
    expect(tool.performed).toBe(1)
    expect([...tool.receipts.values()].filter((r) => r.workItemId === w)).toHaveLength(1)

    // Checkpoint and resume: a new lease and a new token, the same Ownership Epoch, so the same key.
    await checkpoint(g, w)
    expect((await write(t, 'publish-notes')).body.error).toEqual({code: 'WORK_LEASE_EXPIRED', rejection: 'lease-ended'})
    await restart(g, w)
    const {token: resumed} = await token(g, w)
    const after = await write(resumed, 'publish-notes')
    expect(after).toMatchObject({status: 200, body: {replayed: true}})
    expect(after.body.receipt).toEqual(first.body.receipt)
    expect(tool.performed).toBe(1)

    // Another logical operation is another receipt; a key not derived from the token's binding is refused.
    expect((await write(resumed, 'tag-release')).body).toMatchObject({replayed: false})
    expect((await write(resumed, 'tag-release', 'idem:forged')).status).toBe(409)
    expect([...tool.receipts.values()].filter((r) => r.workItemId === w)).toHaveLength(2)
  })

  it("meters each token: new operations stop at the token's tool-call limit, retries cost nothing", async () => {
    const g = await group('tool-meter')
    const w = await driver.drive(g, 'active')
    const {token: t, claims} = await token(g, w, {limits: {toolCallLimit: 2}})
    expect(claims.limits.toolCallLimit).toBe(2)
    const before = tool.performed
    expect((await write(t, 'op-1')).status).toBe(200)
    expect((await write(t, 'op-1')).status).toBe(200)
    expect((await write(t, 'op-2')).status).toBe(200)
    expect((await write(t, 'op-3')).body.error).toEqual({code: 'BUDGET_EXCEEDED', rejection: 'over-budget'})
    // At the limit, a retry of a performed operation still gets its receipt.
    expect((await write(t, 'op-2')).body).toMatchObject({replayed: true})
    expect(tool.performed - before).toBe(2)
  })

  it('refuses a token whose lease expired, and performs nothing', async () => {
    const g = await group('tool-expired')
    const w = await driver.drive(g, 'active')
    const {token: t, claims} = await token(g, w)
    const lease = (await driver.item(g, w)).lease!
    expect(compareTimestampText(claims.expiresAt, lease.expiresAt!)).toBeLessThanOrEqual(0)
    const receipts = tool.receipts.size
    s.skewMs = (LEASE_SECONDS + 1) * 1000
    try {
      expect((await write(t, 'late-op')).body.error).toEqual({code: 'AUTH_INVALID_SIGNATURE', rejection: 'expired'})
      expect(tool.receipts.size).toBe(receipts)
      // And no new token is issued under the expired lease.
      const refused = await s.service.issue(
        {groupId: g, workItemId: w, ownershipEpoch: 1, leaseId: lease.leaseId},
        {agentId: claims.agentId, sessionEpoch: 1},
        now(),
      )
      expect(refused).toMatchObject({ok: false, code: 'WORK_LEASE_EXPIRED'})
    } finally {
      s.skewMs = 0
    }
  })
})
