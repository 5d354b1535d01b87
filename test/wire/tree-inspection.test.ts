// §14 over the wire: "The root MissionOwner MUST be able to inspect the complete Mission tree",
// and a Parent Coordinator "retains authorized on-demand inspection" below the Mission it owns.
// A MissionOwner of any Mission above a child Group may SUBSCRIBE to it without a Membership of
// its own, with full visibility, read only; anyone else still gets exactly the answer a missing
// Group gets (§17.2). Real TLS 1.3 on 127.0.0.1, SQLite.

import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {DEFAULT_FRESHNESS, type Store, initStore, openStore} from '../../src/store/index.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {
  admissionKey,
  authorityOn,
  codeOf,
  contract,
  coord,
  coordinator,
  developer,
  groupCommand,
  newGroup,
  otherHuman,
  owner,
  receiptOf,
  reviewer,
} from '../support/authority-helpers.js'
import {H1, treeSteps} from '../support/mission-tree-helpers.js'
import {type Running, collector, connect, next, serve} from '../support/wire-helpers.js'

let dir: string
let store: Store
let running: Running

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-wire-tree-'))
  const url = `sqlite:${join(dir, 'authority.db')}`
  await initStore(url, {
    organizationId: 'urn:mwp:dev:org:example',
    admissionService: {
      principal: admissionKey.principal!,
      keyId: admissionKey.keyId,
      publicKey: admissionKey.publicKeyB64,
    },
    freshness: DEFAULT_FRESHNESS,
  })
  store = await openStore(url, {admissionKey})
  running = await serve(store)
}, 60_000)
afterAll(async () => {
  await running?.server.close()
  await store?.close()
  rmSync(dir, {recursive: true, force: true})
})

// The tree is built by an in-process authority without the gateway's session rule (its Agents
// never opened wire sessions); the server reads the same store.
const t = treeSteps(() => ({authority: authorityOn(store), store}))
const small = contract({budget: {currency: 'EUR', financialLimit: 1}})

/** Root (owner) → child (owned by coordinator, run by reviewer) → grandchild (owned by reviewer, run by developer). */
async function tree() {
  const g = await t.rootGroup()
  const w = await t.workItem(g, 'open')
  const cg = newGroup('inspected-child')
  receiptOf(await t.run(t.createChild(g, w, cg)))
  const cw = await t.workItem(cg, 'open', small, reviewer)
  const grand = newGroup('inspected-grandchild')
  receiptOf(
    await t.run(
      t.createChild(
        cg,
        cw,
        grand,
        {budget: {currency: 'EUR', financialLimit: 1}, deadline: '2027-01-05T00:00:00Z'},
        reviewer,
        developer,
      ),
    ),
  )
  receiptOf(await t.run(coord('mission.submit_for_approval', grand, {artifactHashes: [H1]}, 1, developer)))
  return {g, cg, grand}
}

/** What `key` gets when it subscribes to `groupId` from 0: its Events' sequences, or the error code. */
async function subscribeAs(key: SigningKey, groupId: string): Promise<number[] | string> {
  const c = await connect(running.server.url, key, {reconnect: false})
  try {
    const got = collector()
    const head = (await store.head(groupId))!.sequence
    const outcome = await next<number[] | string>((resolve) => {
      void c.subscribe(groupId, {afterSequence: 0, onError: (e) => resolve(String(e.code))}, (e) => {
        got.onEvent(e)
        if (got.events.length === head) resolve(got.sequences())
      })
    })
    return outcome
  } finally {
    await c.close()
  }
}

describe('Mission tree inspection over the wire (§14)', () => {
  it('the root human MissionOwner reads every Group below its Mission in full; a Parent Coordinator the Groups below the one it owns; anyone else gets GROUP_NOT_FOUND', async () => {
    const {cg, grand} = await tree()
    const all = async (groupId: string) => Array.from({length: (await store.head(groupId))!.sequence}, (_, i) => i + 1)
    expect(await subscribeAs(owner, cg)).toEqual(await all(cg))
    expect(await subscribeAs(owner, grand)).toEqual(await all(grand))
    // The child's MissionOwner (the root's Coordinator) sees the grandchild it does not belong to.
    expect(await subscribeAs(coordinator, grand)).toEqual(await all(grand))
    // A Worker of the root Group, and a human outside the tree, learn nothing.
    expect(await subscribeAs(otherHuman, cg)).toBe('GROUP_NOT_FOUND')
    expect(await subscribeAs(otherHuman, grand)).toBe('GROUP_NOT_FOUND')
    // Inspection is read only: the root human cannot act in the child Group.
    const c = await connect(running.server.url, owner, {reconnect: false})
    try {
      const r = await c.submit(groupCommand(owner, 'message.post', cg, {text: 'from above'}))
      expect(codeOf(r)).not.toBe('ok')
    } finally {
      await c.close()
    }
  })
})
