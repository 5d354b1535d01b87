// Which Agent `mwp agent run` is: its key, its verified Agent Card, where its local state lives,
// and where the authority is — resolved from the Organization configuration (`mwp org init` lays
// out keys/NAME.key.json and cards/NAME.card.json) or from explicit paths.

import {existsSync, readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {configRegistry, type OrgConfig} from '../config/org-config.js'
import {type SigningKey, readKeyFile} from '../crypto/keyfile.js'
import {MwpError} from '../errors.js'
import type {JsonObject} from '../json/parse.js'
import type {RegistryEvidence} from '../signing/registry.js'
import {Rejection, verify} from '../signing/verify.js'

export interface AgentIdentity {
  name: string
  key: SigningKey
  card: JsonObject
  registry: RegistryEvidence
  url: string
  ca?: Buffer
  db: string
}

const invalid = (m: string) => new MwpError('agent-invalid', m)
const unusable = (m: string) => new MwpError('agent-unusable', m)

function read(path: string, what: string): Buffer {
  try {
    return readFileSync(path)
  } catch (e) {
    throw unusable(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
  }
}

/** The card file of `agent` (a name under cards/, or an Agent ID found in one of them). */
function cardFile(config: OrgConfig, agent: string): {name: string; file: string} {
  const byName = join(config.dir, 'cards', `${agent}.card.json`)
  if (existsSync(byName)) return {name: agent, file: byName}
  const dir = join(config.dir, 'cards')
  for (const f of existsSync(dir) ? readdirSync(dir) : []) {
    if (!f.endsWith('.card.json')) continue
    const card = JSON.parse(readFileSync(join(dir, f), 'utf8')) as {agentId?: string}
    if (card.agentId === agent) return {name: f.slice(0, -'.card.json'.length), file: join(dir, f)}
  }
  throw invalid(`no Agent ${agent} in ${dir}: give a name (cards/NAME.card.json) or an Agent ID`)
}

export function resolveAgent(
  config: OrgConfig,
  o: {agent: string; key?: string; db?: string; url?: string; ca?: string},
): AgentIdentity {
  const {name, file} = cardFile(config, o.agent)
  const registry = configRegistry(config)
  const verified = verify('agent-card', read(file, 'Agent Card'), registry)
  if (verified instanceof Rejection) throw invalid(`the Agent Card ${file} does not verify (${verified.code})`)
  const card = verified.document
  const keyPath = o.key ?? join(config.dir, 'keys', `${name}.key.json`)
  let key: SigningKey
  try {
    key = readKeyFile(keyPath)
  } catch (e) {
    throw unusable(`cannot use the key ${keyPath}: ${(e as Error).message}`)
  }
  if (key.principal?.id !== card.agentId)
    throw invalid(
      `the key ${keyPath} belongs to ${key.principal?.id ?? 'no principal'}, not to ${String(card.agentId)}`,
    )
  const caPath = o.ca ?? config.server.tls?.ca
  return {
    name,
    key,
    card,
    registry,
    url: o.url ?? config.server.url,
    ...(caPath ? {ca: read(caPath, 'CA certificate')} : {}),
    db: o.db ?? join(config.dir, 'agents', `${name}.db`),
  }
}
