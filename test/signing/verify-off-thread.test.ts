// verifyOffThread (src/signing/verify.ts): the six stages with the stage-6 equation on libuv's
// thread pool, as ingress runs them. Same answers as verify(), and results in the order of the
// calls, so Commands are admitted in the order they were received.

import {readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {packageRoot} from '../../src/schema/catalog.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {Rejection, type VerifyResult, verify, verifyOffThread} from '../../src/signing/verify.js'

const fixtures = join(packageRoot(), 'fixtures')
const registry = RegistryEvidence.fromBytes(readFileSync(join(fixtures, 'registry.json')))

/** Each fixture document as signed, and broken at each stage verification can fail in. */
function cases(): {name: string; bytes: Buffer}[] {
  const out: {name: string; bytes: Buffer}[] = []
  for (const file of readdirSync(join(fixtures, 'documents')).filter((f) => f.endsWith('.json'))) {
    const text = readFileSync(join(fixtures, 'documents', file), 'utf8')
    const doc = JSON.parse(text) as Record<string, unknown> & {signature: {value: string}}
    const value = doc.signature.value
    const flipped = value.slice(0, 10) + (value[10] === 'A' ? 'B' : 'A') + value.slice(11)
    out.push({name: `${file} as signed`, bytes: Buffer.from(text)})
    out.push({
      name: `${file} signature changed`,
      bytes: Buffer.from(JSON.stringify({...doc, signature: {...doc.signature, value: flipped}})),
    })
    out.push({name: `${file} content changed`, bytes: Buffer.from(JSON.stringify({...doc, ...tamper(doc)}))})
    out.push({name: `${file} not JSON`, bytes: Buffer.from(text.slice(0, -2))})
  }
  return out
}

/** A change to a signed member that keeps the schema: a string member gets one more character. */
function tamper(doc: Record<string, unknown>): Record<string, unknown> {
  for (const key of ['correlationId', 'objective', 'text', 'name', 'summary', 'goal', 'comments']) {
    if (typeof doc[key] === 'string') return {[key]: `${doc[key] as string}x`}
  }
  return {}
}

const outcome = (r: VerifyResult) =>
  r instanceof Rejection
    ? {code: r.code, ...Rejection.diagnostic(r)}
    : {ok: true, signingHash: r.signingHash, keyId: r.keyId}

describe('verifyOffThread', () => {
  it('answers as verify() does, for signed documents and for each way they fail', async () => {
    const all = cases()
    const results = await Promise.all(all.map((c) => verifyOffThread(undefined, c.bytes, registry)))
    all.forEach((c, i) =>
      expect([c.name, outcome(results[i]!)]).toEqual([c.name, outcome(verify(undefined, c.bytes, registry))]),
    )
    expect(results.filter((r) => r.ok).length).toBeGreaterThan(5)
    const stages = new Set(
      results.filter((r): r is Rejection => r instanceof Rejection).map((r) => Rejection.diagnostic(r).stage),
    )
    expect([...stages].sort()).toEqual(expect.arrayContaining(['parse', 'signature']))
  })

  it('settles in the order of the calls, whatever order the thread pool finishes in', async () => {
    const all = cases()
    const settled: number[] = []
    // Parse failures are known at once, valid documents only after the pool: without the ordering
    // the early rejections would settle first.
    await Promise.all(
      Array.from({length: 200}, (_, i) =>
        verifyOffThread(undefined, all[i % all.length]!.bytes, registry).then(() => settled.push(i)),
      ),
    )
    expect(settled).toEqual(Array.from({length: 200}, (_, i) => i))
  })
})
