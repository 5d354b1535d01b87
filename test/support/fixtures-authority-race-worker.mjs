// One competitor of the authority process races in test/authority/races.test.ts, run as its own
// OS process against dist/ with its own Group Authority on the shared store. argv: STORE_URL
// READY_FILE BARRIER_FILE; env MWP_RACE (JSON: registryPath, groupId, command = base64 signed
// Command bytes). Opens the store and the authority, loads the Group state, signals ready, waits
// for the barrier file, submits through the full ingress and prints the SubmitResult as one line.

import {readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {openAuthority} from '../../dist/src/authority/authority.js'
import {submit} from '../../dist/src/authority/ingress/command.js'
import {readKeyFile} from '../../dist/src/crypto/keyfile.js'
import {RegistryEvidence} from '../../dist/src/signing/registry.js'
import {openStore} from '../../dist/src/store/index.js'
import {readyThenWait} from './worker-barrier.mjs'

const [url, readyFile, barrierFile] = process.argv.slice(2)
const request = JSON.parse(process.env.MWP_RACE)
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const key = (name) => readKeyFile(join(root, 'fixtures/keys', `${name}.key.json`))
const registry = RegistryEvidence.fromBytes(readFileSync(request.registryPath))
const store = await openStore(url, {admissionKey: key('admission')})
const authority = openAuthority({
  store,
  registry,
  authorityKey: key('group-authority'),
  policy: {rootMissionOwners: [key('mission-owner').principal.id]},
})
await authority.current(request.groupId) // connect and fold the Group before the barrier

await readyThenWait(readyFile, barrierFile)

const result = await submit(authority, Buffer.from(request.command, 'base64'))
await store.close()
process.stdout.write(JSON.stringify(result) + '\n')
