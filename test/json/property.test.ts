// Property tests for the strict JSON reader (stage 1) and RFC 8785 JCS (stage 5).
//
// Deterministic: every property runs with a fixed fast-check seed, so a failure reproduces
// exactly (fast-check prints the counterexample and the seed/path to replay it).
//
// Oracles are independent of the code under test where that is cheap: JSON.parse for the reader,
// a hand-written RFC 8785 serializer with an explicit UTF-16 comparator for JCS, String(n) for
// numbers, and Buffer's lossy UTF-8 round trip for "is this valid UTF-8".

import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {JcsError, canonicalize} from '../../src/json/jcs.js'
import {JsonParseError, MAX_DEPTH, parseJsonBytes, parseJsonText} from '../../src/json/parse.js'
import {mulberry32 as prng} from '../../src/poc/faults/prng.js'

const SEED = 4242
const RUNS = 400
// Applied to every fc.assert below (a property may still pass its own {numRuns}).
fc.configureGlobal({seed: SEED, numRuns: RUNS})

/** Generous per-call bound for "never hangs" on the bounded inputs used here. */
const CALL_BUDGET_MS = 500

type Json = null | boolean | number | string | Json[] | {[k: string]: Json}

// ---------------------------------------------------------------------------------------------
// Generators

const CONTROL_CHARS = Array.from({length: 0x20}, (_, i) => String.fromCharCode(i))
/** Characters that stress escaping, sorting and UTF-8: every C0 control, DEL, separators, quotes. */
const NASTY_CHARS: string[] = [
  ...CONTROL_CHARS,
  '\u007f',
  '\u0080',
  '\u00e9',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ue000', // BMP private use
  '\uf8ff',
  '\uffff', // sorts after every surrogate in UTF-16 order, before astral code points by code point
  '\ud7ff',
  '\u{10000}', // surrogate pairs
  '\u{1f600}',
  '\u{10ffff}',
  '"',
  '\\',
  '/',
  '~',
  ' ',
  'a',
  'A',
  '0',
]

/** Any Unicode scalar value (no lone surrogates). */
const scalarChar = fc
  .integer({min: 0, max: 0x10ffff - 0x800})
  .map((n) => String.fromCodePoint(n >= 0xd800 ? n + 0x800 : n))
const nastyChar = fc.oneof({weight: 3, arbitrary: fc.constantFrom(...NASTY_CHARS)}, {weight: 1, arbitrary: scalarChar})
const nastyString = fc.string({unit: nastyChar, maxLength: 12})
/** Short keys from a small alphabet so that sorting and near-equal names are exercised. */
const sortKey = fc.string({
  unit: fc.constantFrom(
    '',
    'a',
    'A',
    'b',
    '\u0000',
    '\u00e9',
    '\ue000',
    '\uffff',
    '\u{1f600}',
    '\u{10000}',
    '1',
    '10',
    '9',
    '~',
    '/',
  ),
  maxLength: 3,
})
const keyArb = fc.oneof(nastyString, sortKey, fc.constantFrom('__proto__', 'constructor', 'toString', 'signature', ''))

const SPECIAL_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.1,
  1e21,
  1e-7,
  1e-6,
  123e-20,
  1e20,
  5e-324,
  -5e-324,
  Number.MIN_VALUE,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 64,
  2 ** 1023,
  333333333.33333329,
  4.35,
  0.000001,
  9.999999999999999e22,
  2.2250738585072014e-308,
  2.225073858507201e-308,
]
/** A number written as mantissa·10^exponent, covering tiny and huge exponents (finite only). */
const decimalNumber = fc
  .tuple(fc.integer({min: -999_999_999, max: 999_999_999}), fc.integer({min: -340, max: 320}))
  .map(([m, e]) => Number(`${m}e${e}`))
  .filter(Number.isFinite)
const bigInteger = fc.bigInt({min: -(2n ** 80n), max: 2n ** 80n}).map((b) => Number(b))
const numberArb: fc.Arbitrary<number> = fc.oneof(
  fc.double({noNaN: true, noDefaultInfinity: true}),
  fc.integer(),
  fc.constantFrom(...SPECIAL_NUMBERS),
  decimalNumber,
  bigInteger,
)

