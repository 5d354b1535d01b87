// Stores initialized before a table was added to schema version 1 (the Policy Log, the
// Organization log and delivery Cursors came after the first release of the store; the Message
// table and state checkpoints with issue #15): opening one adds the missing tables, on both
// backends, and keeps everything already stored; the Message table is filled from the stored log
// (in pages) when it is added; opening a current store changes nothing.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {appendPosts} from '../../bench/cold-start-log.js'
import {submit} from '../../src/authority/ingress/command.js'
import {
  admissionKey,
  authorityOn,
  codeOf,
  developer,
  devStoreAt,
  groupCommand,
  owner,
  receiptOf,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {openStore} from '../../src/store/index.js'
import {storeBackends} from '../support/store-backends.js'

const backends = storeBackends('store upgrade')

describe.each(backends.filter((b) => b.enabled))('store opened from an earlier build: $name', (backend) => {
  beforeAll(() => backend.start(), 120_000)
  afterAll(() => backend.stop())

  it('gets the Policy Log, Organization log and Cursor tables it lacks when opened; what it held is still there', async () => {
    const url = await backend.fresh()
    const store = await devStoreAt(url)
    await store.audit({at: '2026-11-30T00:00:00Z', stage: 'test', reason: 'kept'})
    await store.close()
    const raw = backend.raw(url)
    // as a store initialized before these tables existed
    for (const table of ['policy_log', 'org_receipts', 'org_events', 'delivery_cursors'])
      await raw.exec(`DROP TABLE IF EXISTS ${table}`)
    await raw.close()

    const reopened = await openStore(url)
    expect(await reopened.policyLog('urn:mwp:test:group:none')).toEqual([])
    expect((await reopened.listAudit()).map((a) => a.reason)).toEqual(['kept'])
    expect(await reopened.organizationLog().currentVersion('session', 'urn:mwp:test:agent:none')).toBe(0)
    expect(await reopened.cursors().get('urn:mwp:test:human:reader', 'urn:mwp:test:group:none')).toBeNull()
    expect(await reopened.cursors().advance('urn:mwp:test:human:reader', 'urn:mwp:test:group:none', 3)).toBe(3)
    await reopened.close()
    const again = backend.raw(url)
    expect(await again.count('policy_log')).toBe(0)
    await again.close()
  })

  it('gets the Message table filled from its log, and the checkpoint table, when opened', async () => {
    const url = await backend.fresh()
    const store = await devStoreAt(url)
    const authority = authorityOn(store)
    const run = (bytes: Buffer) => submit(authority, bytes)
    const g = await missionGroup(run, 'upgrade-msg', {members: [developer]})
    // more message Events than one backfill page (message-table.ts), a correction and a redaction
    const ids = await appendPosts(authority, g, developer.principal!, 1_200)
    const [first, second, last] = [ids[0]!, ids[1]!, ids[1_199]!]
    const follow = (kind: string, signer: typeof owner, messageId: string, extra: Record<string, unknown>) =>
      groupCommand(signer, kind, g, {messageId, reason: 'upgrade', ...extra})
    receiptOf(await run(follow('message.correct', developer, first, {text: 'corrected'})))
    receiptOf(await run(follow('message.redact', owner, second, {policy: 'pii-removal'})))
    const before = [await store.messages().get(g, first), await store.messages().get(g, second)]
    await store.close()
    const raw = backend.raw(url)
    for (const table of ['group_messages', 'group_checkpoints']) await raw.exec(`DROP TABLE IF EXISTS ${table}`)
    await raw.close()

    // Regression: two processes opening the older store at once both saw the table missing; the
    // second then failed ("relation already exists") — one fills it, the other finds it filled.
    const [reopened, twin] = await Promise.all([openStore(url, {admissionKey}), openStore(url)])
    await twin.close()
    expect([await reopened.messages().get(g, first), await reopened.messages().get(g, second)]).toEqual(before)
    expect(await reopened.messages().get(g, first)).toMatchObject({status: 'corrected', redacted: false})
    expect(await reopened.messages().get(g, second)).toMatchObject({status: 'posted', redacted: true})
    expect(await reopened.messages().get(g, last)).toMatchObject({author: developer.principal, status: 'posted'})
    expect(await reopened.checkpoints().newest(g, 1e9, 1)).toEqual([])
    // the decider finds the backfilled rows
    const after = authorityOn(reopened)
    const retract = groupCommand(developer, 'message.retract', g, {messageId: last, reason: 'upgrade'})
    expect(codeOf(await submit(after, retract))).toBe('ok')
    await reopened.close()
    const counted = backend.raw(url)
    expect(await counted.count('group_messages')).toBe(1_200)
    await counted.close()
    // opened again: the table is there, nothing is filled twice
    const again = await openStore(url)
    expect(await again.messages().get(g, last)).toMatchObject({status: 'retracted'})
    await again.close()
  })

  it('opening a current store twice leaves its Policy Log as it was', async () => {
    const url = await backend.fresh()
    await (await devStoreAt(url)).close()
    const a = await openStore(url)
    const b = await openStore(url)
    expect(await a.policyLog('urn:mwp:test:group:none')).toEqual([])
    expect(await b.policyLog('urn:mwp:test:group:none')).toEqual([])
    await a.close()
    await b.close()
  })
})
