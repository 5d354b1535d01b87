// RFC 8785 JSON Canonicalization Scheme over the I-JSON data model (spec §2, §6.4 stage 5).
//
// Numbers: the ECMAScript Number-to-String form is exactly RFC 8785's shortest round trip
// (`-0` is written `0`), so String(n) is used for finite numbers; non-finite values (a lexeme such
// as 1e400 that the parser turned into Infinity) are rejected. Strings: JSON.stringify produces
// the RFC 8785 escaping for well-formed strings; strings with an unpaired surrogate are rejected
// before any byte is emitted. Member names are sorted by UTF-16 code units, which is what the
// default Array#sort comparison does.

import {createHash} from 'node:crypto'
import {MwpError} from '../errors.js'
import type {JsonValue} from './parse.js'

export type JcsReason = 'non-finite-number' | 'unpaired-surrogate' | 'unsupported-value'

/**
 * A value outside what RFC 8785 can encode: on the wire a PROTOCOL_VIOLATION; `reason` is the
 * protected diagnostic of which rule failed.
 */
export class JcsError extends MwpError<'PROTOCOL_VIOLATION'> {
  constructor(
    readonly reason: JcsReason,
    /** JSON Pointer of the offending value. */
    readonly pointer: string,
  ) {
    super('PROTOCOL_VIOLATION', `${reasonText[reason]} at ${pointer === '' ? 'the document root' : pointer}`)
  }
}

const reasonText: Record<JcsReason, string> = {
  'non-finite-number': 'number outside the finite binary64 range',
  'unpaired-surrogate': 'string with an unpaired UTF-16 surrogate',
  'unsupported-value': 'value outside the JSON data model',
}

// String.prototype.isWellFormed is in Node 20's V8; the regex is a fallback for older engines.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const wellFormed: (s: string) => boolean =
  typeof (String.prototype as {isWellFormed?: unknown}).isWellFormed === 'function'
    ? (s) => (s as unknown as {isWellFormed(): boolean}).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s)

/** Returns the JCS text of a JSON value, or throws JcsError for values outside the data model. */
export function canonicalize(value: unknown): string {
  try {
    return write(value)
  } catch (e) {
    if (e instanceof Fault) throw locate(value, '')
    throw e
  }
}

/** JCS as UTF-8 bytes. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalize(value), 'utf8')
}

/** `sha256:` + lowercase hex of the JCS bytes of a value. */
export function canonicalHash(value: unknown): string {
  return 'sha256:' + createHash('sha256').update(canonicalize(value), 'utf8').digest('hex')
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1')
}

// The hot path carries no JSON Pointer; when it fails, a second walk locates the fault for the
// diagnostic. This keeps canonicalization of valid documents allocation-light.
class Fault {
  constructor(readonly reason: JcsReason) {}
}

function write(value: unknown): string {
  switch (typeof value) {
    case 'string':
      if (!wellFormed(value)) throw new Fault('unpaired-surrogate')
      return JSON.stringify(value)
    case 'number':
      if (!Number.isFinite(value)) throw new Fault('non-finite-number')
      return String(value) // String(-0) === '0'
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object': {
      if (value === null) return 'null'
      if (Array.isArray(value)) {
        let out = '['
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ','
          out += write(value[i])
        }
        return out + ']'
      }
      const obj = value as Record<string, JsonValue>
      const keys = Object.keys(obj).sort()
      let out = '{'
      for (const key of keys) {
        if (!wellFormed(key)) throw new Fault('unpaired-surrogate')
        if (out.length > 1) out += ','
        out += JSON.stringify(key) + ':' + write(obj[key])
      }
      return out + '}'
    }
    default:
      throw new Fault('unsupported-value')
  }
}

/** Finds the first fault in document order (members in JCS order) and its JSON Pointer. */
function locate(value: unknown, pointer: string): JcsError | null {
  try {
    write(value)
    return null
  } catch (e) {
    if (!(e instanceof Fault)) throw e
    if (value !== null && typeof value === 'object') {
      const entries: [string, unknown][] = Array.isArray(value)
        ? value.map((v, i) => [String(i), v])
        : Object.keys(value)
            .sort()
            .map((k) => [k, (value as Record<string, unknown>)[k]])
      for (const [key, child] of entries) {
        const at = `${pointer}/${escapePointer(key)}`
        if (!wellFormed(key)) return new JcsError('unpaired-surrogate', at)
        const found = locate(child, at)
        if (found) return found
      }
    }
    return new JcsError(e.reason, pointer)
  }
}
