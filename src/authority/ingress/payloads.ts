// The payload step of both Command paths (schemas/payloads/, src/schema/payload-schemas.ts): a
// kind without a payload schema is not a Command mwp accepts; a payload that fails its schema is
// refused with the JSON Pointer of the first failing member, which its sender is told (the schema
// is public and the check reads nothing but the Command).

import {schemaCatalog} from '../../schema/catalog.js'
import {validatePayload} from '../../schema/payload-schemas.js'
import type {WorkContract} from '../model/payloads.generated.js'
import {type Refused, told} from './answers.js'

export function payloadError(kind: string, payload: unknown): Refused | null {
  const checked = validatePayload(kind, payload)
  if (checked === null) return told('INVALID_COMMAND', 'payload', `no Command kind ${kind} is defined`)
  if (checked.valid) return null
  const [first] = checked.errors
  const pointer = `/payload${first?.pointer ?? ''}`
  return told(
    'SCHEMA_VALIDATION_FAILED',
    'payload',
    `${kind} payload ${pointer}: ${first?.message ?? 'invalid'}`,
    pointer,
  )
}

/** §10.1: a Work Contract is a valid work-contract.schema.json document (the decider's DecideContext.validWorkContract). */
export const validWorkContract = (contract: unknown): contract is WorkContract =>
  schemaCatalog().validate('work-contract', contract).valid
