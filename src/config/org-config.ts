// The Organization configuration file (issue 4): one JSON file (conventionally mwp.config.json)
// naming everything an authority and the operator commands need — the registry, the authority and
// admission service keys, the store, the server endpoint, role policy, freshness and limits.
// Its schema is ours: schemas/config/org-config.schema.json. Relative paths are resolved against
// the file's directory, so a config keeps working from any working directory.
//
// Errors are OrgConfigError with a code whose category the CLI maps to exit codes: config-unusable
// (environment, exit 3: the file or a file it names cannot be read, the store cannot be opened) or
// config-invalid (usage, exit 2: the file is not valid configuration).

import {readFileSync} from 'node:fs'
import {dirname, isAbsolute, join, resolve} from 'node:path'
import {type Authority, type AuthorityPolicy, openAuthority} from '../authority/authority.js'
import {KeyFileError, type SigningKey, readKeyFile} from '../crypto/keyfile.js'
import {MwpError, type OrgConfigErrorCode} from '../errors.js'
import {defaultSchemaDir, schemaCatalog, toSchemaErrors} from '../schema/catalog.js'
import {RegistryEvidence, RegistryFault} from '../signing/registry.js'
import {
  DEFAULT_FRESHNESS,
  type FreshnessWindow,
  type OpenOptions,
  type Store,
  type StoreConfig,
  StoreError,
  initStore,
  openStore,
} from '../store/index.js'

export const DEFAULT_CONFIG_FILE = 'mwp.config.json'
export const DEFAULT_STORE = 'sqlite:authority.db'
export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_PORT = 7443

/** The file as written (paths relative to it). */
export interface OrgConfigFile {
  organization: string
  registry: string
  authorityKey: string
  admissionKey: string
  organizationKey?: string
  operatorKey?: string
  store?: string
  server?: {host?: string; port?: number; url?: string; dev?: boolean; tls?: {cert: string; key: string; ca?: string}}
  policy: AuthorityPolicy & Record<string, unknown>
  freshness?: FreshnessWindow
}

/** The loaded configuration: absolute paths, defaults filled in. Keys are read on demand. */
export interface OrgConfig {
  /** Absolute path of the configuration file. */
  file: string
  /** Its directory: the base of every relative path. */
  dir: string
  organization: string
  registry: string
  authorityKey: string
  admissionKey: string
  organizationKey?: string
  operatorKey?: string
  /** Store URL; a relative sqlite: path is made absolute against `dir`. */
  store: string
  server: {host: string; port: number; url: string; dev: boolean; tls?: {cert: string; key: string; ca?: string}}
  /** Passed to the Authority as a whole (other AuthorityPolicy members included). */
  policy: AuthorityPolicy
  freshness: FreshnessWindow
}

export class OrgConfigError extends MwpError<OrgConfigErrorCode> {}

let validator: ReturnType<ReturnType<typeof schemaCatalog>['compileExternalFile']> | undefined
function validateFile(value: unknown): string | null {
  validator ??= schemaCatalog().compileExternalFile(join(defaultSchemaDir(), 'config', 'org-config.schema.json'))
  if (validator(value)) return null
  return toSchemaErrors(validator.errors)
    .map((e) => `${e.instancePath || '/'} ${e.message}`)
    .join('; ')
}

const at = (dir: string, path: string) => (isAbsolute(path) ? path : resolve(dir, path))

/** sqlite:RELATIVE is relative to the config file; sqlite:///abs and postgres URLs are kept. */
export function resolveStoreUrl(dir: string, url: string): string {
  if (!url.startsWith('sqlite:')) return url
  let path = url.slice('sqlite:'.length)
  if (path.startsWith('//')) path = path.slice(2)
  return `sqlite:${at(dir, path)}`
}

/** Parses and validates configuration text read from `file` (used by loadOrgConfig and tests). */
export function parseOrgConfig(text: string, file: string): OrgConfig {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    throw new OrgConfigError('config-invalid', `${file} is not JSON: ${(e as Error).message}`, {cause: e})
  }
  const problem = validateFile(json)
  if (problem !== null)
    throw new OrgConfigError('config-invalid', `${file} is not a valid mwp configuration: ${problem}`)
  const raw = json as OrgConfigFile
  const abs = resolve(file)
  const dir = dirname(abs)
  const host = raw.server?.host ?? DEFAULT_HOST
  const port = raw.server?.port ?? DEFAULT_PORT
  const tls = raw.server?.tls
  const server: OrgConfig['server'] = {
    host,
    port,
    url: raw.server?.url ?? `wss://${host.includes(':') ? `[${host}]` : host}:${port}`,
    dev: raw.server?.dev ?? false,
    ...(tls ? {tls: {cert: at(dir, tls.cert), key: at(dir, tls.key), ...(tls.ca ? {ca: at(dir, tls.ca)} : {})}} : {}),
  }
  const {$schema: _ignored, ...rest} = raw as OrgConfigFile & {$schema?: string}
  void _ignored
  return {
    file: abs,
    dir,
    organization: rest.organization,
    registry: at(dir, rest.registry),
    authorityKey: at(dir, rest.authorityKey),
    admissionKey: at(dir, rest.admissionKey),
    ...(rest.organizationKey ? {organizationKey: at(dir, rest.organizationKey)} : {}),
    ...(rest.operatorKey ? {operatorKey: at(dir, rest.operatorKey)} : {}),
    store: resolveStoreUrl(dir, rest.store ?? DEFAULT_STORE),
    server,
    policy: structuredClone(rest.policy),
    freshness: rest.freshness ?? DEFAULT_FRESHNESS,
  }
}

