import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {HAVE_UPSTREAM, UPSTREAM} from '../support/upstream.js'
import {defaultSchemaDir, packageRoot, schemaCatalog} from '../../src/schema/catalog.js'

const BASE = 'https://missionweaveprotocol.dev/schemas/0.1/'

/** Deep copy whose objects all have a null prototype, like the strict JSON parser's output. */
function nullProto(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(nullProto)
  if (value !== null && typeof value === 'object') {
    const out = Object.create(null) as Record<string, unknown>
    for (const [k, v] of Object.entries(value)) out[k] = nullProto(v)
    return out
  }
  return value
}

// ---------------------------------------------------------------------------------------------
// A small temporary catalog, hand-written for these tests (not the normative schemas).

const tmp = mkdtempSync(join(tmpdir(), 'mwp-catalog-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

function writeSchema(dir: string, file: string, schema: object): void {
  writeFileSync(join(dir, file), JSON.stringify(schema, null, 2))
}

writeSchema(tmp, 'common.schema.json', {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: `${BASE}common.schema.json`,
  $defs: {
    id: {type: 'string', format: 'uri', maxLength: 512},
    timestamp: {type: 'string', format: 'date-time'},
  },
})
writeSchema(tmp, 'thing.schema.json', {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: `${BASE}thing.schema.json`,
  type: 'object',
  additionalProperties: false,
  required: ['id', 'at'],
  properties: {
    id: {$ref: 'common.schema.json#/$defs/id'},
    at: {$ref: 'common.schema.json#/$defs/timestamp'},
    uuid: {type: 'string', format: 'uuid'}, // a standard format from ajv-formats
    kind: {enum: ['a', 'b']},
    parent: {type: 'string'},
    tags: {type: 'array', items: {type: 'string'}},
  },
  // A conditional `then` with `required` but no `type`: Ajv's strictTypes/strictRequired would
  // throw on it; the normative schemas use this shape.
  allOf: [{if: {properties: {kind: {const: 'b'}}, required: ['kind']}, then: {required: ['parent']}}],
})
// Relative `$ref` with a fragment, resolved against this schema's `$id`.
writeSchema(tmp, 'list.schema.json', {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: `${BASE}list.schema.json`,
  type: 'array',
  items: {$ref: 'thing.schema.json'},
})
writeFileSync(join(tmp, 'notes.json'), '{"not": "a schema file"}')

const catalog = schemaCatalog(tmp)
const valid = {id: 'urn:uuid:00000000-0000-4000-8000-000000000001', at: '2026-07-15T00:00:00Z'}

describe('catalog loading', () => {
  it('loads every *.schema.json and nothing else', () => {
    expect(catalog.names()).toEqual(['common', 'list', 'thing'])
    expect(catalog.dir).toBe(tmp)
  })

  it('resolves a schema by short name, file name and $id to the same compiled validator', () => {
    const v = catalog.validator('thing')
    expect(catalog.validator('thing.schema.json')).toBe(v)
    expect(catalog.validator(`${BASE}thing.schema.json`)).toBe(v)
    expect(catalog.has('thing')).toBe(true)
    expect(catalog.has('nope')).toBe(false)
  })

  it('throws for an unknown schema name', () => {
    expect(() => catalog.validate('missing', {})).toThrow(/unknown schema/)
    expect(() => catalog.validator('thing.json')).toThrow(/unknown schema/)
  })

  it('is memoized per resolved directory', () => {
    expect(schemaCatalog(tmp)).toBe(catalog)
    expect(schemaCatalog(`${tmp}/`)).toBe(catalog)
    expect(schemaCatalog(join(tmp, '.', 'x', '..'))).toBe(catalog)
  })

  it('resolves cross-file refs', () => {
    expect(catalog.validate('list', [valid, {...valid, id: 'example:'}])).toEqual({valid: true})
    const result = catalog.validate('list', [valid, {...valid, id: 'a/b'}])
    expect(result.valid === false && result.errors[0]!.instancePath).toBe('/1/id')
  })

  it('refuses a schema file without $id', () => {
    const dir = mkdtempSync(join(tmp, 'anon-'))
    writeSchema(dir, 'anon.schema.json', {type: 'object'})
    expect(() => schemaCatalog(dir)).toThrow(/has no \$id/)
  })

  it('finds the package root from the module location', () => {
    const root = packageRoot()
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).name).toBe('mwp')
    expect(defaultSchemaDir()).toBe(join(root, 'schemas'))
  })

  it('an empty or missing directory gives an empty catalog', () => {
    expect(schemaCatalog(join(tmp, 'does-not-exist')).names()).toEqual([])
  })

  it('is strict about unknown keywords and unknown formats', () => {
    const dir = mkdtempSync(join(tmp, 'strict-'))
    writeSchema(dir, 'bad.schema.json', {$id: 'urn:test:bad', type: 'object', propertiez: {}})
    // Schemas compile on first use, so the strict-mode error surfaces there.
    expect(() => schemaCatalog(dir).validator('bad')).toThrow(/strict mode: unknown keyword/)
    expect(() => catalog.compileExternal({type: 'string', format: 'no-such-format'})).toThrow(/unknown format/)
  })
})

