// requirements.json, the document the requirements stage writes and every later stage reads: the
// library's functions and its acceptance criteria (each one example call and its expected result).

import type {JsonValue} from '../../json/parse.js'
import {isRecord} from './stage.js'

export const CRITERION_ID = /^[a-z][a-z0-9-]*$/

export interface RequiredFunction {
  name: string
  signature: string
  doc: string
}

export interface RequirementCriterion {
  criterionId: string
  function: string
  args: JsonValue[]
  expected: JsonValue
}

export interface Requirements {
  project: string
  seed: number
  functions: RequiredFunction[]
  acceptanceCriteria: RequirementCriterion[]
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** What is wrong with a parsed requirements.json, one sentence per problem; empty when it is well formed. */
export function requirementsProblems(value: unknown): string[] {
  if (!isRecord(value)) return ['requirements.json is not a JSON object']
  const problems: string[] = []
  if (typeof value.project !== 'string' || value.project === '') problems.push('project is not a non-empty string')
  if (typeof value.seed !== 'number' || !Number.isSafeInteger(value.seed)) problems.push('seed is not an integer')
  const names = new Set<string>()
  if (!Array.isArray(value.functions) || value.functions.length === 0)
    problems.push('functions is not a non-empty array')
  else
    value.functions.forEach((f: unknown, i) => {
      if (!isRecord(f) || typeof f.name !== 'string' || !IDENTIFIER.test(f.name))
        return problems.push(`functions[${i}] has no identifier name`)
      if (names.has(f.name)) problems.push(`function ${f.name} is declared twice`)
      names.add(f.name)
      if (typeof f.signature !== 'string' || !f.signature.startsWith(`${f.name}(`))
        problems.push(`function ${f.name} has no signature of its name`)
      if (typeof f.doc !== 'string' || f.doc === '') problems.push(`function ${f.name} has no doc`)
    })
  const ids = new Set<string>()
  if (!Array.isArray(value.acceptanceCriteria) || value.acceptanceCriteria.length === 0)
    problems.push('acceptanceCriteria is not a non-empty array')
  else
    value.acceptanceCriteria.forEach((c: unknown, i) => {
      if (!isRecord(c) || typeof c.criterionId !== 'string' || !CRITERION_ID.test(c.criterionId))
        return problems.push(`acceptanceCriteria[${i}] has no criterionId matching ${CRITERION_ID.source}`)
      if (ids.has(c.criterionId)) problems.push(`criterion ${c.criterionId} appears twice`)
      ids.add(c.criterionId)
      if (typeof c.function !== 'string' || !names.has(c.function))
        problems.push(`criterion ${c.criterionId} names no declared function`)
      if (!Array.isArray(c.args)) problems.push(`criterion ${c.criterionId} has no args array`)
      if (!('expected' in c)) problems.push(`criterion ${c.criterionId} has no expected value`)
    })
  return problems
}

function isRequirements(value: unknown): value is Requirements {
  return requirementsProblems(value).length === 0
}

/** requirements.json's text as Requirements, or null when it is not JSON or not well formed. */
export function parseRequirements(text: string): Requirements | null {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  return isRequirements(value) ? value : null
}
