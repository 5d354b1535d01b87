// ACCEPTANCE section H (spec §15: Commands, Events and concurrency), proven at the library level:
// Authority + ingress submit on a real SQLite store. Lines already proven elsewhere are cited in
// the traceability table of the audit report; this file adds what was missing or only partly
// proven (epoch shape by actor type, idempotency, the Event envelope of every stored Event, the
// acceptedBy check on replay, per-Group order). H7 under a real database failure and H12 across
// two authorities run on both stores in acceptance-authority-h-stores.test.ts.

import {describe, expect, it} from 'vitest'
import {openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import type {JsonObject} from '../../src/json/parse.js'
import {sign} from '../../src/signing/sign.js'
import {verify} from '../../src/signing/verify.js'
import {
  authorityKey,
  codeOf,
  contract,
  coord,
  coordinator,
  createCommand,
  developer,
  groupCommand,
  missionPayload,
  newGroup,
  orgService,
  owner,
  post,
  receiptOf,
  registry,
  reviewer,
  sqliteSuite,
  uuid,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {rawCommand, signedAnyway} from '../support/unchecked-signing.js'

const H1 = `sha256:${'d'.repeat(64)}`
const policy = {rootMissionOwners: [owner.principal!.id], terminators: [orgService.principal!.id]}

const suite = sqliteSuite((store) => openAuthority({store, registry, authorityKey, policy}))

const {run, code} = suite
const head = async (g: string) => (await suite.store.head(g))?.sequence ?? 0
const state = async (g: string) => (await suite.authority.current(g))!
async function events(g: string) {
  return (await suite.store.read(g, 0, 1000)).events
}
const group = () => missionGroup(run, 'acc-h')
/** Rejected, and neither the Group log nor the receipt table moved. */
async function refusedWithoutTrace(g: string, bytes: Buffer, expected: string) {
  const before = await head(g)
  const r = await run(bytes)
  expect(codeOf(r)).toBe(expected)
  expect(await head(g)).toBe(before)
  const doc = JSON.parse(bytes.toString('utf8')) as {actor: {id: string}; actionId: string}
  expect(await suite.store.receipt(doc.actor.id, doc.actionId)).toBeNull()
}

describe('H1-H4 epochs by actor type (§15.1)', () => {
  it('H1 [+cmd:message.post] [-cmd:message.post] an Agent Group Command needs groupId, sessionEpoch and membershipEpoch; with all three it is accepted', async () => {
    const g = await group()
    const base = {kind: 'message.post', groupId: g, sessionEpoch: 1, membershipEpoch: 1, payload: {text: 'Plan.'}}
    const {sessionEpoch: _s, ...noSession} = base
    const {membershipEpoch: _m, ...noMembership} = base
    const {groupId: _g, ...noGroup} = base
    await refusedWithoutTrace(g, rawCommand(coordinator, noSession), 'SCHEMA_VALIDATION_FAILED')
    await refusedWithoutTrace(g, rawCommand(coordinator, noMembership), 'SCHEMA_VALIDATION_FAILED')
    await refusedWithoutTrace(g, rawCommand(coordinator, noGroup), 'SCHEMA_VALIDATION_FAILED')
    const receipt = receiptOf(await run(rawCommand(coordinator, base)))
    expect(receipt.firstSequence).toBe(await head(g))
  })

  it('H2 a human Command in an existing Group needs membershipEpoch and no sessionEpoch', async () => {
    const g = await group()
    await refusedWithoutTrace(
      g,
      rawCommand(owner, {kind: 'message.post', groupId: g, payload: {text: 'x'}}),
      'SCHEMA_VALIDATION_FAILED',
    )
    await refusedWithoutTrace(
      g,
      rawCommand(owner, {kind: 'message.post', groupId: g, membershipEpoch: 1, sessionEpoch: 1, payload: {text: 'x'}}),
      'SCHEMA_VALIDATION_FAILED',
    )
    receiptOf(
      await run(rawCommand(owner, {kind: 'message.post', groupId: g, membershipEpoch: 1, payload: {text: 'x'}})),
    )
  })

  it('H2 [+cmd:mission.create] [-cmd:mission.create] mission.create is human-only, carries the new groupId and no epochs', async () => {
    const g = newGroup('acc-h-create')
    const fields = {kind: 'mission.create', groupId: g, payload: missionPayload(g)}
    const {groupId: _g, ...noGroup} = fields
    const rejected = async (bytes: Buffer, expected: string) => {
      expect(await code(bytes)).toBe(expected)
      expect(await suite.store.head(g)).toBeNull()
    }
    await rejected(rawCommand(owner, {...fields, membershipEpoch: 1}), 'SCHEMA_VALIDATION_FAILED')
    await rejected(rawCommand(owner, {...fields, sessionEpoch: 1}), 'SCHEMA_VALIDATION_FAILED')
    await rejected(rawCommand(owner, {...fields, coordinatorEpoch: 1}), 'SCHEMA_VALIDATION_FAILED')
    await rejected(rawCommand(owner, noGroup), 'SCHEMA_VALIDATION_FAILED')
    await rejected(
      rawCommand(coordinator, {...fields, sessionEpoch: 1, membershipEpoch: 1}),
      'SCHEMA_VALIDATION_FAILED',
    )
    await rejected(rawCommand(coordinator, fields), 'SCHEMA_VALIDATION_FAILED')
    await rejected(rawCommand(orgService, fields), 'SCHEMA_VALIDATION_FAILED')
    // The positive case: the same Command from the human, with groupId and no epochs.
    receiptOf(await run(rawCommand(owner, fields)))
    expect(await head(g)).toBe(2)
  })

  it('H3 [+cmd:mission.terminate] [-cmd:mission.terminate] a service Command carries no Membership, Session or Coordinator epoch; without them a policy service terminates', async () => {
    const g = await group()
    const terminate = (fields: Record<string, unknown>) =>
      rawCommand(orgService, {
        kind: 'mission.terminate',
        groupId: g,
        payload: {reason: 'Organization policy stop.'},
        ...fields,
      })
    await refusedWithoutTrace(g, terminate({membershipEpoch: 1}), 'SCHEMA_VALIDATION_FAILED')
    await refusedWithoutTrace(g, terminate({coordinatorEpoch: 1}), 'SCHEMA_VALIDATION_FAILED')
    await refusedWithoutTrace(g, terminate({sessionEpoch: 1}), 'SCHEMA_VALIDATION_FAILED')
    receiptOf(await run(terminate({})))
    expect((await state(g)).mission.state).toBe('failed')
  })

  it('H3 an Organization bootstrap kind carrying a groupId or epochs is schema-invalid; without them it is no Group transition', async () => {
    const g = await group()
    const seq = await head(g)
    const kind = 'ext.missionweaveprotocol.identity.session_open'
    await refusedWithoutTrace(g, rawCommand(orgService, {kind, groupId: g, payload: {}}), 'SCHEMA_VALIDATION_FAILED')
    await refusedWithoutTrace(
      g,
      rawCommand(orgService, {kind, membershipEpoch: 1, payload: {}}),
      'SCHEMA_VALIDATION_FAILED',
    )
    // Well-formed, it belongs to the Organization log (src/wire/org-commands.ts), never a Group.
    const r = await run(rawCommand(orgService, {kind, payload: {agentId: coordinator.principal!.id}}))
    expect(['INVALID_COMMAND', 'SCHEMA_VALIDATION_FAILED']).toContain(codeOf(r))
    expect(await head(g)).toBe(seq)
  })

  it('H4 [-cmd:work.authorize] [-cmd:mission.terminate] [-cmd:work.accept_result] [-cmd:mission.submit_for_approval] a Coordinator-only kind or an Agent mission.terminate without coordinatorEpoch is schema-invalid; a stale one is AUTH_STALE_COORDINATOR', async () => {
    const g = await group()
    const w = uuid(7)
    const agentFields = {groupId: g, sessionEpoch: 1, membershipEpoch: 1}
    await refusedWithoutTrace(
      g,
      rawCommand(coordinator, {kind: 'work.accept_result', ...agentFields, payload: {workItemId: w}}),
      'SCHEMA_VALIDATION_FAILED',
    )
    await refusedWithoutTrace(
      g,
      rawCommand(coordinator, {kind: 'mission.submit_for_approval', ...agentFields, payload: {artifactHashes: [H1]}}),
      'SCHEMA_VALIDATION_FAILED',
    )
    // work.authorize may also come from a Grant holder (§9.1), so the schema allows no epoch; the
    // suite.authority then finds neither a Coordinator lease nor a cited Grant.
    await refusedWithoutTrace(
      g,
      rawCommand(coordinator, {kind: 'work.authorize', ...agentFields, payload: {workItemId: w, contract: contract()}}),
      'AUTH_FORBIDDEN',
    )
    await refusedWithoutTrace(
      g,
      rawCommand(coordinator, {kind: 'mission.terminate', ...agentFields, payload: {reason: 'Stuck.'}}),
      'SCHEMA_VALIDATION_FAILED',
    )
    // A new Coordinator lease makes epoch 1 stale for everyone, including the old holder.
    receiptOf(await run(groupCommand(owner, 'mission.assign_coordinator', g, {agentId: reviewer.principal!.id})))
    expect((await state(g)).mission.coordinator!.coordinatorEpoch).toBe(2)
    await refusedWithoutTrace(
      g,
      coord('work.authorize', g, {workItemId: w, contract: contract()}, 1, coordinator),
      'AUTH_STALE_COORDINATOR',
    )
    await refusedWithoutTrace(
      g,
      coord('mission.terminate', g, {reason: 'Stuck.'}, 1, coordinator),
      'AUTH_STALE_COORDINATOR',
    )
    // The new Coordinator was a worker: its Membership moved to a new epoch with the new role.
    const m = (await state(g)).members[reviewer.principal!.id]!
    expect(m.role).toBe('coordinator')
    const current = {membershipEpoch: m.membershipEpoch}
    await refusedWithoutTrace(
      g,
      coord('work.authorize', g, {workItemId: w, contract: contract()}, 1, reviewer, current),
      'AUTH_STALE_COORDINATOR',
    )
    receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()}, 2, reviewer, current)))
    expect((await state(g)).workItems[w]!.state).toBe('open')
  })
})

