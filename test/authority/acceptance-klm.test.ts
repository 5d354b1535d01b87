// ACCEPTANCE sections K (spec §18 extensions), L (§19 errors and retry, authority side), M (§20
// rate and runaway controls) and the Grant-expiry half of E12 (§9.1), proven at the library level:
// Authority + ingress submit on a real SQLite store. The authority's trusted clock can be pinned
// to an exact instant (for boundary tests at full timestamp precision, spec §2); the Commands are
// signed now, so freshness is unaffected. Lines already proven elsewhere are cited in the audit
// report's traceability table.

import {describe, expect, it} from 'vitest'
import {openAuthority} from '../../src/authority/authority.js'
import {canonicalBytes} from '../../src/json/jcs.js'
import {detailsOf, protocolError} from '../../src/errors.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import {sign} from '../../src/signing/sign.js'
import {verify} from '../../src/signing/verify.js'
import {
  authorityKey,
  codeOf,
  command,
  contract,
  coord,
  coordinator,
  createCommand,
  developer,
  groupCommand,
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
import {rawCommand} from '../support/unchecked-signing.js'

const limits = {messageRate: {soft: 2, hard: 3, windowMinutes: 10}, ownedWorkItems: {hard: 1}}
const policy = {rootMissionOwners: [owner.principal!.id], overrideIssuers: [orgService.principal!.id], limits}
const PROFILE = 'https://extensions.example/profiles/acceptance-k'

let fixedNow: string | null = null
const now = () => fixedNow ?? new Date().toISOString()

const suite = sqliteSuite((store) => openAuthority({store, registry, authorityKey, policy, clock: now}))

const {run} = suite
const head = async (g: string) => (await suite.store.head(g))!.sequence
const state = async (g: string) => (await suite.authority.current(g))!
async function events(g: string) {
  return (await suite.store.read(g, 0, 1000)).events.map((e) => {
    const v = verify('event', e.bytes, registry)
    if (!v.ok) throw new Error(`stored Event ${e.sequence} does not verify`)
    return {
      bytes: e.bytes,
      doc: v.document as unknown as {
        kind: string
        eventId: string
        cause: {id: string}
        payload: Record<string, unknown>
        extensions?: unknown
      },
    }
  })
}
/** A timestamp `ms` from now at millisecond precision, without the zone letter. */
const msBase = (ms: number) => new Date(Date.now() + ms).toISOString().slice(0, 23)

async function group(): Promise<string> {
  fixedNow = null
  return missionGroup(run, 'acc-klm')
}
async function refused(g: string, bytes: Buffer, expected: string) {
  const before = await head(g)
  const r = await run(bytes)
  expect(codeOf(r)).toBe(expected)
  expect(await head(g)).toBe(before)
  return r
}

describe('K extensions (§18)', () => {
  it('K1 [-cmd:message.post] [-cmd:work.authorize] [+cmd:work.authorize] a critical extension the suite.authority cannot interpret → UNKNOWN_CRITICAL_EXTENSION on any kind; an ext.* kind without a profile is INVALID_COMMAND', async () => {
    const g = await group()
    const critical = {[PROFILE]: {version: '1.0.0', critical: true, data: {mode: 'strict'}}}
    const w = uuid(7)
    await refused(
      g,
      coord('work.authorize', g, {workItemId: w, contract: contract()}, 1, coordinator, {extensions: critical}),
      'UNKNOWN_CRITICAL_EXTENSION',
    )
    await refused(
      g,
      groupCommand(owner, 'message.post', g, {text: 'x'}, {extensions: critical}),
      'UNKNOWN_CRITICAL_EXTENSION',
    )
    expect((await state(g)).workItems[w]).toBeUndefined()
    // A well-formed extension kind of an unknown profile: no schema, so no transition.
    await refused(g, groupCommand(owner, 'ext.acme.planning.bump_priority', g, {level: 1}), 'INVALID_COMMAND')
    // A kind outside the ext.<organization>.<profile>.<name> namespace is not a kind at all.
    for (const kind of ['ext.acme.bump', 'acme.planning.bump_priority', 'work.bump_priority']) {
      await refused(
        g,
        rawCommand(owner, {kind, groupId: g, membershipEpoch: 1, payload: {}}),
        'SCHEMA_VALIDATION_FAILED',
      )
    }
    // The same Command with the extension marked noncritical is accepted.
    receiptOf(
      await run(
        coord('work.authorize', g, {workItemId: w, contract: contract()}, 1, coordinator, {
          extensions: {[PROFILE]: {...critical[PROFILE]!, critical: false}},
        }),
      ),
    )
  })

  it('K2 [+cmd:message.post] [+evt:message.posted] unknown noncritical extension data is relayed with canonically identical content inside the Event signing bytes; tampering with it breaks the Event signature', async () => {
    const g = await group()
    const data = {
      big: 12345678901234567890,
      fraction: 1.1,
      text: 'caf\u00e9 \ud83d\ude00',
      nested: {list: [1, {deep: null}], flag: true},
    }
    const bytes = post(developer, g, {extensions: {[PROFILE]: {version: '2.1.0', critical: false, data}}})
    const cmd = verify('command', bytes, registry)
    if (!cmd.ok) throw new Error('the Command does not verify')
    receiptOf(await run(bytes))
    const last = (await events(g)).at(-1)!
    expect(last.doc.kind).toBe('message.posted')
    expect(
      canonicalBytes(last.doc.extensions as never).equals(
        canonicalBytes((cmd.document as {extensions: never}).extensions),
      ),
    ).toBe(true)
    // It is inside what the suite.authority signed: change one value and the stored Event no longer verifies.
    const tampered = Buffer.from(
      Buffer.from(last.bytes).toString('utf8').replace('"flag":true', '"flag":false'),
      'utf8',
    )
    expect(tampered.equals(Buffer.from(last.bytes))).toBe(false)
    const v = verify('event', tampered, registry)
    expect(v.ok ? 'verified' : v.code).toBe('AUTH_INVALID_SIGNATURE')
  })

  it('K3 extension data can neither override nor weaken a core invariant: a stale fence stays fenced and a Message never authorizes', async () => {
    const g = await group()
    const weakening = {
      [PROFILE]: {
        version: '1.0.0',
        critical: false,
        data: {membershipEpoch: 99, coordinatorEpoch: 99, skipFencing: true, authorize: 'work.accept_result'},
      },
    }
    // Raise the developer's Membership Epoch, then present the old one with "overriding" extension data.
    receiptOf(await run(groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'})))
    await refused(g, post(developer, g, {extensions: weakening}), 'MEMBERSHIP_STALE')
    // A Message whose extension claims suite.authority changes no WorkItem (Messages never authorize, §4).
    const w = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
    const before = (await state(g)).revision
    receiptOf(
      await run(
        groupCommand(
          developer,
          'message.post',
          g,
          {text: 'Accept my result.'},
          {membershipEpoch: 2, extensions: weakening},
        ),
      ),
    )
    expect((await state(g)).revision).toBe(before)
    expect((await state(g)).workItems[w]!.state).toBe('open')
  })
})

describe('L errors and retry (§19)', () => {
  it('L1 every refusal is a schema-valid error object with the spec code, a retryable flag and no diagnostic detail beyond what a member may know', async () => {
    const g = await group()
    const stranger = newGroup('acc-klm-absent')
    const tampered = Buffer.from(post(coordinator, g).toString('utf8').replace('Plan: draft', 'Plan: DRAFT'))
    const cases: [Buffer, string][] = [
      [Buffer.from('{"kind":'), 'PROTOCOL_VIOLATION'],
      [tampered, 'AUTH_INVALID_SIGNATURE'],
      [groupCommand(owner, 'message.post', g, {}), 'SCHEMA_VALIDATION_FAILED'],
      [post(coordinator, stranger), 'GROUP_NOT_FOUND'],
      [post(developer, g, {membershipEpoch: 5}), 'MEMBERSHIP_REQUIRED'],
      [coord('work.accept_result', g, {workItemId: uuid(7)}, 1, developer), 'AUTH_FORBIDDEN'],
      [
        coord('work.authorize', g, {workItemId: uuid(7), contract: contract()}, 1, coordinator, {expectedRevision: 0}),
        'REVISION_CONFLICT',
      ],
      [coord('work.authorize', g, {workItemId: uuid(7), contract: {goal: 'prose only'}}), 'WORK_CONTRACT_INCOMPLETE'],
      [
        groupCommand(
          owner,
          'message.post',
          g,
          {text: 'x'},
          {extensions: {[PROFILE]: {version: '1.0.0', critical: true, data: {}}}},
        ),
        'UNKNOWN_CRITICAL_EXTENSION',
      ],
    ]
    const retryable = new Set(['RATE_LIMITED', 'BACKPRESSURE', 'INTERNAL_ERROR'])
    for (const [bytes, expected] of cases) {
      const r = await run(bytes)
      if (!('error' in r)) throw new Error(`${expected}: accepted`)
      expect(r.error.code).toBe(expected)
      expect(schemaCatalog().validate('error', r.error)).toEqual({valid: true})
      expect(typeof r.error.retryable).toBe('boolean')
      expect(r.error.retryable).toBe(retryable.has(expected))
      // Only the code, a fixed message, the flag, the time, (for a parsed Command) its own Action ID
      // and, for a semantic refusal of a verified Command, the `details` its sender may know (#18);
      // never for a verification failure, nor for GROUP_NOT_FOUND (no existence oracle).
      expect(r.error.message).toBe(protocolError(r.error.code).message)
      expect(Object.keys(r.error).sort()).toEqual(
        expect.arrayContaining(['code', 'message', 'occurredAt', 'retryable']),
      )
      const opaque = ['PROTOCOL_VIOLATION', 'AUTH_INVALID_SIGNATURE', 'GROUP_NOT_FOUND'].includes(expected)
      for (const k of Object.keys(r.error))
        expect([
          'code',
          'message',
          'occurredAt',
          'retryable',
          'relatedActionId',
          ...(opaque ? [] : ['details']),
        ]).toContain(k)
      if (!opaque) expect(typeof detailsOf(r.error)?.detail).toBe('string')
      expect(JSON.stringify(r.error)).not.toContain(g)
      expect(JSON.stringify(r.error)).not.toContain(stranger)
    }
  })

  it('L2 L5 an unchanged retry (same Action ID, same bytes) after a lost reply returns the original receipt; the actor can first look the outcome up by Action ID', async () => {
    const g = await group()
    const bytes = post(developer, g)
    const {actionId} = JSON.parse(bytes.toString('utf8')) as {actionId: string}
    const original = receiptOf(await run(bytes)) // the reply is "lost"
    // Query by ID: the receipt and the Event caused by that Action ID are there.
    const stored = await suite.store.receipt(developer.principal!.id, actionId)
    expect(JSON.parse(stored!.document)).toEqual(original)
    const caused = (await events(g)).filter((e) => e.doc.cause.id === actionId)
    expect(caused.map((e) => e.doc.eventId)).toEqual(original.eventIds)
    // Resending the same bytes is safe: the same receipt, no second Event.
    const h = await head(g)
    expect(receiptOf(await run(bytes))).toEqual(original)
    expect(await head(g)).toBe(h)
  })

  it('L3 AUTH_INVALID_SIGNATURE is not retryable and an unchanged retry is refused identically, appending nothing', async () => {
    const g = await group()
    const tampered = Buffer.from(post(developer, g).toString('utf8').replace('Plan: draft', 'Plan: DRAFT'))
    for (let i = 0; i < 2; i++) {
      const r = await refused(g, tampered, 'AUTH_INVALID_SIGNATURE')
      expect('error' in r && r.error.retryable).toBe(false)
    }
  })

  it('L4 expired freshness, ACTION_ID_COLLISION and a stale fence are not retryable; a new Command (new Action ID, current issuedAt and epochs, new signature) is accepted', async () => {
    const g = await group()
    // Freshness: a Command issued long ago (outside the window) is refused ...
    const stale = sign(
      'command',
      {...JSON.parse(post(developer, g).toString('utf8')), issuedAt: new Date(Date.now() - 3_600_000).toISOString()},
      developer,
    ).document
    const r1 = await refused(g, Buffer.from(JSON.stringify(stale)), 'AUTH_INVALID_SIGNATURE')
    expect('error' in r1 && r1.error.retryable).toBe(false)
    // ... and a new Command with a new Action ID and current issuedAt goes through.
    receiptOf(await run(post(developer, g)))

    // ACTION_ID_COLLISION: the old Action ID stays bound to its first content.
    const actionId = uuid(1)
    receiptOf(await run(post(reviewer, g, {actionId})))
    const r2 = await refused(g, post(reviewer, g, {actionId, payload: {text: 'changed'}}), 'ACTION_ID_COLLISION')
    expect('error' in r2 && r2.error.retryable).toBe(false)
    receiptOf(await run(post(reviewer, g, {payload: {text: 'changed'}})))

    // A stale fence: re-sending the fenced bytes stays fenced; current epochs in a new Command work.
    receiptOf(await run(groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'})))
    const fenced = post(developer, g)
    for (let i = 0; i < 2; i++) {
      const r3 = await refused(g, fenced, 'MEMBERSHIP_STALE')
      expect('error' in r3 && r3.error.retryable).toBe(false)
    }
    receiptOf(await run(post(developer, g, {membershipEpoch: 2})))
    receiptOf(await run(groupCommand(owner, 'mission.assign_coordinator', g, {agentId: reviewer.principal!.id})))
    const reviewerEpoch = (await state(g)).members[reviewer.principal!.id]!.membershipEpoch
    const r4 = await refused(
      g,
      coord('work.authorize', g, {workItemId: uuid(7), contract: contract()}, 1, reviewer, {
        membershipEpoch: reviewerEpoch,
      }),
      'AUTH_STALE_COORDINATOR',
    )
    expect('error' in r4 && r4.error.retryable).toBe(false)
    receiptOf(
      await run(
        coord('work.authorize', g, {workItemId: uuid(7), contract: contract()}, 2, reviewer, {
          membershipEpoch: reviewerEpoch,
        }),
      ),
    )
  })
})

describe('M rate, recursion and runaway controls (§20)', () => {
  it('M3 a hard limit refuses only the new Command: every earlier accepted Message stays in the log and the limited offer stays open for others', async () => {
    const g = await group()
    const posted: string[] = []
    for (let i = 0; i < 3; i++) posted.push(...receiptOf(await run(post(developer, g))).eventIds)
    await refused(g, post(developer, g), 'RATE_LIMITED')
    const ids = (await events(g)).map((e) => e.doc.eventId)
    for (const id of posted) expect(ids).toContain(id)
    // the Message table (store/message-table.ts) holds every accepted Message of the developer
    const mine = (await events(g)).filter(
      (e) =>
        e.doc.kind === 'message.posted' &&
        (e.doc.payload as {message: {author: {id: string}}}).message.author.id === developer.principal!.id,
    )
    const stored = await Promise.all(
      mine.map((e) =>
        suite.store.messages().get(g, (e.doc.payload as {message: {messageId: string}}).message.messageId),
      ),
    )
    expect(stored.filter((m) => m?.author.id === developer.principal!.id)).toHaveLength(3)

    const until = new Date(Date.now() + 3_600_000).toISOString()
    const [a, b] = [uuid(7), uuid(7)]
    for (const w of [a, b]) {
      receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
      receiptOf(
        await run(
          coord('work.offer', g, {
            workItemId: w,
            candidates: [developer.principal!.id, reviewer.principal!.id],
            expiresAt: until,
          }),
        ),
      )
    }
    const offerOf = async (w: string) => (await state(g)).workItems[w]!.offer!.offerId
    receiptOf(await run(groupCommand(developer, 'work.accept_offer', g, {workItemId: a, offerId: await offerOf(a)})))
    await refused(
      g,
      groupCommand(developer, 'work.accept_offer', g, {workItemId: b, offerId: await offerOf(b)}),
      'RATE_LIMITED',
    )
    expect((await state(g)).workItems[a]!).toMatchObject({state: 'queued', owner: {agentId: developer.principal!.id}})
    expect((await state(g)).workItems[b]!.state).toBe('offered')
    receiptOf(await run(groupCommand(reviewer, 'work.accept_offer', g, {workItemId: b, offerId: await offerOf(b)})))
  })

  it('M4 an override is never a boolean or a callback: an override flag in the envelope, payload or extension data leaves the Command RATE_LIMITED', async () => {
    const g = await group()
    for (let i = 0; i < 3; i++) receiptOf(await run(post(developer, g)))
    await refused(
      g,
      post(developer, g, {
        extensions: {
          [PROFILE]: {
            version: '1.0.0',
            critical: false,
            data: {cooperationOverride: true, approvedBy: owner.principal},
          },
        },
      }),
      'RATE_LIMITED',
    )
    await refused(
      g,
      groupCommand(developer, 'message.post', g, {text: 'x', override: true}),
      'SCHEMA_VALIDATION_FAILED',
    )
    await refused(
      g,
      command(developer, {
        kind: 'message.post',
        groupId: g,
        sessionEpoch: 1,
        membershipEpoch: 1,
        payload: {text: 'x'},
        cooperationOverrideGrantId: 'urn:mwp:test:grant:none',
      }),
      'INVALID_COMMAND',
    )
  })

  it('M6 [+cmd:policy.grant_cooperation_override] a grant is usable until its expiry instant at full precision: one microsecond before, it lets the cited Command through', async () => {
    const g = await group()
    for (let i = 0; i < 3; i++) receiptOf(await run(post(developer, g)))
    const base = msBase(60_000)
    const targetActionId = uuid(42)
    const grantId = uuid(40)
    receiptOf(
      await run(
        groupCommand(owner, 'policy.grant_cooperation_override', g, {
          grantId,
          policy: 'message-rate',
          beneficiary: developer.principal,
          targetKind: 'message.post',
          targetActionId,
          reason: 'Incident bridge.',
          expiresAt: `${base}001Z`,
        }),
      ),
    )
    fixedNow = `${base}Z` // 1 µs before expiry
    receiptOf(await run(post(developer, g, {actionId: targetActionId, cooperationOverrideGrantId: grantId})))
    expect((await state(g)).overrideGrants?.[grantId]?.consumedBy).toMatchObject({actionId: targetActionId})
  })

  it('M6 [-cmd:message.post] at the expiry instant the grant is refused and stays unconsumed', async () => {
    const g = await group()
    for (let i = 0; i < 3; i++) receiptOf(await run(post(developer, g)))
    const expiresAt = `${msBase(60_000)}500Z`
    const targetActionId = uuid(42)
    const grantId = uuid(40)
    receiptOf(
      await run(
        groupCommand(owner, 'policy.grant_cooperation_override', g, {
          grantId,
          policy: 'message-rate',
          beneficiary: developer.principal,
          targetKind: 'message.post',
          targetActionId,
          reason: 'Incident bridge.',
          expiresAt,
        }),
      ),
    )
    fixedNow = expiresAt
    await refused(
      g,
      post(developer, g, {actionId: targetActionId, cooperationOverrideGrantId: grantId}),
      'AUTH_FORBIDDEN',
    )
    expect((await state(g)).overrideGrants?.[grantId]?.consumedBy).toBeNull()
  })
})

describe('E12 Delegation Grant expiry (§9.1)', () => {
  const grantOn = async (g: string, w: string, expiresAt: string) => {
    const grantId = uuid(71)
    receiptOf(
      await run(
        coord('membership.grant_delegation', g, {
          grantId,
          granteeAgentId: reviewer.principal!.id,
          targetWorkItemId: w,
          allowedCapabilities: [{id: 'writing.release-notes', minVersion: '1.0.0'}],
          budgetCeilings: {
            currency: 'EUR',
            financialLimit: 10,
            modelTokenLimit: 1000,
            toolCallLimit: 10,
            computeSecondsLimit: 100,
            wallClockSecondsLimit: 100,
            externalSideEffectLimit: 0,
          },
          maxDescendantDepth: 1,
          expiresAt,
        }),
      ),
    )
    return grantId
  }
  async function delegateGroup() {
    fixedNow = null
    const g = newGroup('acc-klm-dlg')
    receiptOf(await run(createCommand(g)))
    receiptOf(await run(groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'})))
    receiptOf(
      await run(groupCommand(owner, 'membership.change', g, {member: reviewer.principal, role: 'work_delegate'})),
    )
    const w = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
    return {g, w}
  }
  const delegatedAuthorize = (g: string, grantId: string, parent: string) =>
    groupCommand(reviewer, 'work.authorize', g, {
      workItemId: uuid(7),
      parentWorkItemId: parent,
      delegationGrantId: grantId,
      contract: contract({
        budget: {currency: 'EUR', financialLimit: 4},
        requiredCapabilities: [{id: 'writing.release-notes', version: '1.2.0'}],
      }),
    })

  it('E12 [+cmd:work.authorize] one microsecond before its expiry instant the Grant still authorizes', async () => {
    const {g, w} = await delegateGroup()
    const base = msBase(60_000)
    const grantId = await grantOn(g, w, `${base}001Z`)
    fixedNow = `${base}Z`
    receiptOf(await run(delegatedAuthorize(g, grantId, w)))
    // The grantee's WorkItem now stands beside its parent, open.
    const {workItems} = await state(g)
    expect(
      Object.entries(workItems)
        .filter(([id]) => id !== w)
        .map(([, item]) => item!.state),
    ).toEqual(['open'])
  })

  it('E12 [-cmd:work.authorize] at its expiry instant the Grant is dead', async () => {
    const {g, w} = await delegateGroup()
    const expiresAt = `${msBase(60_000)}500Z`
    const grantId = await grantOn(g, w, expiresAt)
    fixedNow = expiresAt
    await refused(g, delegatedAuthorize(g, grantId, w), 'AUTH_FORBIDDEN')
  })
})
