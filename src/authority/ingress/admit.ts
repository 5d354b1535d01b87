// Step 1 of both Command paths: six-stage verification, Command freshness and first admission
// (audited: every refusal is recorded with its stage), before anything reads the Command.

import {acceptNew} from '../../admission/accept.js'
import type {AdmissionReason} from '../../admission/record.js'
import {type ProtocolError, protocolError} from '../../errors.js'
import {Rejection} from '../../signing/verify.js'
import type {Authority} from '../authority.js'

export interface Admitted<C> {
  /** The verified Command document; command.schema.json has checked its shape. */
  command: C
  /** §15.1 idempotency key's content part: the signing hash, the canonical hash of the signed content. */
  contentHash: string
}

export async function admit<C>(
  authority: Authority,
  bytes: Uint8Array,
  subject: string,
): Promise<Admitted<C> | {error: ProtocolError}> {
  const accepted = await acceptNew({bytes, kind: 'command', subject}, authority.registry, authority.store)
  if (accepted instanceof Rejection) return {error: protocolError(wireCode(accepted), authority.clock())}
  return {command: accepted.verified.document as unknown as C, contentHash: accepted.verified.signingHash}
}

/**
 * The Admission Log's own failures: the store was unreachable, the outcome of the admission
 * record's COMMIT is unknown, or the server refused the COMMIT (issue #15).
 */
const STORE_OUTAGE: ReadonlySet<string> = new Set<AdmissionReason>([
  'log-unavailable',
  'log-indeterminate',
  'commit-failed',
])

/**
 * §6.4 makes these outcomes fail closed — nothing is admitted, nothing appended, and the protected
 * diagnostic (already audited) keeps the admission stage and reason. It does not fix the wire code,
 * and §19 rules out AUTH_INVALID_SIGNATURE: that code says the signature, key validity, admission
 * proof or freshness failed and MUST NOT be retried unchanged, yet these bytes are valid and the
 * same bytes succeed once the store is back. The sender gets INTERNAL_ERROR ("failed without
 * accepting the transition"), retryable: an unchanged retry is safe because first admission is
 * append-or-return-existing on (organization, signing hash) and the Command's receipt on (actor,
 * Action ID) (§15.1), so a record or receipt that did commit before an indeterminate outcome is
 * found and returned, never duplicated.
 */
function wireCode(r: Rejection) {
  const d = Rejection.diagnostic(r)
  return d.stage === 'admission' && STORE_OUTAGE.has(d.reason) ? 'INTERNAL_ERROR' : r.code
}
