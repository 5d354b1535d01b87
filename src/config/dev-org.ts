// A development Organization in one step (`mwp org init DIR`, issue 5): fresh Ed25519 keys for
// the Organization registry service (signs Agent Cards), the Group Authority, the admission
// service, a human MissionOwner, a Coordinator Agent and worker Agents; the registry binding
// every key; a signed Agent Card per Agent; and the mwp.config.json that `mwp authority serve`
// and the operator commands read. Everything is produced by the project's one signer and one
// registry editor, and the result is checked by loading it back (loadOrgConfig + registry
// validation + six-stage verification of every card) before it is reported.

import {randomUUID} from 'node:crypto'
import {existsSync, mkdirSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {type SigningKey, generateSigningKey, writeKeyFile} from '../crypto/keyfile.js'
import {canonicalHash} from '../json/jcs.js'
import {formatUtcNow} from '../json/timestamp.js'
import type {Principal} from '../signing/profiles.js'
import {addBinding, initRegistry, serializeRegistry} from '../signing/registry-edit.js'
import {sign} from '../signing/sign.js'
import {Rejection, verify} from '../signing/verify.js'
import {CARD_REGISTER, submitOrganizationCommand} from '../authority/ingress/organization.js'
import {
  DEFAULT_CONFIG_FILE,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_STORE,
  type OrgConfig,
  OrgConfigError,
  type OrgConfigFile,
  configRegistry,
  loadOrgConfig,
  openAuthorityFromConfig,
} from './org-config.js'

export interface DevOrgOptions {
  /** Organization ID; default urn:mwp:dev:org:<random>. */
  organization?: string
  /** Worker Agents besides the Coordinator (default 2). */
  workers?: number
  /** Coordinator Agents: `coordinator`, then `coordinator-2` … (default 1). */
  coordinators?: number
  /** The store URL written to the configuration (default the embedded SQLite file). */
  store?: string
  host?: string
  port?: number
  /** Replace the contents of a non-empty directory's mwp files. */
  force?: boolean
  /** Hook for development TLS material: returns {cert, key, ca} paths relative to DIR, or null. */
  devTls?: (dir: string, host: string) => Promise<{cert: string; key: string; ca?: string} | null>
}

export interface DevIdentity {
  name: string
  principal: Principal
  keyId: string
  keyFile: string
  card?: string
}

export interface DevOrganization {
  dir: string
  config: string
  organization: string
  registry: string
  store: string
  url: string
  identities: DevIdentity[]
}

/**
 * §6.1: a capability declares hashed input and output schemas and verification Evidence. The dev
 * schemas are written under DIR/capabilities/ and hashed with the project's canonical hash.
 */
function capabilityFor(root: string, name: string, organization: string) {
  mkdirSync(join(root, 'capabilities'), {recursive: true})
  const schemaFor = (direction: 'input' | 'output') => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: `mwp dev ${name} ${direction}`,
      type: 'object',
    }
    writeFileSync(
      join(root, 'capabilities', `${name}.${direction}.schema.json`),
      JSON.stringify(schema, null, 2) + '\n',
    )
    return {uri: `${organization}:capability:${name}:${direction}`, hash: canonicalHash(schema)}
  }
  const input = schemaFor('input')
  const output = schemaFor('output')
  return {
    id: `mwp.dev.${name}`,
    version: '1.0.0',
    inputSchema: input.uri,
    inputSchemaHash: input.hash,
    outputSchema: output.uri,
    outputSchemaHash: output.hash,
    constraints: {},
    verifiedEvidence: [`${organization}:evidence:${name}-dev-check`],
  }
}

interface Spec {
  name: string
  type: Principal['type']
  role: string
}

