// Step 1 of both Command paths: six-stage verification, Command freshness and first admission
// (audited: every refusal is recorded with its stage), before anything reads the Command.

import {acceptNew} from '../../admission/accept.js'
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
  if (accepted instanceof Rejection) return {error: protocolError(accepted.code, authority.clock())}
  return {command: accepted.verified.document as unknown as C, contentHash: accepted.verified.signingHash}
}