/** Reads and validates a configuration file. Throws OrgConfigError (config-unusable | config-invalid). */
export function loadOrgConfig(path: string): OrgConfig {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    throw new OrgConfigError(
      'config-unusable',
      `cannot read configuration ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      {cause: e},
    )
  }
  return parseOrgConfig(text, path)
}

/** A key file the configuration names; a missing file is environment, a bad one is usage. */
export function configKey(path: string, role: string): SigningKey {
  try {
    return readKeyFile(path)
  } catch (e) {
    if (e instanceof KeyFileError)
      throw new OrgConfigError(
        e.code === 'io-error' ? 'config-unusable' : 'config-invalid',
        `${role} ${path}: ${e.message}`,
        {cause: e},
      )
    throw e
  }
}

/** The Registry evidence the configuration names, validated (a fault is a usage error). */
export function configRegistry(config: OrgConfig): RegistryEvidence {
  let bytes: Buffer
  try {
    bytes = readFileSync(config.registry)
  } catch (e) {
    throw new OrgConfigError(
      'config-unusable',
      `cannot read registry ${config.registry}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      {cause: e},
    )
  }
  const evidence = RegistryEvidence.fromBytes(bytes)
  const resolved = evidence.resolve()
  if (resolved instanceof RegistryFault)
    throw new OrgConfigError(
      'config-invalid',
      `registry ${config.registry} is not valid (${resolved.reason}${resolved.detail ? `: ${resolved.detail}` : ''})`,
    )
  if (resolved.organizationId !== config.organization) {
    throw new OrgConfigError(
      'config-invalid',
      `registry ${config.registry} is for ${resolved.organizationId}, the configuration names ${config.organization}`,
    )
  }
  return evidence
}

/** The store configuration recorded at initialization (never a private key). */
export function storeConfigOf(config: OrgConfig, admissionKey: SigningKey): StoreConfig {
  if (admissionKey.principal?.type !== 'service')
    throw new OrgConfigError(
      'config-invalid',
      `admission key ${config.admissionKey} must belong to a service Principal`,
    )
  return {
    organizationId: config.organization,
    admissionService: {
      principal: admissionKey.principal,
      keyId: admissionKey.keyId,
      publicKey: admissionKey.publicKeyB64,
      keyFile: config.admissionKey,
    },
    freshness: config.freshness,
  }
}

/**
 * Opens the configured store with the admission key, initializing it on first use. An initialized
 * store keeps its own record (the admission service key file's path in it may differ when the
 * Organization directory moved); it must belong to this Organization and use this freshness
 * window, and openStore itself refuses another admission service's key.
 */
export async function openConfigStore(
  config: OrgConfig,
  options: Pick<OpenOptions, 'inlineWrites'> = {},
): Promise<Store> {
  const admissionKey = configKey(config.admissionKey, 'admission key')
  let store: Store
  try {
    try {
      store = await openStore(config.store, {admissionKey, ...options})
    } catch (e) {
      if (!(e instanceof StoreError && e.code === 'not-initialized')) throw e
      await initStore(config.store, storeConfigOf(config, admissionKey))
      store = await openStore(config.store, {admissionKey, ...options})
    }
  } catch (e) {
    if (e instanceof OrgConfigError) throw e
    throw new OrgConfigError('config-unusable', `cannot open store ${config.store}: ${(e as Error).message}`, {
      cause: e,
    })
  }
  const held = store.config
  const f = config.freshness
  if (
    held.organizationId !== config.organization ||
    held.freshness.maxAgeSeconds !== f.maxAgeSeconds ||
    held.freshness.maxFutureSkewSeconds !== f.maxFutureSkewSeconds
  ) {
    await store.close()
    throw new OrgConfigError(
      'config-unusable',
      `store ${config.store} belongs to ${held.organizationId} with freshness ${held.freshness.maxAgeSeconds}s/${held.freshness.maxFutureSkewSeconds}s; the configuration says ${config.organization} with ${f.maxAgeSeconds}s/${f.maxFutureSkewSeconds}s`,
    )
  }
  return store
}

export interface ConfiguredAuthority {
  authority: Authority
  store: Store
  registry: RegistryEvidence
  close(): Promise<void>
}

/**
 * Builds the Group Authority the configuration describes (store, registry, service key, policy).
 * `inlineWrites` for short-lived processes (the CLI's local transport, org init): see OpenOptions.
 */
export async function openAuthorityFromConfig(
  config: OrgConfig,
  options: {clock?: () => string; newId?: () => string; inlineWrites?: boolean} = {},
): Promise<ConfiguredAuthority> {
  const registry = configRegistry(config)
  const authorityKey = configKey(config.authorityKey, 'authority key')
  if (authorityKey.principal?.type !== 'service')
    throw new OrgConfigError(
      'config-invalid',
      `authority key ${config.authorityKey} must belong to a service Principal`,
    )
  const {inlineWrites, ...authorityOptions} = options
  const store = await openConfigStore(config, {inlineWrites})
  try {
    const authority = openAuthority({store, registry, authorityKey, policy: config.policy, ...authorityOptions})
    return {authority, store, registry, close: () => store.close()}
  } catch (e) {
    await store.close()
    throw new OrgConfigError('config-invalid', `cannot build the authority: ${(e as Error).message}`, {cause: e})
  }
}
