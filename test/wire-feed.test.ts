// The Group feed's history pages (src/wire/group-feed.ts): subscribers replaying the same history
// share one store read and one set of frames per page; a failed read is not remembered.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {submit} from '../src/authority/ingress.js'
import type {Store} from '../src/store/types.js'
import {GroupFeed} from '../src/wire/group-feed.js'
import {authorityOn, createCommand, groupCommand, newGroup, owner, receiptOf, sqliteStore, storeWith} from './authority-helpers.js'

describe('GroupFeed.history', () => {
  let store: Store
  let cleanup: () => Promise<void>
  const g = newGroup('feed')
  beforeAll(async () => {
    ;({store, cleanup} = await sqliteStore())
    const authority = authorityOn(store)
    receiptOf(await submit(authority, createCommand(g)))
    for (let i = 0; i < 6; i++) receiptOf(await submit(authority, groupCommand(owner, 'message.post', g, {text: `post ${i}`})))
  }, 60_000)
  afterAll(async () => cleanup?.())

  /** A feed over `store` whose Group log reads are counted; `failNext` makes the next read fail. */
  function counted() {
    let reads = 0
    let failNext = false
    const wrapped = storeWith(store, {
      read: (...args) => {
        reads++
        if (failNext) {
          failNext = false
          return Promise.reject(new Error('store unavailable'))
        }
        return store.read(...args)
      },
    })
    const feed = new GroupFeed(authorityOn(wrapped), g, () => undefined)
    return {feed, reads: () => reads, failNext: () => (failNext = true)}
  }

  it('ten subscribers replaying the same page share one store read and the same frames', async () => {
    const c = counted()
    const pages = await Promise.all(Array.from({length: 10}, () => c.feed.history(0, 4)))
    expect(c.reads()).toBe(1)
    expect(pages[0]!.map((e) => e.sequence)).toEqual([1, 2, 3, 4])
    for (const p of pages) expect(p).toBe(pages[0]) // the very same frames
    const next = await c.feed.history(4, 4)
    expect(next.map((e) => e.sequence)).toEqual([5, 6, 7, 8])
    expect(c.reads()).toBe(2)
  })

  it('a short page (the head of its moment) is not remembered: later Events are not hidden behind it', async () => {
    const c = counted()
    expect((await c.feed.history(6, 4)).map((e) => e.sequence)).toEqual([7, 8])
    expect((await c.feed.history(6, 4)).map((e) => e.sequence)).toEqual([7, 8])
    expect(c.reads()).toBe(2)
  })

  it('a failed read is not remembered: the next subscriber reads again', async () => {
    const c = counted()
    c.failNext()
    await expect(c.feed.history(0, 4)).rejects.toThrow('store unavailable')
    expect((await c.feed.history(0, 4)).map((e) => e.sequence)).toEqual([1, 2, 3, 4])
    expect(c.reads()).toBe(2)
  })
})
