// A signed document embedded in a Command (a work.submit's Evidence, a work.offer's Context
// Package) that failed the six-stage verifier. The wire learns only the verifier's code
// (PROTOCOL_VIOLATION, SCHEMA_VALIDATION_FAILED or AUTH_INVALID_SIGNATURE, §6.4), never which stage
// or check failed; the stage and reason go to the store's protected audit log (§6.4 "retain the
// first failing semantic stage"), as they do for a Command that fails verification.

import type {DocumentKind} from '../../signing/profiles.js'
import {Rejection, type VerificationWireCode} from '../../signing/verify.js'
import type {Authority} from '../authority.js'

/** The first embedded document of a Command that failed verification, and where it stood. */
export interface EmbeddedRejection {
  rejection: Rejection
  documentKind: Extract<DocumentKind, 'evidence' | 'context-package'>
  /** Its place in the Command: `payload.evidence[1]`, `payload.contextPackage`. */
  member: string
}

/** Records a rejected embedded document's protected diagnostic; returns the only thing the wire gets, its code. */
export async function auditedEmbeddedCode(
  authority: Authority,
  command: {kind: string; actionId: string},
  {rejection, documentKind, member}: EmbeddedRejection,
): Promise<VerificationWireCode> {
  const d = Rejection.diagnostic(rejection)
  await authority.store.audit({
    at: authority.clock(),
    stage: d.stage,
    reason: d.reason,
    documentKind,
    signingHash: d.signingHash,
    subject: `${command.kind} ${command.actionId} ${member}`,
    detail: d.detail,
  })
  return rejection.code
}
