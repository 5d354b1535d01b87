// What one check of the proof of concept's work reports: the Coordinator reads it from check.js's
// stdout, the reviewer Agent puts it in review.json.

export interface CheckResult {
  check: string
  passed: boolean
  /** The numbers (and flags) the check measured, so a verdict can be audited, not just trusted. */
  measured: Record<string, number | string | boolean>
  /** For people: the first diagnostics, the failing tests' names, the violations. */
  detail?: string
}
