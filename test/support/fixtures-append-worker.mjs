// One competitor of test/store/concurrency.test.ts, run as its own OS process against dist/.
// argv: STORE_URL READY_FILE BARRIER_FILE; env MWP_WORKER_KEY (key file text) and
// MWP_WORKER_FIELDS (JSON: organizationId, signingHash, documentKind, keyId, principal).
// Opens the store as the admission service, prepares its own candidate (own admissionRecordId and
// trusted time), signals ready, waits for the barrier file, appends, and prints one JSON line.

import {parseKeyFile} from '../../dist/src/crypto/keyfile.js'
import {openStore} from '../../dist/src/store/index.js'
import {readyThenWait} from './worker-barrier.mjs'

const [url, readyFile, barrierFile] = process.argv.slice(2)
const fields = JSON.parse(process.env.MWP_WORKER_FIELDS)
const store = await openStore(url, {admissionKey: parseKeyFile(process.env.MWP_WORKER_KEY)})
const ctx = await store.acceptanceContext()
const record = {
  protocolVersion: '0.1',
  admissionRecordId: ctx.admissionRecordId,
  organizationId: fields.organizationId,
  documentKind: fields.documentKind,
  signingHash: fields.signingHash,
  keyId: fields.keyId,
  principal: fields.principal,
  trustedAcceptedAt: ctx.trustedAcceptedAt,
  acceptedBy: ctx.acceptedBy,
}
const candidate = {
  ...fields,
  admissionRecordId: ctx.admissionRecordId,
  bytes: Buffer.from(JSON.stringify(record, null, 2) + '\n'),
}

await readyThenWait(readyFile, barrierFile)

const result = await store.appendOrReturnExisting(candidate)
await store.close()
process.stdout.write(
  JSON.stringify({
    status: result.status,
    detail: result.detail,
    candidateId: ctx.admissionRecordId,
    record: result.record ? Buffer.from(result.record).toString('base64') : null,
  }) + '\n',
)
