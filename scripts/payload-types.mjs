#!/usr/bin/env node
// Writes src/authority/model/payloads.generated.ts from schemas/payloads/*.schema.json: one
// interface per Command kind's payload, the common $defs they reach as named types, and the
// CommandPayloads table keyed by kind. Plain Node with no compile step, because tsc needs its
// output before it starts (npm run build, npm test, test/global-setup.ts).
//
// Only constructs whose TypeScript meaning is clear are accepted; any other keyword stops the
// build, so a schema edit can never widen a payload to `unknown` unnoticed. Keywords that only
// restrict values (lengths, patterns, formats, bounds, uniqueness, member counts, dependent
// members) constrain what the validator accepts and leave the type as it is.
//
//   node scripts/payload-types.mjs [--check] [--schemas DIR] [--out FILE]
//   --check: exit 1 when the file is not up to date; --schemas / --out: another tree (tests)

import {readFileSync, readdirSync, writeFileSync, existsSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const option = (name, fallback) => {
  const i = process.argv.indexOf(name)
  return i < 0 ? fallback : resolve(process.argv[i + 1])
}
const schemaDir = option('--schemas', join(root, 'schemas'))
const payloadDir = join(schemaDir, 'payloads')
const out = option('--out', join(root, 'src', 'authority', 'model', 'payloads.generated.ts'))

/** Keywords that restrict values without changing their TypeScript type. */
const VALUE_ONLY = new Set([
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'not',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'dependentRequired',
])
/** Annotations. */
const ANNOTATION = new Set(['$schema', '$id', '$comment', 'title', 'description', 'examples', 'default'])

class SchemaError extends Error {}
const fail = (where, message) => {
  throw new SchemaError(`${where}: ${message}`)
}

const pascal = (s) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')
const quoteKey = (k) =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : `'${k.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
const literal = (v) => {
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v)
  return fail('literal', `only string, number, boolean and null literals are typed, not ${JSON.stringify(v)}`)
}

/** The payload interface name of a kind: work.offer → WorkOfferPayload; ext.<org>.<profile>.<name> → <Profile><Name>Payload. */
function payloadTypeName(kind) {
  const parts = kind.split('.')
  const named = parts[0] === 'ext' ? parts.slice(2) : parts
  return `${pascal(named.join('.'))}Payload`
}

const files = new Map()
function load(file) {
  let s = files.get(file)
  if (s === undefined) {
    s = JSON.parse(readFileSync(file, 'utf8'))
    files.set(file, s)
  }
  return s
}

/** Named types emitted so far, by the file and JSON pointer they come from. */
const named = new Map()
const declarations = []
const takenNames = new Map()

/** The type name of a schema file (common.schema.json → ''; artifact.schema.json → Artifact). */
const fileStem = (file) =>
  relative(schemaDir, file) === 'common.schema.json'
    ? ''
    : pascal(
        relative(schemaDir, file)
          .replace(/\.schema\.json$/, '')
          .replace(/^payloads\//, ''),
      )

function nameFor(file, pointer) {
  const def = pointer.match(/^\/\$defs\/([^/]+)$/)
  if (pointer !== '' && def === null)
    fail(`${relative(root, file)}#${pointer}`, 'only whole files and top-level $defs are referenced')
  let name = pointer === '' ? fileStem(file) : `${fileStem(file)}${pascal(def[1])}`
  const key = `${file}#${pointer}`
  if (takenNames.has(name) && takenNames.get(name) !== key)
    fail(key, `type name ${name} is already taken by ${takenNames.get(name)}`)
  takenNames.set(name, key)
  return name
}

/** The named type a $ref points at, emitting its declaration the first time. */
function refType(ref, fromFile, where) {
  const [path, fragment = ''] = ref.split('#')
  const file = path === '' ? fromFile : resolve(dirname(fromFile), path)
  if (!existsSync(file)) fail(where, `$ref ${ref} names no file`)
  const key = `${file}#${fragment}`
  const found = named.get(key)
  if (found !== undefined) return found
  let schema = load(file)
  if (fragment !== '') {
    for (const segment of fragment.split('/').slice(1)) {
      schema = schema?.[segment]
      if (schema === undefined) fail(where, `$ref ${ref} points at nothing`)
    }
  }
  const name = nameFor(file, fragment)
  named.set(key, name)
  const at = `${relative(root, file)}#${fragment}`
  const body = typeOf(schema, file, at)
  const doc = docOf(schema)
  declarations.push(
    isObjectBody(schema) ? `${doc}export interface ${name} ${body}` : `${doc}export type ${name} = ${body}`,
  )
  return name
}

