// §8 step 2 "the Worker receives an expiring offer and signed Context Package": a work.offer may
// carry the whole signed Context Package (context-package.schema.json; §6.4 signer generatedBy,
// signed time generatedAt). As with a submission's Evidence (evidence.ts), it is verified with the
// one six-stage verifier from exactly the text it had in the received Command (principle 4); the
// pure decider gets the verified document and checks its scope (decide/context-package.ts). A
// document that fails verification is answered with its code only and audited
// (embedded-rejection.ts).

import {sourcesIn} from '../../json/parse.js'
import type {RegistryEvidence} from '../../signing/registry.js'
import {Rejection, verify} from '../../signing/verify.js'
import type {VerifiedContextPackage} from '../decide/index.js'
import type {ContextPackageDocument} from '../model/events.js'
import type {EmbeddedRejection} from './embedded-rejection.js'

const MEMBER = 'contextPackage'

/**
 * The verified payload.contextPackage of a work.offer Command, or its rejection. The payload
 * schema has already required it to be an object, so it has a source text.
 */
export function verifyOfferedContextPackage(
  registry: RegistryEvidence,
  commandBytes: Uint8Array,
): VerifiedContextPackage | EmbeddedRejection {
  const text = sourcesIn(commandBytes)(['payload', MEMBER]) ?? ''
  const v = verify('context-package', Buffer.from(text, 'utf8'), registry)
  if (v instanceof Rejection) return {rejection: v, documentKind: 'context-package', member: `payload.${MEMBER}`}
  return {
    signer: v.principal,
    document: v.document as unknown as ContextPackageDocument,
    signingHash: v.signingHash,
  }
}
