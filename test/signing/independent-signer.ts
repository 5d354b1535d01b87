// A signer that shares no code with src/: its own RFC 8785 canonicalization for the subset its
// documents use (null, booleans, safe integers, ASCII strings, arrays, objects with ASCII member
// names) and node:crypto Ed25519 directly, with a published development key of fixtures/. A
// document it signs verifying under our verifier is the interoperability claim of issue #15 (the
// official SDKs sign and verify 512 levels of nesting), not our signer agreeing with itself.

import {createPrivateKey, sign} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {PROJECT_ROOT} from '../support/upstream.js'

/** The development registry that holds the key below. */
export const FIXTURE_REGISTRY = join(PROJECT_ROOT, 'fixtures/registry.json')

interface KeyFile {
  keyId: string
  seed: string
}

const PKCS8_ED25519_PREFIX = '302e020100300506032b657004220420'

/** Text to emit as it is (punctuation, a member name), as opposed to a value to write. */
class Text {
  constructor(readonly text: string) {}
}

/** JCS of the subset: member names sorted by code unit (ASCII, so plain sort), JSON.stringify for ASCII strings. */
export function tinyJcs(value: unknown): string {
  // An explicit stack of what is left to write, so 100,000 levels are as easy as 5.
  const work: unknown[] = [value]
  let out = ''
  while (work.length > 0) {
    const v = work.pop()
    if (v instanceof Text) out += v.text
    else if (v === null || typeof v === 'boolean') out += String(v)
    else if (typeof v === 'number') {
      if (!Number.isSafeInteger(v)) throw new Error('tinyJcs: only safe integers')
      out += String(v)
    } else if (typeof v === 'string') {
      if (!/^[\x20-\x7e]*$/.test(v)) throw new Error('tinyJcs: only printable ASCII strings')
      out += JSON.stringify(v)
    } else if (Array.isArray(v)) {
      out += '['
      work.push(new Text(']'))
      for (let i = v.length - 1; i >= 0; i--) {
        work.push(v[i])
        if (i > 0) work.push(new Text(','))
      }
    } else if (typeof v === 'object') {
      const keys = Object.keys(v).sort()
      out += '{'
      work.push(new Text('}'))
      for (let i = keys.length - 1; i >= 0; i--) {
        work.push((v as Record<string, unknown>)[keys[i]])
        work.push(new Text((i > 0 ? ',' : '') + JSON.stringify(keys[i]) + ':'))
      }
    } else throw new Error(`tinyJcs: ${typeof v} is outside the subset`)
  }
  return out
}

/**
 * Signs `unsigned` (a Command: protected time `issuedAt`) with a fixture key file: the signature
 * envelope's createdAt is issuedAt, and the value is Ed25519 over tinyJcs of the unsigned members.
 */
export function signIndependently(unsigned: Record<string, unknown>, keyFile = 'coordinator'): Record<string, unknown> {
  const key = JSON.parse(readFileSync(join(PROJECT_ROOT, `fixtures/keys/${keyFile}.key.json`), 'utf8')) as KeyFile
  const privateKey = createPrivateKey({
    key: Buffer.concat([Buffer.from(PKCS8_ED25519_PREFIX, 'hex'), Buffer.from(key.seed, 'base64url')]),
    format: 'der',
    type: 'pkcs8',
  })
  const value = sign(null, Buffer.from(tinyJcs(unsigned), 'utf8'), privateKey).toString('base64url')
  return {...unsigned, signature: {algorithm: 'Ed25519', keyId: key.keyId, createdAt: unsigned.issuedAt, value}}
}

/** The fixture's unsigned Command (signed by the coordinator key). */
export function fixtureCommand(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(PROJECT_ROOT, 'fixtures/unsigned/command.json'), 'utf8')) as Record<
    string,
    unknown
  >
}

/**
 * The fixture Command carrying a noncritical extension whose `data` nests so that the whole
 * document has `depth` levels of arrays and objects (document 1, extensions 2, the profile's
 * entry 3, data 4 and below).
 */
export function commandWithDepth(depth: number): Record<string, unknown> {
  if (depth < 4) throw new Error('depth counts the three enclosing objects')
  let data: unknown = []
  for (let level = 5; level <= depth; level++) data = level % 2 === 0 ? {d: data} : [data]
  return {
    ...fixtureCommand(),
    extensions: {'urn:mwp:test:ext:deep': {version: '1.0.0', critical: false, data}},
  }
}

/** Nesting depth of a JSON text (brackets outside strings). */
export function textDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '[' || c === '{') max = Math.max(max, ++depth)
    else if (c === ']' || c === '}') depth--
  }
  return max
}
