// Structural bundle (`conformance/manifest.json`, ACCEPTANCE N3): a list of
// `{name, schema, instance, valid}`. Each instance is read with the strict parser and validated
// against OUR schema of the same file name: the schemas are the implementation under test.

import {basename} from 'node:path'
import {schemaCatalog} from '../schema/catalog.js'
import {BundleError, type BundleRoot} from './bundle.js'
import {type BundleReport, type CaseResult, type Progress, summarize} from './report.js'

interface Entry {
  name: string
  schema: string
  instance: string
  valid: boolean
}

function entries(root: BundleRoot): Entry[] {
  const manifest = root.json('conformance/manifest.json')
  const ok =
    Array.isArray(manifest) &&
    manifest.every(
      (e) =>
        e !== null &&
        typeof e === 'object' &&
        typeof e.name === 'string' &&
        typeof e.schema === 'string' &&
        typeof e.instance === 'string' &&
        typeof e.valid === 'boolean',
    )
  if (!ok) throw new BundleError('conformance/manifest.json must be a list of {name, schema, instance, valid}')
  return manifest as unknown as Entry[]
}

export function runStructural(root: BundleRoot, progress?: Progress): BundleReport {
  const list = entries(root)
  const catalog = schemaCatalog()
  const cases: CaseResult[] = []
  for (const e of list) {
    let valid: boolean
    let detail: string | undefined
    try {
      const result = catalog.validate(basename(e.schema), root.json(e.instance))
      valid = result.valid
      if (!result.valid) detail = result.errors.map((x) => `${x.instancePath || '/'} ${x.message}`).join('; ')
    } catch (err) {
      if (!(err instanceof BundleError)) throw err
      valid = false
      detail = err.message
    }
    const expected = e.valid ? 'valid' : 'invalid'
    const actual = valid ? 'valid' : 'invalid'
    const result: CaseResult = {bundle: 'structural', id: e.name, expected, actual, pass: expected === actual}
    if (!result.pass) result.detail = detail ?? 'accepted by the schema'
    cases.push(result)
    progress?.(result, cases.length, list.length)
  }
  return summarize('structural', root.dir, cases)
}
