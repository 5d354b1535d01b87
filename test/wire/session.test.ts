// WebSocket binding, part 1 (spec §6.3, §17.1; ACCEPTANCE B1-B7, J1, H3, H8): TLS 1.3 only,
// the HELLO handshake, Session Epochs from the Organization log, fencing of an old session on its
// still-open socket, and the two Organization-scoped Command kinds. Real TLS sockets on 127.0.0.1
// over a throwaway SQLite store.

import {connect as tlsConnect} from 'node:tls'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import WebSocket from 'ws'
import {submit} from '../../src/authority/ingress/command.js'
import {decodeBase64url, encodeBase64url} from '../../src/json/base64url.js'
import {sign} from '../../src/signing/sign.js'
import {verify} from '../../src/signing/verify.js'
import type {Store} from '../../src/store/index.js'
import {
  CARD_REGISTER,
  CARD_REGISTERED,
  SESSION_OPEN,
  SESSION_OPENED,
  submitOrganizationCommand,
} from '../../src/authority/ingress/organization.js'
import {startServer} from '../../src/wire/server.js'
import {currentSessionEpoch} from '../../src/authority/ingress/sessions.js'
import {
  codeOf,
  command,
  coordinator,
  developer,
  groupCommand,
  key,
  orgService,
  owner,
  post,
  registry,
  sqliteStore,
  uuid,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {type Running, connect, hello, helloResponse, nonce, rawSocket, serve, tls} from '../support/wire-helpers.js'
import {badSignatures, malleateS} from '../support/crypto-vectors.js'

let store: Store
let cleanup: () => Promise<void>
let running: Running
let url: string

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  running = await serve(store)
  url = running.server.url
}, 60_000)
afterAll(async () => {
  await running?.server.close()
  await cleanup?.()
})

/** Runs client_init and returns the challenge frame. */
async function challenged(signerKeyId: string, principalId: string) {
  const r = await rawSocket(url)
  const clientNonce = nonce()
  r.send(hello('client_init', {agentId: principalId, keyId: signerKeyId, clientNonce, supportedVersions: ['0.1']}))
  const challenge = await r.next()
  return {r, clientNonce, challenge}
}

/** A Group created by the owner with the coordinator Agent assigned. */
const group = () => missionGroup((bytes) => submit(running.authority, bytes), 'wire-session', {members: []})

describe('TLS 1.3 only (J1)', () => {
  it('accepts a TLS 1.3 connection and refuses a TLS 1.2-only client', async () => {
    const port = running.server.port
    const protocol = await new Promise<string | null>((resolve, reject) => {
      const s = tlsConnect({host: '127.0.0.1', port, ca: tls().ca}, () => {
        resolve(s.getProtocol())
        s.destroy()
      }).on('error', reject)
    })
    expect(protocol).toBe('TLSv1.3')
    const refused = await new Promise<string>((resolve) => {
      const s = tlsConnect({host: '127.0.0.1', port, ca: tls().ca, maxVersion: 'TLSv1.2'}, () => {
        resolve('connected')
        s.destroy()
      }).on('error', (e) => resolve(e.message))
    })
    expect(refused).toMatch(/protocol version|alert/i)
    // The WebSocket client over TLS 1.2 fails the same way.
    await expect(
      new Promise((resolve, reject) =>
        new WebSocket(url, {ca: tls().ca, maxVersion: 'TLSv1.2'}).once('open', resolve).once('error', reject),
      ),
    ).rejects.toThrow()
  })

  it('plain ws exists only as insecure-loopback, and never on a non-loopback address', async () => {
    await expect(
      startServer({
        authority: running.authority,
        host: '0.0.0.0',
        port: 0,
        tls: 'insecure-loopback',
        log: () => undefined,
      }),
    ).rejects.toThrow(/loopback/)
    const plain = await startServer({
      authority: running.authority,
      host: '127.0.0.1',
      port: 0,
      tls: 'insecure-loopback',
      log: () => undefined,
    })
    try {
      expect(plain.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/)
      const c = await connect(plain.url, owner, {reconnect: false})
      await c.ping()
      await c.close()
    } finally {
      await plain.close()
    }
  })
})