/** A JSON value tree built from the nasty generators; `numbers: false` leaves numbers out. */
function valueArb(numbers: boolean, maxDepth = 4): fc.Arbitrary<Json> {
  const leaves: fc.Arbitrary<Json>[] = [fc.constant(null), fc.boolean(), nastyString]
  if (numbers) leaves.push(numberArb)
  const {value} = fc.letrec<{value: Json}>((tie) => ({
    value: fc.oneof(
      {depthSize: 'small', maxDepth, withCrossShrink: true},
      ...leaves,
      fc.array(tie('value'), {maxLength: 5}),
      fc.dictionary(keyArb, tie('value'), {maxKeys: 5}),
    ),
  }))
  return value
}

const anyJson: fc.Arbitrary<Json> = fc.oneof(
  valueArb(true),
  fc.jsonValue({maxDepth: 4, stringUnit: 'binary'}) as fc.Arbitrary<Json>,
  fc.jsonValue({maxDepth: 3}) as fc.Arbitrary<Json>,
)
const numberFreeJson = valueArb(false)

// ---------------------------------------------------------------------------------------------
// Helpers

const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!

/**
 * First structural difference between two JSON values, or null. Objects are compared by their
 * own enumerable keys (in the same order unless `keyOrder` is 'any') whatever their prototype;
 * `zero` chooses whether -0 and 0 are distinguished (Object.is) or not (===).
 */
function diff(
  a: unknown,
  b: unknown,
  zero: 'distinct' | 'same',
  path = '',
  keyOrder: 'ordered' | 'any' = 'ordered',
): string | null {
  const where = path === '' ? '(root)' : path
  if (typeof a !== typeof b) return `${where}: ${typeof a} vs ${typeof b}`
  if (typeof a === 'number') {
    const eq = zero === 'distinct' ? Object.is(a, b) : a === b || (Number.isNaN(a) && Number.isNaN(b))
    return eq
      ? null
      : `${where}: ${String(a)}${Object.is(a, -0) ? '(-0)' : ''} vs ${String(b)}${Object.is(b, -0) ? '(-0)' : ''}`
  }
  if (a === null || b === null || typeof a !== 'object')
    return a === b ? null : `${where}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`
  if (Array.isArray(a) !== Array.isArray(b)) return `${where}: array vs object`
  if (Array.isArray(a)) {
    const bb = b as unknown[]
    if (a.length !== bb.length) return `${where}: length ${a.length} vs ${bb.length}`
    for (let i = 0; i < a.length; i++) {
      const d = diff(a[i], bb[i], zero, `${path}/${i}`, keyOrder)
      if (d) return d
    }
    return null
  }
  const ka = Object.keys(a)
  const kb = Object.keys(b as object)
  if (keyOrder === 'any') {
    ka.sort()
    kb.sort()
  }
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i]))
    return `${where}: keys ${JSON.stringify(ka)} vs ${JSON.stringify(kb)}`
  for (const k of ka) {
    const d = diff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], zero, `${path}/${k}`, keyOrder)
    if (d) return d
  }
  return null
}

/** True when every object in the tree has a null prototype (the reader's contract). */
function nullPrototypes(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return true
  if (Array.isArray(v)) return v.every(nullPrototypes)
  return Object.getPrototypeOf(v) === null && Object.values(v).every(nullPrototypes)
}

/** UTF-16 code unit order, written out rather than relying on Array#sort's default. */
function compareUtf16(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i)
    if (d !== 0) return d
  }
  return a.length - b.length
}

/** RFC 8785 §3.2.2.2 string serialization, by hand. */
function jcsString(s: string): string {
  const SHORT: Record<number, string> = {
    0x08: '\\b',
    0x09: '\\t',
    0x0a: '\\n',
    0x0c: '\\f',
    0x0d: '\\r',
    0x22: '\\"',
    0x5c: '\\\\',
  }
  let out = '"'
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (SHORT[c] !== undefined) out += SHORT[c]
    else if (c < 0x20) out += '\\u' + c.toString(16).padStart(4, '0')
    else out += s[i]
  }
  return out + '"'
}

/** Independent RFC 8785 serializer (numbers via String(), -0 as 0). */
function oracleJcs(v: Json): string {
  if (v === null) return 'null'
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (typeof v === 'number') return Object.is(v, -0) ? '0' : String(v)
  if (typeof v === 'string') return jcsString(v)
  if (Array.isArray(v)) return '[' + v.map(oracleJcs).join(',') + ']'
  const keys = Object.keys(v).sort(compareUtf16)
  return '{' + keys.map((k) => jcsString(k) + ':' + oracleJcs(v[k]!)).join(',') + '}'
}

