// Group Authority races across OS processes (spec §10.3 atomic first-accept ownership, §15.1
// idempotency by (actor, Action ID); ARCHITECTURE principle 3: several authority processes share
// one store and serialize per Group). Every competitor is a separate `node` process running its
// own Authority (test/fixtures-authority-race-worker.mjs) on one SQLite file or one PostgreSQL
// database; each folds the Group first, waits at a file barrier, and submits at the same moment.

import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {type CommandReceipt, type SubmitResult, submit} from '../../src/authority/ingress/command.js'
import {generateSigningKey, type SigningKey} from '../../src/crypto/keyfile.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityKey,
  command,
  contract,
  coordinator,
  createCommand,
  groupCommand,
  newGroup,
  owner,
  post,
  receiptOf,
  devStoreAt,
} from '../support/authority-helpers.js'
import {type Backend, startBarrierWorker, storeBackends} from '../support/store-backends.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const WORKER = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'fixtures-authority-race-worker.mjs')
const CANDIDATES = 5
const ROUNDS = 2

// Five candidate Agents of our own, registered next to the fixture bindings in a test Registry.
const candidates: SigningKey[] = Array.from({length: CANDIDATES}, (_, i) =>
  generateSigningKey({
    keyId: `urn:mwp:test:key:candidate-${i + 1}`,
    principal: {type: 'agent', id: `urn:mwp:test:agent:candidate-${i + 1}`},
  }),
)
const fixtureRegistry = JSON.parse(readFileSync(join(PROJECT_ROOT, 'fixtures/registry.json'), 'utf8')) as {
  organizationId: string
  bindings: unknown[]
}
const registryBytes = Buffer.from(
  JSON.stringify({
    ...fixtureRegistry,
    bindings: [
      ...fixtureRegistry.bindings,
      ...candidates.map((k) => ({
        keyId: k.keyId,
        principal: k.principal,
        algorithm: 'Ed25519',
        publicKey: k.publicKeyB64,
        validFrom: '2026-07-01T00:00:00Z',
        validityHistory: [],
      })),
    ],
  }),
  'utf8',
)
const registry = RegistryEvidence.fromBytes(registryBytes)

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Runs one worker process per Command, releases them together, returns their SubmitResults in order. */
async function race(url: string, groupId: string, commands: Buffer[]): Promise<SubmitResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mwp-authority-race-'))
  try {
    const registryPath = join(dir, 'registry.json')
    writeFileSync(registryPath, registryBytes)
    const workers = commands.map((bytes, i) =>
      startBarrierWorker(WORKER, url, dir, i, {
        MWP_RACE: JSON.stringify({registryPath, groupId, command: bytes.toString('base64')}),
      }),
    )
    let exited = false
    void Promise.race(workers.map((w) => w.done)).then(() => (exited = true))
    await until(() => exited || workers.every((w) => existsSync(w.readyFile)), 60_000, 'the workers to get ready')
    writeFileSync(join(dir, 'go'), '')
    const outputs = await Promise.all(workers.map((w) => w.done))
    return outputs.map((o) => {
      if (o.code !== 0) throw new Error(`worker exited ${o.code}: ${o.stderr}`)
      return JSON.parse(o.stdout.trim()) as SubmitResult
    })
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

const codeOf = (r: SubmitResult) => ('error' in r ? r.error.code : 'ok')

describe.each(storeBackends('authority races').filter((b) => b.enabled))(
  'authority races across processes: $name',
  (backend: Backend) => {
    let url = ''
    let store: Store
    let authority: Authority

    beforeAll(async () => {
      await backend.start()
      url = await backend.fresh()
      store = await devStoreAt(url)
      authority = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}})
    }, 120_000)
    afterAll(async () => {
      await store?.close()
      await backend.stop()
    }, 60_000)

    const run = (bytes: Buffer) => submit(authority, bytes)

    it('[+cmd:message.post] the same signed Command from two processes at once: exactly one Event, both get the same receipt', async () => {
      const g = newGroup('race-dup')
      receiptOf(await run(createCommand(g)))
      for (let round = 1; round <= ROUNDS; round++) {
        const before = (await store.head(g))!.sequence
        const bytes = post(coordinator, g)
        const results = await race(url, g, [bytes, bytes])
        const [a, b] = results.map((r) => {
          if ('error' in r) throw new Error(`round ${round}: rejected ${r.error.code}`)
          return r.receipt
        }) as [CommandReceipt, CommandReceipt]
        expect(b).toEqual(a)
        expect(a).toMatchObject({firstSequence: before + 1, lastSequence: before + 1})
        const {events, head} = await store.read(g, before, 10)
        expect(head).toBe(before + 1)
        expect(events.map((e) => e.kind)).toEqual(['message.posted'])
        // The stored receipt is the one both callers got; a third, later retry gets it too.
        expect(receiptOf(await run(bytes))).toEqual(a)
      }
    })

    it('[+cmd:work.accept_offer] [-cmd:work.accept_offer] five candidates accept one offer from five processes: one owner, four WORK_ALREADY_OWNED', async () => {
      for (let round = 1; round <= ROUNDS; round++) {
        const g = newGroup('race-offer')
        receiptOf(await run(createCommand(g)))
        for (const c of candidates)
          receiptOf(await run(groupCommand(owner, 'membership.change', g, {member: c.principal, role: 'worker'})))
        const w = `urn:mwp:test:work:race-${round}-${Date.now()}`
        receiptOf(
          await run(
            groupCommand(
              coordinator,
              'work.authorize',
              g,
              {workItemId: w, contract: contract()},
              {coordinatorEpoch: 1},
            ),
          ),
        )
        const expiresAt = new Date(Date.now() + 120_000).toISOString()
        receiptOf(
          await run(
            groupCommand(
              coordinator,
              'work.offer',
              g,
              {workItemId: w, candidates: candidates.map((c) => c.principal!.id), expiresAt},
              {coordinatorEpoch: 1},
            ),
          ),
        )
        const offerId = (await authority.current(g))!.workItems[w]!.offer!.offerId
        const before = (await store.head(g))!.sequence

        const accepts = candidates.map((c) => groupCommand(c, 'work.accept_offer', g, {workItemId: w, offerId}))
        const results = await race(url, g, accepts)
        const codes = results.map(codeOf)
        expect([...codes].sort()).toEqual([
          'WORK_ALREADY_OWNED',
          'WORK_ALREADY_OWNED',
          'WORK_ALREADY_OWNED',
          'WORK_ALREADY_OWNED',
          'ok',
        ])
        const winner = candidates[codes.indexOf('ok')]!
        const {events, head} = await store.read(g, before, 10)
        expect(head).toBe(before + 1)
        expect(events.map((e) => e.kind)).toEqual(['work.offer.accepted'])
        // A fresh authority folding the log agrees on the single owner.
        const fresh = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: []}})
        expect((await fresh.current(g))!.workItems[w]).toMatchObject({
          state: 'queued',
          owner: {agentId: winner.principal!.id, ownershipEpoch: 1},
        })
        // Every loser carries the §19 code and names its own Action ID; none was receipted.
        for (const [i, r] of results.entries()) {
          if (codes[i] === 'ok') continue
          const actionId = JSON.parse(accepts[i]!.toString('utf8')).actionId as string
          expect('error' in r && {retryable: r.error.retryable, relatedActionId: r.error.relatedActionId}).toEqual({
            retryable: false,
            relatedActionId: actionId,
          })
          expect(await store.receipt(candidates[i]!.principal!.id, actionId)).toBeNull()
        }
      }
    })

    it('a mission.create raced by two processes creates the Group once', async () => {
      const g = newGroup('race-create')
      const bytes = createCommand(g)
      const [a, b] = await race(url, g, [bytes, bytes])
      expect(codeOf(a!)).toBe('ok')
      expect(b).toEqual(a)
      expect((await store.read(g, 0, 10)).events.map((e) => e.kind)).toEqual([
        'mission.created',
        'mission.coordinator.assigned',
      ])
      // A different signed create for the same Group (new Action ID) is refused without a change.
      expect(
        codeOf(
          await run(
            command(owner, {kind: 'mission.create', groupId: g, payload: JSON.parse(bytes.toString('utf8')).payload}),
          ),
        ),
      ).toBe('INVALID_STATE_TRANSITION')
      expect((await store.head(g))!.sequence).toBe(2)
    })
  },
)
