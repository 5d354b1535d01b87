// Strict reader for exactly one UTF-8 JSON value (spec §6.4 stage 1, RFC 8259 + I-JSON checks).
//
// JSON.parse cannot be used on protocol input: it strips nothing but keeps the last duplicate
// member, and turns a BOM or an unpaired surrogate into silent data. This reader:
//   - rejects a UTF-8 byte-order mark and invalid UTF-8 (TextDecoder with fatal + ignoreBOM,
//     because the default decoder silently drops a BOM);
//   - rejects trailing data after the value and nesting deeper than MAX_DEPTH;
//   - never recurses: open arrays and objects live on an explicit stack, so the JavaScript call
//     stack does not bound the nesting (MAX_DEPTH does, and only MAX_DEPTH);
//   - rejects duplicate member names after escape decoding (`payload` vs `pay\u006coad`);
//   - builds null-prototype objects, so a member named `__proto__` is plain data;
//   - converts each number lexeme with Number(), which is the correctly rounded binary64 value
//     required by RFC 8785. A lexeme outside the finite binary64 range becomes ±Infinity and a
//     string may keep an unpaired surrogate: both are syntactically valid JSON, so they are
//     accepted here and rejected later by the JCS stage (stage 5), as §6.4 requires.

import {MwpError} from '../errors.js'

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject
export interface JsonObject {
  [key: string]: JsonValue
}

/** A JSON object: not null, not an array (for typing a parsed answer member by member). */
export const isJsonObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** `v` when it is a count (a non-negative safe integer), else null. */
export const countOf = (v: unknown): number | null =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null

/**
 * Maximum nesting of arrays and objects. PROTOCOL.md names no nesting limit; 512 is what both
 * official SDKs sign and verify (issue #15: a 129-deep extension value verified there and failed
 * here). It is also far below the depth at which V8's own recursive JSON.stringify and
 * structuredClone, which store and wire code apply to parsed documents, overflow the call stack
 * (about 4,000 and 2,000 levels on Node 20), so nothing accepted here can crash them later.
 */
export const MAX_DEPTH = 512

export type JsonParseReason =
  'utf8-bom' | 'invalid-utf8' | 'syntax' | 'trailing-data' | 'duplicate-member' | 'depth-limit'

/** Bytes that are not strict JSON: on the wire a PROTOCOL_VIOLATION; `reason` says which rule failed. */
export class JsonParseError extends MwpError<'PROTOCOL_VIOLATION'> {
  constructor(
    readonly reason: JsonParseReason,
    readonly offset: number,
    message: string,
  ) {
    super('PROTOCOL_VIOLATION', `${message} at character ${offset}`)
  }
}

const decoder = new TextDecoder('utf-8', {fatal: true, ignoreBOM: true})

/**
 * Where a parse records the exact source text of every object it builds: a document embedded in
 * another (an Approval in a Command, a Command in a frame) is then verified as it was received,
 * never as a re-serialization of the parsed value (ARCHITECTURE principle 4).
 */
export type SourceTexts = WeakMap<object, string>

/** The exact text an object of a parsed value was received as (frames.ts parseFrame). */
export type SourceOf = (o: object) => string | undefined

/** Parses bytes that must hold exactly one UTF-8 JSON value. */
export function parseJsonBytes(bytes: Uint8Array, sources?: SourceTexts): JsonValue {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new JsonParseError('utf8-bom', 0, 'UTF-8 byte-order mark is not allowed')
  }
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    throw new JsonParseError('invalid-utf8', 0, 'input is not valid UTF-8')
  }
  return parseJsonText(text, sources)
}

export interface ParseOptions {
  /**
   * Nesting allowed (default MAX_DEPTH). A container of documents allows their levels plus its
   * own: a WebSocket COMMAND or EVENT frame holds a MAX_DEPTH-deep document one level down.
   */
  maxDepth?: number
}

/** Parses a string that must hold exactly one JSON value (the text is already decoded). */
export function parseJsonText(text: string, sources?: SourceTexts, options: ParseOptions = {}): JsonValue {
  if (text.charCodeAt(0) === 0xfeff) throw new JsonParseError('utf8-bom', 0, 'byte-order mark is not allowed')
  const parser = new Parser(text, sources, options.maxDepth ?? MAX_DEPTH)
  const value = parser.value()
  parser.skipWhitespace()
  if (parser.pos !== text.length)
    throw new JsonParseError('trailing-data', parser.pos, 'unexpected data after the JSON value')
  return value
}

/**
 * Parses one JSON value once; the function returned gives the exact source text of the object at a
 * member path inside it (its UTF-8 bytes are the bytes received), or undefined when there is no
 * object there. Throws JsonParseError.
 */
