// The project's own 22 JSON Schemas (schemas/*.schema.json), authored from the specification.
//
// 1. Every file named in spec §21 exists, parses, carries the right `$schema`/`$id`/`title`,
//    compiles in the catalog and under a fully strict Ajv, and is not a byte copy of upstream.
// 2. The 58 upstream structural vectors (conformance/manifest.json) give the expected verdicts.
// 3. Differential proof of equivalence: deterministic mutations of the upstream vectors, the
//    valid signed documents and a few derived documents must get the same valid/invalid verdict
//    from our schema and from the normative upstream schema of the same name (read in place,
//    never copied). Mutations: every path deleted, retyped, emptied, set to boundary numbers and
//    lengths, to declared enum values and to values seen elsewhere; members added, renamed and
//    reduced; arrays emptied and duplicated; plus a grid over the members that drive each
//    schema's if/then rules and random pairs of single mutations.

import {existsSync, readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {Ajv2020} from 'ajv/dist/2020.js'
import formatsModule from 'ajv-formats'
import {defaultSchemaDir, schemaCatalog} from '../../src/schema/catalog.js'
import type {SchemaCatalog} from '../../src/schema/catalog.js'
import {mulberry32} from '../../src/poc/faults/prng.js'

const UPSTREAM = '/work/shared/protocol'
const UPSTREAM_SCHEMAS = join(UPSTREAM, 'schemas')
const OURS = defaultSchemaDir()
const ID_BASE = 'https://missionweaveprotocol.dev/schemas/0.1/'
const DRAFT = 'https://json-schema.org/draft/2020-12/schema'

/** Spec §21, in the order listed there. */
const SCHEMA_FILES = [
  'common.schema.json',
  'websocket-frame.schema.json',
  'command.schema.json',
  'event.schema.json',
  'agent-card.schema.json',
  'presence-record.schema.json',
  'mission.schema.json',
  'group.schema.json',
  'membership.schema.json',
  'conversation.schema.json',
  'message.schema.json',
  'work-contract.schema.json',
  'work-item.schema.json',
  'artifact.schema.json',
  'evidence.schema.json',
  'lease.schema.json',
  'approval.schema.json',
  'context-package.schema.json',
  'group-snapshot.schema.json',
  'extension-profile.schema.json',
  'first-admission-record.schema.json',
  'error.schema.json',
] as const

type Json = null | boolean | number | string | Json[] | {[key: string]: Json}
type JsonObject = {[key: string]: Json}

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)
const readJson = (path: string): Json => JSON.parse(readFileSync(path, 'utf8')) as Json
const upstreamPresent = existsSync(join(UPSTREAM, 'conformance/manifest.json')) && existsSync(UPSTREAM_SCHEMAS)

/** Registers a skipped (locally) or failing (CI) placeholder when the upstream bundle is absent. */
function requireUpstream(): boolean {
  if (upstreamPresent) return true
  if (process.env.CI === 'true') {
    it('upstream protocol bundle is present', () => expect.fail(`${UPSTREAM} is missing in CI`))
  } else {
    it.skip(`upstream protocol bundle not found at ${UPSTREAM}; skipping upstream comparisons`, () => {})
  }
  return false
}

// ---------------------------------------------------------------------------------------------
// 1. The files themselves

describe('project schema files', () => {
  it('are exactly the 22 schemas of spec §21', () => {
    const present = readdirSync(OURS)
      .filter((f) => f.endsWith('.schema.json'))
      .sort()
    expect(present).toEqual([...SCHEMA_FILES].sort())
  })

  it.each(SCHEMA_FILES)('%s parses and is identified correctly', (file) => {
    const text = readFileSync(join(OURS, file), 'utf8')
    const schema = JSON.parse(text) as JsonObject
    expect(schema.$schema).toBe(DRAFT)
    expect(schema.$id).toBe(ID_BASE + file)
    expect(typeof schema.title).toBe('string')
    expect(typeof schema.description).toBe('string')
    expect(text.endsWith('\n')).toBe(true)
  })

  it('every conditional branch explains itself with a spec section', () => {
    const unexplained: string[] = []
    const visit = (node: Json, where: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => visit(n, `${where}/${i}`))
      if (!isObject(node)) return
      for (const key of ['then', 'else'] as const) {
        const branch = node[key]
        if (!isObject(branch)) continue
        const text = `${String(branch.description ?? '')} ${String(branch.$comment ?? '')}`
        if (!/§\d+/.test(text)) unexplained.push(`${where}/${key}`)
      }
      for (const [k, v] of Object.entries(node)) visit(v, `${where}/${k}`)
    }
    for (const file of SCHEMA_FILES) visit(readJson(join(OURS, file)), file)
    expect(unexplained).toEqual([])
  })

  it('all compile in the project catalog', () => {
    const catalog = schemaCatalog()
    expect([...catalog.names()].sort()).toEqual(SCHEMA_FILES.map((f) => f.replace('.schema.json', '')).sort())
    for (const file of SCHEMA_FILES) expect(typeof catalog.validator(file)).toBe('function')
  })

  it('all compile under a fully strict Ajv (strictTypes and strictRequired included)', () => {
    const addFormats = ((formatsModule as unknown as {default?: unknown}).default ?? formatsModule) as (
      a: Ajv2020,
    ) => void
    const ajv = new Ajv2020({strict: true, strictTypes: true, strictRequired: true, strictTuples: true})
    addFormats(ajv)
    for (const file of SCHEMA_FILES) ajv.addSchema(readJson(join(OURS, file)) as object)
    for (const file of SCHEMA_FILES) expect(() => ajv.getSchema(ID_BASE + file), file).not.toThrow()
  })

  describe('are authored, not copied', () => {
    if (!requireUpstream()) return
    it.each(SCHEMA_FILES)('%s differs from its upstream counterpart byte-for-byte', (file) => {
      const ours = readFileSync(join(OURS, file))
      const theirs = readFileSync(join(UPSTREAM_SCHEMAS, file))
      expect(ours.equals(theirs)).toBe(false)
      // ... and is not merely a re-serialisation of the same JSON value either.
      expect(JSON.stringify(JSON.parse(ours.toString('utf8')))).not.toBe(
        JSON.stringify(JSON.parse(theirs.toString('utf8'))),
      )
    })
  })
})

