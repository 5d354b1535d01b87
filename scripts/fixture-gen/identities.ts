// The development Organization: its Principals, their deterministic signing keys, and the complete
// Registry snapshot that binds them (format of the cryptography bundle's registry fixtures).

import {publicKeyFromSeed} from '../../src/crypto/ed25519.js'
import type {Principal, SigningKey} from '../../src/crypto/keyfile.js'
import type {JsonObject} from '../../src/json/parse.js'
import {b64url, seedFor} from './util.js'

export const ORG = 'urn:mwp:dev:org:example'
/** validFrom of every current development key. */
export const VALID_FROM = '2026-07-01T00:00:00Z'

// The registry file format is the one `mwp registry` edits.
export type {
  StatusRecord,
  BindingRecord as Binding,
  RegistrySnapshot as Registry,
} from '../../src/signing/registry-edit.js'
import type {
  BindingRecord as Binding,
  RegistrySnapshot as Registry,
  StatusRecord,
} from '../../src/signing/registry-edit.js'

export interface Identity {
  /** Key name: key file `fixtures/keys/<name>.key.json`, seed sha256(prefix + name). */
  name: string
  principal: Principal
  keyId: string
  role: string
  validFrom: string
  validityHistory: StatusRecord[]
}

const agent = (name: string): Principal => ({type: 'agent', id: `urn:mwp:dev:agent:${name}`})
const human = (name: string): Principal => ({type: 'human', id: `urn:mwp:dev:human:${name}`})
const service = (name: string): Principal => ({type: 'service', id: `urn:mwp:dev:service:${name}`})
const current = (name: string, principal: Principal, role: string): Identity => ({
  name,
  principal,
  keyId: `urn:mwp:dev:key:${name}-1`,
  role,
  validFrom: VALID_FROM,
  validityHistory: [],
})

/** Every development key, in Registry order. */
export const IDENTITIES: readonly Identity[] = [
  current('service', service('organization-registry'), 'Organization registry service: issues (signs) Agent Cards'),
  current(
    'group-authority',
    service('group-authority'),
    'Group Authority service: accepts and signs Events and Group Snapshots',
  ),
  current(
    'admission',
    service('admission'),
    'Admission service: writes First-Admission Records (unsigned) for the Organization',
  ),
  current('mission-owner', human('mission-owner'), 'Human MissionOwner: creates Missions, signs final Approvals'),
  current('security-owner', human('security-owner'), 'Human security owner: approves Extension Profiles'),
  current('coordinator', agent('coordinator'), 'Coordinator Agent: signs Commands and Context Packages'),
  current('developer', agent('developer'), 'Developer (Worker) Agent: produces and signs Artifacts'),
  current('reviewer', agent('reviewer'), 'Reviewer Agent: signs Evidence'),
  {
    name: 'developer-expired',
    principal: agent('developer'),
    keyId: 'urn:mwp:dev:key:developer-expired',
    role: 'Earlier developer key, expired at 2026-07-01T00:00:00Z (examples of key-expired rejections)',
    validFrom: '2026-01-01T00:00:00Z',
    validityHistory: [{sequence: 1, recordedAt: '2026-06-01T00:00:00Z', validUntil: '2026-07-01T00:00:00Z'}],
  },
  {
    name: 'reviewer-revoked',
    principal: agent('reviewer'),
    keyId: 'urn:mwp:dev:key:reviewer-revoked',
    role: 'Earlier reviewer key, revoked at 2026-06-15T09:00:00Z (examples of key-revoked rejections)',
    validFrom: '2026-01-01T00:00:00Z',
    validityHistory: [
      {sequence: 1, recordedAt: '2026-01-01T00:00:00Z', validUntil: '2027-01-01T00:00:00Z'},
      {sequence: 2, recordedAt: '2026-06-15T09:30:00Z', revokedAt: '2026-06-15T09:00:00Z'},
    ],
  },
]

export type IdentityName =
  | 'service'
  | 'group-authority'
  | 'admission'
  | 'mission-owner'
  | 'security-owner'
  | 'coordinator'
  | 'developer'
  | 'reviewer'
  | 'developer-expired'
  | 'reviewer-revoked'

export function identity(name: IdentityName): Identity {
  const found = IDENTITIES.find((i) => i.name === name)
  if (!found) throw new Error(`unknown identity ${name}`)
  return found
}

const keys = new Map<string, SigningKey>()

/** The signing key of a named identity (seed derived from the name, never random). */
export function keyOf(name: IdentityName): SigningKey {
  let key = keys.get(name)
  if (!key) {
    const id = identity(name)
    const seed = seedFor(name)
    const publicKey = publicKeyFromSeed(seed)
    key = {keyId: id.keyId, principal: {...id.principal}, seed, publicKey, publicKeyB64: b64url(publicKey)}
    keys.set(name, key)
  }
  return key
}

/** A Principal object (fresh copy) for use inside documents. */
export function principalOf(name: IdentityName): JsonObject {
  return {...identity(name).principal}
}

/** A Principal (fresh copy) for use in Registry bindings. */
export function bindingPrincipal(name: IdentityName): Principal {
  return {...identity(name).principal}
}

export function bindingOf(name: IdentityName): Binding {
  const id = identity(name)
  return {
    keyId: id.keyId,
    principal: {...id.principal},
    algorithm: 'Ed25519',
    publicKey: keyOf(name).publicKeyB64,
    validFrom: id.validFrom,
    validityHistory: id.validityHistory.map((r) => ({...r})),
  }
}

/** The complete development Registry snapshot: every binding with its full validity history. */
export function devRegistry(): Registry {
  return {organizationId: ORG, bindings: IDENTITIES.map((i) => bindingOf(i.name as IdentityName))}
}
