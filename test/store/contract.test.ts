// One contract suite for both store adapters (ARCHITECTURE.md principle 7): the Admission Log
// (spec §6.4), the trusted acceptance context, the audit log, init/open and durability. Each test
// gets a fresh, empty store: a new SQLite file, or a new database on one throwaway PostgreSQL.

import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {createConnection, createServer, type Socket} from 'node:net'
import {tmpdir} from 'node:os'
import {join, relative} from 'node:path'
import Database from 'better-sqlite3'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {AcceptanceContext, Candidate} from '../../src/admission/log.js'
import {generateSigningKey, type SigningKey} from '../../src/crypto/keyfile.js'
import {isUppercaseUtcZ} from '../../src/json/timestamp.js'
import {
  DEFAULT_FRESHNESS,
  StoreError,
  initStore,
  openStore,
  parseStoreUrl,
  type Store,
  type StoreConfig,
} from '../../src/store/index.js'
import type {StoredEvent} from '../../src/store/group-log.js'
import {type Backend, storeBackends} from '../support/store-backends.js'
import {ORG, SERVICE, serviceKey, storeConfig as config} from '../support/store-config.js'

const SIGNER = {type: 'human' as const, id: 'https://org.example/people/alice'}
const KEY_ID = 'https://org.example/keys/alice-1'
const hash = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`

interface Fields {
  organizationId: string
  signingHash: string
  documentKind: string
  keyId: string
  principal: {type: 'agent' | 'human' | 'service'; id: string}
}

/** A candidate record as admission prepares it: the nine fields in schema order, 2-space JSON. */
function candidate(ctx: AcceptanceContext, over: Partial<Fields> = {}, acceptedBy = ctx.acceptedBy): Candidate {
  const f: Fields = {
    organizationId: ORG,
    signingHash: hash(1),
    documentKind: 'command',
    keyId: KEY_ID,
    principal: SIGNER,
    ...over,
  }
  const record = {
    protocolVersion: '0.1',
    admissionRecordId: ctx.admissionRecordId,
    organizationId: f.organizationId,
    documentKind: f.documentKind,
    signingHash: f.signingHash,
    keyId: f.keyId,
    principal: f.principal,
    trustedAcceptedAt: ctx.trustedAcceptedAt,
    acceptedBy,
  }
  return {...f, admissionRecordId: ctx.admissionRecordId, bytes: Buffer.from(JSON.stringify(record, null, 2) + '\n')}
}

async function storeError(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(StoreError)
  return error as StoreError
}

/** What this suite needs beyond the shared backends: SQL spellings and an address nobody serves. */
interface ContractBackend extends Backend {
  /** A byte-string literal in this database's SQL. */
  bytes(b: Uint8Array): string
  /** Lifts the append-only trigger so a test can edit rows. */
  allowEdits: string
  /** A URL of this kind where nothing answers. */
  deadUrl(): Promise<string>
}

const [sqliteBase, postgresBase] = storeBackends('store contract')
const sqliteBackend: ContractBackend = {
  ...sqliteBase,
  bytes: (b) => `X'${Buffer.from(b).toString('hex')}'`,
  allowEdits: 'DROP TRIGGER admission_records_no_update;',
  deadUrl: async () => `sqlite:${join(tmpdir(), `mwp-missing-${process.pid}`, 'nothing.db')}`,
}
const postgresBackend: ContractBackend = {
  ...postgresBase,
  bytes: (b) => `'\\x${Buffer.from(b).toString('hex')}'::bytea`,
  allowEdits: 'ALTER TABLE admission_records DISABLE TRIGGER admission_records_append_only;',
  deadUrl: async () => `postgres://postgres@127.0.0.1:${await unusedPort()}/nothing`,
}

async function unusedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as {port: number}
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A TCP forwarder in front of a PostgreSQL URL; cut() closes it and every open connection. */
async function proxy(url: string): Promise<{url: string; cut(): Promise<void>}> {
  const target = new URL(url)
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = createConnection(Number(target.port), target.hostname)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('error', () => {})
      s.on('close', () => sockets.delete(s))
    }
    client.pipe(upstream).pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const proxied = new URL(url)
  proxied.port = String((server.address() as {port: number}).port)
  return {
    url: proxied.toString(),
    async cut() {
      const closed = new Promise((resolve) => server.close(resolve))
      for (const s of sockets) s.destroy()
      await closed
    },
  }
}

