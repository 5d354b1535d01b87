// First vertical slice of the Group Authority (issue 4): mission.create and message.post through
// the full ingress (verify → freshness → first admission → epochs → idempotency → payload schema
// → policy → decide → sign → atomic append) on a real SQLite store and, when available, a real
// PostgreSQL. Replay folds the stored, re-verified Events and must reproduce the live state.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {apply} from '../../src/authority/apply/index.js'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {decide} from '../../src/authority/decide/index.js'
import {submit} from '../../src/authority/ingress/command.js'
import {validWorkContract} from '../../src/authority/ingress/payloads.js'
import type {GroupState} from '../../src/authority/model/state.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import {verify} from '../../src/signing/verify.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityKey,
  codeOf,
  command,
  coordinator,
  createCommand,
  developer,
  missionPayload,
  newGroup as newGroupTagged,
  otherHuman,
  owner,
  post,
  receiptOf,
  registry,
  uuid,
  devStoreAt,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {storeBackends} from '../support/store-backends.js'

const newGroup = () => newGroupTagged('slice')

const backends = storeBackends('authority slice')

describe('decide (pure)', () => {
  it('fences an older membershipEpoch with MEMBERSHIP_STALE and an unissued one with MEMBERSHIP_REQUIRED', () => {
    let n = 0
    const ctx = {acceptedAt: '2026-11-30T00:00:00Z', newId: () => `urn:mwp:test:pure:${++n}`, validWorkContract}
    const create = {
      actionId: 'urn:mwp:test:a:1',
      actor: owner.principal!,
      kind: 'mission.create',
      groupId: 'urn:mwp:test:group:pure',
      payload: missionPayload('urn:mwp:test:group:pure'),
    }
    const d = decide(null, create, ctx)
    if ('error' in d) throw new Error(d.reason)
    let state: GroupState | null = null
    d.events.forEach(
      (e, i) =>
        (state = apply(state, {
          kind: e.kind,
          groupId: create.groupId,
          sequence: i + 1,
          aggregateRevision: i + 1,
          payload: e.payload,
        })),
    )
    // A later membership.change would raise the epoch; simulate its result on the plain state.
    const bumped: GroupState = {
      ...state!,
      members: {
        ...state!.members,
        [coordinator.principal!.id]: {...state!.members[coordinator.principal!.id]!, membershipEpoch: 2},
      },
    }
    const message = {
      actionId: 'urn:mwp:test:a:2',
      actor: coordinator.principal!,
      kind: 'message.post',
      groupId: create.groupId,
      payload: {text: 'hi'},
    }
    expect(decide(bumped, {...message, membershipEpoch: 1}, ctx)).toMatchObject({error: 'MEMBERSHIP_STALE'})
    expect(decide(bumped, {...message, membershipEpoch: 3}, ctx)).toMatchObject({error: 'MEMBERSHIP_REQUIRED'})
    expect(decide(bumped, {...message, membershipEpoch: 2}, ctx)).toHaveProperty('events')
  })
})

