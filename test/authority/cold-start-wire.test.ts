// Issue #15 from outside: a server restarted on a store holding a long Group log accepts the
// first Command to that Group, and keeps answering PINGs on another connection meanwhile — with
// checkpoints (the restart folds only the tail) and on a store without any (an older build's: the
// whole log is folded, in slices that yield to the event loop, and leaves a checkpoint behind).
//
// Size: building real signed Events is the cost (100,000 took 24 s compiled to 72 s under
// vitest's loader beside other suites on the shared 2-core machine). The Group restarted with
// checkpoints holds the 100,000 Events; the one restarted without any holds 20,000,
// because its whole fold costs about as long as its build again and proves the slicing as well at
// that size. bench/cold-start.ts measures 1k, 10k and 100k.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {appendPosts} from '../../bench/cold-start-log.js'
import {submit} from '../../src/authority/ingress/command.js'
import {openStore} from '../../src/store/index.js'
import type {Store} from '../../src/store/types.js'
import {admissionKey, authorityOn, codeOf, devStoreAt, owner, post, storeWith} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {storeBackends} from '../support/store-backends.js'
import {type Running, connect, frameId, rawSession, serve} from '../support/wire-helpers.js'

/** The Group restarted with checkpoints. */
const EVENTS = 100_000
/** The Group restarted without any (an older build's log: written with live false, so no checkpoint). */
const UNCHECKPOINTED_EVENTS = 20_000

const [sqlite] = storeBackends('cold start over the wire')

describe('restart with a long Group log, over the wire', () => {
  let url: string
  let g: string
  let older: string
  beforeAll(async () => {
    await sqlite.start()
    url = await sqlite.fresh()
    const store = await devStoreAt(url)
    const builder = authorityOn(store)
    g = await missionGroup((bytes) => submit(builder, bytes), 'cold-wire', {members: []})
    await appendPosts(builder, g, owner.principal!, EVENTS, {live: true})
    older = await missionGroup((bytes) => submit(builder, bytes), 'cold-wire-older', {members: []})
    await appendPosts(builder, older, owner.principal!, UNCHECKPOINTED_EVENTS)
    await builder.checkpointsWritten()
    await store.close()
  }, 300_000)
  afterAll(() => sqlite.stop())

  /**
   * Restarts a server on the store, pings it from a raw session one PING at a time while the
   * first Command is submitted on another connection; returns the answer, and the number of
   * Events the server had read when each PING echo arrived.
   */
  async function restartAndPing(
    group: string,
  ): Promise<{code: string; readAtEcho: number[]; readAtAnswer: number; store: Store}> {
    const store = await openStore(url, {admissionKey})
    let read = 0
    const counted = storeWith(store, {
      read: async (...args) => {
        const page = await store.read(...args)
        read += page.events.length
        return page
      },
    })
    const running: Running = await serve(counted)
    try {
      const pinger = await rawSession(running.server.url, owner)
      const client = await connect(running.server.url, owner, {reconnect: false})
      const readAtEcho: number[] = []
      let answered = false
      const pinging = (async () => {
        while (!answered) {
          const nonce = Buffer.from(frameId()).toString('base64url').slice(0, 16)
          pinger.send({
            protocolVersion: '0.1',
            frameId: frameId(),
            frameType: 'PING',
            nonce,
            sentAt: new Date().toISOString(),
          })
          const echo = await pinger.next()
          expect(echo.frameType).toBe('PING')
          expect(echo.replyToNonce).toBe(nonce)
          readAtEcho.push(read)
        }
      })()
      const result = await client.submit(post(owner, group))
      const readAtAnswer = read
      answered = true
      await pinging
      await client.close()
      pinger.ws.close()
      await running.authority.checkpointsWritten()
      return {code: codeOf(result), readAtEcho, readAtAnswer, store}
    } finally {
      await running.server.close()
    }
  }

  it('with checkpoints, 100,000 Events: the first Command is accepted and PINGs are answered', async () => {
    const {code, readAtEcho, readAtAnswer, store} = await restartAndPing(g)
    expect(code).toBe('ok')
    expect(readAtEcho.length).toBeGreaterThan(0)
    expect(readAtAnswer).toBeLessThan(600) // the checkpoint's bound Event and the tail, not the log
    await store.close()
  }, 120_000)

  it('without checkpoints: PINGs are answered while the whole log is folded, and a checkpoint is left', async () => {
    const before = await openStore(url, {admissionKey})
    expect(await before.checkpoints().newest(older, Number.MAX_SAFE_INTEGER, 1)).toEqual([])
    await before.close()
    const {code, readAtEcho, readAtAnswer, store} = await restartAndPing(older)
    expect(code).toBe('ok')
    expect(readAtAnswer).toBeGreaterThanOrEqual(UNCHECKPOINTED_EVENTS)
    // a PING was answered after the fold had read its first page and before it read its last
    expect(readAtEcho.some((n) => n > 0 && n < UNCHECKPOINTED_EVENTS)).toBe(true)
    const head = (await store.head(older))!.sequence
    const [checkpoint] = await store.checkpoints().newest(older, head, 1)
    expect(checkpoint?.sequence).toBeGreaterThanOrEqual(UNCHECKPOINTED_EVENTS)
    await store.close()
  }, 120_000)
})