export function sourcesIn(bytes: Uint8Array): (path: readonly string[]) => string | undefined {
  const sources: SourceTexts = new WeakMap()
  const root = parseJsonBytes(bytes, sources)
  return (path) => {
    let node: JsonValue | undefined = root
    for (const key of path)
      node = node !== null && typeof node === 'object' && !Array.isArray(node) ? node[key] : undefined
    return node !== null && typeof node === 'object' ? sources.get(node) : undefined
  }
}

const depthError = (offset: number, maxDepth: number) =>
  new JsonParseError('depth-limit', offset, `nesting deeper than ${maxDepth}`)

/** The code unit a one-character escape stands for, by the character after the backslash; 0 for none. */
const SHORT_ESCAPES = new Uint16Array(128)
for (const [c, v] of Object.entries({'"': 0x22, '\\': 0x5c, '/': 0x2f, b: 8, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09}))
  SHORT_ESCAPES[c.charCodeAt(0)] = v

/** Value of one hex digit, or -1. */
function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  const l = c | 0x20
  return l >= 0x61 && l <= 0x66 ? l - 0x57 : -1
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39

/**
 * Scratch code units for strings with escapes, reused across parses: decoding into it and
 * building the string once is what keeps escape-dense strings near JSON.parse speed (appending
 * each decoded character to a string made them 15-25x slower). Grown as one string needs and kept
 * for the next (regrowing per string cost a third of the time of a 1 MB one); a buffer grown past
 * SCRATCH_KEPT units (8 MiB) is dropped after its string, so the largest document does not pin
 * its size for the life of the process.
 */
const SCRATCH_START = 1024
const SCRATCH_KEPT = 1 << 22
let scratch: Uint16Array = new Uint16Array(SCRATCH_START)

// utf16le decoding of the scratch bytes is its code units only on a little-endian machine.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** The string of units[0, n), lone surrogates kept (both routes copy code units as they are). */
function unitsToString(units: Uint16Array, n: number): string {
  if (n > 64 && LITTLE_ENDIAN) return Buffer.from(units.buffer, units.byteOffset, n * 2).toString('utf16le')
  let out = ''
  for (let i = 0; i < n; i += 4096)
    out += String.fromCharCode.apply(null, units.subarray(i, Math.min(n, i + 4096)) as unknown as number[])
  return out
}

class Parser {
  pos = 0
  constructor(
    private readonly text: string,
    private readonly sources: SourceTexts | undefined,
    private readonly maxDepth: number,
  ) {}

  skipWhitespace(): void {
    const t = this.text
    let p = this.pos
    for (;;) {
      const c = t.charCodeAt(p)
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++
      else break
    }
    this.pos = p
  }

  fail(message: string): never {
    throw new JsonParseError('syntax', this.pos, message)
  }

  /**
   * Reads one value. Open containers are kept on explicit stacks (`open`, with the pending member
   * name and the source start of each), so nesting costs heap, not JavaScript stack.
   */
  value(): JsonValue {
    const t = this.text
    const open: (JsonValue[] | JsonObject)[] = []
    const names: string[] = []
    const starts: number[] = []
    for (;;) {
      // A value starts here: a scalar, an empty container, or a container pushed on the stack.
      this.skipWhitespace()
      const c = t.charCodeAt(this.pos)
      let value: JsonValue
      if (c === 0x5b || c === 0x7b) {
        if (open.length >= this.maxDepth) throw depthError(this.pos, this.maxDepth)
        const start = this.pos++
        this.skipWhitespace()
        if (c === 0x5b) {
          const array: JsonValue[] = []
          if (t.charCodeAt(this.pos) !== 0x5d) {
            open.push(array)
            names.push('')
            starts.push(start)
            continue
          }
          this.pos++
          value = array
        } else {
          const object: JsonObject = Object.create(null)
          if (t.charCodeAt(this.pos) !== 0x7d) {
            names.push(this.memberName(object))
            open.push(object)
            starts.push(start)
            continue
          }
          this.pos++
          this.sources?.set(object, t.slice(start, this.pos))
          value = object
        }
      } else {
        value = this.scalar(c)
      }
      // The value is complete: store it in its container, then close every container that ends.
      for (;;) {
        const top = open.length - 1
        if (top < 0) return value
        const container = open[top]!
        const isArray = Array.isArray(container)
        if (isArray) container.push(value)
        else container[names[top]!] = value
        this.skipWhitespace()
        const d = t.charCodeAt(this.pos)
        if (d === 0x2c) {
          this.pos++
          if (!isArray) names[top] = this.memberName(container)
          break
        }
        if (d !== (isArray ? 0x5d : 0x7d)) this.fail(isArray ? "expected ',' or ']'" : "expected ',' or '}'")
        this.pos++
        open.pop()
        names.pop()
        const start = starts.pop()!
        if (!isArray) this.sources?.set(container, t.slice(start, this.pos))
        value = container
      }
    }
  }

