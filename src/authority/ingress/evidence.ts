// §13.2 work.submit: the Evidence a submission carries is a list of signed Evidence documents
// (evidence.schema.json; §6.4 signer generatedBy, signed time createdAt). Like the Approvals and
// Artifact manifests embedded in other Commands (command-checks.ts), each is verified with the
// one six-stage verifier from exactly the text it had in the received Command (principle 4), and
// the pure decider gets the verified documents on a copy of the Command; whether they cover the
// Work Contract's acceptance criteria is the decider's question (decide/work.ts). A document that
// fails verification is answered with its code only and audited (embedded-rejection.ts).

import {type JsonObject, type SourceTexts, parseJsonBytes} from '../../json/parse.js'
import type {RegistryEvidence} from '../../signing/registry.js'
import {Rejection, verify} from '../../signing/verify.js'
import type {VerifiedEvidence} from '../decide/index.js'
import type {EvidenceDocument} from '../model/events.js'
import type {EmbeddedRejection} from './embedded-rejection.js'

/**
 * The verified payload.evidence documents of a work.submit Command, in order, or the first one
 * that fails verification. The payload schema has already required a non-empty, bounded array
 * of objects.
 */
export function verifySubmittedEvidence(
  registry: RegistryEvidence,
  commandBytes: Uint8Array,
): VerifiedEvidence[] | EmbeddedRejection {
  const sources: SourceTexts = new WeakMap()
  const root = parseJsonBytes(commandBytes, sources) as JsonObject
  const items = (root.payload as JsonObject).evidence as JsonObject[]
  const verified: VerifiedEvidence[] = []
  for (const [index, item] of items.entries()) {
    // Every object the strict parser builds has its source text recorded.
    const v = verify('evidence', Buffer.from(sources.get(item) ?? '', 'utf8'), registry)
    if (v instanceof Rejection) return {rejection: v, documentKind: 'evidence', member: `payload.evidence[${index}]`}
    verified.push({
      signer: v.principal,
      document: v.document as unknown as EvidenceDocument,
      signingHash: v.signingHash,
    })
  }
  return verified
}