/** Creates the Organization in `dir`. Throws OrgConfigError (directory-not-empty) for a non-empty dir without force. */
export async function createDevOrganization(dir: string, options: DevOrgOptions = {}): Promise<DevOrganization> {
  const root = resolve(dir)
  if (existsSync(root) && readdirSync(root).length > 0 && !options.force) {
    throw new OrgConfigError('directory-not-empty', `${dir} is not empty: choose an empty directory or give --force`)
  }
  const organization = options.organization ?? `urn:mwp:dev:org:${randomUUID()}`
  const workers = options.workers ?? 2
  const host = options.host ?? DEFAULT_HOST
  const port = options.port ?? DEFAULT_PORT
  // --force replaces the Organization: the old default store belongs to the old keys (its
  // admission service would no longer match), so it goes with them.
  if (options.force)
    for (const f of ['authority.db', 'authority.db-wal', 'authority.db-shm']) rmSync(join(root, f), {force: true})
  mkdirSync(join(root, 'keys'), {recursive: true})
  mkdirSync(join(root, 'cards'), {recursive: true})

  const specs: Spec[] = [
    {name: 'organization', type: 'service', role: 'organization registry (signs Agent Cards)'},
    {name: 'authority', type: 'service', role: 'Group Authority (signs Events)'},
    {name: 'admission', type: 'service', role: 'admission service (First-Admission Records)'},
    {name: 'owner', type: 'human', role: 'MissionOwner'},
    ...Array.from({length: options.coordinators ?? 1}, (_, i): Spec => ({
      name: i === 0 ? 'coordinator' : `coordinator-${i + 1}`,
      type: 'agent',
      role: 'Coordinator',
    })),
    ...Array.from({length: workers}, (_, i): Spec => ({name: `worker-${i + 1}`, type: 'agent', role: 'worker'})),
  ]
  const validFrom = formatUtcNow(new Date(Date.now() - 1000))
  const keys = new Map<string, SigningKey>()
  let registry = initRegistry(organization)
  const identities: DevIdentity[] = []
  for (const spec of specs) {
    const principal: Principal = {type: spec.type, id: `${organization}:${spec.type}:${spec.name}`}
    const key = generateSigningKey({keyId: `${organization}:key:${spec.name}-${randomUUID().slice(0, 8)}`, principal})
    const keyFile = join('keys', `${spec.name}.key.json`)
    const target = join(root, keyFile)
    if (existsSync(target)) unlinkSync(target) // --force: key files are never overwritten in place
    writeKeyFile(target, key)
    keys.set(spec.name, key)
    registry = addBinding(registry, {keyId: key.keyId, principal, publicKey: key.publicKeyB64, validFrom})
    identities.push({name: spec.name, principal, keyId: key.keyId, keyFile})
  }
  writeFileSync(join(root, 'registry.json'), serializeRegistry(registry))

  const orgKey = keys.get('organization')!
  const owner = keys.get('owner')!
  for (const id of identities.filter((i) => i.principal.type === 'agent')) {
    const key = keys.get(id.name)!
    const coordinates = id.name.startsWith('coordinator')
    const unsigned = {
      agentId: id.principal.id,
      organizationId: organization,
      cardVersion: 1,
      displayName: coordinates
        ? `Coordinator Agent${id.name === 'coordinator' ? '' : ` ${id.name.slice('coordinator-'.length)}`}`
        : `Worker Agent ${id.name.slice('worker-'.length)}`,
      description: coordinates
        ? 'Plans the Mission, proposes and accepts WorkItems.'
        : 'Executes WorkItems offered to it.',
      owner: owner.principal!,
      status: 'active',
      protocolVersions: ['0.1'],
      endpoints: [{transport: 'wss', uri: `wss://${host}:${port}/agents/${id.name}`}],
      publicKeys: [{keyId: key.keyId, algorithm: 'Ed25519', publicKey: key.publicKeyB64, validFrom}],
      capabilities: [capabilityFor(root, coordinates ? 'coordination' : 'general-work', organization)],
      maxConcurrency: coordinates ? 1 : 2,
      issuedAt: formatUtcNow(),
    }
    const card = join('cards', `${id.name}.card.json`)
    writeFileSync(join(root, card), JSON.stringify(sign('agent-card', unsigned, orgKey).document, null, 2) + '\n')
    id.card = card
  }

  const tls = options.devTls ? await options.devTls(root, host) : null
  const file: OrgConfigFile & {$schema: string} = {
    $schema: 'https://missionweaveprotocol.dev/schemas/mwp/config/org-config.schema.json',
    organization,
    registry: 'registry.json',
    authorityKey: 'keys/authority.key.json',
    admissionKey: 'keys/admission.key.json',
    organizationKey: 'keys/organization.key.json',
    operatorKey: 'keys/owner.key.json',
    store: options.store ?? DEFAULT_STORE,
    server: {host, port, ...(tls ? {tls} : {dev: true})},
    policy: {rootMissionOwners: [owner.principal!.id], terminators: [], archivers: [], overrideIssuers: []},
    freshness: {maxAgeSeconds: 300, maxFutureSkewSeconds: 60},
  }
  const configPath = join(root, DEFAULT_CONFIG_FILE)
  writeFileSync(configPath, JSON.stringify(file, null, 2) + '\n')

  // Prove the result before reporting it: the config loads, the registry validates, cards verify.
  const config = loadOrgConfig(configPath)
  const evidence = configRegistry(config)
  for (const id of identities) {
    if (!id.card) continue
    const verified = verify('agent-card', readFileSync(join(root, id.card)), evidence)
    if (verified instanceof Rejection)
      throw new Error(`generated Agent Card ${id.card} does not verify: ${Rejection.diagnostic(verified).reason}`)
  }
  await registerCards(
    config,
    orgKey,
    identities.filter((i) => i.card !== undefined).map((i) => readFileSync(join(root, i.card!), 'utf8')),
  )
  return {
    dir: root,
    config: configPath,
    organization,
    registry: config.registry,
    store: config.store,
    url: config.server.url,
    identities,
  }
}

/**
 * §6.1: the Organization registers each signed Agent Card with its authority, through the same
 * signed Organization-scoped Command (agent_card_register) and ingress path a running server uses,
 * so the new Organization's embedded store already knows its Agents.
 */
async function registerCards(config: OrgConfig, orgKey: SigningKey, cards: string[]): Promise<void> {
  const {authority, close} = await openAuthorityFromConfig(config, {inlineWrites: true})
  try {
    for (const card of cards) {
      const unsigned = {
        protocolVersion: '0.1',
        actionId: `urn:uuid:${randomUUID()}`,
        actor: orgKey.principal!,
        kind: CARD_REGISTER,
        correlationId: `urn:uuid:${randomUUID()}`,
        issuedAt: formatUtcNow(),
        payload: {agentCard: JSON.parse(card) as Record<string, unknown>},
      }
      const r = await submitOrganizationCommand(
        authority,
        Buffer.from(JSON.stringify(sign('command', unsigned, orgKey).document), 'utf8'),
      )
      if ('error' in r) throw new Error(`the authority refused an Agent Card registration: ${r.error.code}`)
    }
  } finally {
    await close()
  }
}
