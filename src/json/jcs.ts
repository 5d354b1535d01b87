// RFC 8785 JSON Canonicalization Scheme over the I-JSON data model (spec §2, §6.4 stage 5).
//
// Numbers: the ECMAScript Number-to-String form is exactly RFC 8785's shortest round trip
// (`-0` is written `0`), so String(n) is used for finite numbers; non-finite values (a lexeme such
// as 1e400 that the parser turned into Infinity) are rejected. Strings: JSON.stringify produces
// the RFC 8785 escaping for well-formed strings; strings with an unpaired surrogate are rejected
// before any byte is emitted. Member names are sorted by UTF-16 code units, which is what the
// default Array#sort comparison does.
//
// The walk never recurses: open arrays and objects sit on an explicit stack, so nesting is bounded
// by memory, not by the JavaScript call stack, and the JSON Pointer of a fault is read off that
// stack. Output is flushed to UTF-8 chunks every FLUSH_AT characters, so a large document does not
// hold millions of small concatenated strings at once.

import {createHash} from 'node:crypto'
import {MwpError} from '../errors.js'

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
  const out = write(value)
  return typeof out === 'string' ? out : out.toString('utf8')
}

/** JCS as UTF-8 bytes. */
export function canonicalBytes(value: unknown): Buffer {
  const out = write(value)
  return typeof out === 'string' ? Buffer.from(out, 'utf8') : out
}

/** `sha256:` + lowercase hex of the JCS bytes of a value. */
export function canonicalHash(value: unknown): string {
  const out = write(value)
  return 'sha256:' + createHash('sha256').update(out).digest('hex')
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1')
}

/** Characters of output kept as one string before they are flushed to a UTF-8 chunk. */
const FLUSH_AT = 1 << 16

/** One open array or object of the walk: its members in JCS order and the one being written. */
interface Open {
  container: object
  /** Sorted member names of an object; null for an array. */
  keys: string[] | null
  length: number
  index: number
}

/** Where a fault is: the JSON Pointer made of the member each open container is writing. */
function pointerOf(stack: readonly Open[]): string {
  let pointer = ''
  for (const o of stack) pointer += '/' + escapePointer(o.keys === null ? String(o.index) : o.keys[o.index]!)
  return pointer
}

/**
 * The JCS text of `root`: a string when short, otherwise UTF-8 chunks joined into one Buffer.
 * Faults are reported for the first offending value in JCS order.
 */
function write(root: unknown): string | Buffer {
  const stack: Open[] = []
  /** Containers on the stack, to refuse a cyclic value (outside the JSON data model). */
  const onStack = new Set<object>()
  const chunks: Buffer[] = []
  let out = ''
  let value = root
  for (;;) {
    // Write `value`, or open it and continue with its first member.
    let opened = false
    switch (typeof value) {
      case 'string':
        if (!wellFormed(value)) throw new JcsError('unpaired-surrogate', pointerOf(stack))
        out += JSON.stringify(value)
        break
      case 'number':
        if (!Number.isFinite(value)) throw new JcsError('non-finite-number', pointerOf(stack))
        out += String(value) // String(-0) === '0'
        break
      case 'boolean':
        out += value ? 'true' : 'false'
        break
      case 'object': {
        if (value === null) {
          out += 'null'
          break
        }
        if (onStack.has(value)) throw new JcsError('unsupported-value', pointerOf(stack))
        const keys = Array.isArray(value) ? null : Object.keys(value).sort()
        const length = keys === null ? (value as unknown[]).length : keys.length
        if (length === 0) {
          out += keys === null ? '[]' : '{}'
          break
        }
        out += keys === null ? '[' : '{'
        stack.push({container: value, keys, length, index: 0})
        onStack.add(value)
        opened = true
        break
      }
      default:
        throw new JcsError('unsupported-value', pointerOf(stack))
    }
    if (out.length >= FLUSH_AT) {
      chunks.push(Buffer.from(out, 'utf8'))
      out = ''
    }
    // Move to the next member to write, closing every container that is complete.
    for (;;) {
      const top = stack[stack.length - 1]
      if (top === undefined) {
        if (chunks.length === 0) return out
        chunks.push(Buffer.from(out, 'utf8'))
        return Buffer.concat(chunks)
      }
      if (!opened) {
        if (++top.index === top.length) {
          out += top.keys === null ? ']' : '}'
          stack.pop()
          onStack.delete(top.container)
          continue
        }
        out += ','
      }
      opened = false
      if (top.keys === null) {
        value = (top.container as unknown[])[top.index]
      } else {
        const key = top.keys[top.index]!
        if (!wellFormed(key)) throw new JcsError('unpaired-surrogate', pointerOf(stack))
        out += JSON.stringify(key) + ':'
        value = (top.container as Record<string, unknown>)[key]
      }
      break
    }
  }
}