/** Keys JavaScript enumerates before all others (array indices), which JSON.stringify cannot order freely. */
const INDEX_KEY = /^(?:0|[1-9][0-9]*)$/
function hasIndexKey(v: Json): boolean {
  if (v === null || typeof v !== 'object') return false
  if (Array.isArray(v)) return v.some(hasIndexKey)
  return Object.keys(v).some((k) => (INDEX_KEY.test(k) && Number(k) < 2 ** 32 - 1) || hasIndexKey(v[k]!))
}
function sortedCopy(v: Json): Json {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map(sortedCopy)
  const out: Record<string, Json> = Object.create(null)
  for (const k of Object.keys(v).sort(compareUtf16)) out[k] = sortedCopy(v[k]!)
  return out
}

const WHITESPACE = [' ', '\n', '\t', '\r', '  ', '\r\n', '\n\t ']
const hex4 = (c: number, rnd: () => number) => {
  const h = c.toString(16).padStart(4, '0')
  return rnd() < 0.5 ? h : h.toUpperCase()
}

/** A valid JSON spelling of a finite number; Number() of every spelling is the same double (-0 may lose its sign). */
function spellNumber(n: number, rnd: () => number): string {
  const neg0 = Object.is(n, -0)
  const forms = [
    neg0 ? '-0' : String(n),
    n.toExponential(),
    n.toExponential().toUpperCase(),
    n.toExponential().replace('e+', 'e'),
    n.toExponential().replace(/e([+-])/, 'e$100'),
    n.toPrecision(17),
    n.toPrecision(21),
    neg0 ? '-0.0e-0' : String(n),
  ]
  // toPrecision/String may produce "1e+21"-style exponents: all are valid JSON number lexemes.
  // 17 and 21 significant digits both read back to the same binary64 value.
  return pick(rnd, forms)
}

/**
 * Serializes a JSON value as valid JSON text with random (but always legal) formatting: optional
 * whitespace around every token, escaped or literal characters, alternative number spellings.
 * Surrogate pairs are kept together (both literal or both escaped) and lone surrogates are
 * escaped, so the text survives UTF-8 encoding unchanged.
 */
function serialize(v: Json, rnd: () => number): string {
  const ws = () => (rnd() < 0.25 ? pick(rnd, WHITESPACE) : '')
  const str = (s: string): string => {
    let out = '"'
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i)
      const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00
      const units = pair ? [c, s.charCodeAt(i + 1)] : [c]
      if (pair) i++
      const mustEscape = c < 0x20 || c === 0x22 || c === 0x5c || (!pair && c >= 0xd800 && c <= 0xdfff)
      const r = rnd()
      if (mustEscape || r < 0.15) {
        const SHORT: Record<number, string> = {
          0x08: '\\b',
          0x09: '\\t',
          0x0a: '\\n',
          0x0c: '\\f',
          0x0d: '\\r',
          0x22: '\\"',
          0x5c: '\\\\',
          0x2f: '\\/',
        }
        if (!pair && SHORT[c] !== undefined && rnd() < 0.5) out += SHORT[c]
        else out += units.map((u) => '\\u' + hex4(u, rnd)).join('')
      } else {
        out += String.fromCharCode(...units)
      }
    }
    return out + '"'
  }
  const val = (x: Json): string => {
    if (x === null) return 'null'
    if (typeof x === 'boolean') return String(x)
    if (typeof x === 'number') return spellNumber(x, rnd)
    if (typeof x === 'string') return str(x)
    if (Array.isArray(x)) return '[' + ws() + x.map((e) => ws() + val(e) + ws()).join(',') + ws() + ']'
    return (
      '{' +
      ws() +
      Object.keys(x)
        .map((k) => ws() + str(k) + ws() + ':' + ws() + val(x[k]!) + ws())
        .join(',') +
      ws() +
      '}'
    )
  }
  return ws() + val(v) + ws()
}

type Outcome = {ok: true; value: unknown} | {ok: false; error: unknown}
function attempt(f: () => unknown): Outcome {
  try {
    return {ok: true, value: f()}
  } catch (error) {
    return {ok: false, error}
  }
}

const REASONS = new Set(['utf8-bom', 'invalid-utf8', 'syntax', 'trailing-data', 'duplicate-member', 'depth-limit'])