// ---------------------------------------------------------------------------------------------
// 2. Upstream structural vectors against our schemas

interface StructuralVector {
  name: string
  schema: string
  instance: string
  valid: boolean
}

const schemaFileOf = (manifestPath: string) => manifestPath.replace(/^schemas\//, '')

describe('upstream structural vectors against the project schemas', () => {
  if (!requireUpstream()) return
  const vectors = readJson(join(UPSTREAM, 'conformance/manifest.json')) as unknown as StructuralVector[]

  it('are the 58 vectors of spec §22 (27 valid, 31 invalid)', () => {
    expect(vectors).toHaveLength(58)
    expect(vectors.filter((v) => v.valid)).toHaveLength(27)
    expect(vectors.filter((v) => !v.valid)).toHaveLength(31)
  })

  it.each(vectors.map((v) => [v.name, v] as const))('%s', (_name, vector) => {
    const result = schemaCatalog().validate(schemaFileOf(vector.schema), readJson(join(UPSTREAM, vector.instance)))
    expect(result.valid, JSON.stringify(result)).toBe(vector.valid)
  })
})

// ---------------------------------------------------------------------------------------------
// 3. Differential mutation testing: ours vs upstream

/** Deterministic PRNG (mulberry32) so every run compares the same mutations. */
function prng(seedText: string): () => number {
  let h = 2166136261
  for (const ch of seedText) h = Math.imul(h ^ ch.charCodeAt(0), 16777619)
  return mulberry32(h)
}

type Path = ReadonlyArray<string | number>
type Op = {readonly path: Path; readonly del: true} | {readonly path: Path; readonly del?: false; readonly value: Json}
interface Mutation {
  label: string
  ops: Op[]
}

const ABSENT = Symbol('absent')
const show = (v: Json | typeof ABSENT) => (v === ABSENT ? '<absent>' : JSON.stringify(v).slice(0, 60))
const pathText = (path: Path) => '/' + path.join('/')

/**
 * Applies ops without touching `doc`: only the containers along each op's path are copied
 * (validation never mutates its input, so unchanged subtrees can be shared). Returns undefined
 * when an op's parent no longer exists.
 */
function applyOps(doc: Json, ops: readonly Op[]): Json | undefined {
  let root: Json | undefined = doc
  for (const op of ops) {
    if (root === undefined) return undefined
    root = applyOp(root, op.path, op)
  }
  return root
}

function applyOp(node: Json, path: Path, op: Op): Json | undefined {
  if (path.length === 0) return op.del ? undefined : op.value
  const [seg, ...rest] = path
  if (Array.isArray(node) && typeof seg === 'number') {
    if (seg > node.length || (seg === node.length && (rest.length > 0 || op.del))) return undefined
    const copy = node.slice()
    if (rest.length === 0 && op.del) {
      copy.splice(seg, 1)
      return copy
    }
    const child = applyOp(seg < node.length ? node[seg]! : null, rest, op)
    if (child === undefined) return undefined
    copy[seg] = child
    return copy
  }
  if (isObject(node) && typeof seg === 'string') {
    const present = Object.hasOwn(node, seg)
    if (rest.length === 0 && op.del) {
      if (!present) return undefined
      const {[seg]: _removed, ...copy} = node
      return copy
    }
    if (rest.length > 0 && !present) return undefined
    const child = applyOp(present ? node[seg]! : null, rest, op)
    if (child === undefined) return undefined
    return {...node, [seg]: child}
  }
  return undefined
}

/** Resolves `$ref`s between the schemas of one directory (all share the same `$id` base). */
class SchemaSet {
  readonly byFile = new Map<string, JsonObject>()
  constructor(dir: string) {
    for (const file of SCHEMA_FILES) this.byFile.set(file, readJson(join(dir, file)) as JsonObject)
  }

  resolve(ref: string, file: string): {node: Json; file: string} | undefined {
    const [target = '', pointer = ''] = ref.split('#')
    const targetFile = target === '' ? file : target.replace(ID_BASE, '')
    let node: Json | undefined = this.byFile.get(targetFile)
    for (const seg of pointer.split('/').filter(Boolean)) node = isObject(node) ? node[seg] : undefined
    return node === undefined ? undefined : {node, file: targetFile}
  }

  /** `file` plus every schema file it references, transitively. */
  closure(file: string): Set<string> {
    const files = new Set<string>([file])
    const queue = [file]
    while (queue.length > 0) {
      const walk = (node: Json): void => {
        if (Array.isArray(node)) return node.forEach(walk)
        if (!isObject(node)) return
        if (typeof node.$ref === 'string') {
          const target = node.$ref.split('#')[0]!.replace(ID_BASE, '')
          if (target !== '' && !files.has(target)) {
            files.add(target)
            queue.push(target)
          }
        }
        for (const v of Object.values(node)) walk(v)
      }
      walk(this.byFile.get(queue.shift()!)!)
    }
    return files
  }
}

/** Values harvested from schemas and documents, used to build meaningful mutations. */
class Pools {
  /** property name -> enum/const values declared for it (ours and upstream, `$ref`s followed) */
  readonly enums = new Map<string, Json[]>()
  /** schema file -> property name -> enum/const values declared for it within that file */
  readonly enumsByFile = new Map<string, Map<string, Json[]>>()
  /** property name -> length bounds declared for it or its array items (min/maxLength, {m,n}) */
  readonly lengths = new Map<string, Set<number>>()
  /** schema file -> property names declared in that file */
  readonly namesByFile = new Map<string, Set<string>>()
  /** property name -> distinct values observed in the seed corpus */
  readonly observed = new Map<string, Json[]>()

  private add(map: Map<string, Json[]>, key: string, value: Json, cap = Infinity): void {
    const list = map.get(key) ?? []
    const text = JSON.stringify(value)
    if (list.length < cap && !list.some((v) => JSON.stringify(v) === text)) list.push(value)
    map.set(key, list)
  }

  harvestSchemas(set: SchemaSet): void {
    // Facts about one data location: follows $ref and combinators and array `items`, but does
    // not descend into `properties` (another data level).
    const facts = (node: Json, file: string, name: string, seen: Set<Json>, local: Map<string, Json[]>): void => {
      if (!isObject(node) || seen.has(node)) return
      seen.add(node)
      const found = [...(Array.isArray(node.enum) ? node.enum : []), ...('const' in node ? [node.const!] : [])]
      for (const v of found) {
        this.add(this.enums, name, v)
        this.add(local, name, v)
      }
      const lengths = this.lengths.get(name) ?? new Set<number>()
      for (const k of ['minLength', 'maxLength'] as const)
        if (typeof node[k] === 'number') lengths.add(node[k] as number)
      // bounded repetitions in a pattern, e.g. {0,127}, also limit the length
      if (typeof node.pattern === 'string') {
        for (const [, lo, hi] of node.pattern.matchAll(/\{(\d+),(\d+)\}/g))
          lengths.add(Number(hi) + 1).add(Number(lo) + 1)
      }
      if (lengths.size > 0) this.lengths.set(name, lengths)
      if (typeof node.$ref === 'string') {
        const target = set.resolve(node.$ref, file)
        if (target !== undefined) facts(target.node, target.file, name, seen, local)
      }
      for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
        const arr = node[k]
        if (Array.isArray(arr)) for (const n of arr) facts(n, file, name, seen, local)
      }
      for (const k of ['not', 'items', 'if', 'then', 'else'] as const) facts(node[k] ?? null, file, name, seen, local)
    }
    for (const [file, schema] of set.byFile) {
      const names = new Set<string>()
      const local = this.enumsByFile.get(file) ?? new Map<string, Json[]>()
      this.enumsByFile.set(file, local)
      const walk = (node: Json): void => {
        if (Array.isArray(node)) return node.forEach(walk)
        if (!isObject(node)) return
        if (isObject(node.properties)) {
          for (const [name, sub] of Object.entries(node.properties)) {
            names.add(name)
            facts(sub, file, name, new Set(), local)
          }
        }
        for (const v of Object.values(node)) walk(v)
      }
      walk(schema)
      const own = this.namesByFile.get(file) ?? new Set<string>()
      for (const n of names) own.add(n)
      this.namesByFile.set(file, own)
    }
  }

  /** Property names declared by `file` and by every schema it references. */
  namesFor(file: string, sets: SchemaSet[]): Set<string> {
    const out = new Set<string>()
    for (const set of sets) for (const f of set.closure(file)) for (const n of this.namesByFile.get(f) ?? []) out.add(n)
    return out
  }

  /** name -> enum/const values declared by `file` and every schema it references. */
  enumsFor(file: string, sets: SchemaSet[]): Map<string, Json[]> {
    const out = new Map<string, Json[]>()
    for (const set of sets) {
      for (const f of set.closure(file)) {
        for (const [name, values] of this.enumsByFile.get(f) ?? []) for (const v of values) this.add(out, name, v)
      }
    }
    return out
  }

  harvestDocument(doc: Json): void {
    const walk = (node: Json, name: string | undefined): void => {
      if (name !== undefined) this.add(this.observed, name, node, 6)
      if (Array.isArray(node)) node.forEach((n) => walk(n, undefined))
      else if (isObject(node)) for (const [k, v] of Object.entries(node)) walk(v, k)
    }
    walk(doc, undefined)
  }

  /** Plausible values for a member called `name` (observed first, then declared enums, then a guess). */
  candidates(name: string, cap = 3): Json[] {
    const out: Json[] = [...(this.observed.get(name) ?? []).slice(0, cap), ...(this.enums.get(name) ?? [])]
    if (out.length === 0) out.push(guess(name))
    return dedupe(out)
  }
}