describe.each([sqliteBackend, postgresBackend].filter((b) => b.enabled))('store contract: $name', (backend) => {
  const open: Store[] = []
  /** A fresh initialized store, opened as the admission service unless `key` is null. */
  async function fresh(key: SigningKey | null = serviceKey): Promise<{url: string; store: Store}> {
    const url = await backend.fresh()
    await initStore(url, config)
    const store = await openStore(url, key ? {admissionKey: key} : {})
    open.push(store)
    return {url, store}
  }

  beforeAll(() => backend.start(), 120_000)
  afterAll(async () => {
    for (const s of open) await s.close()
    await backend.stop()
  }, 60_000)

  describe('init and open', () => {
    it('refuses to open an uninitialized store with not-initialized (run mwp store init)', async () => {
      const url = await backend.fresh()
      const error = await storeError(openStore(url))
      expect(error.code).toBe('not-initialized')
      expect(error.message).toContain('run mwp store init')
    })

    it('init is idempotent for the same configuration and refuses another one', async () => {
      const url = await backend.fresh()
      await initStore(url, config)
      await initStore(url, {...config, freshness: {...DEFAULT_FRESHNESS}})
      const other = {...config, freshness: {maxAgeSeconds: 1, maxFutureSkewSeconds: 1}}
      expect((await storeError(initStore(url, other))).code).toBe('config-mismatch')
      const otherService = generateSigningKey({keyId: 'https://org.example/keys/other', principal: SERVICE})
      const swapped = {...config, admissionService: {...config.admissionService, publicKey: otherService.publicKeyB64}}
      expect((await storeError(initStore(url, swapped))).code).toBe('config-mismatch')
      const store = await openStore(url)
      open.push(store)
      expect(store.config).toEqual(config)
      expect(store.url).toBe(url)
    })

    it('refuses an invalid configuration', async () => {
      const url = await backend.fresh()
      const bad = {...config, admissionService: {...config.admissionService, publicKey: 'AAAA'}}
      expect((await storeError(initStore(url, bad))).code).toBe('invalid-config')
      const human = {...config, admissionService: {...config.admissionService, principal: SIGNER}}
      expect((await storeError(initStore(url, human as StoreConfig))).code).toBe('invalid-config')
    })

    it('refuses an admission key that is not the configured service key', async () => {
      const {url} = await fresh(null)
      const stranger = generateSigningKey({keyId: serviceKey.keyId, principal: SERVICE})
      expect((await storeError(openStore(url, {admissionKey: stranger}))).code).toBe('wrong-admission-key')
      const renamed = {...serviceKey, keyId: 'https://org.example/keys/renamed'}
      expect((await storeError(openStore(url, {admissionKey: renamed}))).code).toBe('wrong-admission-key')
      const otherPrincipal = {
        ...serviceKey,
        principal: {type: 'service' as const, id: 'https://org.example/services/other'},
      }
      expect((await storeError(openStore(url, {admissionKey: otherPrincipal}))).code).toBe('wrong-admission-key')
    })

    it('reports an unreachable store as unavailable when opening', async () => {
      const error = await storeError(openStore(await backend.deadUrl()))
      expect(['unavailable', 'not-initialized']).toContain(error.code)
      if (backend.name === 'postgres') expect(error.code).toBe('unavailable')
    })
  })

  describe('Admission Log', () => {
    it('lookup: authoritative absence, then found with the authenticated service', async () => {
      const {store} = await fresh()
      expect(await store.lookup(ORG, hash(1))).toEqual({status: 'authoritative-absence'})
      const c = candidate(await store.acceptanceContext())
      expect((await store.appendOrReturnExisting(c)).status).toBe('committed')
      const found = await store.lookup(ORG, hash(1))
      expect(found).toEqual({status: 'found', record: new Uint8Array(c.bytes), authenticatedService: SERVICE})
      expect(await store.lookup(ORG, hash(2))).toEqual({status: 'authoritative-absence'})
    })

    it('lookup for another Organization is not answered authoritatively', async () => {
      const {store} = await fresh()
      expect((await store.lookup('https://other.example/', hash(1))).status).toBe('unauthenticated')
    })

    it('acceptanceContext: fresh urn:uuid, the store clock in UTC, the configured service', async () => {
      const {store} = await fresh()
      const a = await store.acceptanceContext()
      const b = await store.acceptanceContext()
      expect(a.admissionRecordId).toMatch(
        /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      )
      expect(a.admissionRecordId).not.toBe(b.admissionRecordId)
      expect(isUppercaseUtcZ(a.trustedAcceptedAt)).toBe(true)
      expect(Math.abs(Date.parse(a.trustedAcceptedAt) - Date.now())).toBeLessThan(60_000)
      expect(a.acceptedBy).toEqual(SERVICE)
    })

    it('committed, then existing with the stored bytes on retry and for a concurrent loser', async () => {
      const {store} = await fresh()
      const first = candidate(await store.acceptanceContext())
      const committed = await store.appendOrReturnExisting(first)
      expect(committed).toEqual({
        status: 'committed',
        record: new Uint8Array(first.bytes),
        authenticatedService: SERVICE,
      })

      // The same candidate again (an unchanged retry) and a different candidate for the same key.
      const retry = await store.appendOrReturnExisting(first)
      expect(retry).toEqual({status: 'existing', record: new Uint8Array(first.bytes), authenticatedService: SERVICE})
      const loser = candidate(await store.acceptanceContext())
      expect(Buffer.from(loser.bytes).equals(Buffer.from(first.bytes))).toBe(false)
      const existing = await store.appendOrReturnExisting(loser)
      expect(existing.status).toBe('existing')
      expect(Buffer.from((existing as {record: Uint8Array}).record).equals(Buffer.from(first.bytes))).toBe(true)

      const raw = {...backend.raw(store.url), bytes: backend.bytes, allowEdits: backend.allowEdits}
      expect(await raw.count('admission_records')).toBe(1)
      await raw.close()
    })

    it('conflict for another kind, key ID or Principal under the same key, never replacing the row', async () => {
      const {store} = await fresh()
      const first = candidate(await store.acceptanceContext())
      expect((await store.appendOrReturnExisting(first)).status).toBe('committed')
      const variants: Partial<Fields>[] = [
        {documentKind: 'approval'},
        {keyId: 'https://org.example/keys/alice-2'},
        {principal: {type: 'human', id: 'https://org.example/people/bob'}},
        {principal: {type: 'agent', id: SIGNER.id}},
      ]
      for (const over of variants) {
        const result = await store.appendOrReturnExisting(candidate(await store.acceptanceContext(), over))
        expect(result.status, JSON.stringify(over)).toBe('conflict')
      }
      expect(await store.lookup(ORG, hash(1))).toEqual({
        status: 'found',
        record: new Uint8Array(first.bytes),
        authenticatedService: SERVICE,
      })
    })

    it('one admissionRecordId never identifies records under two logical keys', async () => {
      const {store} = await fresh()
      const ctx = await store.acceptanceContext()
      expect((await store.appendOrReturnExisting(candidate(ctx))).status).toBe('committed')
      const reused = await store.appendOrReturnExisting(candidate(ctx, {signingHash: hash(2)}))
      expect(reused.status).toBe('conflict')
      expect(await store.lookup(ORG, hash(2))).toEqual({status: 'authoritative-absence'})
    })

    it('a row edited in the database is integrity-failed for lookup and append', async () => {
      const {store} = await fresh()
      const first = candidate(await store.acceptanceContext())
      expect((await store.appendOrReturnExisting(first)).status).toBe('committed')
      const raw = {...backend.raw(store.url), bytes: backend.bytes, allowEdits: backend.allowEdits}
      try {
        // Append-only: a plain UPDATE is refused by the database itself.
        await expect(raw.exec(`UPDATE admission_records SET created_at = 'x'`)).rejects.toThrow(/append-only/)
        await raw.exec(raw.allowEdits)
        const edited = Buffer.from(first.bytes).toString().replace('"command"', '"approval"')
        await raw.exec(`UPDATE admission_records SET record = ${raw.bytes(Buffer.from(edited))}`)
        expect((await store.lookup(ORG, hash(1))).status).toBe('integrity-failed')
        expect((await store.appendOrReturnExisting(candidate(await store.acceptanceContext()))).status).toBe(
          'integrity-failed',
        )

        // Restore the bytes but edit a key column the signature also binds.
        await raw.exec(`UPDATE admission_records SET record = ${raw.bytes(first.bytes)}`)
        expect((await store.lookup(ORG, hash(1))).status).toBe('found')
        await raw.exec(`UPDATE admission_records SET key_id = 'https://org.example/keys/mallory'`)
        expect((await store.lookup(ORG, hash(1))).status).toBe('integrity-failed')
        await raw.exec(`UPDATE admission_records SET key_id = '${KEY_ID}', service_signature = 'AAAA'`)
        expect((await store.lookup(ORG, hash(1))).status).toBe('integrity-failed')
      } finally {
        await raw.close()
      }
    })

    it('a row accepted by another service is unauthenticated for lookup and append', async () => {
      const {store} = await fresh()
      expect((await store.appendOrReturnExisting(candidate(await store.acceptanceContext()))).status).toBe('committed')
      const raw = {...backend.raw(store.url), bytes: backend.bytes, allowEdits: backend.allowEdits}
      try {
        await raw.exec(raw.allowEdits)
        await raw.exec(`UPDATE admission_records SET accepted_by_id = 'https://org.example/services/rogue'`)
      } finally {
        await raw.close()
      }
      expect((await store.lookup(ORG, hash(1))).status).toBe('unauthenticated')
      expect((await store.appendOrReturnExisting(candidate(await store.acceptanceContext()))).status).toBe(
        'unauthenticated',
      )
    })

    it('only a store opened with the admission service key may append', async () => {
      const {store} = await fresh(null)
      const result = await store.appendOrReturnExisting(candidate(await store.acceptanceContext()))
      expect(result.status).toBe('unauthenticated')
      expect(await store.lookup(ORG, hash(1))).toEqual({status: 'authoritative-absence'})
    })

    it('refuses candidates it cannot vouch for: another Organization, another acceptedBy, inconsistent bytes', async () => {
      const {store} = await fresh()
      const ctx = await store.acceptanceContext()
      expect(
        (await store.appendOrReturnExisting(candidate(ctx, {organizationId: 'https://other.example/'}))).status,
      ).toBe('unauthenticated')
      const rogue = {type: 'service' as const, id: 'https://org.example/services/rogue'}
      expect((await store.appendOrReturnExisting(candidate(ctx, {}, rogue))).status).toBe('unauthenticated')
      const inconsistent = {...candidate(ctx), keyId: 'https://org.example/keys/alice-2'}
      expect((await store.appendOrReturnExisting(inconsistent)).status).toBe('integrity-failed')
      expect((await store.appendOrReturnExisting({...candidate(ctx), bytes: Buffer.from('not json')})).status).toBe(
        'integrity-failed',
      )
      expect(await store.lookup(ORG, hash(1))).toEqual({status: 'authoritative-absence'})
    })

    it('a closed store answers unavailable, without throwing', async () => {
      const {store} = await fresh()
      const c = candidate(await store.acceptanceContext())
      await store.close()
      expect((await store.lookup(ORG, hash(1))).status).toBe('unavailable')
      expect((await store.appendOrReturnExisting(c)).status).toBe('unavailable')
    })

    if (backend.name === 'postgres')
      it('a server that stops answering gives unavailable, without throwing', async () => {
        const url = await backend.fresh()
        await initStore(url, config)
        const gate = await proxy(url)
        const store = await openStore(gate.url, {admissionKey: serviceKey})
        open.push(store)
        expect((await store.lookup(ORG, hash(1))).status).toBe('authoritative-absence')
        await gate.cut()
        expect((await store.lookup(ORG, hash(1))).status).toBe('unavailable')
        expect((await store.appendOrReturnExisting(candidate(await store.acceptanceContext()))).status).toBe(
          'unavailable',
        )
      })
  })

  describe('audit log', () => {
    const entries = [
      {at: '2026-01-01T00:00:00.5Z', stage: 'signature', reason: 'equation-mismatch', subject: 'a.json'},
      {
        at: '2026-01-01T01:00:00+01:00',
        stage: 'admission',
        reason: 'record-conflict',
        documentKind: 'command',
        signingHash: hash(1),
        detail: 'd',
      },
      {at: '2026-01-01T00:00:00.25Z', stage: 'key-resolution', reason: 'unknown-key'},
      {at: '2026-01-02T00:00:00Z', stage: 'freshness', reason: 'too-old'},
    ]

    it('keeps entries in insertion order and filters `since` as an instant', async () => {
      const {store} = await fresh()
      for (const e of entries) await store.audit(e)
      const all = await store.listAudit()
      expect(all.map(({id: _id, ...rest}) => rest)).toEqual(entries)
      expect(all.map((r) => r.id)).toEqual([...all.map((r) => r.id)].sort((a, b) => a - b))
      // '2026-01-01T01:00:00+01:00' is the instant 2026-01-01T00:00:00Z, so it precedes .25Z.
      const since = await store.listAudit({since: '2026-01-01T00:00:00.250000Z'})
      expect(since.map((r) => r.reason)).toEqual(['equation-mismatch', 'unknown-key', 'too-old'])
      expect((await store.listAudit({since: '2026-01-01T00:00:00Z'})).length).toBe(4)
      expect((await store.listAudit({since: '2026-01-01T00:00:00.5000001Z'})).map((r) => r.reason)).toEqual(['too-old'])
      expect((await store.listAudit({limit: 2})).map((r) => r.reason)).toEqual(['equation-mismatch', 'record-conflict'])
      expect((await store.listAudit({since: '2026-01-01T00:00:00.3Z', limit: 1})).map((r) => r.reason)).toEqual([
        'equation-mismatch',
      ])
    })

    it('rejects a malformed time, since or limit', async () => {
      const {store} = await fresh()
      expect((await storeError(store.audit({at: 'yesterday', stage: 'parse', reason: 'x'}))).code).toBe(
        'invalid-argument',
      )
      expect((await storeError(store.listAudit({since: '2026-01-01 00:00:00Z'}))).code).toBe('invalid-argument')
      expect((await storeError(store.listAudit({limit: 0}))).code).toBe('invalid-argument')
    })
  })

  describe('lease index (lease-table.ts, B9)', () => {
    const agent = 'https://org.example/agents/worker'
    const lease = (sessionEpoch: number, n: number) => ({
      agentId: agent,
      leaseId: `urn:uuid:00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      sessionEpoch,
      ownershipEpoch: 1,
    })
    let events = 0
    const event = (sequence: number, leases: StoredEvent['leases']): StoredEvent => ({
      eventId: `urn:uuid:${crypto.randomUUID()}`,
      kind: 'work.started',
      sequence,
      aggregateRevision: sequence,
      bytes: Buffer.from(`{"n":${++events}}`),
      leases,
    })
    const receipt = (groupId: string, first: number, last: number) => ({
      actorId: agent,
      actionId: `urn:uuid:${crypto.randomUUID()}`,
      contentHash: hash(events),
      groupId,
      firstSequence: first,
      lastSequence: last,
      document: '{}',
    })

    it('olderThan lists the rows the single and multi-Group appends wrote, per Agent, below the epoch, in pages; closes and Group ends remove them; they survive reopening', async () => {
      const {url, store} = await fresh()
      const [g1, g2] = ['urn:mwp:test:group:l1', 'urn:mwp:test:group:l2']
      const opened = event(1, [
        {workItemId: 'w1', lease: lease(1, 1)},
        {workItemId: 'w2', lease: lease(1, 2)},
        {workItemId: 'w3', lease: lease(2, 3)},
      ])
      expect((await store.append(g1, 0, [opened], receipt(g1, 1, 1))).status).toBe('appended')
      const across = await store.appendGroups(
        [
          {groupId: g1, expectedHead: 1, events: [event(2, [{workItemId: 'w1', lease: null}])]},
          {groupId: g2, expectedHead: 0, events: [event(1, [{workItemId: 'w9', lease: lease(1, 9)}])]},
        ],
        receipt(g1, 2, 2),
      )
      expect(across.status).toBe('appended')
      const older = (below: number, after?: {groupId: string; workItemId: string}, limit = 10) =>
        store.leases().olderThan(agent, below, after, limit)
      expect((await older(2)).map((r) => [r.groupId, r.workItemId, r.sessionEpoch])).toEqual([
        [g1, 'w2', 1],
        [g2, 'w9', 1],
      ])
      expect((await older(3)).map((r) => r.workItemId)).toEqual(['w2', 'w3', 'w9'])
      expect(await older(3, {groupId: g1, workItemId: 'w3'}, 1)).toMatchObject([{groupId: g2, workItemId: 'w9'}])
      expect(await store.leases().olderThan('https://org.example/agents/other', 9, undefined, 10)).toEqual([])
      expect((await storeError(older(3, undefined, 0))).code).toBe('invalid-argument')
      // A Mission end (workItemId null) closes every lease of its Group; a new start replaces a row.
      const ended = event(3, [{workItemId: null, lease: null}])
      expect((await store.append(g1, 2, [ended], receipt(g1, 3, 3))).status).toBe('appended')
      const replaced = event(2, [{workItemId: 'w9', lease: lease(4, 10)}])
      expect((await store.append(g2, 1, [replaced], receipt(g2, 2, 2))).status).toBe('appended')
      await store.close()
      const again = await openStore(url)
      open.push(again)
      expect(await again.leases().olderThan(agent, 9, undefined, 10)).toEqual([
        {groupId: g2, workItemId: 'w9', ...lease(4, 10)},
      ])
    })
  })

  it('everything acknowledged survives close and reopen', async () => {
    const {url, store} = await fresh()
    const c = candidate(await store.acceptanceContext())
    expect((await store.appendOrReturnExisting(c)).status).toBe('committed')
    await store.audit({at: '2026-03-01T00:00:00Z', stage: 'admission', reason: 'record-missing'})
    await store.close()
    const again = await openStore(url)
    open.push(again)
    expect(await again.lookup(ORG, hash(1))).toEqual({
      status: 'found',
      record: new Uint8Array(c.bytes),
      authenticatedService: SERVICE,
    })
    expect((await again.listAudit()).map((r) => r.reason)).toEqual(['record-missing'])
  })
})

describe('store URLs', () => {
  it('rejects an unknown scheme with a clear error, without echoing a password', async () => {
    const error = await storeError(openStore('mysql://user:secret@host/db'))
    expect(error.code).toBe('unknown-scheme')
    expect(error.message).toMatch(/sqlite:PATH or postgres:/)
    expect(error.message).not.toContain('secret')
    expect((await storeError(initStore('sqlite:', config))).code).toBe('unknown-scheme')
    expect(parseStoreUrl('postgresql://db.example/mwp')).toEqual({kind: 'postgres', url: 'postgresql://db.example/mwp'})
    expect(parseStoreUrl('sqlite:///var/lib/mwp/store.db')).toEqual({kind: 'sqlite', path: '/var/lib/mwp/store.db'})
  })

  it('accepts a relative sqlite path and a file that is not a store is not-initialized', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mwp-store-url-'))
    try {
      await initStore(`sqlite:${relative(process.cwd(), join(dir, 'relative.db'))}`, config)
      const store = await openStore(`sqlite://${join(dir, 'relative.db')}`)
      expect(store.config).toEqual(config)
      await store.close()
      const db = new Database(join(dir, 'relative.db'), {readonly: true})
      expect(db.pragma('journal_mode', {simple: true})).toBe('wal')
      db.close()
      writeFileSync(join(dir, 'empty.db'), '')
      expect((await storeError(openStore(`sqlite:${join(dir, 'empty.db')}`))).code).toBe('not-initialized')
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
