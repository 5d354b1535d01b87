// A process that closes its SQLite store while a write is still in flight, run against dist/ by
// test/store/sqlite-writer.test.ts. argv: STORE_URL. It must print "closed" and exit 0: the write
// is answered, the writer thread stops, and the process does not end before close() returns.

import {openStore} from '../../dist/src/store/index.js'

const store = await openStore(process.argv[2])
const write = store.audit({at: '2026-11-30T00:00:00Z', stage: 'test', reason: 'in flight at close'})
await store.close()
await write
console.log('closed')
