// The HELLO challenge transcript (spec §6.3; ACCEPTANCE B1-B4). The client signs the RFC 8785 JCS
// bytes of this object, never bytes the server chose: it rebuilds the transcript from what it
// sent and what the challenge frame says, after checking the server echoed its own nonce. The
// `domain` member separates these signatures from every Signed Document signature (a document
// never has a `domain` member next to these names, and its signing bytes are the document itself).

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
