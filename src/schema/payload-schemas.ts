// The Command payload schemas (issue 4: the spec leaves payloads as objects; ours live in
// schemas/payloads/, one file per kind, so adding a kind is adding its file). Compiled once each
// through the default catalog's compileExternalFile, so they can $ref ../common.schema.json by $id.
// Ingress checks every Command's payload with them (authority/ingress/payloads.ts); `mwp validate
// --schema KIND` checks a payload file before it is signed.

import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {defaultSchemaDir, type SchemaResult, type SchemaValidator, schemaCatalog, toSchemaErrors} from './catalog.js'

const validators = new Map<string, SchemaValidator>()

let kinds: ReadonlySet<string> | undefined
/** The Command kinds with a payload schema. */
export function payloadKinds(): ReadonlySet<string> {
  kinds ??= new Set(
    readdirSync(join(defaultSchemaDir(), 'payloads'))
      .filter((f) => f.endsWith('.schema.json'))
      .map((f) => f.slice(0, -'.schema.json'.length))
      .sort(),
  )
  return kinds
}

/** The compiled payload validator of `kind`, or null when mwp defines no payload schema for it. */
export function payloadValidator(kind: string): SchemaValidator | null {
  if (!payloadKinds().has(kind)) return null
  let v = validators.get(kind)
  if (v === undefined) {
    v = schemaCatalog().compileExternalFile(join(defaultSchemaDir(), 'payloads', `${kind}.schema.json`))
    validators.set(kind, v)
  }
  return v
}

/** Validates a payload against its kind's schema; null for a kind without one. */
export function validatePayload(kind: string, payload: unknown): SchemaResult | null {
  const v = payloadValidator(kind)
  if (v === null) return null
  return v(payload) ? {valid: true} : {valid: false, errors: toSchemaErrors(v.errors)}
}