/** Runs our reader under a time budget and checks that any failure is a well-formed JsonParseError. */
function ours(f: () => unknown, inputLength: number): Outcome {
  const t0 = performance.now()
  const out = attempt(f)
  const ms = performance.now() - t0
  // Plain checks (not expect) on the hot path: some properties call this tens of thousands of times.
  if (ms >= CALL_BUDGET_MS) throw new Error(`reader took ${ms.toFixed(1)} ms`)
  if (!out.ok) {
    const e = out.error
    if (!(e instanceof JsonParseError))
      throw new Error(`reader threw ${String(e)} instead of JsonParseError`, {cause: e})
    if (!REASONS.has(e.reason)) throw new Error(`unknown reason ${e.reason}`)
    if (!(Number.isInteger(e.offset) && e.offset >= 0 && e.offset <= inputLength))
      throw new Error(`offset ${e.offset} of ${inputLength}`)
  }
  return out
}

const reasonOf = (o: Outcome) => (o.ok ? 'accepted' : (o.error as JsonParseError).reason)

// ---------------------------------------------------------------------------------------------

describe('JSON.stringify -> parse -> JCS -> parse -> JCS', () => {
  it('reaches a fixed point and preserves the value (through bytes and through text)', () => {
    fc.assert(
      fc.property(anyJson, (v) => {
        const text = JSON.stringify(v)
        const p1 = parseJsonBytes(Buffer.from(text, 'utf8'))
        expect(diff(p1, parseJsonText(text), 'distinct')).toBeNull()
        // JSON.stringify writes -0 as 0, so the parsed value equals the original up to the sign of zero.
        expect(diff(p1, v, 'same')).toBeNull()
        expect(nullPrototypes(p1)).toBe(true)
        const c1 = canonicalize(p1)
        expect(canonicalize(v)).toBe(c1)
        const p2 = parseJsonBytes(Buffer.from(c1, 'utf8'))
        // Same value; members now in JCS order.
        expect(diff(p2, p1, 'same', '', 'any')).toBeNull()
        const c2 = canonicalize(p2)
        expect(c2).toBe(c1)
        // The canonical text is itself a fixed point of parse∘canonicalize with no -0 left.
        expect(diff(parseJsonText(c2), p2, 'distinct')).toBeNull()
      }),
    )
  })

  it('canonicalization is independent of member order and formatting', () => {
    fc.assert(
      fc.property(anyJson, fc.integer(), (v, seed) => {
        const rnd = prng(seed)
        const text = serialize(v, rnd)
        expect(canonicalize(parseJsonBytes(Buffer.from(text, 'utf8')))).toBe(
          canonicalize(parseJsonText(JSON.stringify(v))),
        )
      }),
    )
  })
})

describe('JCS output', () => {
  it('always passes the strict reader and matches an independent RFC 8785 serializer', () => {
    fc.assert(
      fc.property(anyJson, (v) => {
        const c = canonicalize(v)
        expect(c).toBe(oracleJcs(v))
        const back = ours(() => parseJsonBytes(Buffer.from(c, 'utf8')), c.length)
        expect(back.ok).toBe(true)
        expect(diff((back as {value: unknown}).value, JSON.parse(c), 'distinct')).toBeNull()
      }),
    )
  })

  it('without numbers, equals JSON.stringify with members sorted by UTF-16 code units', () => {
    let compared = 0
    fc.assert(
      fc.property(numberFreeJson, (v) => {
        const c = canonicalize(v)
        expect(c).toBe(oracleJcs(v))
        if (!hasIndexKey(v)) {
          compared++
          expect(c).toBe(JSON.stringify(sortedCopy(v)))
        }
      }),
    )
    // The JSON.stringify comparison must not have been vacuous.
    expect(compared).toBeGreaterThan(RUNS / 4)
  })

  it('sorts by UTF-16 code units, not code points (U+FFFF after U+1F600)', () => {
    expect(canonicalize({'\uffff': 1, '\u{1f600}': 2, '\ue000': 3, a: 4})).toBe('{"a":4,"😀":2,"\ue000":3,"\uffff":1}')
  })

  it('writes every finite number as String(n), -0 as "0", and it reads back to the same double', () => {
    fc.assert(
      fc.property(numberArb, (n) => {
        const expected = Object.is(n, -0) ? '0' : String(n)
        expect(canonicalize(n)).toBe(expected)
        expect(canonicalize([n, {n}])).toBe(`[${expected},{"n":${expected}}]`)
        const back = parseJsonText(expected) as number
        expect(back === n).toBe(true)
        expect(Object.is(back, -0)).toBe(false)
      }),
    )
  })

  it('RFC 8785 number vectors', () => {
    const vectors: [number, string][] = [
      [-0, '0'],
      [1e21, '1e+21'],
      [1e-7, '1e-7'],
      [333333333.33333329, '333333333.3333333'],
      [5e-324, '5e-324'],
      [Number.MAX_VALUE, '1.7976931348623157e+308'],
      [9007199254740992, '9007199254740992'],
      [295147905179352830000, '295147905179352830000'],
      [4.5, '4.5'],
      [0.002, '0.002'],
      [1e23, '1e+23'],
    ]
    for (const [n, text] of vectors) expect(canonicalize(n)).toBe(text)
  })
})

