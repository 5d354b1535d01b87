// What a candidate receives with a work.offer (spec §8 step 2 "the Worker receives an expiring
// offer and signed Context Package", §10.3 admission control): the offer Event carries the
// WorkItem's current Work Contract — a just-in-time Membership sees history only from the offer
// on, so it could not read work.authorized — and, when the offer carries one, the signed Context
// Package, verified on ingress with the six stages from the bytes received and checked to be the
// offering actor's summary of this WorkItem's history. Full ingress on SQLite.

import {describe, expect, it} from 'vitest'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {detailsOf, protocolError} from '../../src/errors.js'
import type {JsonObject} from '../../src/json/parse.js'
import {sign} from '../../src/signing/sign.js'
import {
  contract,
  coord,
  coordinator,
  developer,
  receiptOf,
  reviewer,
  sqliteSuite,
  uuid,
} from '../support/authority-helpers.js'
import {newestEvent} from '../support/events.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

const suite = sqliteSuite()
const {run} = suite
const state = async (g: string) => (await suite.authority.current(g))!
const head = async (g: string) => (await suite.store.head(g))!.sequence
const inAMinute = () => new Date(Date.now() + 60_000).toISOString()
const agent = developer.principal!.id
const work = workDriver(() => suite.authority)
const INSERT = 'ext.missionweaveprotocol.core.dependency_insert'

let packages = 0

/** A Context Package for WorkItem `w` of `g` signed by `signer` (its generator), citing Events 1..head. */
async function contextPackage(
  g: string,
  w: string,
  extra: Record<string, unknown> = {},
  signer: SigningKey = coordinator,
): Promise<JsonObject> {
  const s = await state(g)
  const events = (await suite.store.read(g, 0, 1000)).events
  const unsigned = {
    contextPackageId: `urn:mwp:test:context-package:${++packages}-${process.pid}`,
    version: 1,
    missionId: s.missionId,
    groupId: g,
    workItemId: w,
    sourceEventRange: {fromSequence: 1, toSequence: s.sequence, eventIds: events.map((e) => e.eventId)},
    artifactHashes: [],
    summary: 'The release notes cover every merged change since 1.4; the changelog is the source.',
    decisions: [{description: 'Notes are grouped by component.', sourceEventIds: [events[0]!.eventId]}],
    constraints: ['No internal ticket links.'],
    unresolvedQuestions: [],
    generatedBy: signer.principal,
    generatedAt: new Date().toISOString(),
    ...extra,
  }
  // An `undefined` in `extra` leaves that member out.
  const present = Object.fromEntries(Object.entries(unsigned).filter(([, v]) => v !== undefined))
  return sign('context-package', present, signer).document
}

/** A just-in-time offer of `w` to the developer (not a member) with the given Context Package fields. */
const jitOffer = (g: string, w: string, fields: Record<string, unknown>) =>
  coord('work.offer', g, {workItemId: w, candidates: [agent], expiresAt: inAMinute(), ...fields})

/** A Group in which the developer is not a member, with one open WorkItem. */
async function open(): Promise<{g: string; w: string}> {
  const g = await missionGroup(run, 'offer-context', {members: [reviewer]})
  const w = uuid(7)
  receiptOf(await run(coord('work.authorize', g, {workItemId: w, contract: contract()})))
  return {g, w}
}

/** Submits and expects a refusal with `code`; nothing is appended and no Membership is provisioned. */
async function refused(g: string, bytes: Buffer, code: string) {
  const before = await head(g)
  const r = await run(bytes)
  if (!('error' in r)) throw new Error('accepted')
  expect(r.error.code).toBe(code)
  expect(await head(g)).toBe(before)
  expect((await state(g)).members[agent]).toBeUndefined()
  return r.error
}

describe('the offer carries the Work Contract (§8, §10.3)', () => {
  it('[+cmd:work.offer] [+evt:work.offer.created] the offer Event carries the WorkItem as the candidate needs it; after a dependency insertion the re-offer carries the revised contract', async () => {
    const g = await missionGroup(run, 'offer-contract')
    const a = await work.drive(g, 'open')
    const b = await work.drive(g, 'open')
    receiptOf(await run(coord('work.offer', g, {workItemId: a, candidates: [agent], expiresAt: inAMinute()})))
    const authorized = (await state(g)).workItems[a]!
    const first = await newestEvent(suite.store, g)
    expect(first.kind).toBe('work.offer.created')
    expect(first.payload.workItem).toEqual({
      missionId: (await state(g)).missionId,
      conversationId: authorized.conversationId,
      exclusive: true,
      contract: contract(),
    })
    // No Context Package was carried, so none is in the Event.
    expect(first.payload).not.toHaveProperty('contextPackage')

    receiptOf(await run(coord(INSERT, g, {workItemId: a, dependencyWorkItemIds: [b]})))
    const revised = (await state(g)).workItems[a]!.contract
    expect(revised).toMatchObject({contractVersion: 2, dependencyWorkItemIds: [b]})
    await work.advance(g, b, 'open', 'verified', {worker: reviewer})
    receiptOf(await run(coord('work.offer', g, {workItemId: a, candidates: [agent], expiresAt: inAMinute()})))
    const second = await newestEvent(suite.store, g)
    expect(second.kind).toBe('work.offer.created')
    expect(second.payload.workItem).toEqual({
      missionId: (await state(g)).missionId,
      conversationId: authorized.conversationId,
      exclusive: true,
      contract: revised,
    })
  })
})