function dedupe(values: Json[]): Json[] {
  const seen = new Set<string>()
  return values.filter((v) => {
    const t = JSON.stringify(v)
    if (seen.has(t)) return false
    seen.add(t)
    return true
  })
}

/** A type-plausible value for a member that never occurs in the corpus. */
function guess(name: string): Json {
  if (/(At|By|Until|From|deadline|Heartbeat)$/.test(name)) return '2026-07-15T00:00:00Z'
  if (/(Epoch|Sequence|Count|Version|Revision|Ms|Depth)$/.test(name)) return 1
  if (/Hash$/.test(name)) return 'sha256:' + 'a'.repeat(64)
  if (/Hashes$/.test(name)) return ['sha256:' + 'b'.repeat(64)]
  if (/Ids$/.test(name)) return ['urn:example:mutation-item']
  return 'urn:example:mutation'
}

/** Pads or truncates `s` to exactly `n` characters, keeping common formats well-formed. */
function ofLength(s: string, n: number): string {
  if (s.length >= n) return s.slice(0, n)
  if (/^\d+\.\d+\.\d+$/.test(s) && n > s.length + 1) return `${s}-${'a'.repeat(n - s.length - 1)}`
  if (/^P/.test(s) && n >= 3) return `P${'9'.repeat(n - 2)}D`
  return s + 'a'.repeat(n - s.length)
}

