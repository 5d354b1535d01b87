// One competitor of the process races in test/store/group-log.test.ts, run as its own OS process
// against dist/. argv: STORE_URL READY_FILE BARRIER_FILE; env MWP_GROUP_APPEND (JSON: groupId,
// expectedHead, events with base64 `bytes`, receipt). Opens the store, signals ready, waits for
// the barrier file, appends, and prints the outcome as one JSON line.

import {openStore} from '../../dist/src/store/index.js'
import {readyThenWait} from './worker-barrier.mjs'

const [url, readyFile, barrierFile] = process.argv.slice(2)
const request = JSON.parse(process.env.MWP_GROUP_APPEND)
const events = request.events.map((e) => ({...e, bytes: new Uint8Array(Buffer.from(e.bytes, 'base64'))}))
const store = await openStore(url)
await store.head(request.groupId) // connect before the barrier

await readyThenWait(readyFile, barrierFile)

const outcome = await store.append(request.groupId, request.expectedHead, events, request.receipt)
await store.close()
process.stdout.write(JSON.stringify(outcome) + '\n')