const docOf = (schema) =>
  typeof schema === 'object' && typeof schema.description === 'string'
    ? `/** ${schema.description.replace(/\*\//g, '* /')} */\n`
    : ''
const isObjectBody = (schema) =>
  typeof schema === 'object' &&
  schema.$ref === undefined &&
  schema.properties !== undefined &&
  schema.additionalProperties === false

const TYPES = {string: 'string', integer: 'number', number: 'number', boolean: 'boolean', null: 'null'}

/**
 * The TypeScript type of `schema`. `where` names the schema in errors.
 * `true` is any JSON value.
 */
function typeOf(schema, file, where) {
  if (schema === true) return 'JsonValue'
  if (schema === false || typeof schema !== 'object' || schema === null)
    fail(where, `unsupported schema ${JSON.stringify(schema)}`)
  for (const k of Object.keys(schema)) {
    if (VALUE_ONLY.has(k) || ANNOTATION.has(k)) continue
    if (
      ![
        'type',
        'properties',
        'required',
        'additionalProperties',
        '$ref',
        'enum',
        'const',
        'items',
        '$defs',
        'anyOf',
        'propertyNames',
      ].includes(k)
    ) {
      fail(where, `keyword ${k} has no TypeScript meaning in this generator`)
    }
  }
  if (schema.$ref !== undefined) return refWithSiblings(schema, file, where)
  if (schema.const !== undefined) return literal(schema.const)
  if (schema.enum !== undefined) {
    if (!Array.isArray(schema.enum) || schema.enum.length === 0) fail(where, 'enum must list values')
    return schema.enum.map(literal).join(' | ')
  }
  if (schema.anyOf !== undefined) presenceOnly(schema.anyOf, where)
  const type = schema.type
  if (Array.isArray(type)) fail(where, 'a type list is not supported')
  if (type === 'object') return objectType(schema, file, where)
  if (type === 'array') {
    if (typeof schema.items !== 'object' || Array.isArray(schema.items))
      fail(where, 'an array needs one `items` schema')
    const item = typeOf(schema.items, file, `${where}/items`)
    return item.startsWith('{') || !/[ |&]/.test(item) ? `${item}[]` : `(${item})[]`
  }
  if (type !== undefined && TYPES[type] !== undefined) {
    for (const k of ['properties', 'items', 'additionalProperties'])
      if (schema[k] !== undefined) fail(where, `${k} on a ${type}`)
    return TYPES[type]
  }
  return fail(where, `no type, $ref, enum or const (${JSON.stringify(schema).slice(0, 80)})`)
}

/**
 * `anyOf` of branches that only require members the object already declares (a budget must bound
 * at least one dimension) is a presence rule on those members: the validator enforces it, the
 * members keep their types. Any other anyOf is refused.
 */
function presenceOnly(branches, where) {
  if (!Array.isArray(branches)) fail(where, 'anyOf must be a list')
  for (const b of branches) {
    const extra = Object.keys(b).filter((k) => k !== 'properties' && k !== 'required')
    const typed = Object.values(b.properties ?? {}).some((v) => v !== true)
    if (extra.length > 0 || typed) fail(where, 'only an anyOf of required-member alternatives is supported')
  }
}

function objectType(schema, file, where) {
  const props = schema.properties
  const extra = schema.additionalProperties
  // Keys are strings whatever their schema says of them; the name rule is the validator's.
  if (schema.propertyNames !== undefined) typeOf(schema.propertyNames, file, `${where}/propertyNames`)
  if (props === undefined) {
    // An object the schema leaves open: a plain JSON object (checked where it is used), or a map.
    if (extra === undefined || extra === true) return 'JsonObject'
    if (extra === false) return 'Record<string, never>'
    return `{[key: string]: ${typeOf(extra, file, `${where}/additionalProperties`)}}`
  }
  // Members beside an open index would need it to cover their types; no payload schema asks for that.
  if (extra !== false) fail(where, 'an object with properties must set additionalProperties: false')
  const required = new Set(schema.required ?? [])
  for (const r of required) if (!Object.hasOwn(props, r)) fail(where, `required member ${r} is not a property`)
  const lines = Object.entries(props).map(([k, v]) => {
    const type = typeOf(v, file, `${where}/properties/${k}`).replace(/\n/g, '\n  ')
    return `${docOf(v).replace(/^(?=.)/gm, '  ')}  ${quoteKey(k)}${required.has(k) ? '' : '?'}: ${type}`
  })
  return `{\n${lines.join('\n')}\n}`
}