const GENERIC: Json[] = [
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53,
  '',
  'not a uri',
  [],
  {},
  // well-formed values of the common string shapes, so that a member accepting another shape shows
  'urn:example:generic',
  'sha256:' + '0'.repeat(64),
  '2026-07-15T00:00:00Z',
  'ext.acme.profile.thing',
  '1.0.0',
  'PT1M',
  'text/plain',
  'AAAA',
]
const UNKNOWN_MEMBER = 'unexpectedMember'

/** Every single-step mutation of `doc`: deletions, replacements, additions, walking every path. */
function singleMutations(doc: Json, pools: Pools, names: ReadonlySet<string>): Mutation[] {
  const out: Mutation[] = []
  const set = (path: Path, value: Json, why: string) =>
    out.push({label: `${pathText(path)} := ${why}`, ops: [{path, value}]})
  // Boundary lengths declared for this member name (and its array items), plus tiny strings.
  const lengthsOf = (name: string | undefined) =>
    [0, 1, 2, ...[...(pools.lengths.get(name ?? '') ?? [])].flatMap((n) => [n - 1, n, n + 1])].filter((n) => n >= 0)

  /** `name` is the member name of `node`, or of the array that holds it. */
  const walk = (node: Json, path: Path, name: string | undefined): void => {
    if (path.length > 0) {
      out.push({label: `delete ${pathText(path)}`, ops: [{path, del: true}]})
      for (const g of GENERIC) set(path, g, JSON.stringify(g))
      if (name !== undefined) for (const v of pools.candidates(name, 6)) set(path, v, `pool ${show(v)}`)
    }
    if (typeof node === 'string') {
      const variants = [
        node + '\n',
        ' ' + node,
        node + ' x',
        node.toUpperCase(),
        node.toLowerCase(),
        node.slice(0, -1),
        node + '0',
        node.replace(/:/, '\u00e9:'),
        node.replace(/Z$/, '+00:00'),
        node.replace(/Z$/, '-00:00'),
        node.replace(/T/, ' '),
        node.replace(/^[^:]*:/, ''),
        node.replace(/s:/, ':'),
        node.slice(1),
        ...['0', 'A', '_', '-', '.', '%'].map((c) => c + node),
        ...['.', '-', '_', 'A', '%', '~', '!', '=', '\u0000'].map((c) => node + c),
        node.replace(/\./, '..'),
        node.replace(/\.[^.]*$/, ''),
        node.replace(/^[^.]*\./, ''),
        node.replace(/:(.*)$/s, (m) => m.toUpperCase()),
        node + '=',
        ...lengthsOf(name).map((n) => ofLength(node, n)),
      ]
      for (const v of dedupe(variants)) if (v !== node) set(path, v, `string ${show(v)}`)
    } else if (typeof node === 'number') {
      for (const v of dedupe([node - 1, node + 1, -node, node + 0.5, 0, 1, 2 ** 53 - 1, String(node)]))
        if (v !== node) set(path, v, `number ${show(v)}`)
    } else if (typeof node === 'boolean') {
      set(path, !node, String(!node))
      set(path, String(node), `"${String(node)}"`)
    } else if (Array.isArray(node)) {
      if (node.length > 0) {
        set(path, [...node, node[0]!], 'duplicate first item')
        set(path, [node[0]!], 'first item only')
        set(path, [...node, 'urn:example:extra'], 'append a string')
        set(path, [...node, {}], 'append an object')
      }
      node.forEach((item, i) => walk(item, [...path, i], name))
    } else if (isObject(node)) {
      set([...path, UNKNOWN_MEMBER] as Path, true, 'unknown member')
      for (const member of names) {
        if (Object.hasOwn(node, member)) continue
        // one observed (or guessed) value and one declared enum value, if any
        const values = dedupe([pools.candidates(member, 1)[0]!, ...(pools.enums.get(member) ?? []).slice(0, 1)])
        for (const v of [...values, null]) set([...path, member], v, `add ${show(v)}`)
      }
      // keep only one or two of the members (reaches "at least one of" rules such as budgets)
      const keys = Object.keys(node)
      if (keys.length <= 20) {
        keys.forEach((k, i) => {
          set(path, {[k]: node[k]!}, `only ${k}`)
          for (const k2 of keys.slice(i + 1)) set(path, {[k]: node[k]!, [k2]: node[k2]!}, `only ${k}, ${k2}`)
        })
      }
      // rename a member (reaches propertyNames and additionalProperties on keyed maps)
      for (const [k, v] of Object.entries(node)) {
        for (const renamed of [
          UNKNOWN_MEMBER,
          `${k}\n`,
          k.toUpperCase(),
          `urn:example:${k.replace(/[^A-Za-z0-9]/g, '')}`,
        ]) {
          if (renamed === k || Object.hasOwn(node, renamed)) continue
          const {[k]: _old, ...rest} = node
          set(path, {...rest, [renamed]: v}, `rename ${k} -> ${JSON.stringify(renamed)}`)
        }
      }
      for (const [k, v] of Object.entries(node)) walk(v, [...path, k], k)
    }
  }
  walk(doc, [], undefined)
  return out
}

