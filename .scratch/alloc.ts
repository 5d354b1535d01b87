import {Session} from 'node:inspector/promises'
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {openAuthority} from '../src/authority/authority.js'
import {submit} from '../src/authority/ingress.js'
import {readKeyFile} from '../src/crypto/keyfile.js'
import {packageRoot} from '../src/schema/catalog.js'
import {RegistryEvidence} from '../src/signing/registry.js'
import {DEFAULT_FRESHNESS, initStore, openStore} from '../src/store/index.js'
import {buildCommand} from '../src/operator/command-builder.js'
import {missionCreatePayload} from '../src/operator/mission-payloads.js'
const root = packageRoot()
const key = (n: string) => readKeyFile(join(root, 'fixtures/keys', `${n}.key.json`))
const owner = key('mission-owner'), coordinator = key('coordinator'), admissionKey = key('admission')
const registry = RegistryEvidence.fromBytes(readFileSync(join(root, 'fixtures/registry.json')))
const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'alloc-')), 'a.db')}`
await initStore(url, {organizationId: 'urn:mwp:dev:org:example', admissionService: {principal: admissionKey.principal!, keyId: admissionKey.keyId, publicKey: admissionKey.publicKeyB64}, freshness: DEFAULT_FRESHNESS})
const store = await openStore(url, {admissionKey})
const authority = openAuthority({store, registry, authorityKey: key('group-authority'), policy: {rootMissionOwners: [owner.principal!.id]}})
const g = 'urn:mwp:bench:group:alloc-1'
await submit(authority, buildCommand(owner, {kind: 'mission.create', groupId: g, payload: missionCreatePayload({groupId: g, objective: 'x', coordinatorAgentId: coordinator.principal!.id, budget: {currency: 'EUR', financialLimit: 1}})}).bytes)
const N = Number(process.argv[2] ?? 1500)
const cmds = Array.from({length: N}, () => buildCommand(owner, {kind: 'message.post', groupId: g, membershipEpoch: 1, payload: {text: 'bench'}}).bytes)
for (let i = 0; i < 200; i++) await submit(authority, buildCommand(owner, {kind: 'message.post', groupId: g, membershipEpoch: 1, payload: {text: 'warm'}}).bytes)
const s = new Session(); s.connect()
await s.post('HeapProfiler.startSampling', {samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true} as never)
for (let i = 0; i < N; i += 10) await Promise.all(cmds.slice(i, i + 10).map((c) => submit(authority, c)))
const {profile} = await s.post('HeapProfiler.stopSampling')
const self = new Map<string, number>()
let total = 0
const walk = (n: any, stack: string[]) => {
  const fr = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`
  const size = n.selfSize
  total += size
  if (size) self.set(fr, (self.get(fr) ?? 0) + size)
  for (const c of n.children) walk(c, [...stack, fr])
}
walk(profile.head, [])
console.log('allocated bytes per command:', Math.round(total / N)); for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(String(Math.round(v / N)).padStart(8), k)
await store.close()
