// The trusted path for a newly presented Signed Document, end to end:
//   six-stage verification → (Commands) freshness at the trusted acceptance time → first admission
// and for a document presented again later: six-stage verification → historical replay.
// Every failure is written to the store's protected audit log with its stage and reason; the
// caller gets a Rejection whose only public member is the wire code.

import type {Store} from '../store/types.js'
import type {DocumentKind} from '../signing/profiles.js'
import type {RegistryEvidence} from '../signing/registry.js'
import {Rejection, type Verified, verify, verifyOffThread} from '../signing/verify.js'
import {type Admitted, admitFirst, replayHistorical} from './admit.js'
import {checkFreshness} from './freshness.js'

export interface Presented {
  bytes: Uint8Array
  kind?: DocumentKind
  /** What the operator should see in the audit log (file name, connection, action ID …). */
  subject?: string
}

export type Accepted = {ok: true; verified: Verified; admission: Admitted}

async function audited(store: Store, presented: Presented, r: Rejection): Promise<Rejection> {
  const d = Rejection.diagnostic(r)
  await store.audit({
    at: new Date().toISOString(),
    stage: d.stage,
    reason: d.reason,
    documentKind: d.kind ?? presented.kind,
    signingHash: d.signingHash,
    subject: presented.subject,
    detail: d.detail,
  })
  return r
}

/** Six-stage verification only, with failures recorded in the audit log. */
export async function verifyAudited(
  presented: Presented,
  evidence: RegistryEvidence,
  store: Store,
): Promise<Verified | Rejection> {
  const verified = verify(presented.kind, presented.bytes, evidence)
  return verified.ok ? verified : audited(store, presented, verified)
}

/**
 * First admission of a newly presented document (idempotent: a retry returns the same record).
 * The signature equation runs off this thread (verifyOffThread): ingress is its caller.
 */
export async function acceptNew(
  presented: Presented,
  evidence: RegistryEvidence,
  store: Store,
): Promise<Accepted | Rejection> {
  const verified = await verifyOffThread(presented.kind, presented.bytes, evidence)
  if (!verified.ok) return audited(store, presented, verified)
  const gate =
    verified.kind === 'command'
      ? (context: {trustedAcceptedAt: string}) =>
          checkFreshness(verified.protectedTime, context.trustedAcceptedAt, store.config.freshness)
      : undefined
  const admission = await admitFirst(verified, presented.bytes, store, store, {gate})
  if (!admission.ok) return audited(store, presented, withFacts(admission, verified))
  return {ok: true, verified, admission}
}

/** Historical replay with the registry evidence applicable to the document's protected time. */
export async function replayPresented(
  presented: Presented,
  evidence: RegistryEvidence,
  store: Store,
): Promise<Accepted | Rejection> {
  const verified = verify(presented.kind, presented.bytes, evidence)
  if (!verified.ok) return audited(store, presented, verified)
  const admission = await replayHistorical(verified, presented.bytes, store)
  if (!admission.ok) return audited(store, presented, withFacts(admission, verified))
  return {ok: true, verified, admission}
}

/** Admission failures happen after stage 5: the kind and signing hash are known. */
function withFacts(r: Rejection, verified: Verified): Rejection {
  const d = Rejection.diagnostic(r)
  return new Rejection({...d, kind: verified.kind, signingHash: verified.signingHash})
}
