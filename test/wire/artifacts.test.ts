// The Artifact store over HTTPS on the binding's own TLS 1.3 listener (spec §13.1, §17.2, §6.3):
// a real server over a throwaway SQLite store, real WebSocket sessions whose tokens authenticate
// the PUT and GET. Access is the Artifact's Group's; an unknown or unreadable Group answers exactly
// like a missing Artifact; a token stops working when its session is closed, expired (the
// Authority's clock, moved forward) or superseded by a newer HELLO of the same Agent; damaged
// content on disk is never served; the client refuses bytes that do not match what it asked for.

import {createServer} from 'node:https'
import {request} from 'node:https'
import type {AddressInfo} from 'node:net'
import {writeFileSync} from 'node:fs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {contentHash} from '../../src/crypto/hash.js'
import {ArtifactBlobError, ArtifactBlobs, artifactDirFor} from '../../src/store/artifact-blobs.js'
import type {Store} from '../../src/store/index.js'
import {getArtifact} from '../../src/wire/artifact-client.js'
import {artifactPath} from '../../src/wire/artifact-routes.js'
import {WireError} from '../../src/wire/client.js'
import {
  authorityKey,
  coordinator,
  developer,
  owner,
  registry,
  reviewer,
  sqliteStore,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {type Running, connect, serve, tls} from '../support/wire-helpers.js'

const TTL_SECONDS = 600
const MAX_BYTES = 4096

let store: Store
let cleanup: () => Promise<void>
let running: Running
let url: string
/** Added to the Authority's clock: moves token expiry without waiting. */
let clockOffsetMs = 0

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  const authority = openAuthority({
    store,
    registry,
    authorityKey,
    policy: {rootMissionOwners: [owner.principal!.id]},
    clock: () => new Date(Date.now() + clockOffsetMs).toISOString(),
  })
  running = await serve(store, {authority, sessionTtlSeconds: TTL_SECONDS, artifactMaxBytes: MAX_BYTES})
  url = running.server.url
}, 60_000)
afterAll(async () => {
  await running?.server.close()
  await cleanup?.()
})

const run = (bytes: Buffer) => submit(running.authority, bytes)

/** One raw HTTPS exchange with the server: status and parsed JSON (or raw) body. */
function raw(method: string, path: string, token?: string, body?: Buffer): Promise<{status: number; body: Buffer}> {
  const {port} = new URL(url)
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
        headers: token === undefined ? {} : {authorization: `Bearer ${token}`},
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({status: res.statusCode!, body: Buffer.concat(chunks)}))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
const jsonOf = (r: {body: Buffer}) => JSON.parse(r.body.toString('utf8')) as {code: string; detail: string}

async function wireCode(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (e: unknown) => e,
  )
  expect(e).toBeInstanceOf(WireError)
  return (e as WireError).code
}

let g: string
let other: string
const report = Buffer.from('{"findings":[]}\n')
const reportHash = contentHash(report)

beforeAll(async () => {
  // The coordinator is a member of both; developer of g only, reviewer of the other only.
  g = await missionGroup(run, 'artifacts', {members: [developer]})
  other = await missionGroup(run, 'artifacts-other', {members: [reviewer]})
}, 60_000)