describe('HELLO handshake (§6.3, B1-B5)', () => {
  it('[+cmd:ext.missionweaveprotocol.identity.session_open] [+evt:ext.missionweaveprotocol.identity.session_opened] each Agent session gets a strictly higher epoch from a signed Organization-scoped Event', async () => {
    const before = await currentSessionEpoch(running.authority, coordinator.principal!.id)
    const a = await connect(url, coordinator)
    const b = await connect(url, coordinator)
    expect(a.sessionEpoch).toBe(before + 1)
    expect(b.sessionEpoch).toBe(before + 2)
    expect(a.sessionToken!.length).toBeGreaterThanOrEqual(16)
    // The Organization log holds the signed fact: no groupId, sequence or aggregateRevision (H8).
    const log = store.organizationLog()
    expect(await log.currentVersion(SESSION_OPENED, coordinator.principal!.id)).toBe(before + 2)
    await a.close()
    await b.close()
  })

  it('a human session carries no Agent Session Epoch', async () => {
    const c = await connect(url, owner)
    expect(c.sessionEpoch).toBeUndefined()
    expect(c.principal).toEqual(owner.principal)
    await c.close()
  })

  it('a first frame other than HELLO client_init is AUTH_REQUIRED and closes the connection', async () => {
    const r = await rawSocket(url)
    r.send({
      protocolVersion: '0.1',
      frameId: 'urn:uuid:00000000-0000-4000-8000-000000000001',
      frameType: 'PING',
      nonce: nonce(),
      sentAt: new Date().toISOString(),
    })
    const f = await r.next()
    expect(f.frameType).toBe('ERROR')
    expect(f.error.code).toBe('AUTH_REQUIRED')
    expect(await r.closed).toBe(1008)
  })

  it('a client offering no supported version gets UNSUPPORTED_VERSION', async () => {
    const r = await rawSocket(url)
    r.send(
      hello('client_init', {
        agentId: coordinator.principal!.id,
        keyId: coordinator.keyId,
        clientNonce: nonce(),
        supportedVersions: ['0.2'],
      }),
    )
    expect((await r.next()).error.code).toBe('UNSUPPORTED_VERSION')
  })

  it('the challenge is fresh; a response must repeat the exchange values and verify under a currently valid key of that principal (B2-B4)', async () => {
    const id = coordinator.principal!.id
    const first = await challenged(coordinator.keyId, id)
    const second = await challenged(coordinator.keyId, id)
    expect(first.challenge.phase).toBe('server_challenge')
    expect(first.challenge.clientNonce).toBe(first.clientNonce)
    expect(first.challenge.challenge).not.toBe(second.challenge.challenge)
    expect(first.challenge.serverNonce).not.toBe(second.challenge.serverNonce)

    // B2: the response to the first challenge replayed on the second exchange.
    second.r.send(helloResponse(id, coordinator.keyId, first.clientNonce, first.challenge, coordinator.seed))
    expect((await second.r.next()).error.code).toBe('AUTH_INVALID_SIGNATURE')

    // B4: the right values, signed by another principal's key.
    const wrongKey = await challenged(coordinator.keyId, id)
    wrongKey.r.send(helloResponse(id, coordinator.keyId, wrongKey.clientNonce, wrongKey.challenge, developer.seed))
    expect((await wrongKey.r.next()).error.code).toBe('AUTH_INVALID_SIGNATURE')

    // B4: a key that is registered to the principal but expired.
    const expired = key('developer-expired')
    const old = await challenged(expired.keyId, developer.principal!.id)
    old.r.send(helloResponse(developer.principal!.id, expired.keyId, old.clientNonce, old.challenge, expired.seed))
    expect((await old.r.next()).error.code).toBe('AUTH_INVALID_SIGNATURE')

    // The honest response on the first exchange is accepted.
    first.r.send(helloResponse(id, coordinator.keyId, first.clientNonce, first.challenge, coordinator.seed))
    const accept = await first.r.next()
    expect(accept.phase).toBe('server_accept')
    expect(accept.sessionEpoch).toBe(await currentSessionEpoch(running.authority, id))
    first.r.ws.close()
  })

  it('a response signed with S + L, or carrying an upstream non-strict R, is refused (strictVerify)', async () => {
    const id = coordinator.principal!.id
    const smallOrderR = badSignatures()
      .find((v) => v.fault === 'r-small-order')!
      .sig.subarray(0, 32)
    const tamperings: ((sig: Uint8Array) => Uint8Array)[] = [
      malleateS,
      (sig) => new Uint8Array([...smallOrderR, ...sig.subarray(32)]),
    ]
    for (const tamper of tamperings) {
      const x = await challenged(coordinator.keyId, id)
      const response: ReturnType<typeof helloResponse> & {challengeSignature?: string} = helloResponse(
        id,
        coordinator.keyId,
        x.clientNonce,
        x.challenge,
        coordinator.seed,
      )
      x.r.send({
        ...response,
        challengeSignature: encodeBase64url(tamper(decodeBase64url(response.challengeSignature!)!)),
      })
      expect((await x.r.next()).error.code).toBe('AUTH_INVALID_SIGNATURE')
      expect(await x.r.closed).toBe(1008)
    }
  })
})

