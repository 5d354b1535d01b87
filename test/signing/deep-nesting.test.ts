// Issue #15: nesting that the official SDKs sign and verify (512 levels) verifies here, from a
// signer that shares no code with ours; one level more is the documented stage-1 limit.

import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {canonicalize} from '../../src/json/jcs.js'
import {MAX_DEPTH} from '../../src/json/parse.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {parseFrame} from '../../src/wire/frames.js'
import {Rejection, verify} from '../../src/signing/verify.js'
import {FIXTURE_REGISTRY, commandWithDepth, signIndependently, textDepth, tinyJcs} from './independent-signer.js'

const evidence = RegistryEvidence.fromBytes(readFileSync(FIXTURE_REGISTRY))
const bytesOf = (doc: unknown) => Buffer.from(JSON.stringify(doc), 'utf8')

describe('deeply nested Signed Documents (issue #15)', () => {
  it('the independent canonicalization agrees with ours on the fixture Command', () => {
    const doc = commandWithDepth(40)
    expect(tinyJcs(doc)).toBe(canonicalize(doc))
  })

  it('a Command with 512 levels of nesting, signed independently, verifies', () => {
    expect(MAX_DEPTH).toBe(512)
    const bytes = bytesOf(signIndependently(commandWithDepth(512)))
    expect(textDepth(bytes.toString('utf8'))).toBe(512)
    const r = verify('command', bytes, evidence)
    if (!r.ok) throw new Error(`rejected: ${JSON.stringify(Rejection.diagnostic(r))}`)
    expect(r.signingBytes.toString('utf8')).toBe(tinyJcs(commandWithDepth(512)))
  })

  it('the 129-deep extension value of the issue verifies (it was PROTOCOL_VIOLATION)', () => {
    const r = verify('command', bytesOf(signIndependently(commandWithDepth(132))), evidence)
    expect(r.ok).toBe(true)
  })

  it('513 levels are refused at stage 1 as PROTOCOL_VIOLATION (depth-limit), whatever the signature', () => {
    const bytes = bytesOf(signIndependently(commandWithDepth(513)))
    expect(textDepth(bytes.toString('utf8'))).toBe(513)
    const r = verify('command', bytes, evidence)
    expect(r.ok).toBe(false)
    expect((r as Rejection).code).toBe('PROTOCOL_VIOLATION')
    expect(Rejection.diagnostic(r as Rejection)).toMatchObject({stage: 'parse', reason: 'depth-limit'})
  })

  it('a tampered 512-deep document fails at stage 6, so the deep case above is a real signature check', () => {
    const doc = signIndependently(commandWithDepth(512))
    const text = JSON.stringify(doc).replace('"critical":false', '"critical":true')
    const r = verify('command', Buffer.from(text), evidence)
    expect(r.ok).toBe(false)
    expect(Rejection.diagnostic(r as Rejection).stage).toBe('signature')
  })

  it('a COMMAND frame carries a 512-deep Command (the frame is one level more); 513 is PROTOCOL_VIOLATION', () => {
    const frameOf = (depth: number) =>
      JSON.stringify({
        protocolVersion: '0.1',
        frameId: 'urn:uuid:7d0c9f1e-0000-4000-8000-000000000001',
        frameType: 'COMMAND',
        command: signIndependently(commandWithDepth(depth)),
      })
    const ok = parseFrame(frameOf(512))
    expect(ok.ok).toBe(true)
    if (!ok.ok) return
    // The Command's exact received text, as ingress verifies it, verifies.
    const inner = ok.source((ok.frame as unknown as {command: object}).command)!
    expect(verify('command', Buffer.from(inner), evidence).ok).toBe(true)
    expect(parseFrame(frameOf(513))).toEqual({ok: false, code: 'PROTOCOL_VIOLATION'})
  })
})
