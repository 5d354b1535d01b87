// Payload schemas for Command kinds (issue 4: the spec leaves payloads as objects; ours live in
// schemas/payloads/). Compiled once through the default catalog's compileExternalFile, so they
// can $ref ../common.schema.json by $id.

import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import type {ErrorCode} from '../../errors.js'
import {defaultSchemaDir, schemaCatalog, type SchemaValidator} from '../../schema/catalog.js'
import type {WorkContract} from '../model/payloads.generated.js'

const validators = new Map<string, SchemaValidator>()

/** The kinds with a payload schema: one file per kind, so adding a kind is adding its file. */
let kinds: ReadonlySet<string> | undefined
export function payloadKinds(): ReadonlySet<string> {
  kinds ??= new Set(
    readdirSync(join(defaultSchemaDir(), 'payloads'))
      .filter((f) => f.endsWith('.schema.json'))
      .map((f) => f.slice(0, -'.schema.json'.length)),
  )
  return kinds
}

function validatorFor(kind: string): SchemaValidator | null {
  if (!payloadKinds().has(kind)) return null
  let v = validators.get(kind)
  if (v === undefined) {
    v = schemaCatalog().compileExternalFile(join(defaultSchemaDir(), 'payloads', `${kind}.schema.json`))
    validators.set(kind, v)
  }
  return v
}

/** 'valid', 'invalid', or 'unknown-kind' when mwp defines no payload schema for the kind yet. */
export function checkPayload(kind: string, payload: unknown): 'valid' | 'invalid' | 'unknown-kind' {
  const v = validatorFor(kind)
  if (v === null) return 'unknown-kind'
  return v(payload) ? 'valid' : 'invalid'
}

/** The payload step of both Command paths: a kind without a schema is not a Command mwp accepts. */
export function payloadError(kind: string, payload: unknown): ErrorCode | null {
  const checked = checkPayload(kind, payload)
  return checked === 'unknown-kind' ? 'INVALID_COMMAND' : checked === 'invalid' ? 'SCHEMA_VALIDATION_FAILED' : null
}

/** §10.1: a Work Contract is a valid work-contract.schema.json document (the decider's DecideContext.validWorkContract). */
export const validWorkContract = (contract: unknown): contract is WorkContract =>
  schemaCatalog().validate('work-contract', contract).valid
