// Runs in a consumer project that installed the packed tarball: every export, by package name,
// doing real work. Prints one JSON report on stdout. argv[2]: the project's fixtures/ directory.
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

const fixtures = process.argv[2]
const read = (path) => readFileSync(join(fixtures, path))

const json = await import('mwp/json')
const signing = await import('mwp/signing')
const errors = await import('mwp/errors')
const admission = await import('mwp/admission')
const store = await import('mwp/store')
const authority = await import('mwp/authority')
const wire = await import('mwp/wire')
const authz = await import('mwp/authz')
const agent = await import('mwp/agent')
const pkg = (await import('mwp/package.json', {with: {type: 'json'}})).default

const report = {package: pkg.name}

let duplicate = 'accepted'
try {
  json.parseJsonText('{"a":1,"a":2}')
} catch (e) {
  duplicate = e instanceof json.JsonParseError ? e.reason : String(e)
}
report.json = {
  canonical: json.canonicalize(json.parseJsonText('{"b":[1e21,"\\u00e9"],"a":true}')),
  duplicate,
  base64url: new TextDecoder().decode(json.decodeBase64url(json.encodeBase64url(new TextEncoder().encode('mwp')))),
  timestamp: json.isProfileTimestamp('2026-07-03T10:00:00Z'),
}

// The committed signed fixture is the deterministic signature of the unsigned one.
const key = signing.parseKeyFile(read('keys/coordinator.key.json').toString('utf8'))
const signed = signing.sign('command', json.parseJsonBytes(read('unsigned/command.json')), key)
const evidence = signing.RegistryEvidence.fromBytes(read('registry.json'))
const bytes = Buffer.from(JSON.stringify(signed.document))
const verified = signing.verify('command', bytes, evidence)
const tampered = signing.verify(
  'command',
  Buffer.from(JSON.stringify({...signed.document, kind: 'mission.cancel'})),
  evidence,
)
report.signing = {
  verified: verified.ok,
  sameHash: verified.ok && verified.signingHash === signed.signingHash,
  matchesFixture:
    json.canonicalize(signed.document) === json.canonicalize(json.parseJsonBytes(read('documents/command.json'))),
  tampered: tampered instanceof signing.Rejection ? tampered.code : 'accepted',
  // Only the verifier makes a Verified: a copy of one is not one.
  branded: signing.Verified.is(verified) && !signing.Verified.is({...verified}),
  strict: typeof signing.strictVerify === 'function' && typeof signing.provePublicKey === 'function',
}

// A capability token signed with a fixture key verifies for its granted operation, not tampered.
const claims = {
  typ: authz.TOKEN_DOMAIN,
  tokenId: 'urn:uuid:00000000-0000-4000-8000-000000000001',
  issuer: 'urn:mwp:dev:service:authorization',
  keyId: key.keyId,
  agentId: 'urn:mwp:dev:agent:developer',
  sessionEpoch: 1,
  missionId: 'urn:mwp:dev:mission:m',
  groupId: 'urn:mwp:dev:group:g',
  workItemId: 'urn:mwp:dev:work:w',
  ownershipEpoch: 1,
  leaseId: 'urn:uuid:00000000-0000-4000-8000-000000000002',
  grants: [{resource: 'urn:mwp:dev:tool:repo', operations: ['read']}],
  limits: {toolCallLimit: 1},
  issuedAt: '2026-07-03T10:00:00Z',
  expiresAt: '2026-07-03T10:05:00Z',
}
const capability = authz.encodeToken(claims, key)
const checkToken = (token) =>
  authz.verifyToken(token, {
    publicKey: key.publicKey,
    now: '2026-07-03T10:01:00Z',
    operation: 'read',
    resource: 'urn:mwp:dev:tool:repo',
  })
const good = await checkToken(capability)
const bad = await checkToken(capability.slice(0, -2) + (capability.endsWith('AA') ? 'BA' : 'AA'))
report.authz = {verified: good.ok, tampered: bad.ok ? 'accepted' : bad.code, issue: typeof authz.issueToken}

const scheduler = new agent.Scheduler({slots: 1, maxWaitMs: 60_000})
scheduler.setGroup('urn:example:group:a', {weight: 1, priorityClass: 0})
scheduler.upsert(
  {
    groupId: 'urn:example:group:a',
    workItemId: 'urn:example:work:1',
    estimateMs: 1000,
    enqueuedAt: 0,
    eligible: true,
    preemptible: true,
  },
  0,
)
report.agent = {
  dispatched: scheduler.dispatch(0)?.workItemId ?? null,
  key: agent.idempotencyKey('urn:m', 'urn:w', 1, 'publish').slice(0, 5),
  exec: agent.parseExecLine('{"type":"submit"}'),
  start: typeof agent.startAgent,
}

report.errors = {
  code: errors.protocolError('GROUP_NOT_FOUND').code,
  listed: errors.ERROR_CODES.includes('GROUP_NOT_FOUND'),
}

const stale = admission.checkFreshness('2026-07-03T10:00:00Z', '2026-07-03T11:00:00Z', store.DEFAULT_FRESHNESS)
report.admission = {
  fresh: admission.checkFreshness('2026-07-03T10:00:00Z', '2026-07-03T10:01:00Z', store.DEFAULT_FRESHNESS),
  stale: stale === null ? null : stale.code,
  acceptNew: typeof admission.acceptNew,
}

const dir = mkdtempSync(join(tmpdir(), 'mwp-consumer-'))
try {
  const admissionKey = signing.parseKeyFile(read('keys/admission.key.json').toString('utf8'))
  const url = `sqlite:${join(dir, 'store.db')}`
  await store.initStore(url, {
    organizationId: 'urn:mwp:dev:org:example',
    admissionService: {
      principal: admissionKey.principal,
      keyId: admissionKey.keyId,
      publicKey: admissionKey.publicKeyB64,
    },
    freshness: store.DEFAULT_FRESHNESS,
  })
  const opened = await store.openStore(url, {admissionKey})
  let unknownScheme = 'accepted'
  try {
    store.parseStoreUrl('mysql://x')
  } catch (e) {
    unknownScheme = e instanceof store.StoreError ? e.code : String(e)
  }
  report.store = {organizationId: opened.config.organizationId, unknownScheme}

  const groupAuthority = authority.openAuthority({
    store: opened,
    registry: evidence,
    authorityKey: signing.parseKeyFile(read('keys/group-authority.key.json').toString('utf8')),
    policy: {rootMissionOwners: ['urn:mwp:dev:human:mission-owner']},
  })
  const garbage = await authority.submit(groupAuthority, new TextEncoder().encode('{"not": "a command"'))
  report.authority = {
    unknownGroup: await groupAuthority.current('urn:mwp:dev:group:none'),
    garbage: 'error' in garbage ? garbage.error.code : 'accepted',
  }

  const server = await wire.startServer({
    authority: groupAuthority,
    host: '127.0.0.1',
    port: 0,
    tls: 'insecure-loopback',
    log: () => {},
  })
  const sessions = []
  const client = await wire.WireClient.connect({
    url: server.url,
    key,
    registry: evidence,
    reconnect: false,
    onSession: (s) => sessions.push(s.sessionEpoch),
  })
  await client.close()
  await server.close()
  report.wire = {
    url: server.url.startsWith('ws://127.0.0.1:'),
    sessions,
    event: wire.parseFrame(wire.eventFrame(bytes)).ok,
  }
  await opened.close()
} finally {
  rmSync(dir, {recursive: true, force: true})
}

process.stdout.write(JSON.stringify(report) + '\n')