describe('validation results', () => {
  it('accepts a valid value', () => {
    expect(catalog.validate('thing', valid)).toEqual({valid: true})
  })

  it('reports errors as {instancePath, pointer, message, keyword}; a pointer names an unexpected or missing member itself', () => {
    const result = catalog.validate('thing', {...valid, extra: 1})
    expect(result.valid).toBe(false)
    if (result.valid) return
    expect(result.errors).toEqual([
      {
        instancePath: '',
        pointer: '/extra',
        message: 'must NOT have additional properties',
        keyword: 'additionalProperties',
      },
    ])
    const format = catalog.validate('thing', {...valid, at: '2026-06-30T23:59:60Z'})
    expect(format.valid === false && format.errors[0]).toEqual({
      instancePath: '/at',
      pointer: '/at',
      message: 'must match format "date-time"',
      keyword: 'format',
    })
  })

  it('evaluates conditional then/required without a type', () => {
    expect(catalog.validate('thing', {...valid, kind: 'b'}).valid).toBe(false)
    expect(catalog.validate('thing', {...valid, kind: 'b', parent: 'p'}).valid).toBe(true)
    expect(catalog.validate('thing', {...valid, kind: 'a'}).valid).toBe(true)
  })

  it('exposes the raw validator for hot paths', () => {
    const v = catalog.validator('thing')
    expect(v(valid)).toBe(true)
    expect(v({})).toBe(false)
    expect(v.errors?.[0]?.keyword).toBe('required')
  })
})

describe('formats are asserted with the protocol definitions (A2)', () => {
  const at = (text: string) => catalog.validate('thing', {...valid, at: text}).valid
  const id = (text: string) => catalog.validate('thing', {...valid, id: text}).valid

  it('date-time is the protocol timestamp profile (A3-A5)', () => {
    const good = [
      '2026-07-15T00:00:00Z',
      '2026-07-15t00:00:00z',
      '2026-07-14T00:01:00-23:59',
      '2026-07-15T23:59:01+23:59',
      '2026-07-15T00:00:00.1234560000000000002Z',
      '2024-02-29T00:00:00Z',
    ]
    for (const ok of good) expect(at(ok), ok).toBe(true)
    const bad = [
      '0000-01-01T00:00:00Z', // the first four pass ajv-formats' own date-time
      '2026-06-30T23:59:60Z',
      '2026-07-15T00:00:00-00:00',
      '2026-07-15 00:00:00Z',
      '2026-02-29T00:00:00Z',
      '2026-07-15T24:00:00Z',
      '2026-07-15T00:00:00+24:00',
      '2026-07-15T00:00:00Z\n',
    ]
    for (const text of bad) expect(at(text), text).toBe(false)
  })

  it('uri is the protocol identifier grammar (A16-A18)', () => {
    for (const ok of ['example:', 'x://[V01.a]/', 'urn:uuid:00000000-0000-4000-8000-000000000001'])
      expect(id(ok), ok).toBe(true)
    for (const bad of [
      'x://[::ffff:01.2.3.4]/',
      'x://[not-an-ip]/',
      'urn:a%GG',
      'actions/x',
      'urn:a\n',
      'https://例え.テスト/',
    ]) {
      expect(id(bad), bad).toBe(false)
    }
  })

  it('other standard formats come from ajv-formats and are asserted', () => {
    expect(catalog.validate('thing', {...valid, uuid: '00000000-0000-4000-8000-000000000001'}).valid).toBe(true)
    expect(catalog.validate('thing', {...valid, uuid: 'not-a-uuid'}).valid).toBe(false)
    const email = catalog.compileExternal({type: 'string', format: 'email'})
    expect(email('a@example.com')).toBe(true)
    expect(email('nope')).toBe(false)
  })

  it('a format constrains only strings', () => {
    const v = catalog.compileExternal({format: 'date-time'})
    expect(v(42)).toBe(true)
    expect(v('42')).toBe(false)
  })
})

