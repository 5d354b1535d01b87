// mwp/admission: First-Admission Records, the Admission Log contract and historical replay.

// Accepting a presented document: verify (audited), then first admission or replay.
export {acceptNew, replayPresented, verifyAudited} from './accept.js'
export type {Accepted, Presented} from './accept.js'
// First admission and historical replay of a verified document.
export {admitFirst, replayHistorical} from './admit.js'
export type {AdmissionResult, AdmitOptions, Admitted} from './admit.js'
// The freshness window check.
export {checkFreshness} from './freshness.js'
// The Admission Log contract a store implements.
export type {
  AcceptanceContext,
  AdmissionLog,
  AppendResult,
  AuthenticatedRecord,
  Candidate,
  LookupResult,
  TrustedContextSource,
} from './log.js'
// First-Admission Records.
export {ADMISSION_REASONS, AdmissionFault, candidateRecord, validateRecord} from './record.js'
export type {AdmissionReason, FirstAdmissionRecord} from './record.js'
