// One Ajv (Draft 2020-12) catalog over a directory of `*.schema.json` files, compiled once.
//
// Spec §2: every `format` is an assertion. ajv-formats supplies the standard formats, but its
// `date-time` accepts leap seconds, `-00:00`, year 0000 and a space separator, and its `uri`
// rejects the valid `example:`; both are replaced by the protocol's own checks.
//
// Values may be null-prototype objects (the strict JSON parser produces them); `ownProperties`
// makes `required` look only at own members, so an inherited `constructor`/`toString` on an
// ordinary object can never satisfy it either.
//
// Compiling is the expensive part of a short CLI run (importing Ajv and compiling one document
// schema cost more than the verification itself), so the build compiles the project's whole
// schema tree ahead of time (precompiled.ts, scripts/compile-schemas.ts). A catalog whose
// directory holds exactly those files uses the precompiled validators and never loads Ajv; any
// other directory, a changed file, or a schema from elsewhere is compiled here, as before.

import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import type {Ajv2020, AnySchemaObject, ErrorObject, Options, ValidateFunction} from 'ajv/dist/2020.js'
import {isProfileTimestamp} from '../json/timestamp.js'
import {isProtocolIdentifier} from '../json/uri.js'
import {PRECOMPILED_MODULE, type Precompiled, loadPrecompiled} from './precompiled.js'

// Ajv and ajv-formats are CommonJS: required synchronously, and only when something is compiled.
const require = createRequire(import.meta.url)

export interface SchemaError {
  instancePath: string
  /**
   * RFC 6901 JSON Pointer of the failing member: the instance path, and for a missing or an
   * unexpected member that member's own name (Ajv reports those at the parent object).
   */
  pointer: string
  message: string
  keyword: string
}

export type SchemaResult = {valid: true} | {valid: false; errors: SchemaError[]}

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
    pointer: pointerOf(e),
    message: e.message ?? e.keyword,
    keyword: e.keyword,
  }))
}

function pointerOf(e: ErrorObject): string {
  const params = e.params as {missingProperty?: unknown; additionalProperty?: unknown}
  const member = params.missingProperty ?? params.additionalProperty
  if (typeof member !== 'string') return e.instancePath
  return `${e.instancePath}/${member.replace(/~/g, '~0').replace(/\//g, '~1')}`
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
      const name = (JSON.parse(readFileSync(manifest, 'utf8')) as {name?: unknown}).name
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

/** The protocol's own `uri` and `date-time` checks, replacing ajv-formats' (`type: 'string'` keeps Ajv's rule that a format only constrains strings). */
const PROTOCOL_FORMATS = {
  uri: {type: 'string', validate: isProtocolIdentifier},
  'date-time': {type: 'string', validate: isProfileTimestamp},
} as const

/** The `format` definitions every catalog validates with, as precompiled validators receive them: ajv-formats' full set with the protocol's two. */
export function protocolFormats(): Record<string, unknown> {
  const {fullFormats} = require('ajv-formats/dist/formats.js') as {fullFormats: Record<string, unknown>}
  return {...fullFormats, ...PROTOCOL_FORMATS}
}

/** The catalog's Ajv; `code` options let the build emit the same validators as source. */
export function newAjv(code?: Options['code']): Ajv2020 {
  const {Ajv2020} = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')
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
    ...(code ? {code} : {}),
  })
  // The plugin registers the formats (and its formatMinimum/… keywords); then the protocol's own
  // `uri` and `date-time` replace its definitions.
  const addFormats = require('ajv-formats') as (ajv: Ajv2020) => Ajv2020
  addFormats(ajv)
  for (const [name, format] of Object.entries(PROTOCOL_FORMATS)) ajv.addFormat(name, format)
  return ajv
}

function readJson(path: string): AnySchemaObject {
  return JSON.parse(readFileSync(path, 'utf8')) as AnySchemaObject
}

class Catalog implements SchemaCatalog {
  readonly dir: string
  /** The build's validators when this directory holds exactly the schemas they were compiled from. */
  readonly precompiled: Precompiled | null
  #ajv: Ajv2020 | undefined
  /** The directory's schemas, registered with Ajv when it is first needed. */
  private readonly schemas: AnySchemaObject[] = []
  /** name, file name and `$id` of each directory schema -> its `$id` */
  private readonly ids = new Map<string, string>()
  /** name -> compiled validator (directory schemas on first use, external ones on compile) */
  private readonly byName = new Map<string, SchemaValidator>()
  private readonly shortNames: string[] = []
  /** `$id` -> JSON text of every external schema registered, to detect conflicting reuse */
  private readonly externalText = new Map<string, string>()

  constructor(dir: string) {
    this.dir = dir
    const files = existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith(SUFFIX))
          .sort()
      : []
    for (const file of files) {
      const schema = readJson(join(dir, file))
      // Cross-file `$ref`s resolve against `$id`, so every catalog schema must declare one.
      if (typeof schema.$id !== 'string') throw new Error(`schema ${join(dir, file)} has no $id`)
      this.schemas.push(schema)
      const short = file.slice(0, -SUFFIX.length)
      this.shortNames.push(short)
      for (const name of [short, file, schema.$id]) this.ids.set(name, schema.$id)
    }
    this.precompiled =
      files.length > 0 ? loadPrecompiled(dir, join(packageRoot(), PRECOMPILED_MODULE), protocolFormats) : null
  }

  /**
   * Ajv with every directory schema registered, so cross-file `$ref`s resolve; each compiles on
   * first use (Ajv caches the result), so a command that validates one kind does not pay for all.
   */
  private get ajv(): Ajv2020 {
    if (this.#ajv === undefined) {
      this.#ajv = newAjv()
      // Not checked against the Draft 2020-12 meta-schema here: compiling that meta-schema was a
      // fifth of every CLI start. The project's own schemas are checked against it, under a fully
      // strict Ajv, by test/schema/schemas.test.ts; external schemas (compileExternal) still are here.
      for (const schema of this.schemas) this.#ajv.addSchema(schema, undefined, undefined, false)
    }
    return this.#ajv
  }

  validator(name: string): SchemaValidator {
    let validate = this.byName.get(name)
    if (validate === undefined) {
      const id = this.ids.get(name)
      if (id === undefined) throw new Error(`unknown schema ${JSON.stringify(name)} in ${this.dir}`)
      validate = this.precompiled?.validator(id) ?? this.ajv.getSchema(id)
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
    if (validate(value)) return {valid: true}
    return {valid: false, errors: toSchemaErrors(validate.errors)}
  }

  names(): string[] {
    return [...this.shortNames]
  }

  compileExternal(schema: AnySchemaObject, ...companions: AnySchemaObject[]): SchemaValidator {
    // A schema of the precompiled tree (payloads/, config/), unchanged since the build.
    const ready = companions.length === 0 ? this.precompiled?.exact(schema) : undefined
    if (ready !== undefined) return this.ids.has(schema.$id!) ? this.validator(schema.$id!) : ready
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