describe('H5-H7 idempotency and atomic acceptance (§15.1)', () => {
  it('H5 [+cmd:work.authorize] a retried structured transition returns the original receipt and appends nothing; state is unchanged', async () => {
    const g = await group()
    const bytes = coord('work.authorize', g, {workItemId: uuid(7), contract: contract()})
    const first = receiptOf(await run(bytes))
    const hash = canonicalHash((await state(g)) as never)
    const again = await Promise.all([run(bytes), run(bytes)])
    for (const r of again) expect(receiptOf(r)).toEqual(first)
    expect(await head(g)).toBe(first.lastSequence)
    expect(canonicalHash((await state(g)) as never)).toBe(hash)
  })

  it('H5 the same signed content in another JSON serialization (member order, whitespace) is the same Command: original receipt, no second Event', async () => {
    const g = await group()
    const bytes = post(developer, g)
    const first = receiptOf(await run(bytes))
    const doc = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>
    const reordered = Object.fromEntries(Object.entries(doc).reverse())
    const respelled = Buffer.from(JSON.stringify(reordered, null, 2), 'utf8')
    expect(respelled.equals(bytes)).toBe(false)
    expect(receiptOf(await run(respelled))).toEqual(first)
    expect(await head(g)).toBe(first.lastSequence)
  })

  it('H6 the same actor and Action ID with other content is ACTION_ID_COLLISION; another actor may reuse the Action ID', async () => {
    const g = await group()
    const actionId = uuid(1)
    const original = receiptOf(await run(post(coordinator, g, {actionId})))
    const seq = await head(g)
    const stored = await suite.store.receipt(coordinator.principal!.id, actionId)
    expect(await code(post(coordinator, g, {actionId, payload: {text: 'different'}}))).toBe('ACTION_ID_COLLISION')
    expect(await code(post(coordinator, g, {actionId, correlationId: uuid(2)}))).toBe('ACTION_ID_COLLISION') // another envelope field counts too
    expect(await head(g)).toBe(seq)
    expect(await suite.store.receipt(coordinator.principal!.id, actionId)).toEqual(stored)
    expect(JSON.parse(stored!.document)).toEqual(original)
    // The key is global per actor: the same Action ID with other content in another Group collides too.
    const other = await group()
    expect(await code(post(coordinator, other, {actionId}))).toBe('ACTION_ID_COLLISION')
    expect(await head(other)).toBe(4)
    // (actor, actionId) is the key: the MissionOwner using the same Action ID is a new Command.
    receiptOf(await run(post(owner, g, {actionId})))
  })

  it('H7 a rejected transition after accepted ones changes neither state, revision, fences nor receipts', async () => {
    const g = await group()
    const w = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
    receiptOf(
      await run(
        coord('work.offer', g, {
          workItemId: w,
          candidates: [developer.principal!.id],
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        }),
      ),
    )
    receiptOf(
      await run(
        groupCommand(developer, 'work.accept_offer', g, {
          workItemId: w,
          offerId: (await state(g)).workItems[w]!.offer!.offerId,
        }),
      ),
    )
    const hash = canonicalHash((await state(g)) as never)
    const seq = await head(g)
    // A start with a wrong Ownership Epoch is fenced; nothing of it may be left behind.
    await refusedWithoutTrace(
      g,
      groupCommand(developer, 'work.start', g, {workItemId: w, ownershipEpoch: 2}),
      'AUTH_FORBIDDEN',
    ) // never issued
    await refusedWithoutTrace(
      g,
      groupCommand(reviewer, 'work.start', g, {workItemId: w, ownershipEpoch: 1}),
      'AUTH_FORBIDDEN',
    )
    expect(await head(g)).toBe(seq)
    expect(
      canonicalHash((await openAuthority({store: suite.store, registry, authorityKey, policy}).current(g)) as never),
    ).toBe(hash)
  })
})

