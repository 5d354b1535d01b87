// Cold start from signed state checkpoints (issue #15; src/authority/checkpoints.ts and
// authority.ts current()). On both stores: a long fold leaves a checkpoint; a new Authority on the
// reopened store starts from it and folds only the tail; the result has the canonical hash of a
// full replay (checkpoints are only an optimization); and a checkpoint that was tampered with —
// state bytes, the signing key, the bound Event hash — is reported and never used.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {appendPosts} from '../../bench/cold-start-log.js'
import {CHECKPOINT_EVERY, STATE_MODEL, makeCheckpoint} from '../../src/authority/checkpoints.js'
import {submit} from '../../src/authority/ingress/command.js'
import type {GroupState} from '../../src/authority/model/state.js'
import {groupStateHash} from '../../src/authority/model/state-hash.js'
import {generateSigningKey} from '../../src/crypto/keyfile.js'
import {openStore} from '../../src/store/index.js'
import {KEEP_CHECKPOINTS, type StoredCheckpoint} from '../../src/store/checkpoints.js'
import type {Store} from '../../src/store/types.js'
import {
  admissionKey,
  authorityKey,
  authorityOn,
  codeOf,
  devStoreAt,
  owner,
  post,
  storeWith,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {storeBackends} from '../support/store-backends.js'

const backends = storeBackends('cold-start checkpoints')

/** The store with the Events its reads return counted. */
function counting(store: Store) {
  let events = 0
  const wrapped = storeWith(store, {
    read: async (...args) => {
      const page = await store.read(...args)
      events += page.events.length
      return page
    },
  })
  return {store: wrapped, events: () => events}
}

describe.each(backends.filter((b) => b.enabled))('cold start from checkpoints: $name', (backend) => {
  let url: string
  let store: Store
  beforeAll(async () => {
    await backend.start()
    url = await backend.fresh()
    store = await devStoreAt(url)
  }, 120_000)
  afterAll(async () => {
    await store?.close()
    await backend.stop()
  })

  /** A Group of `posts` bulk message.posted Events after its mission.create. */
  async function longGroup(posts: number): Promise<string> {
    const builder = authorityOn(store)
    const g = await missionGroup((bytes) => submit(builder, bytes), 'cold', {members: []})
    await appendPosts(builder, g, owner.principal!, posts)
    return g
  }

  /** The state a full replay gives: a new Authority on a store view without checkpoints. */
  async function fullFold(g: string): Promise<GroupState> {
    const none = storeWith(store, {
      checkpoints: () => ({newest: async () => [], put: async () => {}}),
    })
    return (await authorityOn(none).current(g))!
  }

  async function reopened(): Promise<Store> {
    await store.close()
    store = await openStore(url, {admissionKey})
    return store
  }

  it('a long fold writes a checkpoint; after a restart only the tail is folded, to the state a full replay gives', async () => {
    const tail = 37
    const g = await longGroup(2 * CHECKPOINT_EVERY)
    const first = authorityOn(store)
    const folded = (await first.current(g))!
    await first.checkpointsWritten()
    const [checkpoint] = await store.checkpoints().newest(g, folded.sequence, 1)
    expect(checkpoint?.sequence).toBe(folded.sequence)
    await appendPosts(first, g, owner.principal!, tail)

    const s = counting(await reopened())
    const restarted = authorityOn(s.store)
    const state = (await restarted.current(g))!
    expect(state.sequence).toBe(folded.sequence + tail)
    // the Event the checkpoint is bound to, then the tail: nothing before the checkpoint
    expect(s.events()).toBe(1 + tail)
    expect(groupStateHash(state)).toBe(groupStateHash(await fullFold(g)))
    expect(codeOf(await submit(restarted, post(owner, g)))).toBe('ok')
  })

  it('the store keeps the newest KEEP_CHECKPOINTS checkpoints of a Group, newest first', async () => {
    const g = `urn:mwp:test:group:keep-${Date.now()}`
    const row = (sequence: number): StoredCheckpoint => ({
      groupId: g,
      sequence,
      eventHash: 'sha256:e',
      stateHash: 'sha256:s',
      state: Buffer.from('{}'),
      keyId: 'k',
      signature: 's',
    })
    for (const sequence of [256, 768, 512]) await store.checkpoints().put(row(sequence))
    expect((await store.checkpoints().newest(g, 1e9, 10)).map((c) => c.sequence)).toEqual(
      [768, 512].slice(0, KEEP_CHECKPOINTS),
    )
    expect((await store.checkpoints().newest(g, 700, 10)).map((c) => c.sequence)).toEqual([512])
  })

  it('concurrent first calls share one fold', async () => {
    const g = await longGroup(300)
    const s = counting(await reopened())
    const cold = authorityOn(s.store)
    const [a, b, c] = await Promise.all([cold.current(g), cold.current(g), cold.current(g)])
    expect(a).toBe(b)
    expect(b).toBe(c)
    expect(s.events()).toBe(a!.sequence) // each Event read (and verified) once, not three times
  })

  it('a fold yields to the event loop while it runs', async () => {
    const g = await longGroup(1_000)
    const none = storeWith(await reopened(), {checkpoints: () => ({newest: async () => [], put: async () => {}})})
    let turns = 0
    const tick = setInterval(() => turns++, 0)
    let turnsWhenDone = -1
    await authorityOn(none)
      .current(g)
      .then(() => (turnsWhenDone = turns))
    clearInterval(tick)
    expect(turnsWhenDone).toBeGreaterThan(0)
  })

  it('a newest checkpoint that does not verify falls back to the one before it', async () => {
    const builder = authorityOn(store)
    const g = await missionGroup((bytes) => submit(builder, bytes), 'cold-fallback', {members: []})
    // as a running server leaves it: a checkpoint every CHECKPOINT_EVERY Events
    await appendPosts(builder, g, owner.principal!, 2 * CHECKPOINT_EVERY, {batch: CHECKPOINT_EVERY, live: true})
    await builder.checkpointsWritten()
    const head = (await store.head(g))!.sequence
    const [newest, older] = await store.checkpoints().newest(g, head, 2)
    expect(newest!.sequence).toBe(head)
    expect(older!.sequence).toBeLessThan(newest!.sequence)
    await store.checkpoints().put({
      ...newest!,
      state: Buffer.from(Buffer.from(newest!.state).toString('utf8').replace('"revision":', '"revision": ')),
    })

    const s = counting(await reopened())
    const restarted = authorityOn(s.store)
    const state = (await restarted.current(g))!
    expect(s.events()).toBe(1 + head - older!.sequence) // the older one's bound Event, then from it on
    expect(groupStateHash(state)).toBe(groupStateHash(await fullFold(g)))
    const reports = (await store.listAudit()).filter((a) => a.stage === 'checkpoint').map((a) => a.subject)
    expect(reports).toContain(`${g}#${newest!.sequence}`)
    expect(reports).not.toContain(`${g}#${older!.sequence}`)
  })

  describe('a checkpoint that does not verify is reported and not used', () => {
    const otherKey = generateSigningKey({keyId: authorityKey.keyId, principal: authorityKey.principal!})
    const tampered: [string, (c: StoredCheckpoint, state: GroupState, eventBytes: Uint8Array) => StoredCheckpoint][] = [
      [
        'state bytes changed',
        (c) => ({
          ...c,
          state: Buffer.from(Buffer.from(c.state).toString('utf8').replace('"revision":', '"revision": ')),
        }),
      ],
      [
        'state changed and signed by another key',
        (_, state, eventBytes) => makeCheckpoint(otherKey, {...state, revision: state.revision + 1}, eventBytes),
      ],
      [
        'folded under another state model (an older build)',
        (_, state, eventBytes) => makeCheckpoint(authorityKey, state, eventBytes, STATE_MODEL - 1),
      ],
      [
        'bound to another Event',
        (_, state) => makeCheckpoint(authorityKey, state, Buffer.from('not the stored Event')),
      ],
    ]
    it.each(tampered)('%s', async (_, tamper) => {
      const g = await longGroup(CHECKPOINT_EVERY + 10)
      const writer = authorityOn(store)
      const state = (await writer.current(g))!
      await writer.checkpointsWritten()
      const [genuine] = await store.checkpoints().newest(g, state.sequence, 1)
      expect(genuine?.sequence).toBe(state.sequence)
      const page = await store.read(g, state.sequence - 1, 1)
      await store.checkpoints().put(tamper(genuine!, state, page.events[0]!.bytes))

      const since = new Date().toISOString()
      const s = counting(await reopened())
      const restarted = authorityOn(s.store)
      const restored = (await restarted.current(g))!
      expect(s.events()).toBeGreaterThanOrEqual(state.sequence) // a full fold, not the checkpoint
      expect(groupStateHash(restored)).toBe(groupStateHash(state))
      const reports = (await store.listAudit({since})).filter((a) => a.stage === 'checkpoint')
      expect(reports.map((r) => r.subject)).toContain(`${g}#${state.sequence}`)
      expect(codeOf(await submit(restarted, post(owner, g)))).toBe('ok')
    })
  })
})