describe('Session Epoch fencing (§6.3, B6, B7)', () => {
  it('[-cmd:message.post] an old session is fenced on its still-open socket; the new session works', async () => {
    const g = await group()
    const oldSession = await connect(url, coordinator, {reconnect: false})
    const newSession = await connect(url, coordinator, {reconnect: false})
    const oldEpoch = oldSession.sessionEpoch!
    const newEpoch = newSession.sessionEpoch!
    expect(newEpoch).toBe(oldEpoch + 1)
    const r1 = await oldSession.submit(post(coordinator, g, {sessionEpoch: oldEpoch}))
    expect(codeOf(r1)).toBe('AUTH_STALE_SESSION')
    expect(oldSession.connected).toBe(true)
    // Borrowing the new epoch on the old connection is fenced too.
    expect(codeOf(await oldSession.submit(post(coordinator, g, {sessionEpoch: newEpoch})))).toBe('AUTH_STALE_SESSION')
    const before = (await store.head(g))!.sequence
    const r2 = await newSession.submit(post(coordinator, g, {sessionEpoch: newEpoch}))
    expect(codeOf(r2)).toBe('ok')
    expect((await store.head(g))!.sequence).toBe(before + 1)
    await oldSession.close()
    await newSession.close()
  })

  it('ingress fences a lower epoch and a never-issued one, and requires a session behind the gateway', async () => {
    const g = await group()
    const current = await currentSessionEpoch(running.authority, coordinator.principal!.id)
    expect(current).toBeGreaterThan(1) // the earlier tests opened several sessions
    expect(codeOf(await submit(running.authority, post(coordinator, g, {sessionEpoch: current - 1})))).toBe(
      'AUTH_STALE_SESSION',
    )
    expect(codeOf(await submit(running.authority, post(coordinator, g, {sessionEpoch: current + 5})))).toBe(
      'AUTH_STALE_SESSION',
    )
    expect(codeOf(await submit(running.authority, post(coordinator, g, {sessionEpoch: current})))).toBe('ok')
    // The reviewer Agent never opened a session: authentication is absent.
    const reviewerKey = key('reviewer')
    expect(codeOf(await submit(running.authority, groupCommand(reviewerKey, 'message.post', g, {text: 'hello'})))).toBe(
      'AUTH_REQUIRED',
    )
  })

  it('a connection speaks only for its own principal', async () => {
    const g = await group()
    const c = await connect(url, owner, {reconnect: false})
    const r = await c.submit(post(coordinator, g, {sessionEpoch: 1}))
    expect(codeOf(r)).toBe('AUTH_FORBIDDEN')
    expect(codeOf(await c.submit(post(owner, g)))).toBe('ok')
    await c.close()
  })
})