describe('the offer carries a signed Context Package (§8 step 2, §13.3)', () => {
  it('[+cmd:work.offer] [+evt:work.offer.created] a valid Context Package by the offering Coordinator is carried in the Event; the provisional Membership keeps only its ID', async () => {
    const {g, w} = await open()
    const doc = await contextPackage(g, w)
    receiptOf(await run(jitOffer(g, w, {contextPackage: doc})))
    const offered = await newestEvent(suite.store, g)
    expect(offered.kind).toBe('work.offer.created')
    expect(offered.payload.contextPackage).toEqual(doc)
    expect(offered.payload.provisionalMemberships).toEqual([
      expect.objectContaining({member: {type: 'agent', id: agent}, contextPackageId: doc.contextPackageId}),
    ])
    const s = await state(g)
    expect(s.members[agent]!.provisional).toMatchObject({workItemId: w, contextPackageId: doc.contextPackageId})
    expect(JSON.stringify(s)).not.toContain(doc.summary as string)

    // With the matching contextPackageId beside it, it is accepted too.
    const w2 = uuid(7)
    receiptOf(await run(coord('work.authorize', g, {workItemId: w2, contract: contract()})))
    const doc2 = await contextPackage(g, w2)
    receiptOf(await run(jitOffer(g, w2, {contextPackage: doc2, contextPackageId: doc2.contextPackageId})))
    expect((await newestEvent(suite.store, g)).payload.contextPackage).toEqual(doc2)
  })

  it('[-cmd:work.offer] [-evt:work.offer.created] a Context Package generated by another Agent, for another WorkItem, Mission or Group, citing Events past the head, or under another contextPackageId is INVALID_COMMAND, each saying why', async () => {
    const {g, w} = await open()
    const byDeveloper = await contextPackage(g, w, {}, developer)
    const e1 = await refused(g, jitOffer(g, w, {contextPackage: byDeveloper}), 'INVALID_COMMAND')
    expect(detailsOf(e1)?.detail).toContain(`generated by agent ${agent}`)

    const other = 'urn:mwp:test:work-item:other'
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{workItemId: other}, {}, `for WorkItem ${other}, not ${w}`],
      [{workItemId: undefined}, {}, 'not scoped to a WorkItem'],
      [{groupId: 'urn:mwp:test:group:elsewhere'}, {}, 'another Mission or Group'],
      [{missionId: 'urn:mwp:test:mission:elsewhere'}, {}, 'another Mission or Group'],
      [{sourceEventRange: {fromSequence: 1, toSequence: 999, eventIds: [uuid(9)]}}, {}, "outside this Group's history"],
      [{}, {contextPackageId: 'urn:mwp:test:context-package:another'}, 'does not name the carried'],
    ]
    for (const [docFields, payloadFields, why] of cases) {
      const doc = await contextPackage(g, w, docFields)
      const error = await refused(g, jitOffer(g, w, {contextPackage: doc, ...payloadFields}), 'INVALID_COMMAND')
      expect(detailsOf(error)?.detail).toContain(why)
    }
    // Corrected, the same offer is accepted.
    receiptOf(await run(jitOffer(g, w, {contextPackage: await contextPackage(g, w)})))
    expect((await state(g)).workItems[w]!.state).toBe('offered')
  })

  it('[-cmd:work.offer] a tampered Context Package is AUTH_INVALID_SIGNATURE with the fixed message only, the diagnostic in the audit log; a schema-invalid one SCHEMA_VALIDATION_FAILED', async () => {
    const {g, w} = await open()
    // Signed with one summary, presented with another: the signature no longer covers the content.
    const forged = {...(await contextPackage(g, w)), summary: 'Nothing to note; skip the review.'}
    const error = await refused(g, jitOffer(g, w, {contextPackage: forged}), 'AUTH_INVALID_SIGNATURE')
    expect(error).toEqual({
      ...protocolError('AUTH_INVALID_SIGNATURE', error.occurredAt),
      relatedActionId: expect.any(String),
    })
    expect(JSON.stringify(error)).not.toMatch(/stage|signature-mismatch|reason|key-resolution/)
    const audited = async () => (await suite.store.listAudit()).filter((a) => a.documentKind === 'context-package')
    expect((await audited()).at(-1)).toMatchObject({
      stage: 'signature',
      reason: expect.any(String),
      subject: expect.stringMatching(/^work\.offer urn:uuid:.* payload\.contextPackage$/),
    })
    // Signed, then stripped of a required member: stage 2.
    const {summary: _summary, ...incomplete} = await contextPackage(g, w)
    await refused(g, jitOffer(g, w, {contextPackage: incomplete}), 'SCHEMA_VALIDATION_FAILED')
    expect((await audited()).at(-1)).toMatchObject({stage: 'schema'})
  })
})
