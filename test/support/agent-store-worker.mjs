// The Agent-side applier of test/agent/local-store-crash.test.ts, run as its own OS process
// against dist/ and killed (SIGKILL) mid-stream by the test.
// argv: DB_PATH EVENTS_FILE AGENT_ID. EVENTS_FILE is JSON {groups: [[groupId, afterSequence]],
// events: [{groupId, sequence, eventId, kind, bytes (base64)}]}. Opens the store, joins the Groups,
// applies every Event in order, printing one line per apply, and exits 0.

import {readFileSync, writeSync} from 'node:fs'
import {AgentStore} from '../../dist/src/agent/local-store.js'
import {parseJsonBytes} from '../../dist/src/json/parse.js'

const [dbPath, eventsFile, agentId] = process.argv.slice(2)
const {groups, events} = JSON.parse(readFileSync(eventsFile, 'utf8'))
const store = AgentStore.open(dbPath, {agentId})
for (const [g, after] of groups) store.join(g, after)
let n = 0
for (const e of events) {
  const bytes = Buffer.from(e.bytes, 'base64')
  store.apply({...e, bytes, document: parseJsonBytes(bytes)})
  // Synchronous, so the parent sees each line as soon as the apply after it begins.
  writeSync(1, `${++n}\n`)
}
store.close()
