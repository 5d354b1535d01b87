// The contract convention between the proof of concept's Coordinator and its worker handler: what
// one WorkItem asks for, carried in `work.contract.constraints.poc`.

export const STAGE_NAMES = ['requirements', 'tests', 'implement', 'review', 'integrate', 'docs'] as const
export type StageName = (typeof STAGE_NAMES)[number]

export interface PocStage {
  stage: StageName
  /** Which library: a key of the project catalogue (projects.ts). */
  project: string
  /** Deterministic variation (which examples become acceptance criteria): same seed, same bytes. */
  seed: number
  /** Input files by repository path => content hash (each also in the contract's inputArtifacts). */
  files: Record<string, string>
  /** implement only: the first attempt deliberately carries this named, real bug. */
  defect?: string
  /** Present when the Coordinator sent a rejected submission back. */
  rework?: {round: number; failures: string[]}
  /** Number of safe checkpoint steps to spread the work over (default 3). */
  steps?: number
  /**
   * Effort per step in milliseconds (default 0): the work of a real Agent takes time, and the
   * proof of concept needs runs long enough to share a Worker's slots and to be preempted.
   */
  stepMs?: number
}

export const DEFAULT_STEPS = 3

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isStageName(value: unknown): value is StageName {
  return typeof value === 'string' && (STAGE_NAMES as readonly string[]).includes(value)
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string')
}

function isRework(value: unknown): value is {round: number; failures: string[]} {
  return (
    isRecord(value) &&
    Number.isSafeInteger(value.round) &&
    Array.isArray(value.failures) &&
    value.failures.every((f) => typeof f === 'string')
  )
}

/**
 * The PocStage in a contract's `constraints` (its `poc` member), or null when there is none or it
 * is malformed. A stage name outside STAGE_NAMES is malformed here; the handler reads the raw name
 * first so that it can answer POC_UNKNOWN_STAGE rather than a generic refusal.
 */
export function pocStage(constraints: unknown): PocStage | null {
  if (!isRecord(constraints)) return null
  const poc = constraints.poc
  if (!isRecord(poc)) return null
  const {stage, project, seed, files, defect, rework, steps, stepMs} = poc
  if (!isStageName(stage) || typeof project !== 'string' || !Number.isSafeInteger(seed) || typeof seed !== 'number')
    return null
  if (!isStringRecord(files)) return null
  if (defect !== undefined && typeof defect !== 'string') return null
  if (rework !== undefined && !isRework(rework)) return null
  if (steps !== undefined && (typeof steps !== 'number' || !Number.isSafeInteger(steps) || steps < 1)) return null
  const out: PocStage = {stage, project, seed, files}
  if (defect !== undefined) out.defect = defect
  if (rework !== undefined) out.rework = rework
  if (steps !== undefined) out.steps = steps
  if (stepMs !== undefined && (typeof stepMs !== 'number' || !Number.isSafeInteger(stepMs) || stepMs < 0)) return null
  if (stepMs !== undefined) out.stepMs = stepMs
  return out
}