describe('Organization-scoped Commands (§15.1, H3, H8)', () => {
  const sessionOpen = (signer = running.authority.key, agentId = developer.principal!.id) =>
    Buffer.from(
      JSON.stringify(
        sign(
          'command',
          {
            protocolVersion: '0.1',
            actionId: uuid(7),
            actor: signer.principal,
            kind: SESSION_OPEN,
            correlationId: uuid(8),
            issuedAt: new Date().toISOString(),
            payload: {agentId},
          },
          signer,
        ).document,
      ),
    )

  it('[-cmd:ext.missionweaveprotocol.identity.session_open] [-evt:ext.missionweaveprotocol.identity.session_opened] only this authority opens sessions, only for registered Agents', async () => {
    const agent = developer.principal!.id
    const before = await currentSessionEpoch(running.authority, agent)
    const foreign = await submitOrganizationCommand(running.authority, sessionOpen(orgService))
    expect('error' in foreign && foreign.error.code).toBe('AUTH_FORBIDDEN')
    const unknown = await submitOrganizationCommand(
      running.authority,
      sessionOpen(undefined, 'urn:mwp:dev:agent:nobody'),
    )
    expect('error' in unknown && unknown.error.code).toBe('INVALID_COMMAND')
    expect(await currentSessionEpoch(running.authority, agent)).toBe(before)
    // A Group-scoped ingress never accepts an Organization-scoped kind.
    expect(codeOf(await submit(running.authority, sessionOpen()))).toBe('INVALID_COMMAND')
  })

  it('the same session_open retried returns its original receipt and issues no second epoch (H5)', async () => {
    const bytes = sessionOpen()
    const first = await submitOrganizationCommand(running.authority, bytes)
    const again = await submitOrganizationCommand(running.authority, bytes)
    if ('error' in first || 'error' in again) throw new Error('rejected')
    expect(again.receipt).toEqual(first.receipt)
    expect(await currentSessionEpoch(running.authority, developer.principal!.id)).toBe(first.receipt.version)
    const bytesEvent = await store.organizationLog().event(first.receipt.eventIds[0]!)
    const v = verify('event', bytesEvent!, registry)
    if (!v.ok) throw new Error('stored session_opened does not verify')
    expect(v.document.kind).toBe(SESSION_OPENED)
    expect(v.document.payload).toEqual({agentId: developer.principal!.id, sessionEpoch: first.receipt.version})
    expect(v.document).not.toHaveProperty('groupId')
    expect(v.document).not.toHaveProperty('sequence')
    expect(v.document).not.toHaveProperty('aggregateRevision')
  })

  const card = (version: number, signer = orgService) =>
    sign(
      'agent-card',
      {
        agentId: developer.principal!.id,
        organizationId: 'urn:mwp:dev:org:example',
        cardVersion: version,
        displayName: 'Developer',
        owner: owner.principal,
        status: 'active',
        protocolVersions: ['0.1'],
        endpoints: [{transport: 'wss', uri: 'wss://127.0.0.1:7443'}],
        publicKeys: [
          {
            keyId: developer.keyId,
            algorithm: 'Ed25519',
            publicKey: developer.publicKeyB64,
            validFrom: '2026-07-01T00:00:00Z',
          },
        ],
        capabilities: [
          {
            id: 'writing.release-notes',
            version: '1.0.0',
            inputSchema: 'urn:mwp:dev:schema:in',
            inputSchemaHash: `sha256:${'c'.repeat(64)}`,
            outputSchema: 'urn:mwp:dev:schema:out',
            outputSchemaHash: `sha256:${'d'.repeat(64)}`,
            constraints: {},
            verifiedEvidence: ['urn:mwp:dev:evidence:1'],
          },
        ],
        maxConcurrency: 2,
        issuedAt: new Date().toISOString(),
      },
      signer,
    ).document
  const register = (agentCard: unknown, signer = orgService) =>
    command(signer, {kind: CARD_REGISTER, payload: {agentCard}})

  it('[+cmd:ext.missionweaveprotocol.registry.agent_card_register] [+evt:ext.missionweaveprotocol.registry.agent_card_registered] an Organization service registers a signed Agent Card over the wire', async () => {
    const c = await connect(url, orgService, {reconnect: false})
    const r = await c.submitOrganization(register(card(1)))
    if ('error' in r) throw new Error(`rejected: ${r.error.code}`)
    expect(r.receipt).toMatchObject({eventKind: CARD_REGISTERED, subjectId: developer.principal!.id, version: 1})
    const stored = await store.organizationLog().event(r.receipt.eventIds[0]!)
    const v = verify('event', stored!, registry)
    if (!v.ok) throw new Error('stored agent_card_registered does not verify')
    expect(v.document.kind).toBe(CARD_REGISTERED)
    expect((v.document.payload as Record<string, unknown>).cardVersion).toBe(1)
    expect(v.document).not.toHaveProperty('groupId')
    await c.close()
  })

  it('[-cmd:ext.missionweaveprotocol.registry.agent_card_register] [-evt:ext.missionweaveprotocol.registry.agent_card_registered] a card signed by someone else, a reused version or a broken card is refused and records nothing', async () => {
    const log = store.organizationLog()
    const before = await log.currentVersion(CARD_REGISTERED, developer.principal!.id)
    expect(before).toBeGreaterThanOrEqual(1) // registered by the test above
    const otherSigner = await submitOrganizationCommand(
      running.authority,
      register(card(before + 1, running.authority.key)),
    )
    expect('error' in otherSigner && otherSigner.error.code).toBe('AUTH_FORBIDDEN')
    const reused = await submitOrganizationCommand(running.authority, register(card(before)))
    expect('error' in reused && reused.error.code).toBe('INVALID_COMMAND')
    const broken = await submitOrganizationCommand(running.authority, register({...card(before + 1), displayName: ''}))
    expect('error' in broken && broken.error.code).toBe('SCHEMA_VALIDATION_FAILED')
    expect(await log.currentVersion(CARD_REGISTERED, developer.principal!.id)).toBe(before)
  })
})
