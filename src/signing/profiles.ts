// The nine profiles of the Signed Document Verification Profile (spec §6.4 table): for each
// Signed Document kind, its schema, its protected signed-time member and its expected signer.

import type {JsonObject} from '../json/parse.js'

export const DOCUMENT_KINDS = [
  'agent-card',
  'approval',
  'artifact',
  'command',
  'context-package',
  'event',
  'evidence',
  'extension-profile',
  'group-snapshot',
] as const
export type DocumentKind = (typeof DOCUMENT_KINDS)[number]

// One definition of a Principal for the whole core; key files carry one too.
import type {Principal, PrincipalType} from '../crypto/keyfile.js'
export type {Principal, PrincipalType}

export type SignerRule =
  /** The signer is the exact Principal object in `field`. */
  | {rule: 'principal-object'; field: string}
  /** The signer is the Agent whose ID is at `path` (Artifact `producer.agentId`). */
  | {rule: 'agent-id'; path: readonly string[]}
  /** Any Organization service Principal; its authority to issue cards is checked later. */
  | {rule: 'service-principal'}

export interface Profile {
  kind: DocumentKind
  /** Schema file name in `schemas/`. */
  schema: string
  /** Protected signed-time member; `signature.createdAt` must equal it byte for byte. */
  timeField: string
  signer: SignerRule
  /** Members whose presence identifies this kind when `--kind` is not given. */
  marks: readonly string[]
}

const principal = (field: string): SignerRule => ({rule: 'principal-object', field})

export const PROFILES: Readonly<Record<DocumentKind, Profile>> = {
  'agent-card': {
    kind: 'agent-card',
    schema: 'agent-card.schema.json',
    timeField: 'issuedAt',
    signer: {rule: 'service-principal'},
    marks: ['agentId', 'cardVersion'],
  },
  approval: {
    kind: 'approval',
    schema: 'approval.schema.json',
    timeField: 'occurredAt',
    signer: principal('approver'),
    marks: ['approvalId', 'approver'],
  },
  artifact: {
    kind: 'artifact',
    schema: 'artifact.schema.json',
    timeField: 'createdAt',
    signer: {rule: 'agent-id', path: ['producer', 'agentId']},
    marks: ['artifactId', 'producer'],
  },
  command: {
    kind: 'command',
    schema: 'command.schema.json',
    timeField: 'issuedAt',
    signer: principal('actor'),
    marks: ['actionId', 'actor'],
  },
  'context-package': {
    kind: 'context-package',
    schema: 'context-package.schema.json',
    timeField: 'generatedAt',
    signer: principal('generatedBy'),
    marks: ['contextPackageId', 'generatedAt'],
  },
  event: {
    kind: 'event',
    schema: 'event.schema.json',
    timeField: 'occurredAt',
    signer: principal('acceptedBy'),
    marks: ['eventId', 'acceptedBy'],
  },
  evidence: {
    kind: 'evidence',
    schema: 'evidence.schema.json',
    timeField: 'createdAt',
    signer: principal('generatedBy'),
    marks: ['evidenceId', 'generatedBy'],
  },
  'extension-profile': {
    kind: 'extension-profile',
    schema: 'extension-profile.schema.json',
    timeField: 'approvedAt',
    signer: principal('approvedBy'),
    marks: ['profileUri', 'approvedBy'],
  },
  'group-snapshot': {
    kind: 'group-snapshot',
    schema: 'group-snapshot.schema.json',
    timeField: 'createdAt',
    signer: principal('createdBy'),
    marks: ['snapshotId', 'createdBy'],
  },
}

export function isDocumentKind(value: string): value is DocumentKind {
  return (DOCUMENT_KINDS as readonly string[]).includes(value)
}

/** The kind whose identifying members a document carries, or null when none or several match. */
export function detectKind(doc: unknown): DocumentKind | null {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return null
  const matches = DOCUMENT_KINDS.filter((k) => PROFILES[k].marks.every((m) => Object.hasOwn(doc, m)))
  return matches.length === 1 ? matches[0] : null
}

/**
 * The Principal a document names as its signer. For Agent Cards the result has `id: null`:
 * any service Principal may sign, and whether it may issue cards is an authorization question.
 * Call only on schema-valid documents.
 */
export function expectedSigner(profile: Profile, doc: JsonObject): {type: PrincipalType; id: string | null} {
  const s = profile.signer
  switch (s.rule) {
    case 'principal-object': {
      const p = doc[s.field] as unknown as Principal
      return {type: p.type, id: p.id}
    }
    case 'agent-id': {
      let v: unknown = doc
      for (const key of s.path) v = (v as JsonObject)[key]
      return {type: 'agent', id: v as string}
    }
    case 'service-principal':
      return {type: 'service', id: null}
  }
}
