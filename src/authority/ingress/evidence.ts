// §13.2 work.submit: the Evidence a submission carries is a list of signed Evidence documents
// (evidence.schema.json; §6.4 signer generatedBy, signed time createdAt). Like the Approvals and
// Artifact manifests embedded in other Commands (command-checks.ts), each is verified with the
// one six-stage verifier from exactly the text it had in the received Command (principle 4), and
// the pure decider gets the verified documents on a copy of the Command; whether they cover the
// Work Contract's acceptance criteria is the decider's question (decide/work.ts).
//
// The wire learns only the verifier's code (PROTOCOL_VIOLATION, SCHEMA_VALIDATION_FAILED or
// AUTH_INVALID_SIGNATURE, §6.4), never which stage or check failed; the stage and reason go to
// the store's protected audit log (§6.4 "retain the first failing semantic stage"), as they do
// for a Command that fails verification.

import {type JsonObject, type SourceTexts, parseJsonBytes} from '../../json/parse.js'
import type {RegistryEvidence} from '../../signing/registry.js'
import type {Authority} from '../authority.js'
import {Rejection, type VerificationWireCode, verify} from '../../signing/verify.js'
import type {VerifiedEvidence} from '../decide/index.js'
import type {EvidenceDocument} from '../model/events.js'

/** The first Evidence document of a Command that failed verification, and where it stood. */
export interface EvidenceRejection {
  rejection: Rejection
  /** Its index in payload.evidence. */
  index: number
}

/**
 * The verified payload.evidence documents of a work.submit Command, in order, or the first one
 * that fails verification. The payload schema has already required a non-empty, bounded array
 * of objects.
 */
export function verifySubmittedEvidence(
  registry: RegistryEvidence,
  commandBytes: Uint8Array,
): VerifiedEvidence[] | EvidenceRejection {
  const sources: SourceTexts = new WeakMap()
  const root = parseJsonBytes(commandBytes, sources) as JsonObject
  const items = (root.payload as JsonObject).evidence as JsonObject[]
  const verified: VerifiedEvidence[] = []
  for (const [index, item] of items.entries()) {
    // Every object the strict parser builds has its source text recorded.
    const v = verify('evidence', Buffer.from(sources.get(item) ?? '', 'utf8'), registry)
    if (v instanceof Rejection) return {rejection: v, index}
    verified.push({
      signer: v.principal,
      document: v.document as unknown as EvidenceDocument,
      signingHash: v.signingHash,
    })
  }
  return verified
}

/** Records a rejected Evidence document's protected diagnostic; returns the only thing the wire gets, its code. */
export async function auditedEvidenceCode(
  authority: Authority,
  actionId: string,
  {rejection, index}: EvidenceRejection,
): Promise<VerificationWireCode> {
  const d = Rejection.diagnostic(rejection)
  await authority.store.audit({
    at: authority.clock(),
    stage: d.stage,
    reason: d.reason,
    documentKind: 'evidence',
    signingHash: d.signingHash,
    subject: `work.submit ${actionId} payload.evidence[${index}]`,
    detail: d.detail,
  })
  return rejection.code
}