describe('the Artifact store over HTTPS (§13.1)', () => {
  it('a member PUTs bytes into its Group and members GET them back, verified; nothing enters the Group log', async () => {
    const head = (await store.head(g))!.sequence
    const dev = await connect(url, developer, {reconnect: false})
    const rev = await connect(url, coordinator, {reconnect: false})
    try {
      expect(await dev.putArtifact(g, report)).toBe(reportHash)
      expect(await dev.putArtifact(g, report)).toBe(reportHash) // idempotent
      expect(await dev.getArtifact(g, reportHash)).toEqual(report)
      expect(await rev.getArtifact(g, reportHash)).toEqual(report)
      expect((await store.head(g))!.sequence).toBe(head)
      const r = await raw('GET', artifactPath(g, reportHash), dev.sessionToken)
      expect(r.status).toBe(200)
    } finally {
      await dev.close()
      await rev.close()
    }
  })

  it("another Group's member gets the same 404 for it as for a missing Artifact and an unknown Group (§17.2)", async () => {
    const dev = await connect(url, developer, {reconnect: false})
    await dev.putArtifact(g, report)
    await dev.close()
    const outsider = await connect(url, reviewer, {reconnect: false})
    try {
      expect(await wireCode(outsider.getArtifact(g, reportHash))).toBe('GROUP_NOT_FOUND')
      const token = outsider.sessionToken
      const theirs = await raw('GET', artifactPath(g, reportHash), token)
      const missing = await raw('GET', artifactPath(other, contentHash('never put')), token)
      const unknown = await raw('GET', artifactPath('urn:mwp:test:group:nobody', reportHash), token)
      // The same bytes through the outsider's own Group: not put there, so not there.
      const viaOwn = await raw('GET', artifactPath(other, reportHash), token)
      for (const r of [theirs, missing, unknown, viaOwn]) {
        expect(r.status).toBe(404)
        expect(r.body).toEqual(theirs.body)
      }
      expect(jsonOf(theirs).code).toBe('GROUP_NOT_FOUND')
      // Nor can it put into a Group it cannot read.
      const put = await raw('PUT', artifactPath(g, contentHash('x')), token, Buffer.from('x'))
      expect(put.status).toBe(404)
      expect(put.body).toEqual(theirs.body)
    } finally {
      await outsider.close()
    }
  })

  it('no token, a forged one, a closed session’s and an expired one are AUTH_REQUIRED (401)', async () => {
    const path = artifactPath(g, reportHash)
    const none = await raw('GET', path)
    expect([none.status, jsonOf(none).code]).toEqual([401, 'AUTH_REQUIRED'])
    const forged = await raw('GET', path, 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
    expect([forged.status, jsonOf(forged).code]).toEqual([401, 'AUTH_REQUIRED'])

    const closing = await connect(url, coordinator, {reconnect: false})
    const closedToken = closing.sessionToken!
    expect((await raw('GET', path, closedToken)).status).toBe(200)
    await closing.close()
    await eventually(async () => (await raw('GET', path, closedToken)).status === 401)

    const expiring = await connect(url, coordinator, {reconnect: false})
    try {
      const token = expiring.sessionToken!
      expect((await raw('GET', path, token)).status).toBe(200)
      clockOffsetMs = (TTL_SECONDS + 1) * 1000
      const expired = await raw('GET', path, token)
      expect([expired.status, jsonOf(expired).code]).toEqual([401, 'AUTH_REQUIRED'])
    } finally {
      clockOffsetMs = 0
      await expiring.close()
    }
  })

  it('a session superseded by a newer HELLO of the same Agent can no longer use its token (§6.3)', async () => {
    const older = await connect(url, developer, {reconnect: false})
    const path = artifactPath(g, reportHash)
    try {
      expect((await raw('GET', path, older.sessionToken)).status).toBe(200)
      const newer = await connect(url, developer, {reconnect: false})
      try {
        expect(newer.sessionEpoch).toBeGreaterThan(older.sessionEpoch!)
        const stale = await raw('GET', path, older.sessionToken)
        expect([stale.status, jsonOf(stale).code]).toEqual([401, 'AUTH_REQUIRED'])
        expect(await wireCode(older.putArtifact(g, Buffer.from('late')))).toBe('AUTH_REQUIRED')
        expect(await newer.getArtifact(g, reportHash)).toEqual(report)
      } finally {
        await newer.close()
      }
    } finally {
      await older.close()
    }
  })

  it('refuses a body that does not hash to the path’s hash (400) and one over the size limit (413)', async () => {
    const dev = await connect(url, developer, {reconnect: false})
    try {
      const stated = contentHash('meant')
      const mismatch = await raw('PUT', artifactPath(g, stated), dev.sessionToken, Buffer.from('sent'))
      expect([mismatch.status, jsonOf(mismatch).code]).toEqual([400, 'SCHEMA_VALIDATION_FAILED'])
      expect((await raw('GET', artifactPath(g, stated), dev.sessionToken)).status).toBe(404)
      const big = Buffer.alloc(MAX_BYTES + 1, 7)
      const over = await raw('PUT', artifactPath(g, contentHash(big)), dev.sessionToken, big)
      expect([over.status, jsonOf(over).code]).toEqual([413, 'SCHEMA_VALIDATION_FAILED'])
      const malformed = await raw('GET', artifactPath(g, 'sha256:nothex'), dev.sessionToken)
      expect([malformed.status, jsonOf(malformed).code]).toEqual([400, 'SCHEMA_VALIDATION_FAILED'])
    } finally {
      await dev.close()
    }
  })

  it('never serves content damaged on disk: 500, a log line and an audit entry; the client gets an error, not bytes', async () => {
    const dev = await connect(url, developer, {reconnect: false})
    try {
      const bytes = Buffer.from('to be damaged')
      const hash = await dev.putArtifact(g, bytes)
      const blobs = new ArtifactBlobs(artifactDirFor(store.url)!)
      writeFileSync(blobs.pathOf(hash), 'to be dam4ged')
      const since = new Date().toISOString()
      expect(await wireCode(dev.getArtifact(g, hash))).toBe('INTERNAL_ERROR')
      const r = await raw('GET', artifactPath(g, hash), dev.sessionToken)
      expect(r.status).toBe(500)
      expect(r.body.toString()).not.toContain('dam4ged')
      expect(running.logs).toContainEqual(expect.objectContaining({event: 'artifact-damaged', hash}))
      const audit = await store.listAudit({since})
      expect(audit).toContainEqual(expect.objectContaining({stage: 'artifact-integrity', subject: hash}))
    } finally {
      await dev.close()
    }
  })

  it('the client refuses bytes whose hash does not match, from a server that lies', async () => {
    const liar = createServer({cert: tls().cert, key: tls().key, minVersion: 'TLSv1.3'}, (_req, res) => {
      res.writeHead(200, {'content-type': 'application/octet-stream'}).end('not the report')
    })
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve))
    try {
      const port = (liar.address() as AddressInfo).port
      const e = await getArtifact({url: `wss://127.0.0.1:${port}`, ca: tls().ca, token: 't'}, g, reportHash).then(
        () => null,
        (e: unknown) => e,
      )
      expect(e).toBeInstanceOf(ArtifactBlobError)
      expect((e as ArtifactBlobError).code).toBe('artifact-integrity')
    } finally {
      await new Promise<void>((resolve) => liar.close(() => resolve()))
    }
  })
})

/** Resolves once `check` holds, re-checking every 20 ms (bounded by the test timeout). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20))
}
