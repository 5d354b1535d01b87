// First admission through the audited acceptance path on a real SQLite store: freshness window
// boundaries (ACCEPTANCE D17), freshness only for NEW admissions (an unchanged retry of an
// admitted Command keeps working), nothing appended for a refused document, and the call order
// of admitFirst against the real adapter.

import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {acceptNew} from '../../src/admission/accept.js'
import {admitFirst, replayHistorical} from '../../src/admission/admit.js'
import {checkFreshness} from '../../src/admission/freshness.js'
import type {AcceptanceContext, AdmissionLog, Candidate, TrustedContextSource} from '../../src/admission/log.js'
import {generateSigningKey, readKeyFile} from '../../src/crypto/keyfile.js'
import {sign} from '../../src/signing/sign.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {Rejection, verify} from '../../src/signing/verify.js'
import {initStore, openStore} from '../../src/store/index.js'
import type {Store} from '../../src/store/types.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const window = {maxAgeSeconds: 300, maxFutureSkewSeconds: 60}
const reasonOf = (r: Rejection | null) => (r ? Rejection.diagnostic(r).reason : null)

describe('Command freshness window (D17)', () => {
  const at = '2026-08-01T12:00:00Z'
  it('accepts issuedAt inside [at - maxAge, at + skew], boundaries included', () => {
    expect(checkFreshness('2026-08-01T11:55:00Z', at, window)).toBeNull()
    expect(checkFreshness('2026-08-01T12:01:00Z', at, window)).toBeNull()
    expect(checkFreshness('2026-08-01T12:00:00Z', at, window)).toBeNull()
    expect(checkFreshness('2026-08-01T13:00:30+01:00', at, window)).toBeNull() // 12:00:30Z: instants, not text
  })
  it('refuses issuedAt older than maxAge or further ahead than the skew, at full precision', () => {
    expect(reasonOf(checkFreshness('2026-08-01T11:54:59.999999999Z', at, window))).toBe('issued-too-old')
    expect(reasonOf(checkFreshness('2026-08-01T12:01:00.000000001Z', at, window))).toBe('issued-in-future')
    const r = checkFreshness('2026-07-01T00:00:00Z', at, window)!
    expect(r.code).toBe('AUTH_INVALID_SIGNATURE')
    expect(Rejection.diagnostic(r).stage).toBe('freshness')
  })
})