describe('H8-H10 Events and Group order (§15.2)', () => {
  it('H8 every stored Group Event verifies, validates against event.schema.json, carries groupId and aggregateRevision, and sequences run 1..n without gaps', async () => {
    const g = await group()
    const w = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
    receiptOf(await run(post(developer, g)))
    const stored = await events(g)
    expect(stored.map((e) => e.sequence)).toEqual(stored.map((_, i) => i + 1))
    let lastRevision = 0
    const revisions: number[] = []
    for (const e of stored) {
      const v = verify('event', e.bytes, registry)
      if (!v.ok) throw new Error(`Event ${e.sequence} does not verify`)
      const doc = v.document as Record<string, unknown>
      expect(schemaCatalog().validate('event', doc)).toEqual({valid: true})
      expect(doc).toMatchObject({groupId: g, sequence: e.sequence})
      revisions.push(doc.aggregateRevision as number)
      expect(doc.aggregateRevision as number).toBeGreaterThanOrEqual(lastRevision)
      lastRevision = doc.aggregateRevision as number
    }
    // message.posted does not advance the aggregate revision; work.authorized does.
    expect(revisions.at(-1)).toBe(revisions.at(-2))
    expect(revisions.at(-2)).toBe(revisions.at(-3)! + 1)
  })

  it('H8 a Group Event envelope without groupId, sequence or aggregateRevision, or with sequence 0, is schema-invalid', async () => {
    const g = await group()
    const [e] = (await suite.store.read(g, 0, 1)).events
    const v = verify('event', e!.bytes, registry)
    if (!v.ok) throw new Error('stored Event does not verify')
    const {signature: _sig, ...unsigned} = v.document as Record<string, unknown>
    for (const mutate of [
      (d: Record<string, unknown>) => delete d.groupId,
      (d: Record<string, unknown>) => delete d.sequence,
      (d: Record<string, unknown>) => delete d.aggregateRevision,
      (d: Record<string, unknown>) => (d.sequence = 0),
    ]) {
      const doc = structuredClone(unsigned)
      mutate(doc)
      const r = verify('event', signedAnyway(doc as JsonObject, authorityKey, 'occurredAt'), registry)
      expect(r.ok ? 'verified' : r.code).toBe('SCHEMA_VALIDATION_FAILED')
    }
  })

  it('H9 every Event is signed by the Group Authority named in acceptedBy, over the accepted Command hash', async () => {
    const g = await group()
    const bytes = post(coordinator, g)
    const receipt = receiptOf(await run(bytes))
    for (const e of await events(g)) {
      const v = verify('event', e.bytes, registry)
      if (!v.ok) throw new Error('stored Event does not verify')
      expect(v.principal).toEqual(authorityKey.principal)
      expect((v.document as {acceptedBy: unknown}).acceptedBy).toEqual(authorityKey.principal)
    }
    const last = verify('event', (await events(g)).at(-1)!.bytes, registry)
    if (!last.ok) throw new Error('stored Event does not verify')
    expect((last.document as {commandHash: string}).commandHash).toBe(
      verify('command', bytes, registry).ok
        ? (verify('command', bytes, registry) as {signingHash: string}).signingHash
        : '',
    )
    expect(receipt.eventIds).toEqual([(last.document as {eventId: string}).eventId])
  })

  it('H9 a validly signed Event accepted by another service is not a Group fact: replay stops with INTERNAL_ERROR and an audit entry', async () => {
    const g = await group()
    const [first] = (await suite.store.read(g, 0, 1)).events
    const v = verify('event', first!.bytes, registry)
    if (!v.ok) throw new Error('stored Event does not verify')
    const {signature: _sig, ...unsigned} = v.document as Record<string, unknown>
    const seq = await head(g)
    const rogue = {
      ...unsigned,
      eventId: uuid(9),
      kind: 'message.posted',
      sequence: seq + 1,
      aggregateRevision: (await state(g)).revision,
      payload: {messageId: uuid(9), conversationId: (await state(g)).conversationId, text: 'not from the authority'},
      acceptedBy: orgService.principal,
    }
    const signed = sign('event', rogue, orgService).document
    const bytes = Buffer.from(JSON.stringify(signed), 'utf8')
    // The rogue writer goes straight to the suite.store (it holds no suite.authority key).
    const outcome = await suite.store.append(
      g,
      seq,
      [
        {
          eventId: rogue.eventId as string,
          kind: 'message.posted',
          sequence: seq + 1,
          aggregateRevision: rogue.aggregateRevision as number,
          bytes,
        },
      ] as never,
      {
        actorId: orgService.principal!.id,
        actionId: uuid(1),
        contentHash: `sha256:${'e'.repeat(64)}`,
        groupId: g,
        firstSequence: seq + 1,
        lastSequence: seq + 1,
        document: '{}',
      },
    )
    expect(outcome.status).toBe('appended')
    const fresh = openAuthority({store: suite.store, registry, authorityKey, policy})
    const auditBefore = (await suite.store.listAudit()).length
    const r = await submit(fresh, post(coordinator, g))
    expect(codeOf(r)).toBe('INTERNAL_ERROR')
    expect(await head(g)).toBe(seq + 1)
    const audit = await suite.store.listAudit()
    expect(audit.length).toBeGreaterThan(auditBefore)
    expect(audit.at(-1)).toMatchObject({stage: 'authority', reason: 'log-integrity'})
  })

  it('H10 interleaved Commands on two Groups give each Group its own sequence from 1; no Event carries a cross-Group order', async () => {
    const a = newGroup('acc-h-a')
    const b = newGroup('acc-h-b')
    const bytes = [createCommand(a), createCommand(b)]
    for (const r of await Promise.all(bytes.map(run))) receiptOf(r)
    await Promise.all(
      [
        run(post(coordinator, a)),
        run(post(coordinator, b)),
        run(post(owner, b)),
        run(post(owner, a)),
        run(post(coordinator, b)),
      ].map(async (p) => receiptOf(await p)),
    )
    for (const [g, n] of [
      [a, 4],
      [b, 5],
    ] as const) {
      const stored = await events(g)
      expect(stored.map((e) => e.sequence)).toEqual(Array.from({length: n}, (_, i) => i + 1))
      for (const e of stored) {
        const v = verify('event', e.bytes, registry)
        if (!v.ok) throw new Error('stored Event does not verify')
        const keys = Object.keys(v.document as object)
        expect(keys.filter((k) => /global|organizationSequence|position/i.test(k))).toEqual([])
        expect((v.document as {groupId: string}).groupId).toBe(g)
      }
    }
  })
})

describe('H11 optimistic concurrency (§15.3)', () => {
  it('H11 a wrong expectedRevision on a structured transition is REVISION_CONFLICT with nothing applied; the right one is accepted', async () => {
    const g = await group()
    const revision = (await state(g)).revision
    const w = uuid(7)
    const r = await run(
      coord('work.authorize', g, {workItemId: w, contract: contract()}, 1, coordinator, {
        expectedRevision: revision - 1,
      }),
    )
    expect(codeOf(r)).toBe('REVISION_CONFLICT')
    expect((await state(g)).workItems[w]).toBeUndefined()
    expect((await state(g)).revision).toBe(revision)
    receiptOf(
      await run(
        coord('work.authorize', g, {workItemId: w, contract: contract()}, 1, coordinator, {expectedRevision: revision}),
      ),
    )
    expect((await state(g)).revision).toBe(revision + 1)
  })
})
