// The messages between the runtime (parent) and one module-handler slot (a child process running
// slot-host.ts), over Node's IPC channel. The slot receives exactly one `run`: its WorkItem's
// WorkSpec and nothing else — no signing key, no other Group's context (§11.1 slot isolation).
// Everything the handler reports flows back as a message and is acted on by the parent.

import type {UsageDelta} from '../authority/model/budget.js'
import type {ArtifactMeta, EvidenceClaim, Outcome, Progress, WorkSpec} from './handler.js'

export type StopReason = 'yield' | 'lease-lost'

export type ToSlot =
  | {t: 'run'; spec: WorkSpec; workDir: string; handler: string}
  | {t: 'stop'; reason: StopReason}
  /** §12: the capability token of the renewed (or new) lease; it replaces work.capabilityToken. */
  | {t: 'token'; token: string}
  /** The answer to a checkpoint or artifact request: its content hash, once durable. */
  | {t: 'stored'; id: number; hash: string}

export type FromSlot =
  | {t: 'checkpoint'; id: number; state: unknown}
  | {t: 'artifact'; id: number; content: string; meta: ArtifactMeta}
  | {t: 'progress'; progress: Progress}
  | {t: 'evidence'; criterionIds: string[]; claim: EvidenceClaim}
  | {t: 'usage'; delta: UsageDelta}
  | {t: 'done'; outcome: Outcome}
  | {t: 'error'; message: string}
