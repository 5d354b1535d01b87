// artifact.publish (spec §13.1, §11.3; ACCEPTANCE F5) through the full ingress on SQLite: the
// owning Worker publishes a manifest signed by itself as producing Agent, under its current
// Ownership Epoch and Execution Lease ID; the Event carries the signed manifest unchanged.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Authority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {canonicalHash} from '../../src/json/jcs.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {sign} from '../../src/signing/sign.js'
import {verify} from '../../src/signing/verify.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityOn,
  codeOf,
  developer,
  groupCommand,
  missionIdOf,
  receiptOf,
  registry,
  reviewer,
  sqliteStore,
  uuid,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

let store: Store
let cleanup: () => Promise<void>
let authority: Authority
const touched: string[] = []

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  authority = authorityOn(store)
}, 60_000)
afterAll(async () => cleanup?.())

const run = (bytes: Buffer) => submit(authority, bytes)
const code = async (bytes: Buffer) => codeOf(await run(bytes))
const head = async (g: string) => (await store.head(g))!.sequence
const W = 'urn:mwp:test:work:notes'

/** A Group whose WorkItem W is active under developer (Ownership Epoch 1); returns the lease ID. */
async function activeWork(): Promise<{g: string; leaseId: string}> {
  const g = await missionGroup(run, 'art', {touched})
  await work.drive(g, 'active', {workItemId: W})
  return {g, leaseId: (await authority.current(g))!.workItems[W]!.lease!.leaseId}
}
const work = workDriver(() => authority, {offerExpiresAt: () => new Date(Date.now() + 3_600_000).toISOString()})

function manifest(g: string, signer: SigningKey = developer, extra: Record<string, unknown> = {}) {
  const unsigned = {
    artifactId: uuid(60),
    contentHash: `sha256:${'ab'.repeat(32)}`,
    uri: 'https://artifacts.example/notes/0.1.md',
    sizeBytes: 2048,
    mediaType: 'text/markdown',
    schemaUri: 'urn:mwp:dev:schema:notes',
    producer: {
      agentId: signer.principal!.id,
      agentCardVersion: 1,
      capabilities: [{id: 'writing.release-notes', version: '1.0.0'}],
    },
    missionId: missionIdOf(g),
    groupId: g,
    workItemId: W,
    sourceArtifactHashes: [],
    toolVersions: [{name: 'pandoc', version: '3.1'}],
    modelVersions: [{provider: 'example', model: 'writer', version: '2026-01'}],
    classification: 'internal',
    createdAt: new Date().toISOString(),
    ...extra,
  }
  return sign('artifact', unsigned, signer).document as Record<string, any>
}

const publish = (
  g: string,
  artifact: Record<string, unknown>,
  leaseId: string,
  signer: SigningKey = developer,
  ownershipEpoch = 1,
) => groupCommand(signer, 'artifact.publish', g, {artifact, ownershipEpoch, leaseId})

describe('artifact.publish', () => {
  it('[+cmd:artifact.publish] [+evt:artifact.published] the owner publishes its signed manifest; the Event carries it unchanged', async () => {
    const {g, leaseId} = await activeWork()
    const m = manifest(g)
    const receipt = receiptOf(await run(publish(g, m, leaseId)))
    const page = await store.read(g, receipt.firstSequence - 1, 1)
    const doc = JSON.parse(Buffer.from(page.events[0]!.bytes).toString('utf8'))
    expect(doc.kind).toBe('artifact.published')
    expect(doc.payload).toEqual({workItemId: W, leaseId, artifact: m, publishedAt: doc.occurredAt})
    // The embedded manifest still verifies as the producer's signed document.
    expect(verify('artifact', Buffer.from(JSON.stringify(doc.payload.artifact)), registry)).toHaveProperty('document')
    const state = (await authority.current(g))!
    expect(state.artifacts?.[m.artifactId]).toEqual({
      contentHash: m.contentHash,
      workItemId: W,
      producerAgentId: developer.principal!.id,
      publishedAt: doc.occurredAt,
    })
    // The Event sits in the WorkItem's Conversation.
    expect(doc.conversationId).toBe(state.workItems[W]!.conversationId)
  })

  it('[-cmd:artifact.publish] [-evt:artifact.published] [F5] an older Lease ID is fenced even with the same Ownership Epoch', async () => {
    const {g, leaseId} = await activeWork()
    receiptOf(
      await run(
        groupCommand(developer, 'work.checkpoint', g, {
          workItemId: W,
          ownershipEpoch: 1,
          leaseId,
          progress: 'Half done.',
        }),
      ),
    )
    receiptOf(await run(groupCommand(developer, 'work.start', g, {workItemId: W, ownershipEpoch: 1})))
    const h = await head(g)
    expect(await code(publish(g, manifest(g), leaseId))).toBe('WORK_LEASE_EXPIRED')
    expect(await head(g)).toBe(h)
    const current = (await authority.current(g))!.workItems[W]!.lease!.leaseId
    receiptOf(await run(publish(g, manifest(g), current)))
  })

  it('[-cmd:artifact.publish] forged, foreign, non-owner, tampered, misplaced, inline and republished manifests are rejected', async () => {
    const {g, leaseId} = await activeWork()
    const h = await head(g)
    // Signed by the reviewer, then relabelled with the developer as producer: it no longer verifies.
    const signed = manifest(g, reviewer)
    const forged = {...signed, producer: {...signed.producer, agentId: developer.principal!.id}}
    expect(await code(publish(g, forged, leaseId))).toBe('INVALID_COMMAND')
    // The reviewer's own manifest published by the developer: the publisher is not the producer.
    expect(await code(publish(g, manifest(g, reviewer), leaseId))).toBe('AUTH_FORBIDDEN')
    // The reviewer is not the WorkItem owner.
    expect(await code(publish(g, manifest(g, reviewer), leaseId, reviewer))).toBe('AUTH_FORBIDDEN')
    // A manifest changed after signing.
    expect(await code(publish(g, {...manifest(g), contentHash: `sha256:${'cd'.repeat(32)}`}, leaseId))).toBe(
      'INVALID_COMMAND',
    )
    // Another Group's manifest.
    expect(await code(publish(g, manifest(g, developer, {groupId: 'urn:mwp:test:group:other'}), leaseId))).toBe(
      'INVALID_COMMAND',
    )
    // Binary content inline is not a manifest member (§13.1: stored outside the log).
    expect(await code(publish(g, {...manifest(g), content: 'aGVsbG8'}, leaseId))).toBe('SCHEMA_VALIDATION_FAILED')
    // A stale Ownership Epoch.
    expect(await code(publish(g, manifest(g), leaseId, developer, 2))).toBe('AUTH_FORBIDDEN')
    expect(await head(g)).toBe(h)
    // Immutable: one Artifact ID names one manifest.
    const m = manifest(g)
    receiptOf(await run(publish(g, m, leaseId)))
    expect(await code(publish(g, manifest(g, developer, {artifactId: m.artifactId}), leaseId))).toBe(
      'INVALID_STATE_TRANSITION',
    )
  })

  it('replay reproduces the live state', async () => {
    const fresh = authorityOn(store)
    for (const g of touched)
      expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash((await authority.current(g))!))
  })
})