describe('acceptance path on a real SQLite store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-admission-lib-'))
  const url = `sqlite:${join(dir, 'mwp.db')}`
  const admissionKey = readKeyFile(join(PROJECT_ROOT, 'fixtures/keys/admission.key.json'))
  const agent = generateSigningKey({
    keyId: 'urn:mwp:test:key:lib-1',
    principal: {type: 'agent', id: 'urn:mwp:test:agent:lib'},
  })
  const registry = RegistryEvidence.fromSnapshot({
    organizationId: 'urn:mwp:dev:org:example',
    bindings: [
      {
        keyId: agent.keyId,
        principal: agent.principal,
        algorithm: 'Ed25519',
        publicKey: agent.publicKeyB64,
        validFrom: '2026-01-01T00:00:00Z',
        validityHistory: [],
      },
    ],
  })
  await initStore(url, {
    organizationId: 'urn:mwp:dev:org:example',
    admissionService: {
      principal: admissionKey.principal!,
      keyId: admissionKey.keyId,
      publicKey: admissionKey.publicKeyB64,
    },
    freshness: window,
  })
  const store: Store = await openStore(url, {admissionKey})
  afterAll(() => store.close())

  let n = 0
  const command = (issuedAt: string) =>
    Buffer.from(
      JSON.stringify(
        sign(
          'command',
          {
            protocolVersion: '0.1',
            actionId: `urn:uuid:20000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
            actor: agent.principal,
            sessionEpoch: 1,
            membershipEpoch: 1,
            groupId: 'urn:mwp:test:group:lib',
            kind: 'message.post',
            correlationId: 'urn:uuid:30000000-0000-4000-8000-000000000000',
            issuedAt,
            payload: {n},
          },
          agent,
        ).document,
      ),
    )

  it('a fresh Command is admitted once; the retry returns the stored record', async () => {
    const bytes = command(new Date().toISOString())
    const first = await acceptNew({bytes}, registry, store)
    const again = await acceptNew({bytes}, registry, store)
    expect(first.ok && first.admission.outcome).toBe('committed')
    expect(again.ok && again.admission.outcome).toBe('found')
    expect(
      again.ok &&
        Buffer.from(again.admission.recordBytes).equals(Buffer.from(first.ok ? first.admission.recordBytes : [])),
    ).toBe(true)
  })

  it('a stale Command is refused at the freshness stage and nothing is appended', async () => {
    const bytes = command('2026-02-01T00:00:00Z')
    const r = (await acceptNew({bytes, subject: 'stale'}, registry, store)) as Rejection
    expect(r.code).toBe('AUTH_INVALID_SIGNATURE')
    expect(Rejection.diagnostic(r)).toMatchObject({stage: 'freshness', reason: 'issued-too-old'})
    const verified = verify('command', bytes, registry)
    expect(verified.ok).toBe(true)
    if (verified.ok)
      expect((await store.lookup(verified.organizationId, verified.signingHash)).status).toBe('authoritative-absence')
    const audit = await store.listAudit()
    expect(audit.at(-1)).toMatchObject({
      stage: 'freshness',
      reason: 'issued-too-old',
      subject: 'stale',
      documentKind: 'command',
    })
  })

  it('freshness applies to new admissions only: an admitted Command retried after the window still returns its record', async () => {
    const bytes = command(new Date().toISOString())
    const first = await acceptNew({bytes}, registry, store)
    expect(first.ok).toBe(true)
    // The same store, but a trusted clock ten minutes later.
    const later: Store = Object.create(store, {
      acceptanceContext: {
        value: async (): Promise<AcceptanceContext> => ({
          ...(await store.acceptanceContext()),
          trustedAcceptedAt: new Date(Date.now() + 600_000).toISOString(),
        }),
      },
      config: {value: store.config},
    })
    const retry = await acceptNew({bytes}, registry, later)
    expect(retry.ok && retry.admission.outcome).toBe('found')
  })

  it('admitFirst calls lookup first and exactly once; a found record needs no context and no append', async () => {
    const bytes = command(new Date().toISOString())
    const verified = verify('command', bytes, registry)
    if (!verified.ok) throw new Error('fixture does not verify')
    const calls: string[] = []
    const counted: AdmissionLog & TrustedContextSource = {
      lookup: (o, h) => (calls.push('lookup'), store.lookup(o, h)),
      appendOrReturnExisting: (c: Candidate) => (calls.push('append'), store.appendOrReturnExisting(c)),
      acceptanceContext: () => (calls.push('context'), store.acceptanceContext()),
    }
    expect((await admitFirst(verified, bytes, counted, counted)).ok).toBe(true)
    expect(calls).toEqual(['lookup', 'context', 'append'])
    calls.length = 0
    expect((await admitFirst(verified, bytes, counted, counted)).ok).toBe(true)
    expect(calls).toEqual(['lookup'])
  })

  it('admitFirst and replayHistorical take only a Verified the verifier issued: a copy of one never reaches the log', async () => {
    const bytes = command(new Date().toISOString())
    const verified = verify('command', bytes, registry)
    if (!verified.ok) throw new Error('fixture does not verify')
    const calls: string[] = []
    const counted: AdmissionLog & TrustedContextSource = {
      lookup: (o, h) => (calls.push('lookup'), store.lookup(o, h)),
      appendOrReturnExisting: (c: Candidate) => (calls.push('append'), store.appendOrReturnExisting(c)),
      acceptanceContext: () => (calls.push('context'), store.acceptanceContext()),
    }
    const lookalike = {...verified}
    // @ts-expect-error -- a plain object with a Verified's members is not a Verified
    await expect(admitFirst(lookalike, bytes, counted, counted)).rejects.toThrow(TypeError)
    // @ts-expect-error -- likewise for historical replay
    await expect(replayHistorical(lookalike, bytes, counted)).rejects.toThrow(TypeError)
    expect(calls).toEqual([])
    expect((await store.lookup(verified.organizationId, verified.signingHash)).status).toBe('authoritative-absence')
  })

  it('a record whose acceptedBy is not the authenticated service is refused', async () => {
    const bytes = command(new Date().toISOString())
    const verified = verify('command', bytes, registry)
    if (!verified.ok) throw new Error('fixture does not verify')
    expect((await admitFirst(verified, bytes, store, store)).ok).toBe(true)
    const impostor: AdmissionLog = {
      lookup: async (o, h) => {
        const found = await store.lookup(o, h)
        return found.status === 'found'
          ? {...found, authenticatedService: {type: 'service', id: 'urn:mwp:test:service:impostor'}}
          : found
      },
      appendOrReturnExisting: (c) => store.appendOrReturnExisting(c),
    }
    const r = (await admitFirst(verified, bytes, impostor, store)) as Rejection
    expect(Rejection.diagnostic(r)).toMatchObject({stage: 'admission', reason: 'accepted-by-mismatch'})
  })

  it('records are kept byte for byte', async () => {
    const bytes = command(new Date().toISOString())
    const r = await acceptNew({bytes}, registry, store)
    if (!r.ok) throw new Error('not admitted')
    expect(Buffer.from(r.admission.recordBytes).toString()).toBe(JSON.stringify(r.admission.record, null, 2) + '\n')
    expect(readFileSync(join(dir, 'mwp.db')).length).toBeGreaterThan(0)
  })
})
