// Type-checked (tsc --noEmit, NodeNext) in a consumer project that installed the packed tarball:
// each specifier must resolve to declarations, and each name below must be exported with its type.
import {type JsonObject, type JsonValue, JsonParseError, canonicalize, parseJsonBytes, parseTimestamp} from 'mwp/json'
import {
  type DocumentKind,
  type Principal,
  type SigningKey,
  type Verified,
  type VerifyResult,
  RegistryEvidence,
  Rejection,
  parseKeyFile,
  sign,
  verify,
} from 'mwp/signing'
import {type ErrorCode, type ProtocolError, protocolError} from 'mwp/errors'
import {type Admitted, type FirstAdmissionRecord, acceptNew, checkFreshness} from 'mwp/admission'
import {
  type LoggedEvent,
  type Store,
  type StoreConfig,
  DEFAULT_FRESHNESS,
  StoreError,
  initStore,
  openStore,
} from 'mwp/store'
import {
  type AppliedEvent,
  type Authority,
  type AuthorityPolicy,
  type GroupState,
  type SubmitResult,
  apply,
  openAuthority,
  submit,
  submitOrganizationCommand,
} from 'mwp/authority'
import {type AgentHandler, type AgentOptions, Scheduler, startAgent} from 'mwp/agent'
import {type CapabilityClaims, type TokenRequest, AuthorizationService, verifyToken} from 'mwp/authz'
import {
  type DeliveredEvent,
  type RunningServer,
  type ServerOptions,
  WireClient,
  parseFrame,
  startServer,
} from 'mwp/wire'

export async function embed(keyText: string, registryBytes: Uint8Array, unsigned: JsonObject): Promise<string> {
  const key: SigningKey = parseKeyFile(keyText)
  const principal: Principal | undefined = key.principal
  const kind: DocumentKind = 'command'
  const evidence = RegistryEvidence.fromBytes(registryBytes)
  const result: VerifyResult = verify(kind, Buffer.from(JSON.stringify(sign(kind, unsigned, key).document)), evidence)
  if (result instanceof Rejection) return result.code
  const verified: Verified = result
  const value: JsonValue = parseJsonBytes(verified.signingBytes)
  const error: ProtocolError = protocolError('GROUP_NOT_FOUND')
  const code: ErrorCode = error.code
  const config: StoreConfig = {
    organizationId: verified.organizationId,
    admissionService: {principal: verified.principal, keyId: verified.keyId, publicKey: ''},
    freshness: DEFAULT_FRESHNESS,
  }
  await initStore('sqlite:consumer.db', config)
  const store: Store = await openStore('sqlite:consumer.db')
  const policy: AuthorityPolicy = {rootMissionOwners: principal ? [principal.id] : []}
  const authority: Authority = openAuthority({store, registry: evidence, authorityKey: key, policy})
  const submitted: SubmitResult = await submit(authority, verified.signingBytes)
  const state: GroupState | null = await authority.current('urn:mwp:example:group')
  const folded = (event: AppliedEvent): GroupState => apply(state, event)
  const logged: LoggedEvent[] = (await store.read('urn:mwp:example:group', 0, 10)).events
  const options: ServerOptions = {authority, host: '127.0.0.1', port: 0, tls: 'insecure-loopback'}
  const server: RunningServer = await startServer(options)
  const client = await WireClient.connect({url: server.url, key, registry: evidence})
  const onEvent = (event: DeliveredEvent): string => event.eventId
  const admitted: Admitted['outcome'] | undefined = undefined
  const record: FirstAdmissionRecord | undefined = undefined
  const service = new AuthorizationService(authority, {key})
  const request: TokenRequest = {groupId: 'g', workItemId: 'w', ownershipEpoch: 1, leaseId: 'l'}
  const issued = await service.issue(request, {agentId: 'a', sessionEpoch: 1}, '2026-07-03T10:00:00Z')
  const claims: CapabilityClaims | null = issued.ok ? issued.claims : null
  const checked = await verifyToken('x.y', {
    publicKey: key.publicKey,
    now: '2026-07-03T10:00:00Z',
    operation: 'r',
    resource: 'x',
  })
  return [
    canonicalize(value),
    code,
    typeof acceptNew,
    checkFreshness('2026-07-03T10:00:00Z', '2026-07-03T10:00:00Z', DEFAULT_FRESHNESS)?.code,
    'error' in submitted ? submitted.error.code : submitted.receipt,
    typeof folded,
    logged.length,
    typeof client.close,
    typeof onEvent,
    typeof submitOrganizationCommand,
    parseFrame('{}').ok,
    parseTimestamp('2026-07-03T10:00:00Z') !== null,
    admitted,
    record,
    new StoreError('unknown-scheme', 'x').code,
    new JsonParseError('duplicate-member', 0, 'x').reason,
    claims?.tokenId,
    checked.ok,
    agentTypes(),
  ].join(' ')
}

/** mwp/agent's types as a user's handler and runtime options name them. */
function agentTypes(): string {
  const handler: AgentHandler = {execute: async (work, ctx) => ctx.progress({phase: work.workItemId})}
  const options: Pick<AgentOptions, 'handler' | 'slots'> = {handler: {module: './handler.mjs'}, slots: 2}
  const scheduler = new Scheduler({slots: options.slots ?? 1, maxWaitMs: 1000})
  return `${typeof handler.execute} ${typeof startAgent} ${scheduler.running().length}`
}
