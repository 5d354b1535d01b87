// One Ajv (Draft 2020-12) catalog over a directory of `*.schema.json` files, compiled once.
//
// Spec §2: every `format` is an assertion. ajv-formats supplies the standard formats, but its
// `date-time` accepts leap seconds, `-00:00`, year 0000 and a space separator, and its `uri`
// rejects the valid `example:`; both are replaced by the protocol's own checks.
//
// Validation is on the signature-verification hot path, so every schema is compiled when the
// catalog loads and lookups are a Map get. Values may be null-prototype objects (the strict JSON
// parser produces them); `ownProperties` makes `required` look only at own members, so an
// inherited `constructor`/`toString` on an ordinary object can never satisfy it either.

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { AnySchemaObject, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js'
import formatsModule from 'ajv-formats'
import { isProfileTimestamp } from '../json/timestamp.js'
import { isProtocolIdentifier } from '../json/uri.js'

// ajv-formats is CommonJS: under NodeNext the default import is `module.exports` at runtime
// (the plugin function itself) while its typings describe `{ default: plugin }`. Accept both.
const addFormats: typeof formatsModule.default =
  (formatsModule as unknown as { default?: typeof formatsModule.default }).default ??
  (formatsModule as unknown as typeof formatsModule.default)

export interface SchemaError {
  instancePath: string
  message: string
  keyword: string
}

export type SchemaResult = { valid: true } | { valid: false; errors: SchemaError[] }

/** A compiled validator; `errors` holds the result of the last failing call (Ajv convention). */
export type SchemaValidator = ValidateFunction

export interface SchemaCatalog {
  /** Absolute directory the catalog was loaded from. */
  readonly dir: string
  /** Validates against a catalog schema named `command`, `command.schema.json` or its full `$id`. */
  validate(name: string, value: unknown): SchemaResult
  /** The compiled validator for hot paths; throws for an unknown name. */
  validator(name: string): SchemaValidator
  /** True when `name` resolves to a catalog or external schema. */
  has(name: string): boolean
  /** Short names (`command`, ...) of the schemas loaded from the directory, sorted. */
  names(): string[]
  /**
   * Compiles a schema that is not in the directory (e.g. a conformance-bundle fixture schema),
   * after registering any `companions` it references. Schemas with `$id` are cached by `$id`;
   * they may `$ref` catalog schemas. Registering different content under a known `$id` throws.
   */
  compileExternal(schema: AnySchemaObject, ...companions: AnySchemaObject[]): SchemaValidator
  /** Reads a JSON schema file and compiles it with `compileExternal`. */
  compileExternalFile(path: string): SchemaValidator
}

/** Converts Ajv errors to the small, stable shape the rest of the code reports. */
export function toSchemaErrors(errors: readonly ErrorObject[] | null | undefined): SchemaError[] {
  return (errors ?? []).map((e) => ({
    instancePath: e.instancePath,
    message: e.message ?? e.keyword,
    keyword: e.keyword,
  }))
}

const SUFFIX = '.schema.json'
const PACKAGE_NAME = 'mwp'

/**
 * The package root: the nearest ancestor of this module with a package.json named "mwp". Works
 * from `src/schema/` (vitest, tsx) and from `dist/src/schema/` (compiled) alike.
 */
export function packageRoot(): string {
  root ??= findPackageRoot()
  return root
}

// Found once: catalog lookups sit on the verification hot path.
let root: string | undefined

function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name
      if (name === PACKAGE_NAME) return dir
    }
    const parent = dirname(dir)
    if (parent === dir) {
      throw new Error(`no package.json named ${PACKAGE_NAME} above ${fileURLToPath(import.meta.url)}`)
    }
    dir = parent
  }
}

/** The project's own normative schemas directory. */
export function defaultSchemaDir(): string {
  return join(packageRoot(), 'schemas')
}

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    // strictSchema/strictNumbers/strictTuples stay on (unknown keywords are errors). strictTypes
    // and strictRequired are authoring lints that throw on the normative schemas' conditional
    // `then: {required: [...]}` branches, which are correct Draft 2020-12; turn just those off.
    strict: true,
    strictTypes: false,
    strictRequired: false,
    allErrors: false,
    validateFormats: true,
    ownProperties: true,
  })
  addFormats(ajv)
  // Override after the plugin so the protocol definitions win. `type: 'string'` keeps Ajv's
  // rule that a format only constrains strings.
  ajv.addFormat('uri', { type: 'string', validate: isProtocolIdentifier })
  ajv.addFormat('date-time', { type: 'string', validate: isProfileTimestamp })
  return ajv
}

function readJson(path: string): AnySchemaObject {
  return JSON.parse(readFileSync(path, 'utf8')) as AnySchemaObject
}

