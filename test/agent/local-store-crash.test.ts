// A real OS process applying real signed Events to the Agent's local store, killed with SIGKILL at
// seeded points (spec §11.1, §16; ACCEPTANCE F1): after each kill the file re-opens, and
// re-delivering every Event gives the queues, Cursors and intents of a clean run.

import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {AgentStore} from '../../src/agent/local-store.js'
import type {DeliveredEvent} from '../../src/wire/client.js'
import {sqliteSuite} from '../support/authority-helpers.js'
import {AGENT, deliveredEvents, workHistory} from '../support/agent-history.js'
import {mulberry32} from '../../src/poc/faults/prng.js'

const WORKER = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'agent-store-worker.mjs')
const suite = sqliteSuite()
let dir: string
let g: string
let events: DeliveredEvent[]
let runs = 0

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-agent-crash-'))
  g = await workHistory(suite.run, () => suite.authority, 'agent-crash')
  events = await deliveredEvents(suite.store, g)
}, 120_000)
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const observe = (s: AgentStore) => ({
  dump: s.dumpQueues(),
  cursor: s.cursor(g),
  intents: s.pendingIntents().map(({id: _id, ...rest}) => rest),
})

/** Runs the worker on `path` over `delivery`; SIGKILLs it once it has printed `killAfter` lines. */
function runWorker(path: string, delivery: DeliveredEvent[], killAfter: number): Promise<'killed' | 'exited'> {
  const file = join(dir, `events-${++runs}.json`)
  const wire = delivery.map((e) => ({
    groupId: e.groupId,
    sequence: e.sequence,
    eventId: e.eventId,
    kind: e.kind,
    bytes: Buffer.from(e.bytes).toString('base64'),
  }))
  writeFileSync(file, JSON.stringify({groups: [[g, 0]], events: wire}))
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, path, file, AGENT], {stdio: ['ignore', 'pipe', 'inherit']})
    let lines = 0
    let killed = false
    child.stdout.on('data', (chunk: Buffer) => {
      lines += chunk.toString().split('\n').length - 1
      if (!killed && lines >= killAfter) {
        killed = true
        child.kill('SIGKILL')
      }
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve('killed')
      else if (code === 0) resolve('exited')
      else reject(new Error(`worker exited with ${code ?? signal}`))
    })
  })
}

describe('AgentStore under SIGKILL of the applying process', () => {
  it('after each kill at a seeded point, re-open and re-delivery equal a clean run', async () => {
    const clean = AgentStore.open(join(dir, 'oracle.db'), {agentId: AGENT})
    clean.join(g, 0)
    for (const e of events) clean.apply(e)
    const want = observe(clean)
    clean.close()

    const rnd = mulberry32(20261202)
    let kills = 0
    for (let round = 0; round < 3; round++) {
      const path = join(dir, `crash-${round}.db`)
      // Each round kills the same file's applier several times; every delivery is the full history
      // with every Event twice (at-least-once), in a seeded order within a small window.
      for (let attempt = 0; attempt < 3; attempt++) {
        const delivery = events
          .flatMap((e, i) => [0, 1].map(() => ({e, key: i + rnd() * 4})))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.e)
        const outcome = await runWorker(path, delivery, 1 + Math.floor(rnd() * delivery.length * 0.9))
        if (outcome === 'killed') kills++
        const reopened = AgentStore.open(path, {agentId: AGENT})
        reopened.join(g, 0)
        // Whatever it reached, the Cursor is contiguous and never beyond what was applied.
        expect(reopened.cursor(g)).toBeLessThanOrEqual(events.length)
        reopened.close()
      }
      const s = AgentStore.open(path, {agentId: AGENT})
      s.join(g, 0)
      for (const e of events) s.apply(e)
      expect(observe(s)).toEqual(want)
      s.close()
    }
    expect(kills).toBeGreaterThanOrEqual(6)
  }, 120_000)
})
