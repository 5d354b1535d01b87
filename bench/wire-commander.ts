// Worker thread of bench/wire.ts: the Command client. One WireClient connection submits the
// prepared signed Commands at a fixed rate and verifies every Event of every answer, on its own
// thread, as a client process would — so the server's event loop is measured without the client's
// work on it. Reports each Command's send time (performance.timeOrigin-based, comparable across
// threads) by Action ID, then how many Commands were refused.

import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {parentPort, workerData} from 'node:worker_threads'
import {readKeyFile} from '../src/crypto/keyfile.js'
import {packageRoot} from '../src/schema/catalog.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {WireClient} from '../src/wire/client.js'

export interface CommanderJob {
  url: string
  ca: string
  rate: number
  /** The signed Commands, as JSON text, in sending order. */
  commands: string[]
}

const job = workerData as CommanderJob
const root = packageRoot()
const owner = readKeyFile(join(root, 'fixtures/keys', 'mission-owner.key.json'))
const registry = RegistryEvidence.fromBytes(readFileSync(join(root, 'fixtures/registry.json')))
const now = () => performance.timeOrigin + performance.now()

const client = await WireClient.connect({url: job.url, key: owner, registry, ca: job.ca, reconnect: false})
const commands = job.commands.map((text) => ({bytes: Buffer.from(text), actionId: JSON.parse(text).actionId as string}))

parentPort!.once('message', () => {
  const start = now()
  let sent = 0
  const pending: Promise<{error?: unknown}>[] = []
  const tick = setInterval(() => {
    const due = Math.min(commands.length, Math.floor(((now() - start) / 1000) * job.rate))
    const sentAt: [string, number][] = []
    while (sent < due) {
      const c = commands[sent++]!
      sentAt.push([c.actionId, now()])
      pending.push(client.submit(c.bytes) as Promise<{error?: unknown}>)
    }
    if (sentAt.length > 0) parentPort!.postMessage({sentAt})
    if (sent >= commands.length) {
      clearInterval(tick)
      void Promise.all(pending).then(async (results) => {
        await client.close()
        parentPort!.postMessage({done: true, refused: results.filter((r) => r.error !== undefined).length})
      })
    }
  }, 2)
})
parentPort!.postMessage({ready: true})
