// Shapes shared by the bundle runners and the `mwp conformance run` renderer.

export type BundleName = 'structural' | 'cryptography' | 'admission'
export const BUNDLES: readonly BundleName[] = ['structural', 'cryptography', 'admission']

export interface CaseResult {
  bundle: BundleName
  /** Case ID plus evaluation index, or the structural vector's name. */
  id: string
  expected: string
  actual: string
  pass: boolean
  /** The manifest's fault ID for a failure evaluation. */
  fault?: string
  /** Our protected diagnostic reason for a rejection (conformance runs are local, not wire). */
  reason?: string
  /** Why a case failed (for the operator; conformance input is not protocol traffic). */
  detail?: string
}

export interface BundleReport {
  bundle: BundleName
  root: string
  total: number
  passed: number
  failed: number
  /** Counts of expected outcomes, e.g. {valid: 27, invalid: 31} or {complete: 12, 'rejected:parse': 4}. */
  breakdown: Record<string, number>
  cases: CaseResult[]
}

export type Progress = (result: CaseResult, done: number, total: number) => void

export function summarize(bundle: BundleName, root: string, cases: CaseResult[]): BundleReport {
  const breakdown: Record<string, number> = {}
  for (const c of cases) breakdown[c.expected] = (breakdown[c.expected] ?? 0) + 1
  const passed = cases.filter((c) => c.pass).length
  return {bundle, root, total: cases.length, passed, failed: cases.length - passed, breakdown, cases}
}