describe('values outside the I-JSON data model', () => {
  /** A JSON Pointer (RFC 6901) path plus a way to plant a value there. */
  const plantable = fc.tuple(valueArb(true, 3), fc.array(fc.tuple(fc.nat(), keyArb), {maxLength: 4}))

  function plant(base: Json, steps: [number, string][], leaf: Json, keyFault?: string): {doc: Json; pointer: string} {
    const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1')
    // A null-prototype deep copy (the base holds only well-formed strings and finite numbers).
    const root: {v: Json} = {
      v: base === null || typeof base !== 'object' ? [] : (parseJsonText(JSON.stringify(base)) as Json),
    }
    let holder: Json = root.v
    let pointer = ''
    for (const [n, key] of steps) {
      if (Array.isArray(holder)) {
        const i = holder.length === 0 ? 0 : n % holder.length
        if (holder[i] === null || typeof holder[i] !== 'object') holder[i] = Object.create(null) as {[k: string]: Json}
        pointer += `/${i}`
        holder = holder[i]!
      } else if (holder !== null && typeof holder === 'object') {
        const obj: {[k: string]: Json} = holder
        // Own members only: `__proto__` and `constructor` are ordinary names here.
        if (!Object.hasOwn(obj, key) || obj[key] === null || typeof obj[key] !== 'object') {
          Object.defineProperty(obj, key, {value: [], enumerable: true, writable: true, configurable: true})
        }
        pointer += `/${esc(key)}`
        holder = obj[key]!
      }
    }
    if (keyFault !== undefined) {
      const obj: {[k: string]: Json} = Object.create(null)
      obj[keyFault] = leaf
      leaf = obj
    }
    if (Array.isArray(holder)) {
      pointer += `/${holder.length}`
      holder.push(leaf)
    } else {
      const obj = holder as {[k: string]: Json}
      Object.defineProperty(obj, 'planted', {value: leaf, enumerable: true, writable: true, configurable: true})
      pointer += '/planted'
    }
    if (keyFault !== undefined) pointer += `/${esc(keyFault)}`
    return {doc: root.v, pointer}
  }

  const loneSurrogateString = fc
    .tuple(nastyString, fc.integer({min: 0xd800, max: 0xdfff}), nastyString)
    .map(([a, s, b]) => {
      // Keep the planted surrogate unpaired whatever its neighbours are.
      const before = s >= 0xdc00 && /[\ud800-\udbff]$/.test(a) ? a + 'x' : a
      const after = s <= 0xdbff && /^[\udc00-\udfff]/.test(b) ? 'x' + b : b
      return before + String.fromCharCode(s) + after
    })

  it('unpaired surrogates survive the reader exactly and make JCS fail at the right pointer', () => {
    fc.assert(
      fc.property(plantable, loneSurrogateString, fc.boolean(), ([base, steps], bad, inKey) => {
        expect(parseJsonText(JSON.stringify(bad))).toBe(bad)
        expect(parseJsonBytes(Buffer.from(JSON.stringify(bad), 'utf8'))).toBe(bad)
        const {doc, pointer} = inKey ? plant(base, steps, 1, bad) : plant(base, steps, bad)
        const reparsed = parseJsonBytes(Buffer.from(JSON.stringify(doc), 'utf8'))
        for (const v of [doc, reparsed]) {
          const out = attempt(() => canonicalize(v))
          expect(out.ok).toBe(false)
          const e = (out as {error: unknown}).error
          expect(e).toBeInstanceOf(JcsError)
          expect((e as JcsError).reason).toBe('unpaired-surrogate')
          expect((e as JcsError).pointer).toBe(pointer)
        }
      }),
    )
  })

  it('number lexemes outside binary64 read as ±Infinity and make JCS fail at the right pointer', () => {
    const hugeLexeme = fc
      .tuple(fc.boolean(), fc.integer({min: 1, max: 9}), fc.integer({min: 309, max: 100000}))
      .map(([neg, d, e]) => `${neg ? '-' : ''}${d}e${e}`)
    const MARK = '\u0000\u0001mwp-planted-number\u0001'
    fc.assert(
      fc.property(plantable, hugeLexeme, ([base, steps], lexeme) => {
        expect(parseJsonText(lexeme)).toBe(Number(lexeme))
        expect(Number.isFinite(Number(lexeme))).toBe(false)
        // JSON text cannot hold Infinity: plant a marker string and swap its lexeme in.
        const {doc, pointer} = plant(base, steps, MARK)
        const marked = JSON.stringify(doc)
        const quoted = JSON.stringify(MARK)
        expect(marked.split(quoted).length).toBe(2)
        const text = marked.replace(quoted, lexeme)
        const parsed = parseJsonBytes(Buffer.from(text, 'utf8'))
        const out = attempt(() => canonicalize(parsed))
        expect(out.ok).toBe(false)
        const e = (out as {error: unknown}).error as JcsError
        expect(e).toBeInstanceOf(JcsError)
        expect(e.reason).toBe('non-finite-number')
        expect(e.pointer).toBe(pointer)
      }),
      {numRuns: 200},
    )
  })
})

