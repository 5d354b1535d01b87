// Messages after posting (spec §9, §9.1 last paragraph): correction, retraction and redaction are
// new Events naming the original Message ID; the original Event bytes never change. Who may do
// what: the author corrects and retracts; the MissionOwner or an Organization policy service
// (`redactors`) redacts with a policy reason. Also the Command extension rules (§17.4, §18):
// unknown critical → UNKNOWN_CRITICAL_EXTENSION, unknown noncritical relayed unchanged. Full
// ingress on a real SQLite store; replay reproduces the live state.

import {describe, expect, it} from 'vitest'
import {submit} from '../../src/authority/ingress/command.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import {verify} from '../../src/signing/verify.js'
import {
  authorityOn,
  codeOf,
  contract,
  coordinator,
  developer,
  groupCommand,
  orgService,
  owner,
  post,
  receiptOf,
  registry,
  sqliteSuite,
  uuid,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'

const touched: string[] = []

const suite = sqliteSuite((store) => authorityOn(store, {redactors: [orgService.principal!.id]}))

const {run, code} = suite
const head = async (g: string) => (await suite.store.head(g))!.sequence

async function events(g: string) {
  const page = await suite.store.read(g, 0, 1000)
  return page.events.map((e) => ({...e, doc: JSON.parse(Buffer.from(e.bytes).toString('utf8')) as Record<string, any>}))
}

/** A Group with developer as a Worker and one Message by developer; returns the Message ID. */
async function groupWithMessage(): Promise<{g: string; messageId: string}> {
  const g = await missionGroup(run, 'msg', {members: [developer], touched})
  receiptOf(await run(post(developer, g)))
  const posted = (await events(g)).filter((e) => e.kind === 'message.posted')
  return {g, messageId: posted[posted.length - 1]!.doc.payload.message.messageId}
}

const correct = (signer = developer, g: string, messageId: string, fields: Record<string, unknown> = {}) =>
  groupCommand(
    signer,
    'message.correct',
    g,
    {messageId, text: 'Plan: draft, review, publish, announce.', reason: 'Forgot a step.'},
    fields,
  )
const retract = (signer = developer, g: string, messageId: string) =>
  groupCommand(signer, 'message.retract', g, {messageId, reason: 'Posted in the wrong Group.'})
const redact = (signer = owner, g: string, messageId: string, payload: Record<string, unknown> = {}) =>
  groupCommand(signer, 'message.redact', g, {
    messageId,
    policy: 'pii-removal',
    reason: 'Contains a customer e-mail address.',
    ...payload,
  })

describe('message.post indexes the Message', () => {
  it('[+cmd:message.post] [+evt:message.posted] the posted Message is indexed with its author and Conversation', async () => {
    const {g, messageId} = await groupWithMessage()
    const state = (await suite.authority.current(g))!
    expect(await suite.store.messages().get(g, messageId)).toEqual({
      author: developer.principal,
      conversationId: state.conversationId,
      status: 'posted',
      redacted: false,
    })
  })
})

describe('message.correct', () => {
  it("[+cmd:message.post] [-cmd:message.post] a Message in a WorkItem's own Conversation is accepted (§9); an unknown Conversation → INVALID_COMMAND, nothing appended", async () => {
    const g = await missionGroup(run, 'messages-workitem')
    touched.push(g)
    const workItemId = uuid(7)
    receiptOf(
      await run(
        groupCommand(coordinator, 'work.authorize', g, {workItemId, contract: contract()}, {coordinatorEpoch: 1}),
      ),
    )
    const item = (await suite.authority.current(g))!.workItems[workItemId]!
    const posted = receiptOf(
      await run(post(coordinator, g, {payload: {conversationId: item.conversationId, text: 'Which branch?'}})),
    )
    const [event] = (await events(g)).filter((e) => e.sequence === posted.firstSequence)
    expect(event!.doc.conversationId).toBe(item.conversationId)
    expect(event!.doc.payload.message.conversationId).toBe(item.conversationId)
    const before = await head(g)
    expect(await code(post(coordinator, g, {payload: {conversationId: uuid(9), text: 'lost'}}))).toBe('INVALID_COMMAND')
    expect(await head(g)).toBe(before)
  })

  it('[+cmd:message.correct] [+evt:message.corrected] the author corrects: a new Event names the original; the original bytes are unchanged', async () => {
    const {g, messageId} = await groupWithMessage()
    const before = await events(g)
    const original = before.find((e) => e.doc.payload.message?.messageId === messageId)!
    const revision = (await suite.authority.current(g))!.revision
    const receipt = receiptOf(await run(correct(developer, g, messageId)))
    expect(receipt.eventIds).toHaveLength(1)
    const after = await events(g)
    expect(
      Buffer.from(after.find((e) => e.sequence === original.sequence)!.bytes).equals(Buffer.from(original.bytes)),
    ).toBe(true)
    const corrected = after[after.length - 1]!
    expect(corrected.kind).toBe('message.corrected')
    expect(verify('event', corrected.bytes, registry)).toHaveProperty('document')
    const m = corrected.doc.payload.message
    expect(corrected.doc.payload.targetMessageId).toBe(messageId)
    expect(m).toMatchObject({
      kind: 'correction',
      authority: false,
      targetMessageId: messageId,
      reason: 'Forgot a step.',
      author: developer.principal,
    })
    expect(m.messageId).not.toBe(messageId)
    expect(m.content).toEqual([{type: 'text', text: 'Plan: draft, review, publish, announce.'}])
    expect(schemaCatalog().validate('message', m).valid).toBe(true)
    // Conversation, not structure: the aggregate revision stays (§15.2, like message.posted).
    expect(corrected.doc.aggregateRevision).toBe(revision)
    expect((await suite.store.messages().get(g, messageId))?.status).toBe('corrected')
    // A Message may be corrected again; each correction is its own Event.
    receiptOf(await run(correct(developer, g, messageId)))
    expect((await events(g)).filter((e) => e.kind === 'message.corrected')).toHaveLength(2)
  })

  it("[-cmd:message.correct] [-evt:message.corrected] someone else's Message → AUTH_FORBIDDEN, an unknown Message → INVALID_COMMAND; nothing appended", async () => {
    const {g, messageId} = await groupWithMessage()
    const h = await head(g)
    expect(await code(correct(owner, g, messageId))).toBe('AUTH_FORBIDDEN')
    expect(await code(correct(coordinator, g, messageId))).toBe('AUTH_FORBIDDEN')
    expect(await code(correct(developer, g, 'urn:mwp:test:message:none'))).toBe('INVALID_COMMAND')
    expect(await code(groupCommand(developer, 'message.correct', g, {messageId, text: 'x'}))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    ) // no reason
    expect(await head(g)).toBe(h)
    expect((await events(g)).some((e) => e.kind === 'message.corrected')).toBe(false)
  })
})

describe('message.retract', () => {
  it('[+cmd:message.retract] [+evt:message.retracted] the author retracts; the original stays in the history', async () => {
    const {g, messageId} = await groupWithMessage()
    receiptOf(await run(retract(developer, g, messageId)))
    const all = await events(g)
    const last = all[all.length - 1]!
    expect(last.kind).toBe('message.retracted')
    expect(last.doc.payload.message).toMatchObject({
      kind: 'retraction',
      targetMessageId: messageId,
      reason: 'Posted in the wrong Group.',
      authority: false,
    })
    expect(schemaCatalog().validate('message', last.doc.payload.message).valid).toBe(true)
    expect(all.some((e) => e.doc.payload.message?.messageId === messageId && e.kind === 'message.posted')).toBe(true)
    expect((await suite.store.messages().get(g, messageId))?.status).toBe('retracted')
  })

  it('[-cmd:message.retract] [-evt:message.retracted] retracting twice or correcting a retracted Message → INVALID_STATE_TRANSITION; a non-author → AUTH_FORBIDDEN', async () => {
    const {g, messageId} = await groupWithMessage()
    expect(await code(retract(owner, g, messageId))).toBe('AUTH_FORBIDDEN')
    expect((await events(g)).some((e) => e.kind === 'message.retracted')).toBe(false)
    receiptOf(await run(retract(developer, g, messageId)))
    const h = await head(g)
    expect(await code(retract(developer, g, messageId))).toBe('INVALID_STATE_TRANSITION')
    expect(await code(correct(developer, g, messageId))).toBe('INVALID_STATE_TRANSITION')
    expect(await head(g)).toBe(h)
  })
})

describe('message.redact', () => {
  it('[+cmd:message.redact] [+evt:message.redacted] the MissionOwner redacts with an auditable policy reason', async () => {
    const {g, messageId} = await groupWithMessage()
    receiptOf(await run(redact(owner, g, messageId)))
    const last = (await events(g)).pop()!
    expect(last.kind).toBe('message.redacted')
    expect(last.doc.payload).toMatchObject({targetMessageId: messageId, policy: 'pii-removal'})
    expect(last.doc.payload.message).toMatchObject({
      kind: 'redaction',
      targetMessageId: messageId,
      reason: 'Contains a customer e-mail address.',
      author: owner.principal,
    })
    expect((await suite.store.messages().get(g, messageId))?.redacted).toBe(true)
  })

  it('[+cmd:message.redact] an Organization policy service listed in `redactors` redacts without a Membership', async () => {
    const {g, messageId} = await groupWithMessage()
    receiptOf(await run(redact(orgService, g, messageId)))
    const last = (await events(g)).pop()!
    expect(last.kind).toBe('message.redacted')
    expect(last.doc.actor).toEqual(orgService.principal)
  })

  it('[-cmd:message.redact] [-evt:message.redacted] the author, an unlisted service, a second redaction or a missing policy are rejected', async () => {
    const {g, messageId} = await groupWithMessage()
    expect(await code(redact(developer, g, messageId))).toBe('AUTH_FORBIDDEN')
    const strict = authorityOn(suite.store) // no redactors
    expect(codeOf(await submit(strict, redact(orgService, g, messageId)))).toBe('AUTH_FORBIDDEN')
    expect(await code(groupCommand(owner, 'message.redact', g, {messageId, reason: 'no policy named'}))).toBe(
      'SCHEMA_VALIDATION_FAILED',
    )
    expect((await events(g)).some((e) => e.kind === 'message.redacted')).toBe(false)
    receiptOf(await run(redact(owner, g, messageId)))
    const h = await head(g)
    expect(await code(redact(owner, g, messageId))).toBe('INVALID_STATE_TRANSITION')
    expect(await head(g)).toBe(h)
  })
})

describe('extensions (§17.4, §18)', () => {
  const PROFILE = 'https://extensions.example/profiles/priority-hints'
  it('[K1] a Command with an unknown critical extension → UNKNOWN_CRITICAL_EXTENSION, nothing appended', async () => {
    const {g} = await groupWithMessage()
    const h = await head(g)
    const bytes = post(developer, g, {
      extensions: {[PROFILE]: {version: '1.0.0', critical: true, data: {priority: 'urgent'}}},
    })
    const r = await run(bytes)
    expect(codeOf(r)).toBe('UNKNOWN_CRITICAL_EXTENSION')
    expect('error' in r && r.error.retryable).toBe(false)
    expect(await head(g)).toBe(h)
  })

  it('[K2] unknown noncritical extension data is stored and relayed unchanged inside the signed Event', async () => {
    const {g} = await groupWithMessage()
    const ext = {
      [PROFILE]: {version: '1.2.0', critical: false, data: {hint: 'low', nested: {n: 1.5, list: ['a', 'b']}}},
    }
    receiptOf(await run(post(developer, g, {extensions: ext})))
    const last = (await events(g)).pop()!
    expect(last.kind).toBe('message.posted')
    expect(last.doc.extensions).toEqual(ext)
    const verified = verify('event', last.bytes, registry)
    expect(verified).toHaveProperty('document')
    expect((verified as {document: Record<string, unknown>}).document.extensions).toEqual(ext)
  })
})

describe('replay', () => {
  it('every Group above replays to the live state (equal canonical hash)', async () => {
    const fresh = authorityOn(suite.store, {redactors: [orgService.principal!.id]})
    expect(touched.length).toBeGreaterThan(5)
    for (const g of touched)
      expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash((await suite.authority.current(g))!))
  })

  it('the action ID of a message.correct is idempotent: the same bytes return the same receipt', async () => {
    const {g, messageId} = await groupWithMessage()
    const bytes = correct(developer, g, messageId, {actionId: uuid(9)})
    const first = receiptOf(await run(bytes))
    expect(receiptOf(await run(bytes))).toEqual(first)
    expect((await events(g)).filter((e) => e.kind === 'message.corrected')).toHaveLength(1)
  })
})
