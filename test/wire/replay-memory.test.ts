// Six concurrent full replays of a long history (issue #15; spec §16, §17.3 bounded buffering, §8
// one Group must not starve another): half the subscribers read, half stop reading (their sockets
// paused) until the readers are done. Every subscriber receives every Event once, in order — the
// paused ones after they resume — another Group's Commands are accepted meanwhile, and the
// server's RSS grows by less than a bound that does not depend on the history's length.
//
// The server runs in its own OS process (bench/wire-replay-server.ts, built under dist/ by the
// global setup); its RSS is read from /proc/<pid>/status every 25 ms, growth measured against the
// same process idle after start. The history (48 MiB of 64 KiB message.posted Events) is appended
// through the Authority library before the server starts, on SQLite and on PostgreSQL. The
// loop-delay figures are the bench's (bench/wire-replay.ts): timing is never a pass/fail criterion here.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type ReplayStore, buildReplayStore, runReplay} from '../../bench/wire-replay.js'
import {storeBackends} from '../support/store-backends.js'

const MIB = 1024 * 1024
/**
 * Generous, as the issue asks (the bench reports the figure against its 128 MiB goal): above what
 * the bounded buffers add up to (6 × (socket high water + a page) + the feed's caches) plus GC lag
 * under a loaded CI machine (83 MiB measured on a quiet machine, 131 MiB once in a full suite run
 * beside other servers), and below what the unbounded replay held for this history (269 MiB on
 * SQLite, 227 MiB on PostgreSQL, measured against the code before the fix).
 */
const RSS_GROWTH_BOUND = 192 * MIB

const backends = storeBackends('wire replay memory')

describe.each(backends.filter((b) => b.enabled))('replay with bounded memory (§17.3): $name', (backend) => {
  let built: ReplayStore
  beforeAll(async () => {
    await backend.start()
    built = await buildReplayStore(48, 64, await backend.fresh())
  }, 180_000)
  afterAll(async () => {
    built?.remove()
    await backend.stop()
  }, 60_000)

  it('six full replays of a 48 MiB history, three of them paused: all receive everything in order, another Group keeps being served, RSS growth stays bounded', async () => {
    const run = await runReplay(built, 200)
    expect(run.historyMib).toBeGreaterThanOrEqual(48)
    expect(run.subscribers).toHaveLength(6)
    for (const s of run.subscribers) {
      expect(s.disorder).toBeNull()
      expect(s.received).toBe(built.head)
    }
    expect(run.subscribers.filter((s) => s.paused)).toHaveLength(3)
    // Every Command to the other Group sent during the replays was accepted (runReplay throws on a refusal).
    expect(run.otherCommands).toBeGreaterThan(0)
    expect(run.peakRss - run.idleRss).toBeLessThan(RSS_GROWTH_BOUND)
  }, 120_000)
})
