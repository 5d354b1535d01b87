// First-Admission Records (spec §6.4, schemas/first-admission-record.schema.json): candidate
// preparation and validation of a record returned by the Admission Log.

import {canonicalize} from '../json/jcs.js'
import {type JsonObject, parseJsonBytes} from '../json/parse.js'
import {type Instant, compareInstants, parseTimestamp} from '../json/timestamp.js'
import {schemaCatalog} from '../schema/catalog.js'
import type {Principal} from '../signing/profiles.js'
import type {Verified} from '../signing/verify.js'
import {createHash} from 'node:crypto'
import type {AcceptanceContext} from './log.js'

export interface FirstAdmissionRecord {
  protocolVersion: '0.1'
  admissionRecordId: string
  organizationId: string
  documentKind: string
  signingHash: string
  keyId: string
  principal: Principal
  trustedAcceptedAt: string
  acceptedBy: Principal
}

/** Stable protected reasons of the `admission` stage (ACCEPTANCE D16, N5). */
export const ADMISSION_REASONS = [
  'record-missing',
  'record-unparseable',
  'record-schema-invalid',
  'record-binding-mismatch',
  'accepted-by-mismatch',
  'record-conflict',
  'trusted-time-outside-key-interval',
  'malformed-trusted-time',
  'event-self-anchoring',
  'log-authentication-failed',
  'log-integrity-failed',
  'append-integrity-not-established',
  'log-unavailable',
  'log-indeterminate',
  'commit-failed',
  'context-not-service',
] as const
export type AdmissionReason = (typeof ADMISSION_REASONS)[number]

export class AdmissionFault {
  constructor(
    readonly reason: AdmissionReason,
    readonly detail?: string,
  ) {}
}

/** The candidate record for a verified document, in schema field order. */
export function candidateRecord(
  verified: Verified,
  context: AcceptanceContext,
): {record: FirstAdmissionRecord; bytes: Buffer} {
  const record: FirstAdmissionRecord = {
    protocolVersion: '0.1',
    admissionRecordId: context.admissionRecordId,
    organizationId: verified.organizationId,
    documentKind: verified.kind,
    signingHash: verified.signingHash,
    keyId: verified.keyId,
    principal: {type: verified.principal.type, id: verified.principal.id},
    trustedAcceptedAt: context.trustedAcceptedAt,
    acceptedBy: {type: context.acceptedBy.type, id: context.acceptedBy.id},
  }
  return {record, bytes: Buffer.from(JSON.stringify(record, null, 2) + '\n')}
}

/** Parses a trusted acceptance time, or null when it is not a protocol timestamp. */
export function parseTrustedTime(text: unknown): Instant | null {
  return typeof text === 'string' ? parseTimestamp(text) : null
}

/** §6.4: validFrom <= t, t < validUntil, t < revokedAt, with the earliest retained boundaries. */
export function withinKeyInterval(verified: Verified, t: Instant): boolean {
  const b = verified.binding
  if (compareInstants(t, b.validFrom.instant) < 0) return false
  if (b.validUntil && compareInstants(t, b.validUntil.instant) >= 0) return false
  if (b.revokedAt && compareInstants(t, b.revokedAt.instant) >= 0) return false
  return true
}

const samePrincipal = (a: unknown, b: Principal): boolean => {
  const p = a as Principal
  return p !== null && typeof p === 'object' && p.type === b.type && p.id === b.id
}

/**
 * A Signed Event must never anchor itself: the bytes offered as its record are the Event (or the
 * same signed content) rather than a separate record.
 */
function isSelfAnchoring(verified: Verified, documentBytes: Uint8Array, recordBytes: Uint8Array): boolean {
  if (verified.kind !== 'event') return false
  if (Buffer.compare(Buffer.from(documentBytes), Buffer.from(recordBytes)) === 0) return true
  try {
    const value = parseJsonBytes(recordBytes)
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, 'signature'))
      return false
    const {signature: _s, ...content} = value as JsonObject
    return 'sha256:' + createHash('sha256').update(canonicalize(content)).digest('hex') === verified.signingHash
  } catch {
    return false
  }
}

/**
 * Validates a record returned by the Admission Log against the six-stage evidence, in the order
 * of ACCEPTANCE N6: self-anchoring → strict parse + schema → trusted time → exact binding
 * equality → acceptedBy equals the adapter-authenticated service → trusted time inside the key
 * interval. Returns the record or the first fault.
 */
export function validateRecord(
  verified: Verified,
  documentBytes: Uint8Array,
  recordBytes: Uint8Array,
  authenticatedService: Principal,
): FirstAdmissionRecord | AdmissionFault {
  if (isSelfAnchoring(verified, documentBytes, recordBytes))
    return new AdmissionFault('event-self-anchoring', 'a Signed Event cannot be its own First-Admission Record')
  let value: unknown
  try {
    value = parseJsonBytes(recordBytes)
  } catch (e) {
    return new AdmissionFault('record-unparseable', (e as Error).message)
  }
  const checked = schemaCatalog().validate('first-admission-record', value)
  if (!checked.valid)
    return new AdmissionFault(
      'record-schema-invalid',
      checked.errors.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; '),
    )
  const record = value as unknown as FirstAdmissionRecord
  const t = parseTrustedTime(record.trustedAcceptedAt)
  if (t === null)
    return new AdmissionFault('malformed-trusted-time', `trustedAcceptedAt ${JSON.stringify(record.trustedAcceptedAt)}`)
  const bindings: [string, boolean][] = [
    ['organizationId', record.organizationId === verified.organizationId],
    ['documentKind', record.documentKind === verified.kind],
    ['signingHash', record.signingHash === verified.signingHash],
    ['keyId', record.keyId === verified.keyId],
    ['principal', samePrincipal(record.principal, verified.principal)],
  ]
  const mismatched = bindings.filter(([, ok]) => !ok).map(([name]) => name)
  if (mismatched.length > 0)
    return new AdmissionFault(
      'record-binding-mismatch',
      `record ${mismatched.join(', ')} differ from the verified document`,
    )
  if (!samePrincipal(record.acceptedBy, authenticatedService)) {
    return new AdmissionFault(
      'accepted-by-mismatch',
      `acceptedBy is not the service the Admission Log authenticated (${authenticatedService.id})`,
    )
  }
  if (!withinKeyInterval(verified, t))
    return new AdmissionFault(
      'trusted-time-outside-key-interval',
      `trustedAcceptedAt ${record.trustedAcceptedAt} is outside the key's validity`,
    )
  return record
}