describe('null-prototype values', () => {
  it('validates null-prototype objects and arrays of them', () => {
    expect(catalog.validate('thing', nullProto({...valid, tags: ['a']}))).toEqual({valid: true})
    expect(catalog.validate('thing', nullProto({...valid, kind: 'b'})).valid).toBe(false)
    expect(catalog.validate('thing', nullProto({...valid, extra: true})).valid).toBe(false)
  })

  it('treats an own "__proto__" member as an ordinary (here: additional) property', () => {
    const value = nullProto(valid) as Record<string, unknown>
    Object.defineProperty(value, '__proto__', {value: {}, enumerable: true, configurable: true, writable: true})
    expect(Object.keys(value)).toContain('__proto__')
    expect(catalog.validate('thing', value).valid).toBe(false)
  })

  it('never satisfies `required` with an inherited member', () => {
    const v = catalog.compileExternal({type: 'object', required: ['constructor']})
    expect(v({})).toBe(false)
    expect(v(Object.create(null))).toBe(false)
    expect(v(nullProto({constructor: 1}))).toBe(true)
  })
})

describe('compileExternal', () => {
  const fixture = {
    $id: 'https://example.test/fixture.schema.json',
    type: 'object',
    required: ['owner'],
    properties: {owner: {$ref: `${BASE}common.schema.json#/$defs/id`}, at: {type: 'string', format: 'date-time'}},
  }

  it('compiles a schema that references catalog schemas, cached by $id', () => {
    const v = catalog.compileExternal(fixture)
    expect(v({owner: 'example:'})).toBe(true)
    expect(v({owner: 'x://[::ffff:01.2.3.4]/'})).toBe(false)
    expect(v({owner: 'example:', at: '2026-07-15T00:00:00-00:00'})).toBe(false)
    expect(catalog.compileExternal(structuredClone(fixture))).toBe(v)
    expect(catalog.validator(fixture.$id)).toBe(v)
  })

  it('refuses different content under an already registered $id', () => {
    catalog.compileExternal(fixture)
    expect(() => catalog.compileExternal({...fixture, required: []})).toThrow(/already registered/)
    const common = JSON.parse(readFileSync(join(tmp, 'common.schema.json'), 'utf8'))
    expect(catalog.compileExternal(common)).toBe(catalog.validator('common'))
    expect(() => catalog.compileExternal({...common, title: 'changed'})).toThrow(/conflicts/)
  })

  it('registers companions before compiling', () => {
    const leaf = {$id: 'https://example.test/leaf.schema.json', type: 'integer', minimum: 1}
    const root = {$id: 'https://example.test/root.schema.json', type: 'array', items: {$ref: 'leaf.schema.json'}}
    const v = catalog.compileExternal(root, leaf)
    expect(v([1, 2])).toBe(true)
    expect(v([0])).toBe(false)
  })

  it('forgets a schema that fails to compile so a retry can succeed', () => {
    const root = {$id: 'https://example.test/root2.schema.json', items: {$ref: 'leaf2.schema.json'}}
    expect(() => catalog.compileExternal(root)).toThrow(/can't resolve reference/)
    const leaf = {$id: 'https://example.test/leaf2.schema.json', type: 'string'}
    const v = catalog.compileExternal(root, leaf)
    expect(v(['a'])).toBe(true)
    expect(v([1])).toBe(false)
  })

  it('compiles anonymous schemas and schema files', () => {
    expect(catalog.compileExternal({type: 'string', format: 'uri'})('example:')).toBe(true)
    const file = join(tmp, 'external.json')
    writeSchema(tmp, 'external.json', {$id: 'https://example.test/external.json', type: 'string', format: 'uri'})
    const v = catalog.compileExternalFile(file)
    expect(v('urn:x')).toBe(true)
    expect(v('urn:x\n')).toBe(false)
  })
})

// ---------------------------------------------------------------------------------------------
// Upstream reference material, read in place (never copied into the project).

function upstreamGuard(): boolean {
  if (HAVE_UPSTREAM) return true
  if (process.env.CI === 'true') {
    it('upstream protocol bundle is present', () => expect.fail(`${UPSTREAM} is missing in CI`))
  } else {
    it.skip(`upstream protocol bundle not found at ${UPSTREAM}`, () => {})
  }
  return false
}

const readUpstream = (path: string) => JSON.parse(readFileSync(join(UPSTREAM, path), 'utf8'))

interface StructuralVector {
  name: string
  schema: string
  instance: string
  valid: boolean
}

describe('upstream structural vectors against the upstream schemas', () => {
  if (!upstreamGuard()) return
  const upstream = schemaCatalog(join(UPSTREAM, 'schemas'))
  const vectors = readUpstream('conformance/manifest.json') as StructuralVector[]

  it('loads all 22 normative schemas', () => {
    expect(upstream.names()).toHaveLength(22)
    expect(vectors).toHaveLength(58)
  })

  it.each(vectors.map((v) => [v.name, v] as const))('%s', (_name, vector) => {
    const instance = readUpstream(vector.instance)
    const file = vector.schema.replace(/^schemas\//, '')
    const result = upstream.validate(file, instance)
    expect(result.valid, JSON.stringify(result)).toBe(vector.valid)
    expect(upstream.validate(file, nullProto(instance)).valid).toBe(vector.valid)
  })
})

describe('upstream signed-document vectors at the schema stage', () => {
  if (!upstreamGuard()) return
  const upstream = schemaCatalog(join(UPSTREAM, 'schemas'))
  const manifest = readUpstream('cryptography/manifest.json')
  const schemaOf = new Map<string, string>(
    manifest.profiles.map((p: any) => [p.profileId, p.schema.replace(/^schemas\//, '')]),
  )
  const seen = new Set<string>()
  const cases: Array<[string, string, boolean]> = []
  for (const c of manifest.cases) {
    for (const e of c.evaluations) {
      const stage: string | undefined = e.expect?.stage
      // Parse-stage documents are not JSON; canonicalization-stage ones need the strict parser
      // (JSON.parse turns 1e400 into Infinity). Everything else passes or fails stage 2 exactly.
      if (e.document === undefined || stage === 'parse' || stage === 'canonicalization') continue
      if (seen.has(e.document)) continue
      seen.add(e.document)
      cases.push([e.document, schemaOf.get(e.profileId)!, stage !== 'schema'])
    }
  }

  it('includes the A3 timestamp vectors', () => {
    const invalid = cases.filter(([, , ok]) => !ok).map(([doc]) => doc.split('/').pop())
    expect(invalid).toEqual(
      expect.arrayContaining([
        'command-year-zero.json',
        'command-leap-second.json',
        'command-unknown-local-offset.json',
      ]),
    )
  })

  it.each(cases)('%s against %s is schema-valid: %s', (document, schema, expected) => {
    expect(upstream.validate(schema, readUpstream(document)).valid).toBe(expected)
  })

  it('validates every cryptography fixture against the bundle fixture schemas', () => {
    const registry = upstream.compileExternalFile(join(UPSTREAM, manifest.fixtureSchemas.registry))
    const signingKey = upstream.compileExternalFile(join(UPSTREAM, manifest.fixtureSchemas.signingKey))
    const keys = readdirSync(join(UPSTREAM, 'cryptography/keys'))
    expect(keys.length).toBeGreaterThan(0)
    for (const file of keys) {
      const v = file.startsWith('registry-') ? registry : signingKey
      expect(v(readUpstream(`cryptography/keys/${file}`)), file).toBe(true)
    }
  })
})

// ---------------------------------------------------------------------------------------------
// The project's own schemas (authored from the spec): once all 22 exist, they must agree with
// every upstream structural vector.

describe('project schemas', () => {
  const dir = defaultSchemaDir()
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.schema.json')) : []

  it.skipIf(files.length === 0)('load and compile', () => {
    expect(schemaCatalog().names()).toHaveLength(files.length)
  })

  const complete = files.length === 22 && HAVE_UPSTREAM
  describe.skipIf(!complete)('agree with the upstream structural vectors', () => {
    const vectors = complete ? (readUpstream('conformance/manifest.json') as StructuralVector[]) : []
    it.each(vectors.map((v) => [v.name, v] as const))('%s', (_name, vector) => {
      const result = schemaCatalog().validate(vector.schema.replace(/^schemas\//, ''), readUpstream(vector.instance))
      expect(result.valid, JSON.stringify(result)).toBe(vector.valid)
    })
  })
})
