// The documented document-size limit of stage 1 (issue #15): exactly MAX_DOCUMENT_BYTES verifies,
// one byte more is PROTOCOL_VIOLATION (size-limit) before any parsing.

import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {MAX_DOCUMENT_BYTES, Rejection, verify} from '../../src/signing/verify.js'
import {FIXTURE_REGISTRY, fixtureCommand, signIndependently} from './independent-signer.js'

const evidence = RegistryEvidence.fromBytes(readFileSync(FIXTURE_REGISTRY))

/** A signed fixture Command padded (inside its signed payload) to exactly `size` bytes. */
function commandOfSize(size: number): Buffer {
  const withPad = (pad: string) => {
    const unsigned = fixtureCommand()
    return Buffer.from(
      JSON.stringify(signIndependently({...unsigned, payload: {...(unsigned.payload as object), pad}})),
    )
  }
  const bytes = withPad('x'.repeat(size - withPad('').length))
  expect(bytes.length).toBe(size)
  return bytes
}

describe('stage 1 document size limit', () => {
  it('is 16 MiB', () => expect(MAX_DOCUMENT_BYTES).toBe(16 * 1024 * 1024))

  it('a document of exactly the limit verifies', () => {
    const r = verify('command', commandOfSize(MAX_DOCUMENT_BYTES), evidence)
    expect(r.ok).toBe(true)
  })

  it('one byte more (insignificant whitespace) is refused at stage 1, PROTOCOL_VIOLATION size-limit', () => {
    const small = commandOfSize(2000)
    expect(verify('command', Buffer.concat([small, Buffer.from(' ')]), evidence).ok).toBe(true) // whitespace alone is fine
    const r = verify('command', Buffer.concat([commandOfSize(MAX_DOCUMENT_BYTES), Buffer.from(' ')]), evidence)
    expect(r.ok).toBe(false)
    expect((r as Rejection).code).toBe('PROTOCOL_VIOLATION')
    expect(Rejection.diagnostic(r as Rejection)).toMatchObject({stage: 'parse', reason: 'size-limit'})
  })
})