describe.each(backends.filter((b) => b.enabled))('Group Authority slice: $name', (backend) => {
  let store: Store
  let authority: Authority
  let ids = 0

  beforeAll(async () => {
    await backend.start()
    const url = await backend.fresh()
    store = await devStoreAt(url)
    authority = openAuthority({
      store,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id]},
      newId: () => `urn:mwp:test:id:${backend.name}-a-${++ids}`,
    })
  }, 120_000)
  afterAll(async () => {
    await store?.close()
    await backend.stop()
  })

  const created = () => missionGroup((bytes) => submit(authority, bytes), 'slice', {members: []})

  it('[+cmd:mission.create] [+evt:mission.created] [+evt:mission.coordinator.assigned] [+row:t7.1:none->active:mission.create] mission.create by a root MissionOwner appends two signed Events at sequences 1 and 2', async () => {
    const groupId = newGroup()
    const receipt = receiptOf(await submit(authority, createCommand(groupId)))
    expect(receipt).toMatchObject({
      actor: owner.principal,
      groupId,
      firstSequence: 1,
      lastSequence: 2,
      aggregateRevision: 2,
    })
    expect(receipt.eventIds).toHaveLength(2)

    const {events, head} = await store.read(groupId, 0, 10)
    expect(head).toBe(2)
    expect(events.map((e) => [e.sequence, e.kind])).toEqual([
      [1, 'mission.created'],
      [2, 'mission.coordinator.assigned'],
    ])
    for (const e of events) {
      const v = verify('event', e.bytes, registry)
      if (!v.ok) throw new Error('stored Event does not verify')
      expect(v.principal).toEqual(authorityKey.principal)
      expect(v.document).toMatchObject({
        groupId,
        actor: owner.principal,
        acceptedBy: authorityKey.principal,
        cause: {type: 'command'},
      })
      expect(schemaCatalog().validate('membership', (v.document.payload as {membership: unknown}).membership)).toEqual({
        valid: true,
      })
    }
    const state = (await authority.current(groupId))!
    expect(state.mission).toMatchObject({
      state: 'active',
      missionOwner: owner.principal,
      coordinator: {agentId: coordinator.principal!.id, coordinatorEpoch: 1},
    })
    expect(state.members[owner.principal!.id]).toMatchObject({
      role: 'mission_owner',
      membershipEpoch: 1,
      active: true,
      visibilityStartSequence: 1,
    })
    expect(state.members[coordinator.principal!.id]).toMatchObject({
      role: 'coordinator',
      membershipEpoch: 1,
      active: true,
    })
  })

  it('[+cmd:message.post] [+evt:message.posted] message.post by the coordinator appends message.posted with authority: false, leaving the revision', async () => {
    const groupId = await created()
    const receipt = receiptOf(await submit(authority, post(coordinator, groupId, {expectedRevision: 2})))
    expect(receipt).toMatchObject({firstSequence: 3, lastSequence: 3, aggregateRevision: 2})
    const [event] = (await store.read(groupId, 2, 10)).events
    const v = verify('event', event!.bytes, registry)
    if (!v.ok) throw new Error('stored Event does not verify')
    const message = (v.document.payload as {message: Record<string, unknown>}).message
    expect(message).toMatchObject({
      authority: false,
      author: coordinator.principal,
      content: [{type: 'text', text: 'Plan: draft, review, publish.'}],
    })
    expect(schemaCatalog().validate('message', message)).toEqual({valid: true})
    // A human member posts with its membershipEpoch and no sessionEpoch.
    expect(receiptOf(await submit(authority, post(owner, groupId))).lastSequence).toBe(4)
  })

  it('replay: a fresh authority folding the stored Events reproduces the live state exactly', async () => {
    const groupId = await created()
    receiptOf(await submit(authority, post(coordinator, groupId)))
    receiptOf(
      await submit(authority, post(owner, groupId, {payload: {text: 'Thanks', references: ['urn:mwp:test:ref:1']}})),
    )
    const live = (await authority.current(groupId))!
    const fresh = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: []}})
    const replayed = (await fresh.current(groupId))!
    expect(replayed.sequence).toBe(4)
    expect(canonicalHash(replayed)).toBe(canonicalHash(live))
  })

  it('the same signed Command twice (also concurrently) appends once and returns the same receipt', async () => {
    const groupId = newGroup()
    const bytes = createCommand(groupId)
    const [a, b] = await Promise.all([submit(authority, bytes), submit(authority, bytes)])
    const again = await submit(authority, bytes)
    expect(receiptOf(b)).toEqual(receiptOf(a))
    expect(receiptOf(again)).toEqual(receiptOf(a))
    expect((await store.head(groupId))?.sequence).toBe(2)
  })

  it('the same actionId with different content is ACTION_ID_COLLISION', async () => {
    const groupId = await created()
    const actionId = uuid(3)
    receiptOf(await submit(authority, post(coordinator, groupId, {actionId})))
    const r = await submit(authority, post(coordinator, groupId, {actionId, payload: {text: 'something else'}}))
    expect(codeOf(r)).toBe('ACTION_ID_COLLISION')
    expect((await store.head(groupId))?.sequence).toBe(3)
  })

  it('[-cmd:mission.create] [-evt:mission.created] [-row:t7.1:none->active:mission.create] mission.create by a human who is not a root MissionOwner is AUTH_FORBIDDEN', async () => {
    const groupId = newGroup()
    const r = await submit(
      authority,
      command(otherHuman, {kind: 'mission.create', groupId, payload: missionPayload(groupId)}),
    )
    expect(codeOf(r)).toBe('AUTH_FORBIDDEN')
    expect(await store.head(groupId)).toBeNull()
  })

  it('[-cmd:mission.create] [-row:t7.1:none->active:mission.create] mission.create on an existing Group is INVALID_STATE_TRANSITION; a payload naming another Group is INVALID_COMMAND', async () => {
    const groupId = await created()
    expect(codeOf(await submit(authority, createCommand(groupId)))).toBe('INVALID_STATE_TRANSITION')
    const other = newGroup()
    const r = await submit(
      authority,
      command(owner, {kind: 'mission.create', groupId: other, payload: missionPayload(newGroup())}),
    )
    expect(codeOf(r)).toBe('INVALID_COMMAND')
    expect(await store.head(other)).toBeNull()
  })

  it('an invalid payload is SCHEMA_VALIDATION_FAILED', async () => {
    const groupId = newGroup()
    const {budget: _dropped, ...noBudget} = missionPayload(groupId)
    expect(codeOf(await submit(authority, command(owner, {kind: 'mission.create', groupId, payload: noBudget})))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    )
    const existing = await created()
    expect(codeOf(await submit(authority, post(coordinator, existing, {payload: {text: ''}})))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    )
  })

  it('[-cmd:message.post] [-evt:message.posted] membership fences: a never-member gets GROUP_NOT_FOUND (no existence oracle, §17.2), an unissued epoch MEMBERSHIP_REQUIRED', async () => {
    const groupId = await created()
    expect(codeOf(await submit(authority, post(developer, groupId)))).toBe('GROUP_NOT_FOUND')
    expect(codeOf(await submit(authority, post(coordinator, groupId, {membershipEpoch: 2})))).toBe(
      'MEMBERSHIP_REQUIRED',
    )
    expect((await store.head(groupId))?.sequence).toBe(2)
  })

  it('a wrong expectedRevision is REVISION_CONFLICT and nothing is appended or receipted', async () => {
    const groupId = await created()
    const actionId = uuid(4)
    const r = await submit(authority, post(coordinator, groupId, {actionId, expectedRevision: 1}))
    expect(codeOf(r)).toBe('REVISION_CONFLICT')
    expect('error' in r && r.error.retryable).toBe(false) // revisions only grow: the same bytes conflict forever
    expect((await store.head(groupId))?.sequence).toBe(2)
    expect(await store.receipt(coordinator.principal!.id, actionId)).toBeNull()
  })

  it('message.post to an unknown Group is GROUP_NOT_FOUND', async () => {
    expect(codeOf(await submit(authority, post(coordinator, newGroup())))).toBe('GROUP_NOT_FOUND')
  })

  it('a tampered Command is AUTH_INVALID_SIGNATURE with a protected audit entry', async () => {
    const groupId = newGroup()
    const bytes = Buffer.from(
      createCommand(groupId).toString('utf8').replace('Ship the release notes', 'Ship the release NOTES'),
      'utf8',
    )
    const r = await submit(authority, bytes)
    expect(codeOf(r)).toBe('AUTH_INVALID_SIGNATURE')
    expect('error' in r ? r.error.relatedActionId : 'none').toBeUndefined() // nothing echoed from an unverified document
    expect((await store.listAudit()).at(-1)).toMatchObject({
      stage: 'signature',
      subject: 'authority ingress',
      documentKind: 'command',
    })
    expect(await store.head(groupId)).toBeNull()
  })

  it('every error object validates against error.schema.json', async () => {
    const groupId = await created()
    const results = await Promise.all([
      submit(authority, post(developer, groupId)),
      submit(authority, post(coordinator, newGroup())),
      submit(authority, post(coordinator, groupId, {expectedRevision: 9})),
      submit(authority, Buffer.from('{"not": "a command"}')),
    ])
    for (const r of results) {
      if (!('error' in r)) throw new Error('expected an error')
      expect(schemaCatalog().validate('error', r.error)).toEqual({valid: true})
    }
  })

  it('posts to one Group are serialized into contiguous sequences', async () => {
    const groupId = await created()
    const receipts = (
      await Promise.all(
        Array.from({length: 5}, (_, i) => submit(authority, post(i % 2 ? owner : coordinator, groupId))),
      )
    ).map(receiptOf)
    expect(receipts.map((r) => r.firstSequence).sort((a, b) => a - b)).toEqual([3, 4, 5, 6, 7])
  })

  it('two authorities racing on the same Command: the loser gets the original receipt, not a decider refusal', async () => {
    const groupId = newGroup()
    const bytes = createCommand(groupId)
    const other = openAuthority({
      store,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id]},
      newId: () => `urn:mwp:test:id:${backend.name}-d-${++ids}`,
    })
    const both = await Promise.all([submit(authority, bytes), submit(other, bytes)])
    expect(receiptOf(both[1])).toEqual(receiptOf(both[0]))
    // Force the window: the loser's first receipt lookup ran before the winner's append.
    const groupId2 = newGroup()
    const bytes2 = createCommand(groupId2)
    const first = receiptOf(await submit(authority, bytes2))
    let misses = 1
    const late = new Proxy(store, {
      get(target, member) {
        if (member === 'receipt') return async (a: string, b: string) => (misses-- > 0 ? null : target.receipt(a, b))
        const value = Reflect.get(target, member, target) as unknown
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const loser = openAuthority({
      store: late,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id]},
    })
    expect(receiptOf(await submit(loser, bytes2))).toEqual(first)
    expect((await store.head(groupId2))?.sequence).toBe(2)
  })

  it('a stored Event that no longer verifies stops the Group: INTERNAL_ERROR on the wire, the reason in the audit log', async () => {
    const groupId = await created()
    const tampering = new Proxy(store, {
      get(target, member) {
        if (member === 'read')
          return async (g: string, after: number, limit: number) => {
            const page = await target.read(g, after, limit)
            const events = page.events.map((e) =>
              e.sequence === 2
                ? {
                    ...e,
                    bytes: Buffer.from(
                      Buffer.from(e.bytes).toString('utf8').replace('"coordinatorEpoch":1', '"coordinatorEpoch":7'),
                    ),
                  }
                : e,
            )
            return {...page, events}
          }
        const value = Reflect.get(target, member, target) as unknown
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const reader = openAuthority({store: tampering, registry, authorityKey, policy: {rootMissionOwners: []}})
    const r = await submit(reader, post(coordinator, groupId))
    expect(codeOf(r)).toBe('INTERNAL_ERROR')
    expect('error' in r && r.error.retryable).toBe(true)
    expect((await store.listAudit()).at(-1)).toMatchObject({
      stage: 'authority',
      reason: 'log-integrity',
      subject: 'authority ingress',
    })
    expect((await store.head(groupId))?.sequence).toBe(2)
  })

  it('an unchanged retry after the freshness window still returns the original receipt', async () => {
    const groupId = newGroup()
    const bytes = createCommand(groupId)
    const first = receiptOf(await submit(authority, bytes))
    // The same store with a trusted clock ten minutes later (beyond DEFAULT_FRESHNESS).
    const later = new Proxy(store, {
      get(target, member) {
        if (member === 'acceptanceContext')
          return async () => ({
            ...(await target.acceptanceContext()),
            trustedAcceptedAt: new Date(Date.now() + 600_000).toISOString(),
          })
        const value = Reflect.get(target, member, target) as unknown
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const laterAuthority = openAuthority({
      store: later,
      registry,
      authorityKey,
      policy: {rootMissionOwners: [owner.principal!.id]},
    })
    expect(receiptOf(await submit(laterAuthority, bytes))).toEqual(first)
    // A NEW Command at that later time is not fresh.
    expect(codeOf(await submit(laterAuthority, post(coordinator, groupId)))).toBe('AUTH_INVALID_SIGNATURE')
  })

  it('a head moved by another authority is caught up (incremental fold) and a stale decision is retried', async () => {
    const groupId = await created()
    const other = openAuthority({
      store,
      registry,
      authorityKey,
      policy: {rootMissionOwners: []},
      newId: () => `urn:mwp:test:id:${backend.name}-b-${++ids}`,
    })
    receiptOf(await submit(other, post(coordinator, groupId))) // sequence 3, behind our cache's back
    expect(receiptOf(await submit(authority, post(owner, groupId))).firstSequence).toBe(4)

    // Now make an authority decide on a stale head once: append must answer head-moved and the
    // retry must decide again on the reloaded state.
    let lies = 0
    const lying = new Proxy(store, {
      get(target, member) {
        if (member === 'head') return async (g: string) => (lies-- > 0 ? {sequence: 4, revision: 2} : target.head(g))
        const value = Reflect.get(target, member, target) as unknown
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const stale = openAuthority({
      store: lying,
      registry,
      authorityKey,
      policy: {rootMissionOwners: []},
      newId: () => `urn:mwp:test:id:${backend.name}-c-${++ids}`,
    })
    expect((await stale.current(groupId))?.sequence).toBe(4)
    receiptOf(await submit(other, post(coordinator, groupId))) // sequence 5
    lies = 1
    expect(receiptOf(await submit(stale, post(coordinator, groupId))).firstSequence).toBe(6)
    const replayed = (await openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: []}}).current(
      groupId,
    ))!
    expect(canonicalHash(replayed)).toBe(canonicalHash((await stale.current(groupId))!))
  })
})
