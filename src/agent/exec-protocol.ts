// The exec handler's protocol (`mwp agent run --exec "CMD …"`), for a handler in any language:
//
//   stdin   line 1: {"work": WorkSpec} — the WorkItem's contract, Context Package, resume state …
//           later:  `yield` — the Scheduler preempts: reach a safe point, write a checkpoint line,
//                   then a {"type":"yield"} line, and exit
//           later:  {"token":"…"} — the capability token of the renewed lease (§12), replacing
//                   work.capabilityToken (which expires with the lease it was issued under)
//   stdout  one JSON object per line:
//           {"type":"checkpoint","state":…}                         a safe, idempotent checkpoint
//           {"type":"progress","phase":"…","milestones":[…],"nextCheckpoint":"…","blockers":[…],"estimate":"…"}
//           {"type":"artifact","path":"out/report.md","mediaType":"text/markdown"}   (a file in the working directory)
//           {"type":"artifact","content":"text","mediaType":"text/plain"}
//           {"type":"evidence","criterion":"tests-pass","method":"npm test","result":"passed"}   ("criteria":[…] for several)
//           {"type":"usage","toolCalls":1,"computeSeconds":2}
//           and one outcome: {"type":"submit"} | {"type":"fail","reason":"…","code"?:"FAILURE_CLASS"} | {"type":"block","resolution":"…"} | {"type":"yield"}
//   stderr  copied to the Agent's log
//   cwd     a per-slot working directory; the environment holds only PATH, HOME (= that directory) and MWP_WORK_DIR
//
// A line that is not one of these ends the run as a crash (the WorkItem is not submitted).

import {readFile, realpath} from 'node:fs/promises'
import {isAbsolute, relative, resolve} from 'node:path'
import type {UsageDelta} from '../authority/model/budget.js'
import type {EvidenceClaim, EvidenceResult, Outcome, Progress} from './handler.js'

export type ExecLine =
  | {type: 'checkpoint'; state: unknown}
  | {type: 'progress'; progress: Progress}
  | {type: 'artifact'; path?: string; content?: string; mediaType: string; name?: string}
  | {type: 'evidence'; criterionIds: string[]; claim: EvidenceClaim}
  | {type: 'usage'; delta: UsageDelta}
  | {type: 'outcome'; outcome: Outcome}

/** A failure class, as work-contract.schema.json retryPolicy.retryableFailures spells them. */
export const FAILURE_CODE = /^[A-Z][A-Z0-9_]{1,127}$/
const RESULTS: ReadonlySet<string> = new Set<EvidenceResult>(['passed', 'failed', 'inconclusive'])
const USAGE = [
  'financial',
  'modelTokens',
  'toolCalls',
  'computeSeconds',
  'wallClockSeconds',
  'externalSideEffects',
] as const

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0
const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every(str)

export function parseExecLine(text: string): ExecLine | {error: string} {
  let j: unknown
  try {
    j = JSON.parse(text)
  } catch {
    return {error: 'not JSON'}
  }
  if (j === null || typeof j !== 'object' || Array.isArray(j)) return {error: 'not a JSON object'}
  const o = j as Record<string, unknown>
  switch (o.type) {
    case 'checkpoint':
      return 'state' in o ? {type: 'checkpoint', state: o.state} : {error: 'a checkpoint needs "state"'}
    case 'progress': {
      if (!str(o.phase)) return {error: 'progress needs a "phase"'}
      const progress: Progress = {phase: o.phase}
      if (strings(o.milestones)) progress.milestones = o.milestones
      if (str(o.nextCheckpoint)) progress.nextCheckpoint = o.nextCheckpoint
      if (strings(o.blockers)) progress.blockers = o.blockers
      if (str(o.estimate)) progress.estimate = o.estimate
      return {type: 'progress', progress}
    }
    case 'artifact':
      if (!str(o.mediaType)) return {error: 'an artifact needs a "mediaType"'}
      if (str(o.path) === (typeof o.content === 'string'))
        return {error: 'an artifact needs exactly one of "path" or "content"'}
      return {
        type: 'artifact',
        mediaType: o.mediaType,
        ...(str(o.path) ? {path: o.path} : {content: o.content as string}),
        ...(str(o.name) ? {name: o.name} : {}),
      }
    case 'evidence': {
      const criterionIds = str(o.criterion) ? [o.criterion] : strings(o.criteria) ? o.criteria : null
      if (criterionIds === null || criterionIds.length === 0) return {error: 'evidence needs "criterion" or "criteria"'}
      if (!str(o.method) || typeof o.result !== 'string' || !RESULTS.has(o.result))
        return {error: 'evidence needs a "method" and a "result" (passed, failed or inconclusive)'}
      const claim: EvidenceClaim = {method: o.method, result: o.result as EvidenceResult}
      if (str(o.evidenceType)) claim.type = o.evidenceType
      if (strings(o.artifactHashes)) claim.artifactHashes = o.artifactHashes
      return {type: 'evidence', criterionIds, claim}
    }
    case 'usage': {
      const delta: UsageDelta = {}
      for (const d of USAGE) {
        const v = o[d]
        if (v === undefined) continue
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return {error: `usage "${d}" must be a number ≥ 0`}
        delta[d] = v
      }
      return {type: 'usage', delta}
    }
    case 'submit':
    case 'yield':
      return {type: 'outcome', outcome: {type: o.type}}
    case 'fail':
      if (!str(o.reason)) return {error: 'fail needs a "reason"'}
      if (o.code !== undefined && !(typeof o.code === 'string' && FAILURE_CODE.test(o.code)))
        return {error: 'fail "code" must match ^[A-Z][A-Z0-9_]{1,127}$'}
      return {type: 'outcome', outcome: {type: 'fail', reason: o.reason, ...(o.code ? {code: o.code} : {})}}
    case 'block':
      return str(o.resolution)
        ? {type: 'outcome', outcome: {type: 'block', resolution: o.resolution}}
        : {error: 'block needs a "resolution"'}
    default:
      return {error: `unknown line type ${JSON.stringify(o.type)}`}
  }
}

/** Reads a file the program named, refusing any path that leaves its working directory. */
export async function resolveInWorkDir(workDir: string, path: string): Promise<Buffer> {
  const root = await realpath(workDir)
  const inside = (p: string) => {
    const rel = relative(root, p)
    return !rel.startsWith('..') && !isAbsolute(rel)
  }
  const outside = new Error(`artifact path ${path} is outside the working directory`)
  if (!inside(resolve(root, path))) throw outside
  const target = await realpath(resolve(root, path)) // a symbolic link may still point out
  if (!inside(target)) throw outside
  return readFile(target)
}
