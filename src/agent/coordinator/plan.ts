// A Coordinator's plan for one Mission (spec §10.1, §10.4, §13.2, §14, §7.3): a file the user
// writes, JSON or YAML, validated by schemas/config/plan.schema.json. It names the WorkItems, their
// dependencies, the deterministic checks the Coordinator's review runs on each submission, the
// WorkItems promoted to child Missions, and the corrective WorkItems a change request adds.
//
// The plan is the Coordinator's own planning input, never a protocol document: what it produces
// from it (WorkItems with complete Work Contracts, offers, reviews) goes through signed Commands.

import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {parse as parseYaml} from 'yaml'
import {MwpError} from '../../errors.js'
import {defaultSchemaDir, schemaCatalog, toSchemaErrors} from '../../schema/catalog.js'
import type {Budget, EvidenceType} from '../../authority/model/payloads.generated.js'

export interface PlanCapability {
  id: string
  version: string
}

export interface PlanCriterion {
  id: string
  description: string
  evidence?: EvidenceType[]
  /** Shell command run by the review in a directory holding the Artifacts; exit 0 passes. */
  check?: string
}

export interface PlanDeliverable {
  id: string
  description: string
  mediaType: string
  schema?: string
}

export interface PlanChild {
  objective: string
  coordinator: string
  deadlineMinutes?: number
  budget?: Budget
  onFailure?: 'block' | 'fail'
}

export interface PlanItem {
  key: string
  goal: string
  deliverables: PlanDeliverable[]
  criteria: PlanCriterion[]
  dependsOn?: string[]
  inputsFrom?: string[]
  capability?: PlanCapability
  urgency?: 'routine' | 'normal' | 'high' | 'critical'
  businessImpact?: string
  sideEffectRisk?: 'none' | 'reversible' | 'external' | 'high_risk' | 'destructive'
  executionApproval?: 'not_required' | 'policy_required' | 'human_required'
  budget?: Budget
  deadlineMinutes?: number
  prefer?: string[]
  /** The Agents that produced these WorkItems' results are never offered this one. */
  independentOf?: string[]
  constraints?: Record<string, unknown>
  replaces?: string
  child?: PlanChild
}

export interface PlanDefaults {
  capability?: PlanCapability
  deadlineMinutes?: number
  budget?: Budget
  offerSeconds?: number
  startSeconds?: number
  maxRounds?: number
  retryPolicy?: {
    maxAttempts: number
    backoff: 'none' | 'fixed' | 'exponential'
    maxDelay: string
    retryableFailures: string[]
  }
}

export interface Plan {
  objective: string
  missionId?: string
  defaults?: PlanDefaults
  workItems: PlanItem[]
  onChangeRequest?: PlanItem[]
  submit?: string[]
  /** Where it was read from (for messages). */
  source: string
}

/** A plan that cannot be used: a usage error (exit 2), like any invalid Agent configuration. */
export class PlanError extends MwpError<'plan-invalid'> {
  constructor(message: string) {
    super('plan-invalid', message)
  }
}

let validator: ReturnType<ReturnType<typeof schemaCatalog>['compileExternalFile']> | undefined

/** Parses plan text (JSON, or YAML when `where` ends in .yaml/.yml) and checks it. */
export function parsePlan(text: string, where: string): Plan {
  let doc: unknown
  try {
    doc = /\.ya?ml$/i.test(where) ? parseYaml(text) : JSON.parse(text)
  } catch (e) {
    throw new PlanError(`${where} cannot be parsed: ${(e as Error).message}`)
  }
  validator ??= schemaCatalog().compileExternalFile(join(defaultSchemaDir(), 'config', 'plan.schema.json'))
  if (!validator(doc)) {
    const why = toSchemaErrors(validator.errors)
      .map((e) => `${e.pointer || '/'} ${e.message}`)
      .join('; ')
    throw new PlanError(`${where} is not a valid plan: ${why}`)
  }
  const plan = {...(doc as Omit<Plan, 'source'>), source: where}
  checkGraph(plan)
  return plan
}

export function readPlan(path: string): Plan {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    throw new PlanError(`cannot read the plan ${path}: ${(e as Error).message}`)
  }
  return parsePlan(text, path)
}

/** The plan a Mission is bound to: the one naming its Mission ID, else its objective. */
export function planFor(plans: readonly Plan[], mission: {missionId: string; objective: string}): Plan | null {
  return (
    plans.find((p) => p.missionId === mission.missionId) ??
    plans.find((p) => p.missionId === undefined && p.objective === mission.objective) ??
    null
  )
}

/**
 * What the schema cannot say: keys are unique, every reference names a WorkItem of the plan, and
 * the dependencies form a DAG (§10.4 rejects cycles; the plan is refused before anything is sent).
 */
function checkGraph(plan: Plan): void {
  const keys = new Set<string>()
  const all = [...plan.workItems, ...(plan.onChangeRequest ?? [])]
  for (const item of all) {
    if (keys.has(item.key)) throw new PlanError(`${plan.source}: the key "${item.key}" is used twice`)
    keys.add(item.key)
  }
  const main = new Set(plan.workItems.map((i) => i.key))
  for (const item of all) {
    // A corrective WorkItem may build on anything; the main graph only on the main graph.
    const known = main.has(item.key) ? main : keys
    for (const ref of [
      ...(item.dependsOn ?? []),
      ...(item.inputsFrom ?? []),
      ...(item.independentOf ?? []),
      ...(item.replaces ? [item.replaces] : []),
    ])
      if (!known.has(ref)) throw new PlanError(`${plan.source}: ${item.key} names an unknown WorkItem "${ref}"`)
  }
  for (const ref of plan.submit ?? [])
    if (!main.has(ref)) throw new PlanError(`${plan.source}: submit names an unknown WorkItem "${ref}"`)
  const byKey = new Map(all.map((i) => [i.key, i]))
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (key: string, path: string[]): void => {
    if (state.get(key) === 'done') return
    if (state.get(key) === 'visiting')
      throw new PlanError(`${plan.source}: dependency cycle ${[...path, key].join(' → ')}`)
    state.set(key, 'visiting')
    for (const d of byKey.get(key)!.dependsOn ?? []) visit(d, [...path, key])
    state.set(key, 'done')
  }
  for (const key of byKey.keys()) visit(key, [])
}
