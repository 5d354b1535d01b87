// The Coordinator's review of one submission (§13.2, in its order): (1) Artifact integrity — every
// submitted Artifact is fetched and its bytes hashed; (2) the Work Contract's deterministic checks
// — each plan criterion's `check` runs as a real program in a scratch directory holding the
// submitted Artifacts and the WorkItem's inputs under their file names; (3) for a criterion with
// no check, the submitted Evidence for it (a reviewer Agent's, or the Worker's) must say passed;
// (4) the verdict combines them; (5) the report is kept as an Artifact for the human Approval.
//
// The report holds no clock readings and no paths, so the same submission gives the same bytes.

import {spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, normalize} from 'node:path'
import {sha256Hex} from '../../crypto/hash.js'
import type {SubmittedEvidence} from '../../authority/model/state.js'
import {mutated} from '../../mutants.js'
import type {PlanCriterion} from './plan.js'

export interface ReviewFile {
  /** The file name it was published under (a relative path), or its hash when it has none. */
  name: string
  hash: string
  bytes: Buffer
}

export interface CriterionResult {
  criterionId: string
  method: 'check' | 'submitted-evidence'
  passed: boolean
  /** The check's exit status. */
  exitCode?: number | null
  /** The check's last stdout line when it is a JSON object (e.g. counts of passed tests). */
  measured?: Record<string, unknown>
  /** The end of its output, for the Worker that reworks it. */
  output?: string
}

export interface ReviewReport {
  workItemId: string
  /** The submission reviewed: the Ownership Epoch it came under and its Artifacts. */
  ownershipEpoch: number
  artifacts: {name: string; hash: string}[]
  integrity: {passed: boolean; mismatched: string[]}
  criteria: CriterionResult[]
  verdict: 'accept' | 'rework'
}

export interface ReviewInput {
  workItemId: string
  ownershipEpoch: number
  submitted: ReviewFile[]
  inputs: ReviewFile[]
  criteria: readonly PlanCriterion[]
  evidence: readonly SubmittedEvidence[]
  /** Per check (default 120 s); a check that runs longer fails. */
  timeoutMs?: number
}

const OUTPUT_TAIL = 2000

export async function reviewSubmission(r: ReviewInput): Promise<ReviewReport> {
  if (mutated('review-accepts-anything'))
    return {
      workItemId: r.workItemId,
      ownershipEpoch: r.ownershipEpoch,
      artifacts: r.submitted.map((f) => ({name: f.name, hash: f.hash})),
      integrity: {passed: true, mismatched: []},
      criteria: [],
      verdict: 'accept',
    }
  const mismatched = [...r.submitted, ...r.inputs].filter((f) => `sha256:${sha256Hex(f.bytes)}` !== f.hash)
  const dir = mkdtempSync(join(tmpdir(), 'mwp-review-'))
  try {
    // Inputs first, so a submitted file of the same name (a revised source file) wins.
    for (const f of [...r.inputs, ...r.submitted]) place(dir, f)
    const criteria: CriterionResult[] = []
    for (const c of r.criteria) {
      if (c.check === undefined) {
        const stated = r.evidence.filter((e) => e.criterionIds.includes(c.id))
        criteria.push({
          criterionId: c.id,
          method: 'submitted-evidence',
          passed: stated.length > 0 && stated.every((e) => e.result === 'passed'),
        })
        continue
      }
      criteria.push({criterionId: c.id, method: 'check', ...(await runCheck(c.check, dir, r.timeoutMs ?? 120_000))})
    }
    const integrity = {passed: mismatched.length === 0, mismatched: mismatched.map((f) => f.name)}
    return {
      workItemId: r.workItemId,
      ownershipEpoch: r.ownershipEpoch,
      artifacts: r.submitted.map((f) => ({name: f.name, hash: f.hash})),
      integrity,
      criteria,
      verdict: integrity.passed && criteria.every((c) => c.passed) ? 'accept' : 'rework',
    }
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

/** One line per failed criterion, for the rework request (work.fail's reason, the Context Package). */
export function failures(report: ReviewReport): string[] {
  const out = report.integrity.passed ? [] : [`artifact integrity: ${report.integrity.mismatched.join(', ')}`]
  for (const c of report.criteria) {
    if (c.passed) continue
    const detail = typeof c.measured?.detail === 'string' ? c.measured.detail : lastLine(c.output ?? '')
    out.push(`${c.criterionId}: ${detail || (c.method === 'check' ? `exit ${c.exitCode}` : 'no passing Evidence')}`)
  }
  return out
}

/** Writes a file under dir, refusing names that would leave it. */
function place(dir: string, f: ReviewFile): void {
  const rel = normalize(f.name)
  const name = rel.startsWith('..') || rel.startsWith('/') ? f.hash.replace(':', '-') : rel
  const path = join(dir, name)
  mkdirSync(dirname(path), {recursive: true})
  writeFileSync(path, f.bytes)
}

function runCheck(
  command: string,
  cwd: string,
  timeoutMs: number,
): Promise<Omit<CriterionResult, 'criterionId' | 'method'>> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], {cwd, stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    const keep = (d: Buffer) => {
      out = (out + d.toString('utf8')).slice(-64 * 1024)
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      const measured = jsonObject(lastLine(out))
      resolve({
        passed: code === 0,
        exitCode: code,
        ...(measured ? {measured} : {}),
        output: out.slice(-OUTPUT_TAIL),
      })
    })
  })
}

const lastLine = (text: string) => text.trimEnd().split('\n').pop() ?? ''

function jsonObject(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined
  try {
    const v: unknown = JSON.parse(line)
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
