// §20 rate limits and the one-shot Cooperation Override Grant (ACCEPTANCE M1, M3-M7), through the
// full ingress on BOTH stores (SQLite file, throwaway PostgreSQL cluster): issuance by the
// MissionOwner or a listed Organization policy service; soft threshold → notice Event to the
// Coordinator; hard limit → RATE_LIMITED (retryable) with nothing appended; a valid grant lets
// exactly the one cited Command through and is consumed in the same atomic append, recorded both
// as an Event linked to the accepted target Event and as rows of the queryable Policy Log; every
// other use fails; an idempotent retry returns the original receipt; replay reproduces the state.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {LIMIT_NOTICE, OVERRIDE_CONSUMED} from '../../src/authority/model/cooperation-state.js'
import {cooperationGate} from '../../src/authority/decide/rate-limits.js'
import {submit} from '../../src/authority/ingress/command.js'
import {canonicalHash} from '../../src/json/jcs.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {verify} from '../../src/signing/verify.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityKey,
  codeOf,
  contract,
  coord,
  coordinator,
  developer,
  groupCommand,
  orgService,
  owner,
  post,
  receiptOf,
  registry,
  reviewer,
  uuid,
  devStoreAt,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {storeBackends} from '../support/store-backends.js'

const limits = {
  messageRate: {soft: 2, hard: 3, windowMinutes: 10},
  proposalRate: {hard: 1, windowMinutes: 10},
  ownedWorkItems: {hard: 1},
}