  /** Reads `"name" :` of a member of `object`, refusing a name it already has. */
  memberName(object: JsonObject): string {
    this.skipWhitespace()
    if (this.text.charCodeAt(this.pos) !== 0x22) this.fail('expected a member name')
    const at = this.pos
    const key = this.string()
    if (Object.hasOwn(object, key))
      throw new JsonParseError('duplicate-member', at, `duplicate member name ${JSON.stringify(key)}`)
    this.skipWhitespace()
    if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail("expected ':'")
    this.pos++
    return key
  }

  scalar(c: number): JsonValue {
    switch (c) {
      case 0x22: // "
        return this.string()
      case 0x74: // t
        return this.literal('true', true)
      case 0x66: // f
        return this.literal('false', false)
      case 0x6e: // n
        return this.literal('null', null)
      default:
        if (c === 0x2d || isDigit(c)) return this.number()
        return this.fail(Number.isNaN(c) ? 'unexpected end of input' : 'unexpected character')
    }
  }

  literal<T extends JsonValue>(word: string, result: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail('invalid literal')
    this.pos += word.length
    return result
  }

  /** -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, converted by Number() from its exact lexeme. */
  number(): number {
    const t = this.text
    const start = this.pos
    let p = start
    if (t.charCodeAt(p) === 0x2d) p++
    const first = t.charCodeAt(p)
    if (first === 0x30) p++
    else if (isDigit(first)) while (isDigit(t.charCodeAt(++p)));
    else return this.fail('invalid number')
    if (t.charCodeAt(p) === 0x2e && isDigit(t.charCodeAt(p + 1))) {
      p += 2
      while (isDigit(t.charCodeAt(p))) p++
    }
    const e = t.charCodeAt(p)
    if (e === 0x65 || e === 0x45) {
      let q = p + 1
      const sign = t.charCodeAt(q)
      if (sign === 0x2b || sign === 0x2d) q++
      if (isDigit(t.charCodeAt(q))) {
        while (isDigit(t.charCodeAt(++q)));
        p = q
      }
    }
    this.pos = p
    // `01`, `1.` and `1e` are malformed numbers, not a number followed by trailing data.
    const next = t.charCodeAt(p)
    if (isDigit(next) || next === 0x2e || next === 0x65 || next === 0x45 || next === 0x2b || next === 0x2d)
      this.fail('invalid number')
    return Number(t.slice(start, p))
  }

  string(): string {
    const t = this.text
    const start = this.pos + 1 // after the opening quote
    // A run of characters needing no work: anything but `"`, `\` and control characters (the
    // end of the text reads as NaN and stops it too). Most strings are one such run.
    let p = start
    let c = t.charCodeAt(p)
    while (c !== 0x22 && c !== 0x5c && c >= 0x20) c = t.charCodeAt(++p)
    if (c === 0x22) {
      this.pos = p + 1
      return t.slice(start, p)
    }
    this.pos = p
    return this.escapedString(start)
  }

  /** The rest of a string that has an escape (or an error) at this.pos; `start` follows its quote. */
  escapedString(start: number): string {
    const t = this.text
    let units = scratch
    let n = 0
    for (let i = start; i < this.pos; i++) {
      if (n === units.length) units = this.grow(units, n)
      units[n++] = t.charCodeAt(i)
    }
    let p = this.pos
    for (;;) {
      const c = t.charCodeAt(p)
      if (n === units.length) units = this.grow(units, n)
      if (c === 0x22) {
        this.pos = p + 1
        if (units.length > SCRATCH_KEPT) scratch = new Uint16Array(SCRATCH_START)
        return unitsToString(units, n)
      }
      if (c === 0x5c) {
        const e = t.charCodeAt(p + 1)
        if (e === 0x75) {
          // \uXXXX: surrogates are decoded one code unit at a time; an unpaired one survives to stage 5.
          const h = (hexDigit(t.charCodeAt(p + 2)) << 12) | (hexDigit(t.charCodeAt(p + 3)) << 8)
          const l = (hexDigit(t.charCodeAt(p + 4)) << 4) | hexDigit(t.charCodeAt(p + 5))
          if (h < 0 || l < 0) {
            this.pos = p
            this.fail('invalid \\u escape')
          }
          units[n++] = h | l
          p += 6
        } else {
          const v = (e < 128 ? SHORT_ESCAPES[e] : 0) ?? 0
          if (v === 0) {
            this.pos = p
            this.fail('invalid escape')
          }
          units[n++] = v
          p += 2
        }
      } else if (c >= 0x20) {
        units[n++] = c
        p++
      } else {
        this.pos = p
        this.fail(Number.isNaN(c) ? 'unterminated string' : 'control character in string')
      }
    }
  }

  /** A scratch buffer twice the size holding the first n units of `units`. */
  private grow(units: Uint16Array, n: number): Uint16Array {
    const bigger = new Uint16Array(units.length * 2)
    bigger.set(units.subarray(0, n))
    scratch = bigger
    return bigger
  }
}
