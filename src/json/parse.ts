// Strict reader for exactly one UTF-8 JSON value (spec §6.4 stage 1, RFC 8259 + I-JSON checks).
//
// JSON.parse cannot be used on protocol input: it strips nothing but keeps the last duplicate
// member, and turns a BOM or an unpaired surrogate into silent data. This reader:
//   - rejects a UTF-8 byte-order mark and invalid UTF-8 (TextDecoder with fatal + ignoreBOM,
//     because the default decoder silently drops a BOM);
//   - rejects trailing data after the value and nesting deeper than MAX_DEPTH;
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

/** Maximum nesting of arrays and objects. Protocol documents nest far less than this. */
export const MAX_DEPTH = 128

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

/** Parses a string that must hold exactly one JSON value (the text is already decoded). */
export function parseJsonText(text: string, sources?: SourceTexts): JsonValue {
  if (text.charCodeAt(0) === 0xfeff) throw new JsonParseError('utf8-bom', 0, 'byte-order mark is not allowed')
  const parser = new Parser(text, sources)
  parser.skipWhitespace()
  const value = parser.value(0)
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

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
const ESCAPES: Record<string, string> = {'"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t'}

class Parser {
  pos = 0
  constructor(
    private readonly text: string,
    private readonly sources: SourceTexts | undefined,
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

  value(depth: number): JsonValue {
    const c = this.text.charCodeAt(this.pos)
    switch (c) {
      case 0x7b: // {
        return this.object(depth + 1)
      case 0x5b: // [
        return this.array(depth + 1)
      case 0x22: // "
        return this.string()
      case 0x74: // t
        return this.literal('true', true)
      case 0x66: // f
        return this.literal('false', false)
      case 0x6e: // n
        return this.literal('null', null)
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number()
        return this.fail(Number.isNaN(c) ? 'unexpected end of input' : 'unexpected character')
    }
  }

  literal<T extends JsonValue>(word: string, result: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail('invalid literal')
    this.pos += word.length
    return result
  }

  number(): number {
    NUMBER.lastIndex = this.pos
    const m = NUMBER.exec(this.text)
    if (m === null) return this.fail('invalid number')
    this.pos += m[0].length
    // `01`, `1.` and `1e` are malformed numbers, not a number followed by trailing data.
    if (/[0-9.eE+-]/.test(this.text[this.pos] ?? '')) this.fail('invalid number')
    return Number(m[0])
  }

  string(): string {
    const t = this.text
    this.pos++ // opening quote
    let out = ''
    for (;;) {
      // A run of characters needing no work: anything but `"`, `\` and control characters (the
      // end of the text reads as NaN and stops it too). Scanned by hand: a regex's match array per
      // run made a strict parse allocate about 60 % more (same speed).
      const start = this.pos
      let end = start
      let c = t.charCodeAt(end)
      while (c !== 0x22 && c !== 0x5c && c >= 0x20) c = t.charCodeAt(++end)
      if (end > start) out += t.slice(start, end)
      this.pos = end
      if (c === 0x22) {
        this.pos++
        return out
      }
      if (c !== 0x5c) this.fail(Number.isNaN(c) ? 'unterminated string' : 'control character in string')
      const e = t[this.pos + 1]
      if (e === 'u') {
        const hex = t.slice(this.pos + 2, this.pos + 6)
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('invalid \\u escape')
        // Surrogates are decoded one code unit at a time; an unpaired one survives to stage 5.
        out += String.fromCharCode(parseInt(hex, 16))
        this.pos += 6
      } else if (e !== undefined && e in ESCAPES) {
        out += ESCAPES[e]
        this.pos += 2
      } else {
        this.fail('invalid escape')
      }
    }
  }

  array(depth: number): JsonValue[] {
    if (depth > MAX_DEPTH) throw new JsonParseError('depth-limit', this.pos, `nesting deeper than ${MAX_DEPTH}`)
    this.pos++
    const out: JsonValue[] = []
    this.skipWhitespace()
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++
      return out
    }
    for (;;) {
      this.skipWhitespace()
      out.push(this.value(depth))
      this.skipWhitespace()
      const c = this.text.charCodeAt(this.pos++)
      if (c === 0x5d) return out
      if (c !== 0x2c) {
        this.pos--
        this.fail("expected ',' or ']'")
      }
    }
  }

  object(depth: number): JsonObject {
    if (depth > MAX_DEPTH) throw new JsonParseError('depth-limit', this.pos, `nesting deeper than ${MAX_DEPTH}`)
    const start = this.pos
    const out = this.members(depth)
    this.sources?.set(out, this.text.slice(start, this.pos))
    return out
  }

  members(depth: number): JsonObject {
    this.pos++
    const out: JsonObject = Object.create(null)
    this.skipWhitespace()
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++
      return out
    }
    for (;;) {
      this.skipWhitespace()
      if (this.text.charCodeAt(this.pos) !== 0x22) this.fail('expected a member name')
      const at = this.pos
      const key = this.string()
      if (Object.hasOwn(out, key))
        throw new JsonParseError('duplicate-member', at, `duplicate member name ${JSON.stringify(key)}`)
      this.skipWhitespace()
      if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail("expected ':'")
      this.pos++
      this.skipWhitespace()
      out[key] = this.value(depth)
      this.skipWhitespace()
      const c = this.text.charCodeAt(this.pos++)
      if (c === 0x7d) return out
      if (c !== 0x2c) {
        this.pos--
        this.fail("expected ',' or '}'")
      }
    }
  }
}
