// The Group feed (src/wire/group-feed.ts): subscribers replaying the same history share one store
// read and one set of frames per page; a failed read is not remembered; a busy Group's pumps are
// woken at most once per delivery batch window, and no Event is left behind by the batching.

import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest'
import {submit} from '../../src/authority/ingress/command.js'
import type {Store} from '../../src/store/types.js'
import {GroupFeed} from '../../src/wire/group-feed.js'
import {
  authorityOn,
  createCommand,
  groupCommand,
  newGroup,
  owner,
  receiptOf,
  sqliteStore,
  storeWith,
} from '../support/authority-helpers.js'

describe('GroupFeed.history', () => {
  let store: Store
  let cleanup: () => Promise<void>
  const g = newGroup('feed')
  beforeAll(async () => {
    ;({store, cleanup} = await sqliteStore())
    const authority = authorityOn(store)
    receiptOf(await submit(authority, createCommand(g)))
    for (let i = 0; i < 6; i++)
      receiptOf(await submit(authority, groupCommand(owner, 'message.post', g, {text: `post ${i}`})))
  }, 60_000)
  afterAll(async () => cleanup?.())

  /** A feed over `store` whose Group log reads are counted; `failNext` makes the next read fail. */
  function counted(pageBytes?: number) {
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
    // Pages of 4 Events (and `pageBytes`, when given).
    const feed = new GroupFeed(authorityOn(wrapped), g, () => undefined, 0, 4, pageBytes)
    return {feed, reads: () => reads, failNext: () => (failNext = true)}
  }

  it('ten subscribers replaying the same page share one store read and the same frames', async () => {
    const c = counted()
    const pages = await Promise.all(Array.from({length: 10}, () => c.feed.history(0)))
    expect(c.reads()).toBe(1)
    expect(pages[0]!.map((e) => e.sequence)).toEqual([1, 2, 3, 4])
    for (const p of pages) expect(p).toBe(pages[0]) // the very same frames
    const next = await c.feed.history(4)
    expect(next.map((e) => e.sequence)).toEqual([5, 6, 7, 8])
    expect(c.reads()).toBe(2)
  })

  it('a short page (the head of its moment) is not remembered: later Events are not hidden behind it', async () => {
    const c = counted()
    expect((await c.feed.history(6)).map((e) => e.sequence)).toEqual([7, 8])
    expect((await c.feed.history(6)).map((e) => e.sequence)).toEqual([7, 8])
    expect(c.reads()).toBe(2)
  })

  it('a page is bounded by bytes as well as count: a byte bound under two Events gives pages of one; a page short of the head by bytes is remembered', async () => {
    const whole = (await counted().feed.history(0)).map((e) => e.event.byteLength)
    const c = counted(whole[1]! + whole[2]! - 1)
    const paged = await c.feed.history(1)
    expect(paged.map((e) => e.sequence)).toEqual([2])
    expect((await c.feed.history(1)).map((e) => e.sequence)).toEqual([2])
    expect(c.reads()).toBe(1)
    // Every Event, in order, page by page.
    const seen: number[] = []
    for (let after = 0; after < 8; after = seen[seen.length - 1]!)
      seen.push(...(await c.feed.history(after)).map((e) => e.sequence))
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
  })

  it('a failed read is not remembered: the next subscriber reads again', async () => {
    const c = counted()
    c.failNext()
    await expect(c.feed.history(0)).rejects.toThrow('store unavailable')
    expect((await c.feed.history(0)).map((e) => e.sequence)).toEqual([1, 2, 3, 4])
    expect(c.reads()).toBe(2)
  })
})

describe('GroupFeed delivery batching', () => {
  let store: Store
  let cleanup: () => Promise<void>
  beforeAll(async () => ({store, cleanup} = await sqliteStore()), 60_000)
  afterAll(async () => cleanup?.())
  afterEach(() => vi.useRealTimers())

  /** A live Group whose feed (window `batchMs`) is told of each append as the server's is; counts the wakes. */
  async function liveFeed(batchMs: number) {
    const g = newGroup('batch')
    const authority = authorityOn(store)
    receiptOf(await submit(authority, createCommand(g)))
    let wakes = 0
    const feed = new GroupFeed(authority, g, () => wakes++, batchMs)
    authority.onAppended((state, events) => state.groupId === g && feed.appended(state, events))
    await feed.refresh()
    const post = async (text: string) =>
      receiptOf(await submit(authority, groupCommand(owner, 'message.post', g, {text})))
    return {feed, post, wakes: () => wakes}
  }

  it('the first append after a quiet spell wakes at once; appends within the window share one later wake that delivers them all', async () => {
    const f = await liveFeed(60_000)
    expect(f.wakes()).toBe(1) // the load
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    await f.post('one')
    await f.post('two')
    await f.post('three')
    expect(f.wakes()).toBe(1) // all three within the window of the load's wake
    expect(f.feed.head).toBe(5) // two Events of the Mission's creation, then the three posts
    expect(f.feed.after(2, 10)!.map((e) => e.sequence)).toEqual([3, 4, 5]) // cached, waiting for the wake
    vi.advanceTimersByTime(60_000)
    expect(f.wakes()).toBe(2) // one wake for the three
  })

  it('with no window (0) every append wakes the pumps at once', async () => {
    const f = await liveFeed(0)
    await f.post('one')
    await f.post('two')
    expect(f.wakes()).toBe(3)
  })
})