for (const backend of storeBackends('authority-overrides')) {
  describe.runIf(backend.enabled)(`cooperation limits and override grants on ${backend.name}`, () => {
    let store: Store
    let authority: Authority
    let skewMs = 0
    const touched: string[] = []
    const policy = {rootMissionOwners: [owner.principal!.id], overrideIssuers: [orgService.principal!.id], limits}
    const open = () =>
      openAuthority({store, registry, authorityKey, policy, clock: () => new Date(Date.now() + skewMs).toISOString()})

    beforeAll(async () => {
      await backend.start()
      const url = await backend.fresh()
      store = await devStoreAt(url)
      authority = open()
    }, 120_000)
    afterAll(async () => {
      await store?.close()
      await backend.stop()
    })

    const run = (bytes: Buffer) => submit(authority, bytes)
    const code = async (bytes: Buffer) => codeOf(await run(bytes))
    const head = async (g: string) => (await store.head(g))!.sequence
    const events = async (g: string) =>
      (await store.read(g, 0, 1000)).events.map((e) => ({
        ...e,
        doc: JSON.parse(Buffer.from(e.bytes).toString('utf8')) as Record<string, any>,
      }))
    const inAnHour = () => new Date(Date.now() + skewMs + 3_600_000).toISOString()

    const group = () => missionGroup(run, 'ovr', {touched})
    const grant = (g: string, fields: Record<string, unknown> = {}, signer: SigningKey = owner) =>
      groupCommand(signer, 'policy.grant_cooperation_override', g, {
        grantId: uuid(40),
        policy: 'message-rate',
        beneficiary: developer.principal,
        targetKind: 'message.post',
        targetActionId: uuid(41),
        reason: 'Incident bridge: the developer must keep posting status.',
        expiresAt: inAnHour(),
        ...fields,
      })
    const grantOf = async (g: string) =>
      (await events(g)).filter((e) => e.kind === 'policy.cooperation_override.granted').pop()!.doc.payload.grant
    /** Posts until the developer is at the hard message limit (3 in the window). */
    async function exhaust(g: string) {
      for (let i = 0; i < 3; i++) receiptOf(await run(post(developer, g)))
    }

    it('[+cmd:policy.grant_cooperation_override] [+evt:policy.cooperation_override.granted] the MissionOwner issues a grant binding every §20 field; the Policy Log records the issuance', async () => {
      const g = await group()
      const targetActionId = uuid(41)
      receiptOf(await run(grant(g, {grantId: 'urn:mwp:test:grant:one-' + g.slice(-12), targetActionId})))
      const last = (await events(g)).pop()!
      expect(last.kind).toBe('policy.cooperation_override.granted')
      expect(verify('event', last.bytes, registry)).toHaveProperty('document')
      const gr = last.doc.payload.grant
      expect(gr).toEqual({
        grantId: 'urn:mwp:test:grant:one-' + g.slice(-12),
        missionId: g.replace(':group:', ':mission:'),
        groupId: g,
        policy: 'message-rate',
        beneficiary: developer.principal,
        targetKind: 'message.post',
        targetActionId,
        reason: 'Incident bridge: the developer must keep posting status.',
        approver: owner.principal,
        grantedAt: last.doc.occurredAt,
        expiresAt: gr.expiresAt,
      })
      const log = await store.policyLog(g)
      expect(log).toHaveLength(1)
      expect(log[0]).toMatchObject({
        groupId: g,
        grantId: gr.grantId,
        action: 'issued',
        eventId: last.eventId,
        sequence: last.sequence,
      })
      expect(JSON.parse(log[0]!.record)).toEqual(gr)
    })

    it('[+cmd:policy.grant_cooperation_override] an Organization policy service listed in overrideIssuers issues a grant', async () => {
      const g = await group()
      receiptOf(await run(grant(g, {}, orgService)))
      expect((await grantOf(g)).approver).toEqual(orgService.principal)
    })

    it('[-cmd:policy.grant_cooperation_override] [-evt:policy.cooperation_override.granted] other actors, unknown policies, wrong kinds, past expiry and reused IDs are rejected', async () => {
      const g = await group()
      const h = await head(g)
      expect(await code(grant(g, {}, developer))).toBe('AUTH_FORBIDDEN')
      expect(
        await code(
          coord('policy.grant_cooperation_override', g, {
            grantId: uuid(40),
            policy: 'message-rate',
            beneficiary: developer.principal,
            targetKind: 'message.post',
            targetActionId: uuid(41),
            reason: 'r',
            expiresAt: inAnHour(),
          }),
        ),
      ).toBe('AUTH_FORBIDDEN')
      const unlisted = openAuthority({
        store,
        registry,
        authorityKey,
        policy: {rootMissionOwners: [owner.principal!.id], limits},
      })
      expect(codeOf(await submit(unlisted, grant(g, {}, orgService)))).toBe('AUTH_FORBIDDEN')
      expect(await code(grant(g, {policy: 'no-such-policy'}))).toBe('INVALID_COMMAND')
      expect(await code(grant(g, {targetKind: 'work.propose'}))).toBe('INVALID_COMMAND')
      expect(await code(grant(g, {expiresAt: new Date(Date.now() - 1000).toISOString()}))).toBe('INVALID_COMMAND')
      expect(await code(grant(g, {beneficiary: {type: 'agent', id: 'urn:mwp:test:agent:stranger'}}))).toBe(
        'INVALID_COMMAND',
      )
      expect(await code(grant(g, {reason: ''}))).toBe('SCHEMA_VALIDATION_FAILED')
      expect(await head(g)).toBe(h)
      expect(await store.policyLog(g)).toEqual([])
      receiptOf(await run(grant(g, {grantId: 'urn:mwp:test:grant:dup-' + g.slice(-12)})))
      expect(await code(grant(g, {grantId: 'urn:mwp:test:grant:dup-' + g.slice(-12)}))).toBe('INVALID_STATE_TRANSITION')
      expect(await store.policyLog(g)).toHaveLength(1)
    })

    it('[M1] the soft message threshold notifies the Coordinator; above the hard limit → RATE_LIMITED (retryable), nothing appended', async () => {
      const g = await group()
      expect(receiptOf(await run(post(developer, g))).eventIds).toHaveLength(1) // below the soft threshold: no notice
      const second = receiptOf(await run(post(developer, g)))
      // The second post reaches the soft threshold: accepted, plus a notice Event in the same append.
      expect(second.eventIds).toHaveLength(2)
      const notice = (await events(g)).pop()!
      expect(notice.kind).toBe(LIMIT_NOTICE)
      expect(notice.doc.payload).toMatchObject({
        policy: 'message-rate',
        actor: developer.principal,
        count: 2,
        softLimit: 2,
        hardLimit: 3,
        windowMinutes: 10,
        notify: [coordinator.principal],
      })
      receiptOf(await run(post(developer, g)))
      const h = await head(g)
      const r = await run(post(developer, g))
      expect(codeOf(r)).toBe('RATE_LIMITED')
      expect('error' in r && r.error.retryable).toBe(true)
      expect(await head(g)).toBe(h)
      // Per actor: another member still posts.
      receiptOf(await run(post(reviewer, g)))
    })

    it('[M1] the window slides with the authority clock (counts come from the signed occurredAt)', async () => {
      const g = await group()
      await exhaust(g)
      expect(await code(post(developer, g))).toBe('RATE_LIMITED')
      skewMs = 11 * 60_000
      try {
        receiptOf(await run(post(developer, g)))
      } finally {
        skewMs = 0
      }
    })

    it('[M1] proposal rate per actor: the second work.propose in the window → RATE_LIMITED', async () => {
      const g = await group()
      receiptOf(await run(groupCommand(developer, 'work.propose', g, {proposalId: uuid(50), contract: contract()})))
      const h = await head(g)
      expect(await code(groupCommand(developer, 'work.propose', g, {proposalId: uuid(50), contract: contract()}))).toBe(
        'RATE_LIMITED',
      )
      expect(await head(g)).toBe(h)
    })

    it('[M1] owned WorkItems per Agent: accepting a second offer while one is queued → RATE_LIMITED', async () => {
      const g = await group()
      const until = inAnHour()
      for (const w of ['urn:mwp:test:work:a', 'urn:mwp:test:work:b']) {
        receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
        receiptOf(
          await run(coord('work.offer', g, {workItemId: w, candidates: [developer.principal!.id], expiresAt: until})),
        )
      }
      const offerOf = async (w: string) => (await authority.current(g))!.workItems[w]!.offer!.offerId
      const accept = async (w: string) =>
        groupCommand(developer, 'work.accept_offer', g, {workItemId: w, offerId: await offerOf(w)})
      receiptOf(await run(await accept('urn:mwp:test:work:a')))
      expect(await code(await accept('urn:mwp:test:work:b'))).toBe('RATE_LIMITED')
      expect((await authority.current(g))!.workItems['urn:mwp:test:work:b']!.state).toBe('offered')
    })

    it('[M4] [M6] a valid grant lets exactly the cited Command through and is consumed atomically, linked to the accepted Event, in the Policy Log', async () => {
      const g = await group()
      await exhaust(g)
      const targetActionId = uuid(42)
      receiptOf(await run(grant(g, {targetActionId})))
      const gr = await grantOf(g)
      const bytes = post(developer, g, {actionId: targetActionId, cooperationOverrideGrantId: gr.grantId})
      const receipt = receiptOf(await run(bytes))
      expect(receipt.eventIds).toHaveLength(2)
      const [posted, consumed] = (await events(g)).slice(-2)
      expect(posted!.kind).toBe('message.posted')
      expect(consumed!.kind).toBe(OVERRIDE_CONSUMED)
      expect(consumed!.doc.payload).toEqual({
        grantId: gr.grantId,
        policy: 'message-rate',
        targetKind: 'message.post',
        targetActionId,
        targetEventId: posted!.eventId,
      })
      expect((await authority.current(g))!.overrideGrants?.[gr.grantId]?.consumedBy).toEqual({
        actionId: targetActionId,
        eventId: posted!.eventId,
      })
      const log = await store.policyLog(g)
      expect(log.map((r) => r.action)).toEqual(['issued', 'consumed'])
      expect(log[1]).toMatchObject({grantId: gr.grantId, eventId: consumed!.eventId, sequence: consumed!.sequence})
      expect(JSON.parse(log[1]!.record).targetEventId).toBe(posted!.eventId)

      // [M7] the idempotent retry returns the prior receipt and appends nothing ...
      const h = await head(g)
      expect(receiptOf(await run(bytes))).toEqual(receipt)
      expect(await head(g)).toBe(h)
      // ... and any other use of the grant fails, even by the beneficiary, the grant stays consumed once.
      expect(await code(post(developer, g, {cooperationOverrideGrantId: gr.grantId}))).toBe('AUTH_FORBIDDEN')
      expect(await head(g)).toBe(h)
      expect(await store.policyLog(g)).toHaveLength(2)
    })

    it('[M7] a consumed grant is refused by the gate itself, and the Policy Log key refuses a second consumption row', async () => {
      const g = await group()
      await exhaust(g)
      const targetActionId = uuid(45)
      receiptOf(await run(grant(g, {targetActionId})))
      const gr = await grantOf(g)
      receiptOf(await run(post(developer, g, {actionId: targetActionId, cooperationOverrideGrantId: gr.grantId})))
      // Through ingress the receipt answers the same (actor, Action ID) first; the pure gate must
      // still refuse the consumed grant (e.g. a replica deciding on the already-consumed state).
      const state = (await authority.current(g))!
      const draft = {eventId: uuid(46), kind: 'message.posted', payload: {}}
      const again = cooperationGate(
        state,
        {
          actionId: targetActionId,
          actor: developer.principal!,
          kind: 'message.post',
          cooperationOverrideGrantId: gr.grantId,
        },
        [draft],
        limits,
        {acceptedAt: new Date().toISOString(), newId: () => uuid(47)},
      )
      expect(again).toMatchObject({error: 'AUTH_FORBIDDEN'})
      // The store: a second 'consumed' row for the grant aborts the whole append.
      const h = await head(g)
      const forged = {
        eventId: uuid(48),
        kind: OVERRIDE_CONSUMED,
        sequence: h + 1,
        aggregateRevision: (await store.head(g))!.revision,
        bytes: Buffer.from('{"forged":true}'),
        policyRecord: {grantId: gr.grantId, action: 'consumed' as const, record: '{}'},
      }
      const receipt = {
        actorId: developer.principal!.id,
        actionId: uuid(49),
        contentHash: `sha256:${'e'.repeat(64)}`,
        groupId: g,
        firstSequence: h + 1,
        lastSequence: h + 1,
        document: '{}',
      }
      const outcome = await store.append(g, h, [forged], receipt)
      expect(outcome.status).not.toBe('appended')
      expect(await head(g)).toBe(h)
      expect(await store.receipt(receipt.actorId, receipt.actionId)).toBeNull()
      expect((await store.policyLog(g)).map((r) => r.action)).toEqual(['issued', 'consumed'])
    })

    it('[M6] the grant must exist, be unexpired and match actor, kind and Action ID exactly; a failed use does not consume it', async () => {
      const g = await group()
      await exhaust(g)
      const targetActionId = uuid(43)
      receiptOf(await run(grant(g, {targetActionId, expiresAt: new Date(Date.now() + 5 * 60_000).toISOString()})))
      const gr = await grantOf(g)
      const h = await head(g)
      expect(
        await code(
          post(developer, g, {actionId: targetActionId, cooperationOverrideGrantId: 'urn:mwp:test:grant:none'}),
        ),
      ).toBe('INVALID_COMMAND')
      // Bound to its Mission and Group: in another Group the grant does not exist.
      const elsewhere = await group()
      await exhaust(elsewhere)
      expect(
        await code(post(developer, elsewhere, {actionId: targetActionId, cooperationOverrideGrantId: gr.grantId})),
      ).toBe('INVALID_COMMAND')
      expect(await code(post(reviewer, g, {actionId: targetActionId, cooperationOverrideGrantId: gr.grantId}))).toBe(
        'AUTH_FORBIDDEN',
      )
      expect(await code(post(developer, g, {cooperationOverrideGrantId: gr.grantId}))).toBe('AUTH_FORBIDDEN') // another Action ID
      expect(
        await code(
          groupCommand(
            developer,
            'work.propose',
            g,
            {proposalId: uuid(51), contract: contract()},
            {actionId: targetActionId, cooperationOverrideGrantId: gr.grantId},
          ),
        ),
      ).toBe('AUTH_FORBIDDEN') // another kind (and another policy)
      // Without the grant the limit holds; a decider rejection never reaches the grant.
      expect(await code(post(developer, g))).toBe('RATE_LIMITED')
      expect(
        await code(
          groupCommand(
            developer,
            'message.post',
            g,
            {text: 'x', conversationId: 'urn:mwp:test:conversation:none'},
            {actionId: uuid(44), cooperationOverrideGrantId: gr.grantId},
          ),
        ),
      ).toBe('INVALID_COMMAND')
      skewMs = 6 * 60_000 // the grant expired (the rate window of 10 minutes still holds the posts)
      try {
        expect(await code(post(developer, g, {actionId: targetActionId, cooperationOverrideGrantId: gr.grantId}))).toBe(
          'AUTH_FORBIDDEN',
        )
      } finally {
        skewMs = 0
      }
      expect(await head(g)).toBe(h)
      expect((await authority.current(g))!.overrideGrants?.[gr.grantId]?.consumedBy).toBeNull()
      expect((await store.policyLog(g)).map((r) => r.action)).toEqual(['issued'])
      // Still usable exactly as issued.
      receiptOf(await run(post(developer, g, {actionId: targetActionId, cooperationOverrideGrantId: gr.grantId})))
    })

    it('replay: every Group reproduces the live state, and the Policy Log matches the policy Events', async () => {
      const fresh = open()
      expect(touched.length).toBeGreaterThan(5)
      for (const g of touched) {
        expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash((await authority.current(g))!))
        const policyEvents = (await events(g)).filter(
          (e) => e.kind === 'policy.cooperation_override.granted' || e.kind === OVERRIDE_CONSUMED,
        )
        expect((await store.policyLog(g)).map((r) => r.eventId)).toEqual(policyEvents.map((e) => e.eventId))
      }
    })
  })
}
