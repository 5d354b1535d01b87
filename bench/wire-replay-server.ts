// The server of the replay measurements (bench/wire-replay.ts, test/wire/replay-memory.test.ts) in
// its own OS process, as `mwp authority serve` runs it (its V8 heap setting, TLS 1.3): its RSS is
// the server's alone, and its event loop carries nothing but the server. Started with fork(): the
// parent sends {type: 'stats' | 'reset-delay' | 'stop'} and gets {type: 'stats', rss, maxDelayMs}
// back; RSS is also readable from /proc/<pid>/status.
//
// MWP_REPLAY_SERVER (JSON): {storeUrl, cert, key, warm: groupIds}. The Groups in `warm` have their
// state folded before the server listens (a cold Group's first SUBSCRIBE folds its log, which is
// the Authority's state cache's cost, not the replay's).

import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {PerformanceObserver, monitorEventLoopDelay} from 'node:perf_hooks'
import {openAuthority} from '../src/authority/authority.js'
import {readKeyFile} from '../src/crypto/keyfile.js'
import {packageRoot} from '../src/schema/catalog.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {openStore} from '../src/store/index.js'
import {startServer} from '../src/wire/server.js'
import {tuneHeapForServing} from '../src/wire/serving-heap.js'

export interface ReplayServerSetting {
  storeUrl: string
  cert: string
  key: string
  warm: string[]
}

export type ReplayServerReply =
  | {type: 'ready'; url: string}
  | {type: 'stats'; rss: number; maxDelayMs: number; p99DelayMs: number; maxGcMs: number}
  | {type: 'delay-reset'}

const root = packageRoot()
const key = (name: string) => readKeyFile(join(root, 'fixtures/keys', `${name}.key.json`))
const setting = JSON.parse(process.env.MWP_REPLAY_SERVER ?? '{}') as ReplayServerSetting
const send = (reply: ReplayServerReply) => process.send!(reply)

tuneHeapForServing()
const store = await openStore(setting.storeUrl, {admissionKey: key('admission')})
const authority = openAuthority({
  store,
  registry: RegistryEvidence.fromBytes(readFileSync(join(root, 'fixtures/registry.json'))),
  authorityKey: key('group-authority'),
  policy: {rootMissionOwners: [key('mission-owner').principal!.id]},
})
for (const g of setting.warm) await authority.current(g)
const server = await startServer({
  authority,
  host: '127.0.0.1',
  port: 0,
  tls: {cert: setting.cert, key: setting.key},
  log: () => undefined,
})
const delay = monitorEventLoopDelay({resolution: 5})
delay.enable()
// The longest garbage-collection pause since the last reset, to tell a collection from the server's own work in a stall.
let maxGcMs = 0
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) maxGcMs = Math.max(maxGcMs, e.duration)
}).observe({entryTypes: ['gc']})
process.on('message', (m: {type: string}) => {
  switch (m.type) {
    case 'stats':
      return send({
        type: 'stats',
        rss: process.memoryUsage().rss,
        maxDelayMs: delay.max / 1e6,
        p99DelayMs: delay.percentile(99) / 1e6,
        maxGcMs,
      })
    case 'reset-delay':
      delay.reset()
      maxGcMs = 0
      return send({type: 'delay-reset'})
    case 'stop':
      void server
        .close()
        .then(() => store.close())
        .then(() => process.exit(0))
  }
})
send({type: 'ready', url: server.url})