class Catalog implements SchemaCatalog {
  readonly dir: string
  private readonly ajv = newAjv()
  /** name, file name and `$id` of each directory schema -> its `$id` */
  private readonly ids = new Map<string, string>()
  /** name -> compiled validator (directory schemas on first use, external ones on compile) */
  private readonly byName = new Map<string, SchemaValidator>()
  private readonly shortNames: string[] = []
  /** `$id` -> JSON text of every external schema registered, to detect conflicting reuse */
  private readonly externalText = new Map<string, string>()

  constructor(dir: string) {
    this.dir = dir
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(SUFFIX)).sort() : []
    // Register everything so cross-file `$ref`s resolve; compile each schema on first use (Ajv
    // caches the result), so a command that validates one kind does not pay for all 22.
    for (const file of files) {
      const schema = readJson(join(dir, file))
      // Cross-file `$ref`s resolve against `$id`, so every catalog schema must declare one.
      if (typeof schema.$id !== 'string') throw new Error(`schema ${join(dir, file)} has no $id`)
      // Not checked against the Draft 2020-12 meta-schema here: compiling that meta-schema was a
      // fifth of every CLI start. The project's own schemas are checked against it, under a fully
      // strict Ajv, by test/schemas.test.ts; external schemas (compileExternal) still are here.
      this.ajv.addSchema(schema, undefined, undefined, false)
      const short = file.slice(0, -SUFFIX.length)
      this.shortNames.push(short)
      for (const name of [short, file, schema.$id]) this.ids.set(name, schema.$id)
    }
  }

  validator(name: string): SchemaValidator {
    let validate = this.byName.get(name)
    if (validate === undefined) {
      const id = this.ids.get(name)
      if (id === undefined) throw new Error(`unknown schema ${JSON.stringify(name)} in ${this.dir}`)
      validate = this.ajv.getSchema(id)
      if (validate === undefined) throw new Error(`schema ${name} did not compile`)
      this.byName.set(name, validate)
    }
    return validate
  }

  has(name: string): boolean {
    return this.ids.has(name) || this.byName.has(name)
  }

  validate(name: string, value: unknown): SchemaResult {
    const validate = this.validator(name)
    if (validate(value)) return { valid: true }
    return { valid: false, errors: toSchemaErrors(validate.errors) }
  }

  names(): string[] {
    return [...this.shortNames]
  }

  compileExternal(schema: AnySchemaObject, ...companions: AnySchemaObject[]): SchemaValidator {
    for (const companion of companions) this.register(companion)
    const id = this.register(schema)
    if (id === undefined) return this.ajv.compile(schema) // anonymous: Ajv caches by object
    const cached = this.byName.get(id)
    if (cached !== undefined) return cached
    let validate: SchemaValidator | undefined
    try {
      validate = this.ajv.getSchema(id)
    } catch (error) {
      // Forget a schema that does not compile (e.g. an unresolved $ref) so a retry starts clean.
      if (this.externalText.delete(id)) this.ajv.removeSchema(id)
      throw error
    }
    if (validate === undefined) throw new Error(`schema ${id} did not compile`)
    this.byName.set(id, validate)
    return validate
  }

  compileExternalFile(path: string): SchemaValidator {
    return this.compileExternal(readJson(path))
  }

  /** Adds a schema with `$id` to Ajv once; returns its `$id`, or undefined when it has none. */
  private register(schema: AnySchemaObject): string | undefined {
    const id = schema.$id
    if (typeof id !== 'string') return undefined
    const text = JSON.stringify(schema)
    const known = this.externalText.get(id)
    if (known !== undefined) {
      if (known !== text) throw new Error(`a different schema is already registered as ${id}`)
      return id
    }
    if (this.ajv.getSchema(id) !== undefined) {
      // A directory schema: reusing it is fine only when the content is identical.
      if (JSON.stringify(this.ajv.getSchema(id)!.schema) !== text) {
        throw new Error(`external schema ${id} conflicts with the catalog schema of the same $id`)
      }
      return id
    }
    this.ajv.addSchema(schema)
    this.externalText.set(id, text)
    return id
  }
}

const catalogs = new Map<string, SchemaCatalog>()
let defaultCatalog: SchemaCatalog | undefined

/**
 * The catalog for `dir` (default: the project's `schemas/`), loaded and compiled once per
 * resolved directory and then shared.
 */
export function schemaCatalog(dir?: string): SchemaCatalog {
  if (dir === undefined) return (defaultCatalog ??= schemaCatalog(defaultSchemaDir()))
  const key = resolve(dir)
  let catalog = catalogs.get(key)
  if (catalog === undefined) {
    catalog = new Catalog(key)
    catalogs.set(key, catalog)
  }
  return catalog
}
