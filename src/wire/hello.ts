// The HELLO challenge transcript (spec §6.3; ACCEPTANCE B1-B4). The client signs the RFC 8785 JCS
// bytes of this object, never bytes the server chose: it rebuilds the transcript from what it
// sent and what the challenge frame says, after checking the server echoed its own nonce. The
// `domain` member separates these signatures from every Signed Document signature (a document
// never has a `domain` member next to these names, and its signing bytes are the document itself).
// The server checks the answer with strictVerify, as every signature of the project is checked.

import {type StrictVerifyResult, type VerifyKey, strictVerify} from '../crypto/ed25519.js'
import {decodeBase64url} from '../json/base64url.js'
import {canonicalBytes} from '../json/jcs.js'

export const HELLO_DOMAIN = 'missionweaveprotocol/0.1/hello'

export interface HelloTranscript {
  domain: typeof HELLO_DOMAIN
  /** The principal ID the client claims (the frame's `agentId`; humans and services too). */
  principalId: string
  keyId: string
  clientNonce: string
  serverNonce: string
  challenge: string
  selectedVersion: string
}

export function transcriptBytes(t: Omit<HelloTranscript, 'domain'>): Buffer {
  const full: HelloTranscript = {
    domain: HELLO_DOMAIN,
    principalId: t.principalId,
    keyId: t.keyId,
    clientNonce: t.clientNonce,
    serverNonce: t.serverNonce,
    challenge: t.challenge,
    selectedVersion: t.selectedVersion,
  }
  return canonicalBytes(full)
}

export type HelloVerdict =
  StrictVerifyResult | {ok: false; stage: 'signature-envelope'; reason: 'signature-noncanonical-base64url'}

/**
 * Checks a client_response's `challengeSignature` (its base64url text as received) over the
 * transcript the server rebuilt from its own record of the exchange: strict Ed25519 under the
 * registered key, so small-order and noncanonical keys, S >= L and a bad R are all refused.
 */
export function verifyHelloSignature(
  key: VerifyKey | Uint8Array,
  t: Omit<HelloTranscript, 'domain'>,
  challengeSignature: string,
): HelloVerdict {
  const signature = decodeBase64url(challengeSignature)
  if (signature === null) return {ok: false, stage: 'signature-envelope', reason: 'signature-noncanonical-base64url'}
  return strictVerify(key, transcriptBytes(t), signature)
}