describe('the reader agrees with JSON.parse', () => {
  it('on random valid texts without duplicate names (random whitespace, escapes and number spellings)', () => {
    fc.assert(
      fc.property(anyJson, fc.integer(), (v, seed) => {
        const text = serialize(v, prng(seed))
        const expected = JSON.parse(text) as unknown
        const mine = ours(() => parseJsonText(text), text.length)
        expect(mine.ok, `rejected valid text: ${reasonOf(mine)} ${text}`).toBe(true)
        expect(diff((mine as {value: unknown}).value, expected, 'distinct')).toBeNull()
        // Same result through UTF-8 bytes (pairs are kept together, so the encoding is lossless).
        const viaBytes = ours(() => parseJsonBytes(Buffer.from(text, 'utf8')), text.length)
        expect(viaBytes.ok).toBe(true)
        expect(diff((viaBytes as {value: unknown}).value, expected, 'distinct')).toBeNull()
      }),
    )
  })

  it('on every JSON number lexeme, including ones that overflow to Infinity or underflow to 0', () => {
    const lexeme = fc.stringMatching(/^-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,4})?$/)
    fc.assert(
      fc.property(lexeme, (lex) => {
        expect(Object.is(parseJsonText(lex), JSON.parse(lex))).toBe(true)
        expect(Object.is((parseJsonText(`[${lex}]`) as number[])[0], Number(lex))).toBe(true)
      }),
    )
  })

  // Characters that make a near-valid text interesting: structure, escapes, number parts.
  const EDIT_CHARS = [
    '{',
    '}',
    '[',
    ']',
    ',',
    ':',
    '"',
    '\\',
    'u',
    '0',
    '1',
    '9',
    '-',
    '+',
    '.',
    'e',
    'E',
    ' ',
    '\n',
    '\t',
    't',
    'f',
    'n',
    'x',
    '/',
    '\u0000',
    '\u001f',
    '\ufeff',
    '\u00a0',
    '\ud800',
    '\udc00',
    '😀',
  ]

  /** Applies 1-3 random character edits to a text. */
  function editText(text: string, rnd: () => number): string {
    let t = text
    const edits = 1 + Math.floor(rnd() * 3)
    for (let k = 0; k < edits; k++) {
      const i = Math.floor(rnd() * (t.length + 1))
      const op = Math.floor(rnd() * 6)
      if (op === 0)
        t = t.slice(0, i) + t.slice(i + 1) // delete
      else if (op === 1)
        t = t.slice(0, i) + pick(rnd, EDIT_CHARS) + t.slice(i) // insert
      else if (op === 2)
        t = t.slice(0, i) + pick(rnd, EDIT_CHARS) + t.slice(i + 1) // replace
      else if (op === 3) {
        const j = Math.min(t.length, i + 1 + Math.floor(rnd() * 8))
        t = t.slice(0, j) + t.slice(i, j) + t.slice(j) // duplicate a span
      } else if (op === 4) {
        const j = Math.floor(rnd() * t.length)
        const a = [...t]
        if (a.length > 1) {
          const x = i % a.length
          ;[a[x], a[j % a.length]] = [a[j % a.length]!, a[x]!]
          t = a.join('')
        }
      } else t = t.slice(0, i) // truncate
    }
    return t
  }

  /** Compares our verdict with JSON.parse on one text. Returns the comparison class for statistics. */
  function compareWithJsonParse(text: string): string {
    const expected = attempt(() => JSON.parse(text))
    const mine = ours(() => parseJsonText(text), text.length)
    if (!expected.ok) {
      if (mine.ok) expect.fail(`accepted text that JSON.parse rejects: ${JSON.stringify(text)}`)
      return 'both-reject'
    }
    if (mine.ok) {
      const d = diff(mine.value, expected.value, 'distinct')
      if (d !== null) expect.fail(`${d} on ${JSON.stringify(text)}`)
      return 'both-accept'
    }
    // Valid for JSON.parse but not for us: only the I-JSON/limit rules we add may explain it.
    const reason = reasonOf(mine)
    if (!['duplicate-member', 'depth-limit', 'utf8-bom'].includes(reason))
      expect.fail(`rejected (${reason}) a text JSON.parse accepts: ${JSON.stringify(text)}`)
    return reason
  }

  it('rejects (with JsonParseError only) every character-edited text that JSON.parse rejects', () => {
    const seen: Record<string, number> = {}
    fc.assert(
      fc.property(anyJson, fc.integer(), (v, seed) => {
        const rnd = prng(seed)
        const text = editText(serialize(v, rnd), rnd)
        const cls = compareWithJsonParse(text)
        seen[cls] = (seen[cls] ?? 0) + 1
      }),
      {numRuns: 1500},
    )
    // The property must exercise both sides.
    expect(seen['both-reject'] ?? 0).toBeGreaterThan(300)
    expect(seen['both-accept'] ?? 0).toBeGreaterThan(50)
  })

  it('rejects every byte-edited text that is invalid UTF-8 or that JSON.parse rejects', () => {
    const seen: Record<string, number> = {}
    fc.assert(
      fc.property(anyJson, fc.integer(), (v, seed) => {
        const rnd = prng(seed)
        const bytes = Buffer.from(serialize(v, rnd), 'utf8')
        const edits = 1 + Math.floor(rnd() * 3)
        let b = bytes
        for (let k = 0; k < edits; k++) {
          const i = Math.floor(rnd() * (b.length + 1))
          const op = Math.floor(rnd() * 4)
          const byte =
            rnd() < 0.5
              ? Math.floor(rnd() * 256)
              : pick(rnd, [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x30, 0x80, 0xc3, 0xed, 0xef, 0xf0, 0xff])
          if (op === 0) b = Buffer.concat([b.subarray(0, i), b.subarray(i + 1)])
          else if (op === 1) b = Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)])
          else if (op === 2 && i < b.length) {
            b = Buffer.from(b)
            b[i] = b[i]! ^ (1 << Math.floor(rnd() * 8))
          } else b = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]).subarray(0, rnd() < 0.2 ? 3 : 0), b])
        }
        const mine = ours(() => parseJsonBytes(b), b.length)
        // Independent UTF-8 validity: the lossy decoder replaces every invalid sequence with U+FFFD.
        const lossy = b.toString('utf8')
        const validUtf8 = Buffer.from(lossy, 'utf8').equals(b)
        let cls: string
        if (!validUtf8) {
          expect(reasonOf(mine)).toBe(
            b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 'utf8-bom' : 'invalid-utf8',
          )
          cls = 'invalid-utf8'
        } else if (lossy.charCodeAt(0) === 0xfeff) {
          expect(reasonOf(mine)).toBe('utf8-bom')
          cls = 'bom'
        } else {
          cls = compareWithJsonParse(lossy)
          expect(mine.ok).toBe(cls === 'both-accept')
        }
        seen[cls] = (seen[cls] ?? 0) + 1
      }),
      {numRuns: 1000},
    )
    expect(seen['invalid-utf8'] ?? 0).toBeGreaterThan(50)
    expect(seen['both-reject'] ?? 0).toBeGreaterThan(100)
  })

  it('exhaustively on every text of up to 3 characters over a JSON-significant alphabet', () => {
    const ALPHABET = [...'{}[],:"\\ \n0123-+.eEtrufalsnxv/', '\u0000', '\u00a0', '\ufeff']
    let texts = ['']
    let checked = 0
    const seen: Record<string, number> = {}
    for (let len = 1; len <= 3; len++) {
      texts = texts.flatMap((t) => ALPHABET.map((c) => t + c))
      for (const text of texts) {
        const cls = compareWithJsonParse(text)
        seen[cls] = (seen[cls] ?? 0) + 1
        checked++
      }
    }
    expect(checked).toBeGreaterThan(30_000)
    expect(seen['both-accept'] ?? 0).toBeGreaterThan(100)
  })

  it('on every escape sequence: all 256 characters after a backslash and \\u with every hex digit', () => {
    for (let c = 0; c < 0x100; c++) compareWithJsonParse(`"\\${String.fromCharCode(c)}"`)
    for (const h of '0123456789abcdefABCDEFgG') {
      for (const pos of [0, 1, 2, 3]) {
        const hex = '00e9'.split('')
        hex[pos] = h
        compareWithJsonParse(`"\\u${hex.join('')}"`)
        compareWithJsonParse(`"\\u${hex.slice(0, pos).join('')}"`)
      }
    }
  })

  it('rejects duplicate member names that JSON.parse would silently merge, however they are spelled', () => {
    fc.assert(
      fc.property(
        fc.dictionary(keyArb, valueArb(true, 2), {minKeys: 1, maxKeys: 4}),
        fc.nat(),
        valueArb(true, 1),
        fc.integer(),
        (obj, n, extra, seed) => {
          const rnd = prng(seed)
          const keys = Object.keys(obj)
          const dup = keys[n % keys.length]!
          // Re-serialize with the duplicate appended; serialize() spells the two names independently.
          const first = serialize(obj, rnd).trim()
          const text =
            first.slice(0, -1) +
            ',' +
            serialize({[dup]: extra} as Json, rnd)
              .trim()
              .slice(1)
          expect(() => JSON.parse(text)).not.toThrow()
          expect(reasonOf(ours(() => parseJsonText(text), text.length))).toBe('duplicate-member')
        },
      ),
      {numRuns: 200},
    )
  })
})

