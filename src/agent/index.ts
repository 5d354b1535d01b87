// mwp/agent: the Agent runtime as a library (spec §8, §10.3, §11, §12, §13, §16).
//   startAgent(options)   one Agent over wss: per-Group local queues, the fair Scheduler, slots
//   AgentHandler …        the module-handler API (handler.ts); the exec protocol (exec-protocol.ts)
//   Scheduler             the pure, deterministic cross-Group Scheduler (usable on its own)
//   AgentStore            the Agent's local per-Group inbox, Cursor and queue (SQLite)
//   idempotencyKey        §16 keys of external operations

export {type AgentOptions, type AgentStatus, type RunningAgent, startAgent} from './runtime.js'
export type {
  AgentHandler,
  ArtifactMeta,
  DeclineReason,
  EvidenceClaim,
  EvidenceResult,
  OfferAnswer,
  OfferView,
  Outcome,
  Progress,
  WorkContext,
  WorkSpec,
} from './handler.js'
export {type ExecLine, parseExecLine} from './exec-protocol.js'
export {type GroupPolicy, type QueuedItem, Scheduler, type SchedulerOptions} from './scheduler.js'
export {AgentStore, type QueueEntry} from './local-store.js'
export {admit, type Admission, type AdmissionInput} from './admission.js'
export {idempotencyKey} from './idempotency.js'