/**
 * A $ref with sibling keywords. The one form the schemas use: the referenced object plus
 * `required` over members it declares (re-listed as `true`), i.e. the same object with those
 * members present.
 */
function refWithSiblings(schema, file, where) {
  const base = refType(schema.$ref, file, `${where}/$ref`)
  const siblings = Object.keys(schema).filter((k) => k !== '$ref' && !ANNOTATION.has(k) && !VALUE_ONLY.has(k))
  if (siblings.length === 0) return base
  for (const k of siblings)
    if (!['type', 'properties', 'required'].includes(k)) fail(where, `$ref beside ${k} is not supported`)
  if (schema.type !== undefined && schema.type !== 'object') fail(where, '$ref beside a non-object type')
  const props = schema.properties ?? {}
  if (Object.values(props).some((v) => v !== true)) fail(where, 'members beside a $ref may only be re-listed as `true`')
  const required = schema.required ?? []
  for (const r of required) if (!Object.hasOwn(props, r)) fail(where, `required member ${r} is not re-listed`)
  return required.length === 0 ? base : `${base} & Required<Pick<${base}, ${required.map(literal).join(' | ')}>>`
}

/** Whole-document schemas beside the payloads whose types the decider needs. */
const DOCUMENTS = ['work-contract.schema.json', 'extensions/bounded-offline-execution.schema.json']

function generate() {
  const kinds = readdirSync(payloadDir)
    .filter((f) => f.endsWith('.schema.json'))
    .map((f) => f.slice(0, -'.schema.json'.length))
    .sort()
  const payloads = []
  for (const kind of kinds) {
    const file = join(payloadDir, `${kind}.schema.json`)
    const schema = load(file)
    const where = relative(root, file)
    if (schema.type !== 'object') fail(where, 'a payload schema is an object schema')
    const name = payloadTypeName(kind)
    if (takenNames.has(name)) fail(where, `type name ${name} is already taken by ${takenNames.get(name)}`)
    takenNames.set(name, `${file}#`)
    named.set(`${file}#`, name)
    // Local $defs are named after the payload (WorkOfferCandidateBasis), through refType.
    const body = typeOf(schema, file, where)
    payloads.push({kind, name, text: `${docOf(schema)}export interface ${name} ${body}`})
  }
  // The signed documents the decider reads inside payloads and state (a Work Contract checked by
  // DecideContext.validWorkContract, an Approval verified by ingress): typed from their own schemas.
  for (const document of DOCUMENTS) refType(join(schemaDir, document), join(schemaDir, document), document)
  const table = kinds.map((k) => `  '${k}': ${payloadTypeName(k)}`).join('\n')
  return [
    '// Generated by scripts/payload-types.mjs from schemas/payloads/*.schema.json (npm run build). Do not',
    '// edit: change the schema and rebuild. Not committed (.gitignore).',
    '',
    "import type {JsonObject, JsonValue} from '../../json/parse.js'",
    '',
    ...payloads.map((p) => `${p.text}\n`),
    ...declarations.map((d) => `${d}\n`),
    '/** Every Command kind with a payload schema, and the type of its (schema-checked) payload. */',
    `export interface CommandPayloads {\n${table}\n}`,
    '',
    'export type CommandKind = keyof CommandPayloads',
    '',
  ].join('\n')
}

try {
  const text = generate()
  const current = existsSync(out) ? readFileSync(out, 'utf8') : null
  if (process.argv.includes('--check')) {
    if (current !== text) {
      console.error(`${relative(root, out)} is not up to date: run node scripts/payload-types.mjs`)
      process.exit(1)
    }
  } else if (current !== text) {
    writeFileSync(out, text)
  }
} catch (e) {
  if (!(e instanceof SchemaError)) throw e
  console.error(`payload-types: ${e.message}`)
  process.exit(1)
}