describe('arbitrary bytes', () => {
  function check(bytes: Uint8Array): void {
    const mine = ours(() => parseJsonBytes(bytes), bytes.length)
    if (mine.ok) {
      // Anything we accept is valid JSON that JSON.parse reads to the same value.
      const text = Buffer.from(bytes).toString('utf8')
      expect(diff(mine.value, JSON.parse(text), 'distinct')).toBeNull()
    }
  }

  it('random byte strings only ever raise JsonParseError', () => {
    fc.assert(fc.property(fc.uint8Array({maxLength: 512}), check), {numRuns: 2000})
  })

  it('random byte strings over a JSON-ish alphabet only ever raise JsonParseError', () => {
    const alphabet = [
      ...Buffer.from('{}[],:"\\u0123456789abcdefABCDEF-+.eEtruefalsn \n\t\r/'),
      0x00,
      0x1f,
      0x7f,
      0x80,
      0xbf,
      0xc3,
      0xa9,
      0xed,
      0xef,
      0xbb,
      0xf0,
      0x9f,
      0xff,
    ]
    let accepted = 0
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), {maxLength: 64}), (xs) => {
        check(Uint8Array.from(xs))
        if (attempt(() => parseJsonBytes(Uint8Array.from(xs))).ok) accepted++
      }),
      {numRuns: 3000},
    )
    expect(accepted).toBeGreaterThan(0)
  })

  it('large pathological inputs stay fast and raise JsonParseError', () => {
    const cases: [string, string][] = [
      ['['.repeat(100_000), 'depth-limit'],
      ['{"a":'.repeat(100_000), 'depth-limit'],
      ['['.repeat(MAX_DEPTH) + ']'.repeat(MAX_DEPTH), 'accepted'],
      ['['.repeat(MAX_DEPTH + 1) + ']'.repeat(MAX_DEPTH + 1), 'depth-limit'],
      ['"' + '\\'.repeat(200_001), 'syntax'],
      ['"' + '\\u0000'.repeat(100_000) + '"', 'accepted'],
      ['1'.repeat(200_000) + 'x', 'trailing-data'],
      ['-' + '0'.repeat(200_000), 'syntax'],
      ['0.' + '9'.repeat(200_000) + 'e', 'syntax'],
      ['[' + '1,'.repeat(100_000) + ']', 'syntax'],
      ['{' + Array.from({length: 20_000}, (_, i) => `"k${i}":${i}`).join(',') + ',"k0":1}', 'duplicate-member'],
      ['"' + 'a'.repeat(500_000), 'syntax'],
      [' '.repeat(500_000), 'syntax'],
    ]
    for (const [text, want] of cases) {
      const out = ours(() => parseJsonBytes(Buffer.from(text, 'utf8')), text.length)
      expect(reasonOf(out), text.slice(0, 40)).toBe(want)
    }
  })
})
