// The build's precompiled validators (src/schema/precompiled.ts, scripts/compile-schemas.ts): the
// same answers and errors as the validators Ajv compiles at run time, used only for the exact
// files they were compiled from, and a CLI run that uses them never loads Ajv.

import {execFileSync} from 'node:child_process'
import {cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {compileSchemas} from '../../scripts/compile-schemas.js'
import {defaultSchemaDir, newAjv, packageRoot, protocolFormats, schemaCatalog} from '../../src/schema/catalog.js'
import {loadPrecompiled, schemaFiles} from '../../src/schema/precompiled.js'

const tmp = mkdtempSync(join(tmpdir(), 'mwp-precompiled-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

/** A copy of the project's schema tree, its validators compiled to `tmp/NAME/out/validators.cjs`. */
function compiledCopy(name: string) {
  const dir = join(tmp, name, 'schemas')
  cpSync(defaultSchemaDir(), dir, {recursive: true})
  const index = join(tmp, name, 'out', 'validators.cjs')
  compileSchemas(dir, index)
  return {dir, index}
}

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
const BASE = (read(join(defaultSchemaDir(), 'common.schema.json')).$id as string).replace(/common\.schema\.json$/, '')
const schemaOf = (kind: string) => `${BASE}${kind}.schema.json`
const without = (doc: Record<string, unknown>, member: string) =>
  Object.fromEntries(Object.entries(doc).filter(([k]) => k !== member))

/** Each fixture document with its schema, and variants that break it in typical ways. */
function instances(): {id: string; value: unknown}[] {
  const out: {id: string; value: unknown}[] = []
  const documents = join(packageRoot(), 'fixtures', 'documents')
  for (const file of readdirSync(documents).filter((f) => f.endsWith('.json'))) {
    const id = schemaOf(file.slice(0, -'.json'.length))
    const doc = read(join(documents, file))
    out.push({id, value: doc})
    out.push({id, value: without(doc, Object.keys(doc)[0]!)}) // a required member missing
    out.push({id, value: {...doc, unexpected: true}}) // an unknown member
    out.push({id, value: {...doc, protocolVersion: 1}}) // a wrong type
    if (typeof doc.issuedAt === 'string') out.push({id, value: {...doc, issuedAt: '2026-07-15 00:00:00Z'}}) // date-time (the protocol's own check)
    if (typeof doc.organization === 'string') out.push({id, value: {...doc, organization: 'not a uri'}}) // uri (the protocol's own check)
    out.push({id, value: null})
  }
  return out
}

describe('precompiled validators', () => {
  const copy = compiledCopy('same')
  const precompiled = loadPrecompiled(copy.dir, copy.index, protocolFormats)!

  it('are used for the very files they were compiled from, and give the answers and errors of run-time compilation', () => {
    expect(precompiled).not.toBeNull()
    const ajv = newAjv()
    for (const file of schemaFiles(copy.dir)) ajv.addSchema(read(file), undefined, undefined, false)
    const cases = instances()
    expect(cases.length).toBeGreaterThan(40)
    let rejected = 0
    for (const {id, value} of cases) {
      const built = precompiled.validator(id)!
      const compiled = ajv.getSchema(id)!
      const ok = built(value)
      expect([id, ok]).toEqual([id, compiled(value)])
      if (!ok) {
        rejected++
        expect(built.errors).toEqual(compiled.errors)
      }
    }
    expect(rejected).toBeGreaterThan(cases.length / 2) // the variants really break the documents
  })

  it('answer compileExternal only for the unchanged schema of a payload or the configuration', () => {
    const payload = read(join(copy.dir, 'payloads', 'message.post.schema.json'))
    expect(precompiled.exact(payload)).toBe(precompiled.validator(payload.$id as string))
    expect(precompiled.exact({...payload, required: []})).toBeUndefined()
    expect(precompiled.exact({type: 'string'})).toBeUndefined()
  })

  it('are not used once any file of the tree changed after the build: the catalog compiles the changed schema', () => {
    const changed = compiledCopy('changed')
    const common = read(join(changed.dir, 'common.schema.json'))
    const defs = common.$defs as Record<string, Record<string, unknown>>
    const [name, def] = Object.entries(defs).find(([, d]) => d.type === 'string' && d.format === 'uri')!
    // A narrower identifier definition after the build: one file of the tree differs.
    writeFileSync(
      join(changed.dir, 'common.schema.json'),
      JSON.stringify({...common, $defs: {...defs, [name]: {...def, pattern: '^urn:'}}}, null, 2),
    )
    expect(loadPrecompiled(changed.dir, changed.index, protocolFormats)).toBeNull()
    // Also a new file beside them, or a file missing, is another tree.
    const added = compiledCopy('added')
    writeFileSync(
      join(added.dir, 'payloads', 'x.schema.json'),
      JSON.stringify({$id: 'https://example.test/x.schema.json', type: 'string'}),
    )
    expect(loadPrecompiled(added.dir, added.index, protocolFormats)).toBeNull()
    const fresh = schemaCatalog(changed.dir).compileExternal({
      $id: 'https://example.test/id.schema.json',
      $ref: `${schemaOf('common')}#/$defs/${name}`,
    })
    expect(fresh('urn:example:x')).toBe(true)
    expect(fresh('https://example.test/x')).toBe(false) // the changed definition, compiled from the file
  })

  it('a built CLI run validates with them and never loads Ajv', () => {
    const script = `import {schemaCatalog} from './dist/src/schema/catalog.js'
import {createRequire} from 'node:module'
const valid = schemaCatalog().validate('command', {})
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/node_modules/ajv/'))
console.log(JSON.stringify({valid: valid.valid, loaded}))`
    const out = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {cwd: packageRoot(), encoding: 'utf8'}),
    ) as {valid: boolean; loaded: string[]}
    expect(out.valid).toBe(false)
    // The generated code requires two small runtime helpers of Ajv (UTF-16 length, deep equality), not Ajv itself.
    expect(out.loaded.filter((k) => !k.includes('/ajv/dist/runtime/'))).toEqual([])
  })
})
