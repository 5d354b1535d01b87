// The handler API: how a user puts an Agent's actual work into the runtime (spec §10.3, §11.3, §11.4,
// §12, §13, §16). Two forms, one contract:
//
//   module handler (`--handler MODULE`): a module whose default export (or named `handler`) is an
//   AgentHandler. `execute(work, ctx)` runs in its own child process (a slot), which holds only
//   this WorkItem's WorkSpec — never the Agent's signing key, never another Group's context.
//
//   exec handler (`--exec "CMD …"`): any program, see exec-protocol.ts.
//
// What the handler reports is signed and sent by the runtime (the parent process), under the
// current Execution Lease: the handler never builds protocol Commands itself.

import type {UsageDelta} from '../authority/model/budget.js'
import type {WorkContract} from '../authority/model/payloads.generated.js'

/** The structured reasons of a declined offer (§10.3). */
export type DeclineReason = 'capacity' | 'deadline' | 'capability' | 'authorization' | 'dependency' | 'budget'

/** What a handler learns about an offer before the runtime's own admission control accepts it. */
export interface OfferView {
  groupId: string
  missionId: string
  workItemId: string
  contract: WorkContract
  expiresAt: string
  /** The signed Context Package delivered with the offer, when there is one. */
  contextPackage?: Record<string, unknown>
}

export type OfferAnswer = {accept: true} | {accept: false; reason: DeclineReason; detail?: string}

/** One WorkItem run as its slot sees it: this WorkItem's context and nothing else. */
export interface WorkSpec {
  groupId: string
  missionId: string
  workItemId: string
  conversationId: string
  ownershipEpoch: number
  leaseId: string
  contract: WorkContract
  contextPackage?: Record<string, unknown>
  /** The state of the checkpoint this run resumes from (§11.3 step 5), or null for a first run. */
  resume: {state: unknown; checkpointHash: string} | null
  /**
   * §11.4: the retry attempt of this ownership — 1, then one more after each retryable failure
   * (a resumed run after preemption keeps its attempt). Part of the attempt key (attemptKey).
   */
  attempt: number
  /**
   * §12: the capability token for this lease, when the deployment issues one. It expires with the
   * lease; at each renewal the runtime replaces it here with the renewed lease's token, so read it
   * when calling a tool, not once at the start.
   */
  capabilityToken?: string
  /**
   * §10.1: the contract's input Artifacts, each content hash → the path of a file holding exactly
   * those bytes (verified against the hash before the run starts).
   */
  inputs?: Record<string, string>
}

/** §11.4: progress is phase, milestones, next checkpoint, blockers and estimate — never a percentage. */
export interface Progress {
  phase: string
  milestones?: string[]
  nextCheckpoint?: string
  blockers?: string[]
  /** Revised completion estimate (RFC 3339 UTC). */
  estimate?: string
}

/** What the signed manifest says about an Artifact (§13.1); only mediaType is required. */
export interface ArtifactMeta {
  mediaType: string
  /** A file name for people (the Artifact is identified by its content hash only). */
  name?: string
  /** The schema the content follows (default: the contract deliverable of this media type). */
  schemaUri?: string
  /** The Artifacts it was made from (e.g. the contract's input Artifacts). */
  sourceArtifactHashes?: string[]
  /** The tools that made it (default: this runtime). */
  toolVersions?: {name: string; version: string}[]
  modelVersions?: {provider: string; model: string; version: string}[]
  classification?: 'public' | 'internal' | 'confidential' | 'restricted'
}

export type EvidenceResult = 'passed' | 'failed' | 'inconclusive'

export interface EvidenceClaim {
  method: string
  result: EvidenceResult
  /** evidence.schema.json `type` (default deterministic_test). */
  type?: string
  artifactHashes?: string[]
}

/** How a run ends. Returning nothing from execute() submits. */
export type Outcome =
  | {type: 'submit'}
  | {type: 'yield'}
  | {type: 'block'; resolution: string}
  /**
   * `code` classifies the failure (`^[A-Z][A-Z0-9_]{1,127}$`): when the contract's
   * retryPolicy.retryableFailures lists it, the runtime retries within the policy (§11.4).
   */
  | {type: 'fail'; reason: string; code?: string}

export interface WorkContext {
  readonly work: WorkSpec
  /** A per-slot working directory, empty at the first run of an ownership. */
  readonly workDir: string
  /**
   * Aborted when the runtime asks the handler to stop: reason `yield` (the Scheduler preempts:
   * reach a safe point, checkpoint, return {type: 'yield'}) or `lease-lost` (stop before any
   * further side effect; nothing the handler reports afterwards is sent).
   */
  readonly signal: AbortSignal
  /** Records a safe, idempotent checkpoint; resolves with its content hash once it is durable. */
  checkpoint(state: unknown): Promise<string>
  progress(progress: Progress): void
  /** Stores an Artifact; resolves with its content hash (`sha256:…`). */
  artifact(content: Uint8Array | string, meta: ArtifactMeta): Promise<string>
  /** Evidence for one or more acceptance criteria (§13.2); signed by the runtime at submission. */
  evidence(criterionIds: string | string[], claim: EvidenceClaim): void
  /** §12: resource usage to record against this lease. */
  usage(delta: UsageDelta): void
  /** §16: the stable key of one logical external operation (Mission, WorkItem, Ownership Epoch, operation). */
  idempotencyKey(operationId: string): string
  /** §11.4: the key of one external attempt of an operation: idempotencyKey's inputs plus work.attempt. */
  attemptKey(operationId: string): string
}

export interface AgentHandler {
  onOffer?(offer: OfferView): OfferAnswer | Promise<OfferAnswer>
  execute(work: WorkSpec, ctx: WorkContext): Promise<Outcome | void> | Outcome | void
}
