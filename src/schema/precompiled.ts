// The build's precompiled validators (scripts/compile-schemas.ts writes them under
// dist/schemas/): Ajv's standalone code for every schema of the project's `schemas/` tree,
// compiled with the catalog's own options and formats, one module per schema (with the schemas it
// references), loaded when that schema is first used: a command pays for what it validates.
//
// They are used only for a directory that holds exactly the files they were compiled from: the
// module records a hash over every `*.schema.json` of the tree (relative path and bytes), and a
// catalog computes the same hash over its directory before using them. A schema edited after the
// build, or any other directory, is compiled by Ajv as it always was.

import {createHash} from 'node:crypto'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join, relative} from 'node:path'
import type {AnySchemaObject, ValidateFunction} from 'ajv/dist/2020.js'

/** The index module the build writes, relative to the package root; the schema modules sit beside it. */
export const PRECOMPILED_MODULE = join('dist', 'schemas', 'validators.cjs')

/** The index module's exports. */
export interface PrecompiledIndex {
  /** treeHash() of the directory it was compiled from. */
  hash: string
  /** By `$id`: the schema's module (relative to the index) and sha256 of JSON.stringify(schema). */
  schemas: Record<string, {module: string; text: string}>
}

/**
 * A schema module's export: builds the validator with the catalog's format definitions, and a
 * `require` that finds Ajv's small runtime helpers from this package wherever the module lies.
 */
export type PrecompiledSchema = {load(formats: Record<string, unknown>, require: NodeRequire): ValidateFunction}

const packageRequire = createRequire(import.meta.url)

export interface Precompiled {
  /** The validator of the schema with this `$id`, if it was precompiled. */
  validator(id: string): ValidateFunction | undefined
  /** The precompiled validator of `schema` when it is the very schema compiled (same `$id`, same content). */
  exact(schema: AnySchemaObject): ValidateFunction | undefined
}

/** Every `*.schema.json` below `dir`, sorted by relative path. */
export function schemaFiles(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const entry of readdirSync(d, {withFileTypes: true})) {
      if (entry.isDirectory()) walk(join(d, entry.name))
      else if (entry.name.endsWith('.schema.json')) out.push(join(d, entry.name))
    }
  }
  walk(dir)
  return out.sort()
}

export function treeHash(dir: string): string {
  const hash = createHash('sha256')
  for (const file of schemaFiles(dir))
    hash.update(relative(dir, file)).update('\0').update(readFileSync(file)).update('\0')
  return hash.digest('hex')
}

export const textHash = (schema: AnySchemaObject): string =>
  createHash('sha256').update(JSON.stringify(schema)).digest('hex')

/** The build's validators (the module at `path`) for `dir`, or null when there are none or they were compiled from other files. */
export function loadPrecompiled(dir: string, path: string, formats: () => Record<string, unknown>): Precompiled | null {
  if (!existsSync(path)) return null
  const require = createRequire(path)
  const index = require(path) as PrecompiledIndex
  if (index.hash !== treeHash(dir)) return null
  let definitions: Record<string, unknown> | undefined
  const loaded = new Map<string, ValidateFunction>()
  const validator = (id: string) => {
    const entry = index.schemas[id]
    if (entry === undefined) return undefined
    let v = loaded.get(id)
    if (v === undefined)
      loaded.set(
        id,
        (v = (require(`./${entry.module}`) as PrecompiledSchema).load((definitions ??= formats()), packageRequire)),
      )
    return v
  }
  return {
    validator,
    exact: (schema) =>
      typeof schema.$id === 'string' && index.schemas[schema.$id]?.text === textHash(schema)
        ? validator(schema.$id)
        : undefined,
  }
}