/** Top-level member names that appear inside a conditional (if/then/else/not/anyOf) of a schema. */
function conditionalMembers(schema: Json): Set<string> {
  const names = new Set<string>()
  const collect = (node: Json): void => {
    if (Array.isArray(node)) return node.forEach(collect)
    if (!isObject(node)) return
    if (isObject(node.properties)) for (const k of Object.keys(node.properties)) names.add(k)
    if (Array.isArray(node.required)) for (const k of node.required) if (typeof k === 'string') names.add(k)
    for (const k of ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else'] as const) if (k in node) collect(node[k]!)
  }
  if (isObject(schema))
    for (const k of ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else'] as const)
      if (k in schema) collect(schema[k]!)
  return names
}

/**
 * Combinations of the members that drive the conditional rules: every member takes each of
 * "absent", its seed value, observed/declared values, and object variants (enum-valued or
 * boolean child replaced, child removed). The cartesian product is enumerated, or sampled
 * deterministically when it exceeds `cap`.
 */
function conditionalGrid(
  doc: Json,
  members: Set<string>,
  pools: Pools,
  enums: Map<string, Json[]>,
  rand: () => number,
  cap: number,
): Mutation[] {
  if (!isObject(doc) || members.size === 0) return []
  const dims: Array<{name: string; options: Array<Json | typeof ABSENT>}> = []
  for (const name of [...members].sort()) {
    // Values only matter here through the conditions they trigger, so each member gets few
    // options: absent, its seed (or one observed/guessed) value, every declared enum value, and
    // condition-relevant variants of that value.
    const declared = enums.get(name) ?? []
    const base: Json[] = []
    if (Object.hasOwn(doc, name)) base.push(doc[name]!)
    else if (declared.length === 0) base.push(pools.candidates(name, 1)[0]!)
    base.push(...declared)
    const variants: Json[] = []
    for (const v of base) {
      if (typeof v === 'number') variants.push(v === 0 ? 1 : 0)
      if (Array.isArray(v) && v.length > 0) variants.push([])
      if (isObject(v)) {
        for (const [child, cv] of Object.entries(v)) {
          for (const e of enums.get(child) ?? []) variants.push({...v, [child]: e})
          if (typeof cv === 'boolean') variants.push({...v, [child]: !cv})
          const {[child]: _removed, ...rest} = v
          variants.push(rest)
        }
      }
    }
    dims.push({name, options: [ABSENT, ...dedupe([...base, ...variants])]})
  }
  const total = dims.reduce((n, d) => n * d.options.length, 1)
  const combos: number[][] = []
  if (total <= cap) {
    for (let i = 0; i < total; i++) {
      let rest = i
      combos.push(
        dims.map((d) => {
          const pick = rest % d.options.length
          rest = Math.floor(rest / d.options.length)
          return pick
        }),
      )
    }
  } else {
    for (let i = 0; i < cap; i++) combos.push(dims.map((d) => Math.floor(rand() * d.options.length)))
  }
  return combos.map((combo) => {
    const ops: Op[] = []
    const label: string[] = []
    combo.forEach((pick, i) => {
      const {name, options} = dims[i]!
      const choice = options[pick]!
      if (choice === ABSENT) {
        if (Object.hasOwn(doc, name)) ops.push({path: [name], del: true})
      } else ops.push({path: [name], value: choice})
      label.push(`${name}=${show(choice)}`)
    })
    return {label: `grid ${label.join(' ')}`, ops}
  })
}

interface Seed {
  label: string
  schema: string
  doc: Json
}

interface Disagreement {
  seed: string
  schema: string
  mutation: string
  ours: boolean
  upstream: boolean
}

/** Signed-document kinds of §6.4 -> schema file; the longest matching file-name prefix wins. */
const SIGNED_KINDS = [
  'agent-card',
  'approval',
  'artifact',
  'command',
  'context-package',
  'event',
  'evidence',
  'extension-profile',
  'group-snapshot',
]

function signedKindOf(file: string): string {
  const kind = SIGNED_KINDS.filter((k) => file === `${k}.json` || file.startsWith(`${k}-`)).sort(
    (a, b) => b.length - a.length,
  )[0]
  if (kind === undefined) throw new Error(`cannot tell the document kind of ${file}`)
  return kind
}

function loadSeeds(): {seeds: Seed[]; extra: Seed[]} {
  const vectors = readJson(join(UPSTREAM, 'conformance/manifest.json')) as unknown as StructuralVector[]
  const seeds: Seed[] = []
  const extra: Seed[] = []
  for (const v of vectors) {
    const seed = {label: v.instance, schema: schemaFileOf(v.schema), doc: readJson(join(UPSTREAM, v.instance))}
    ;(v.valid ? seeds : extra).push(seed)
  }
  const signedDir = 'cryptography/vectors/signed-documents/valid'
  for (const file of readdirSync(join(UPSTREAM, signedDir))
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    seeds.push({
      label: `${signedDir}/${file}`,
      schema: `${signedKindOf(file)}.schema.json`,
      doc: readJson(join(UPSTREAM, signedDir, file)),
    })
  }

  // Derived seeds reach branches the vectors do not exercise directly (every WebSocket frame
  // type, submitted WorkItems, other lease types). Each must be valid upstream to count.
  const find = (name: string) => seeds.find((s) => s.label.endsWith(`/${name}`))!.doc as JsonObject
  const header = (n: number, frameType: string) => ({
    protocolVersion: '0.1',
    frameId: `urn:uuid:00000000-0000-4000-8000-0000000001${String(n).padStart(2, '0')}`,
    frameType,
  })
  const nonce = 'q83vEjRWeJA'
  const frames: JsonObject[] = [
    {
      ...header(1, 'HELLO'),
      phase: 'client_init',
      agentId: 'urn:missionweaveprotocol:agent:developer-one',
      keyId: 'urn:missionweaveprotocol:key:developer-one',
      clientNonce: nonce,
      supportedVersions: ['0.1'],
    },
    {
      ...header(2, 'HELLO'),
      phase: 'server_challenge',
      selectedVersion: '0.1',
      clientNonce: nonce,
      serverNonce: 'AAECAwQFBgc',
      challenge: 'Y2hhbGxlbmdl',
    },
    {
      ...header(3, 'HELLO'),
      phase: 'client_response',
      agentId: 'urn:missionweaveprotocol:agent:developer-one',
      keyId: 'urn:missionweaveprotocol:key:developer-one',
      clientNonce: nonce,
      serverNonce: 'AAECAwQFBgc',
      challengeSignature: 'c2lnbmF0dXJl',
    },
    {
      ...header(4, 'HELLO'),
      phase: 'server_accept',
      selectedVersion: '0.1',
      sessionToken: 'session-token-0123456789',
      sessionEpoch: 8,
      expiresAt: '2026-07-15T01:00:00Z',
    },
    {...header(5, 'COMMAND'), command: find('command.json')},
    {...header(6, 'COMMAND'), command: find('human-mission-create-command.json')},
    {...header(7, 'EVENT'), event: find('event.json')},
    {...header(8, 'EVENT'), event: find('organization-session-opened-event.json')},
    {
      ...header(9, 'ACK'),
      acknowledgements: [{groupId: 'urn:missionweaveprotocol:group:mission-one', sequence: 42}],
      sentAt: '2026-07-15T00:00:00Z',
    },
    {
      ...header(10, 'PING'),
      nonce,
      replyToNonce: 'AAECAwQFBgc',
      sentAt: '2026-07-15T00:00:00Z',
      presence: find('presence-record.json'),
    },
    {...header(11, 'ERROR'), error: find('error.json')},
  ]
  frames.forEach((doc, i) =>
    seeds.push({
      label: `derived websocket frame #${i + 1} (${String(doc.frameType)})`,
      schema: 'websocket-frame.schema.json',
      doc,
    }),
  )

  const workItem = find('work-item.json')
  const evidenceId = 'urn:missionweaveprotocol:evidence:integration-tests'
  seeds.push({
    label: 'derived submitted work item',
    schema: 'work-item.schema.json',
    doc: {
      ...workItem,
      state: 'submitted',
      progress: {
        currentPhase: 'testing',
        completedMilestones: ['implementation'],
        nextCheckpoint: 'review',
        blockers: [],
        updatedCompletionEstimate: '2026-07-15T03:00:00Z',
        evidenceIds: [evidenceId],
      },
      submission: {
        artifactHashes: ['sha256:' + 'c'.repeat(64)],
        evidenceIds: [evidenceId],
        submittedAt: '2026-07-15T02:00:00Z',
      },
    },
  })
  seeds.push({
    label: 'derived work contract (from work item)',
    schema: 'work-contract.schema.json',
    doc: workItem.contract!,
  })

  const lease = find('lease.json')
  const {lastRenewedAt: _l, closedAt: _c, closureReason: _r, ...activeLease} = lease
  seeds.push({
    label: 'derived active ownership lease',
    schema: 'lease.schema.json',
    doc: {
      ...activeLease,
      leaseType: 'ownership',
      state: 'active',
      renewalCount: 0,
      startBy: '2026-07-15T00:40:00Z',
      graceExpiresAt: '2026-07-15T01:00:00Z',
    },
  })
  const {workItemId: _w, ownershipEpoch: _o, ...coordinatorLease} = activeLease
  seeds.push({
    label: 'derived coordinator lease',
    schema: 'lease.schema.json',
    doc: {...coordinatorLease, leaseType: 'coordinator', state: 'active', renewalCount: 0, coordinatorEpoch: 4},
  })
  // "Rich" variants carrying the optional members (and branches) the vectors leave out.
  const actor = (type: string, name: string) => ({type, id: `urn:missionweaveprotocol:${type}:${name}`})
  const extensions = {
    'urn:missionweaveprotocol:extension:example': {
      version: '1.2.0',
      critical: false,
      data: {note: 'relayed unchanged'},
    },
  }
  const hash = (c: string) => 'sha256:' + c.repeat(64)
  const rich = (name: string, schema: string, doc: JsonObject) =>
    seeds.push({label: `derived rich ${name}`, schema, doc})
  rich('agent card', 'agent-card.schema.json', {
    ...find('agent-card.json'),
    description: 'Implements Python changes.',
    validUntil: '2027-01-01T00:00:00Z',
    extensions,
  })
  rich('revoked execution approval', 'approval.schema.json', {
    ...find('approval.json'),
    kind: 'work_execution',
    decision: 'revoked',
    workItemId: 'urn:missionweaveprotocol:work-item:implementation',
    revokesApprovalId: 'urn:missionweaveprotocol:approval:earlier',
    artifactHashes: [],
  })
  rich('artifact', 'artifact.schema.json', {...find('artifact.json'), extensions})
  rich('command', 'command.schema.json', {
    ...find('command.json'),
    conversationId: 'urn:missionweaveprotocol:conversation:implementation',
    workItemId: 'urn:missionweaveprotocol:work-item:implementation',
    cooperationOverrideGrantId: 'urn:missionweaveprotocol:cooperation-override:one',
    causedByEventId: 'urn:uuid:00000000-0000-4000-8000-0000000000e1',
    extensions,
  })
  rich('context package', 'context-package.schema.json', {
    ...find('context-package.json'),
    previousContextPackageId: 'urn:missionweaveprotocol:context-package:developer-one-v0',
    extensions,
  })
  rich('restricted conversation', 'conversation.schema.json', {
    ...find('conversation.json'),
    type: 'restricted',
    access: {mode: 'restricted', members: [actor('agent', 'coordinator'), actor('human', 'mission-owner')]},
    extensions,
  })
  rich('error', 'error.schema.json', {
    ...find('error.json'),
    fatal: false,
    relatedFrameId: 'urn:uuid:00000000-0000-4000-8000-0000000000f1',
    relatedActionId: 'urn:uuid:00000000-0000-4000-8000-0000000000f2',
    groupId: 'urn:missionweaveprotocol:group:mission-one',
    expectedRevision: 4,
    currentRevision: 5,
    retryAfterMs: 250,
    snapshotArtifactHash: hash('d'),
    details: {reason: 'example'},
  })
  rich('event', 'event.schema.json', {
    ...find('event.json'),
    workItemId: 'urn:missionweaveprotocol:work-item:implementation',
    extensions,
  })
  rich('evidence', 'evidence.schema.json', {
    ...find('evidence.json'),
    type: 'failure_report',
    result: 'failed',
    modelVersion: 'model-2026-01',
  })
  rich('archived group', 'group.schema.json', {
    ...find('group.json'),
    state: 'archived',
    archivedAt: '2026-07-16T00:00:00Z',
    archiveSnapshotId: 'urn:missionweaveprotocol:snapshot:final',
    extensions,
  })
  const {provisionalExpiresAt: _p, ...membership} = find('membership.json')
  rich('active delegate membership', 'membership.schema.json', {
    ...membership,
    role: 'work_delegate',
    state: 'active',
    activatedAt: '2026-07-15T00:10:00Z',
    extensions,
    delegationGrants: [
      {
        grantId: 'urn:missionweaveprotocol:delegation:one',
        granteeAgentId: 'urn:missionweaveprotocol:agent:developer-one',
        missionId: 'urn:missionweaveprotocol:mission:one',
        groupId: 'urn:missionweaveprotocol:group:mission-one',
        targetWorkItemId: 'urn:missionweaveprotocol:work-item:implementation',
        allowedCapabilities: [{id: 'acme.software.python-implementation', version: '2.1.0'}],
        budget: {
          currency: 'USD',
          financialLimit: 10,
          modelTokenLimit: 1000,
          toolCallLimit: 10,
          computeSecondsLimit: 600,
          wallClockSecondsLimit: 3600,
          externalSideEffectLimit: 0,
        },
        maxDescendantDepth: 1,
        granteeMembershipEpoch: 1,
        coordinatorEpoch: 4,
        grantedBy: actor('agent', 'coordinator'),
        grantedAt: '2026-07-15T00:05:00Z',
        expiresAt: '2026-07-16T00:00:00Z',
      },
    ],
  })
  rich('ended membership', 'membership.schema.json', {...membership, state: 'ended', endedAt: '2026-07-15T02:00:00Z'})
  rich('correction message', 'message.schema.json', {
    ...find('message.json'),
    kind: 'correction',
    targetMessageId: 'urn:missionweaveprotocol:message:zero',
    reason: 'Fixes the constraint wording.',
    references: ['urn:missionweaveprotocol:work-item:implementation'],
    content: [
      {type: 'text', text: 'Corrected constraint.'},
      {type: 'data_ref', schema: 'urn:missionweaveprotocol:schema:opaque', data: {limit: 50}},
    ],
    extensions,
  })
  rich('follow-up mission', 'mission.schema.json', {
    ...find('mission.json'),
    followUpToMissionId: 'urn:missionweaveprotocol:mission:zero',
    pinnedProfiles: [{profileUri: 'urn:missionweaveprotocol:extension:example', majorVersion: 1}],
    budget: {currency: 'USD', financialLimit: 100},
    extensions,
  })
  const contract = workItem.contract as JsonObject
  rich('work contract', 'work-contract.schema.json', {
    ...contract,
    allowedResources: [
      {
        resource: 'urn:missionweaveprotocol:resource:repository',
        operations: ['read'],
        constraints: {branch: 'feature/*'},
      },
    ],
    budget: {computeSecondsLimit: 60, externalSideEffectLimit: 0, currency: 'EUR'},
    constraints: {language: 'python'},
    extensions,
  })
  rich('offered work item', 'work-item.schema.json', {
    ...workItem,
    state: 'offered',
    offers: [{...(workItem.offers as JsonObject[])[0]!, status: 'declined', declineReason: 'capacity'}],
    extensions,
  })
  return {seeds, extra}
}

describe('differential mutation testing against the upstream schemas', () => {
  if (!requireUpstream()) return
  const ours: SchemaCatalog = schemaCatalog()
  const upstream: SchemaCatalog = schemaCatalog(UPSTREAM_SCHEMAS)
  const {seeds, extra} = loadSeeds()

  const schemaSets = [new SchemaSet(OURS), new SchemaSet(UPSTREAM_SCHEMAS)]
  const pools = new Pools()
  for (const set of schemaSets) pools.harvestSchemas(set)
  for (const s of [...seeds, ...extra]) pools.harvestDocument(s.doc)

  it('every seed is a valid document for both schema sets', () => {
    expect(seeds.length).toBeGreaterThanOrEqual(27 + 11)
    for (const s of seeds) {
      expect(upstream.validate(s.schema, s.doc), `${s.label} upstream`).toEqual({valid: true})
      expect(ours.validate(s.schema, s.doc), `${s.label} ours`).toEqual({valid: true})
    }
  })

  // The first seed of each schema enumerates its conditional grid exhaustively up to
  // FULL_GRID_CAP combinations (beyond that: a deterministic sample of that size); the other
  // seeds of the same schema contribute a further deterministic sample of GRID_SAMPLE.
  const FULL_GRID_CAP = 15000
  const GRID_SAMPLE = 1500
  const PAIRS_PER_SEED = 400
  const gridDone = new Set<string>()
  const totals = {compared: 0, valid: 0, invalid: 0}

  // The invalid structural vectors are near-valid documents: mutating them explores the
  // boundary from the other side, so they are used as additional seeds.
  const cases = [
    ...seeds.map((s) => [s.label, s, true] as const),
    ...extra.map((s) => [`${s.label} (invalid seed)`, s, false] as const),
  ]
  it.each(cases)('%s: our verdict equals upstream on every mutation', (_label, seed, seedValid) => {
    const oursValidate = ours.validator(seed.schema)
    const upstreamValidate = upstream.validator(seed.schema)
    const rand = prng(seed.label)
    const singles = singleMutations(seed.doc, pools, pools.namesFor(seed.schema, schemaSets))
    const members = new Set([
      ...conditionalMembers(readJson(join(OURS, seed.schema))),
      ...conditionalMembers(readJson(join(UPSTREAM_SCHEMAS, seed.schema))),
    ])
    const cap = gridDone.has(seed.schema) || !seedValid ? GRID_SAMPLE : FULL_GRID_CAP
    gridDone.add(seed.schema)
    const grid = conditionalGrid(seed.doc, members, pools, pools.enumsFor(seed.schema, schemaSets), rand, cap)
    const pairs: Mutation[] = []
    for (let i = 0; i < PAIRS_PER_SEED && singles.length > 1; i++) {
      const a = singles[Math.floor(rand() * singles.length)]!
      const b = singles[Math.floor(rand() * singles.length)]!
      pairs.push({label: `${a.label} AND ${b.label}`, ops: [...a.ops, ...b.ops]})
    }

    if (process.env.MWP_SCHEMA_DIFF_VERBOSE)
      console.info(`${seed.label}: singles=${singles.length} grid=${grid.length} pairs=${pairs.length}`)
    const seen = new Set<string>()
    const disagreements: Disagreement[] = []
    let compared = 0
    let validCount = 0
    for (const m of [...singles, ...grid, ...pairs]) {
      const mutated = applyOps(seed.doc, m.ops)
      if (mutated === undefined) continue
      const key = JSON.stringify(mutated)
      if (seen.has(key)) continue
      seen.add(key)
      compared++
      const a = oursValidate(mutated) as boolean
      const b = upstreamValidate(mutated) as boolean
      if (a) validCount++
      if (a !== b) disagreements.push({seed: seed.label, schema: seed.schema, mutation: m.label, ours: a, upstream: b})
    }
    totals.compared += compared
    totals.valid += validCount
    totals.invalid += compared - validCount

    expect(disagreements.slice(0, 20), `${disagreements.length} disagreement(s) out of ${compared}`).toEqual([])
    expect(compared).toBeGreaterThan(300)
    // Both outcomes must occur, otherwise the comparison proves little.
    if (seedValid) expect(validCount).toBeGreaterThan(0)
    expect(compared - validCount).toBeGreaterThan(0)
  })

  it('compared a substantial number of mutations', () => {
    console.info(
      `schemas differential: ${totals.compared} distinct mutations compared (${totals.valid} valid, ${totals.invalid} invalid) over ${seeds.length + extra.length} seeds`,
    )
    expect(totals.compared).toBeGreaterThan(10000)
  })
})
