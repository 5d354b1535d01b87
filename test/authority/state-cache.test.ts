// Authority.current() and its cache of committed Group states (src/authority/authority.ts).
// Commits become visible to reads before their answers reach the authority (the SQLite writer
// thread answers after its COMMIT, PostgreSQL after a round trip), so a head read can be older or
// newer than the cached state. Regression: a cached state NEWER than the head just read was
// thrown away and the whole Group log re-read and re-verified from sequence 0 — every time, under
// load (40 Commands/s instead of 500 in the wire bench). The cache must only move forward.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Authority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import type {Store} from '../../src/store/types.js'
import {authorityOn, groupCommand, owner, receiptOf, sqliteStore, storeWith} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'

describe('Authority state cache', () => {
  let store: Store
  let cleanup: () => Promise<void>
  beforeAll(async () => ({store, cleanup} = await sqliteStore()), 60_000)
  afterAll(async () => cleanup?.())

  /** The store with its Group log reads counted and, once armed, the next head read held until released. */
  function instrumented() {
    let reads = 0
    let hold: {release: () => void; read: Promise<void>} | null = null
    const wrapped = storeWith(store, {
      read: (...args) => (reads++, store.read(...args)),
      head: async (groupId) => {
        const head = await store.head(groupId)
        const held = hold
        hold = null
        if (held) await held.read
        return head
      },
    })
    return {
      store: wrapped,
      reads: () => reads,
      /** The next head read returns what it read only after release(). */
      holdNextHead: () => {
        let release!: () => void
        hold = {read: new Promise<void>((r) => (release = r)), release: () => release()}
        return () => release()
      },
    }
  }

  async function groupWithPosts(authority: Authority, posts: number): Promise<string> {
    const g = await missionGroup((bytes) => submit(authority, bytes), 'cache', {members: []})
    for (let i = 0; i < posts; i++)
      receiptOf(await submit(authority, groupCommand(owner, 'message.post', g, {text: `post ${i}`})))
    return g
  }

  it('keeps a cached state newer than the head it read, without re-reading the log', async () => {
    const s = instrumented()
    const authority = authorityOn(s.store)
    const g = await groupWithPosts(authority, 3)
    const before = (await authority.current(g))!.sequence

    const release = s.holdNextHead()
    const stale = authority.current(g) // reads the head now, returns after release
    await new Promise((r) => setImmediate(r))
    receiptOf(await submit(authority, groupCommand(owner, 'message.post', g, {text: 'while the read was held'})))
    const readsBefore = s.reads()
    release()
    const state = (await stale)!
    expect(state.sequence).toBe(before + 1) // the newer committed state, not the older head
    expect(s.reads()).toBe(readsBefore) // and nothing was re-read
    expect((await authority.current(g))!.sequence).toBe(before + 1)
  })

  it('folds what another process appended (the cache is behind the head)', async () => {
    const s = instrumented()
    const mine = authorityOn(s.store)
    const g = await groupWithPosts(mine, 1)
    const seen = (await mine.current(g))!.sequence
    const other = authorityOn(store) // another authority on the same store: its appends are news to `mine`
    receiptOf(await submit(other, groupCommand(owner, 'message.post', g, {text: 'from elsewhere'})))
    const readsBefore = s.reads()
    expect((await mine.current(g))!.sequence).toBe(seen + 1)
    expect(s.reads()).toBe(readsBefore + 1) // one page: just the new Event
  })
})
