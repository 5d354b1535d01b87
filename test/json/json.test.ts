import {createHash} from 'node:crypto'
import {describe, expect, it} from 'vitest'
import {decodeBase64url, encodeBase64url} from '../../src/json/base64url.js'
import {JcsError, canonicalHash, canonicalize} from '../../src/json/jcs.js'
import {
  JsonParseError,
  MAX_DEPTH,
  type SourceTexts,
  parseJsonBytes,
  parseJsonText,
  sourcesIn,
} from '../../src/json/parse.js'

const bytes = (s: string) => Buffer.from(s, 'utf8')
const reason = (f: () => unknown) => {
  try {
    f()
  } catch (e) {
    return (e as JsonParseError | JcsError).reason
  }
  return 'accepted'
}

describe('strict JSON reader (stage 1, ACCEPTANCE A1, C2, J7)', () => {
  it('reads exactly one value with any member order and insignificant whitespace', () => {
    expect(parseJsonText(' {"b":[1,2,{"c":null}],"a":"x"}\n')).toEqual({b: [1, 2, {c: null}], a: 'x'})
    expect(parseJsonText('true')).toBe(true)
    expect(parseJsonText('"\\u00e9\\n\\/"')).toBe('é\n/')
  })

  it('rejects a byte-order mark, even one that TextDecoder would silently strip', () => {
    expect(reason(() => parseJsonBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes('{}')])))).toBe('utf8-bom')
    expect(reason(() => parseJsonText('\ufeff{}'))).toBe('utf8-bom')
  })

  it('rejects invalid UTF-8: stray continuation, overlong form, encoded surrogate, truncation', () => {
    for (const bad of [
      [0x22, 0x80, 0x22],
      [0x22, 0xc0, 0xaf, 0x22],
      [0x22, 0xed, 0xa0, 0x80, 0x22],
      [0x22, 0xe2, 0x82],
    ]) {
      expect(reason(() => parseJsonBytes(Uint8Array.from(bad)))).toBe('invalid-utf8')
    }
  })

  it('rejects trailing data after the value', () => {
    expect(reason(() => parseJsonText('{} {}'))).toBe('trailing-data')
    expect(reason(() => parseJsonText('1 2'))).toBe('trailing-data')
    expect(reason(() => parseJsonText('{}x'))).toBe('trailing-data')
  })

  it('rejects duplicate member names after escape decoding', () => {
    expect(reason(() => parseJsonText('{"payload":1,"pay\\u006coad":2}'))).toBe('duplicate-member')
    expect(reason(() => parseJsonText('{"a":{"x":1,"x":1}}'))).toBe('duplicate-member')
    expect(parseJsonText('{"a":{"x":1},"b":{"x":1}}')).toEqual({a: {x: 1}, b: {x: 1}})
  })

  it('rejects JSON syntax errors', () => {
    for (const bad of [
      '',
      ' ',
      '{',
      '[1,]',
      '{"a":1,}',
      '01',
      '1.',
      '.5',
      '+1',
      '1e',
      "'x'",
      '"a\tb"',
      '"\\x"',
      '"\\u12g4"',
      'nul',
      'NaN',
      'Infinity',
      '{a:1}',
      '"abc',
    ]) {
      expect(
        reason(() => parseJsonText(bad)),
        bad,
      ).toBe('syntax')
    }
  })

  it('reads strings: plain runs between escapes, every escape, raw characters from DEL up; control characters refused wherever they sit', () => {
    expect(parseJsonText('"a\\"b\\\\c\\/d\\b\\f\\n\\r\\tz\\u00e9\\u0041x"')).toBe('a"b\\c/d\b\f\n\r\tzéAx')
    expect(parseJsonText('"\u007f é 😀 \\ud83d\\ude00"')).toBe('\u007f é 😀 😀')
    expect(parseJsonText('""')).toBe('')
    for (const bad of ['"\u0000"', '"a\u001f"', '"\nb"', '"ab\\"', '"ab\\u00e9'])
      expect(
        reason(() => parseJsonText(bad)),
        JSON.stringify(bad),
      ).toBe('syntax')
    // Any string JSON.stringify writes (quotes, backslashes, control characters, astral and lone
    // surrogates from a skewed alphabet) reads back as itself.
    const alphabet = [
      '"',
      '\\',
      '/',
      'a',
      'é',
      '\u0000',
      '\u0008',
      '\u001f',
      ' ',
      '\u007f',
      '\u2028',
      '\ud800',
      '\udfff',
      '😀',
    ]
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    for (let i = 0; i < 2000; i++) {
      let text = ''
      for (let n = Math.floor(next() * 20); n > 0; n--) text += alphabet[Math.floor(next() * alphabet.length)]
      expect(parseJsonText(JSON.stringify({[text]: text}))).toEqual({[text]: text})
    }
  })

  it(`limits nesting to ${MAX_DEPTH} levels`, () => {
    expect(() => parseJsonText('['.repeat(MAX_DEPTH) + ']'.repeat(MAX_DEPTH))).not.toThrow()
    expect(reason(() => parseJsonText('['.repeat(MAX_DEPTH + 1) + ']'.repeat(MAX_DEPTH + 1)))).toBe('depth-limit')
    expect(reason(() => parseJsonText('{"a":'.repeat(100_000)))).toBe('depth-limit')
  })

  it('nests 512 levels of mixed arrays and objects, the depth both official SDKs sign (issue #15), and refuses 513', () => {
    const nested = (depth: number) => {
      let text = '0'
      for (let level = depth; level >= 1; level--) text = level % 2 === 0 ? `{"k":${text}}` : `[${text}]`
      return text
    }
    const v = parseJsonText(nested(512))
    expect(canonicalize(v)).toBe(nested(512))
    const e = (() => {
      try {
        parseJsonText(nested(513))
      } catch (err) {
        return err as JsonParseError
      }
    })()
    expect(e?.reason).toBe('depth-limit')
    expect(e?.offset).toBe(256 * 1 + 256 * 5) // the 513th opening bracket, after 256 `[` and 256 `{"k":`
    // A container of documents (a WebSocket frame) allows its own level on top.
    expect(canonicalize(parseJsonText(nested(513), undefined, {maxDepth: 513}))).toBe(nested(513))
    expect(reason(() => parseJsonText(nested(514), undefined, {maxDepth: 513}))).toBe('depth-limit')
  })

  it('decodes escape-dense strings exactly, longer than any internal buffer, lone surrogates kept', () => {
    const raw = '\\n\\u00e9\\"\\ud800x\\\\\\/\\t\\uDFFF'
    const decoded = '\n\u00e9"\ud800x\\/\t\udfff'
    for (const n of [1, 7, 50, 5000, 200_000]) {
      const v = parseJsonText(`{"${raw.repeat(n)}":"a${raw.repeat(n)}"}`) as Record<string, string>
      expect(Object.keys(v)).toEqual([decoded.repeat(n)])
      expect(v[decoded.repeat(n)]).toBe('a' + decoded.repeat(n))
    }
    // Several escaped strings in one document do not share decoded text.
    expect(parseJsonText('["\\u0041' + 'b'.repeat(3000) + '","\\u0043"]')).toEqual(['A' + 'b'.repeat(3000), 'C'])
    // A duplicate spelled with escapes past the short-string path is still a duplicate.
    const long = 'é'.repeat(100)
    expect(reason(() => parseJsonText(`{"${long}":1,"${'\\u00e9'.repeat(100)}":2}`))).toBe('duplicate-member')
    // An error after a long escaped run still points at the offending character.
    const bad = `"${'\\n'.repeat(2000)}\\q"`
    const e = (() => {
      try {
        parseJsonText(bad)
      } catch (err) {
        return err as JsonParseError
      }
    })()
    expect(e?.reason).toBe('syntax')
    expect(e?.offset).toBe(1 + 2 * 2000)
  })

  it('reads numbers by the exact lexeme grammar', () => {
    expect(parseJsonText('[0,-0,12,-3.25,1e3,1E+3,2e-2,0.5e1,-0.0]')).toEqual([
      0, -0, 12, -3.25, 1000, 1000, 0.02, 5, -0,
    ])
    for (const bad of ['-', '-a', '00', '-01', '1.e5', '1e+', '1.5.', '1e5e', '2-', '[1.]'])
      expect(
        reason(() => parseJsonText(bad)),
        bad,
      ).toBe('syntax')
    expect(reason(() => parseJsonText('0x1'))).toBe('trailing-data')
  })

  it('keeps values that fail only at canonicalization: 1e400 and unpaired surrogates (A10, A11)', () => {
    expect(parseJsonText('1e400')).toBe(Infinity)
    expect(parseJsonText('-1e400')).toBe(-Infinity)
    expect(parseJsonText('"\\ud800"')).toBe('\ud800')
  })

  it('records the exact source text of every object, for documents embedded in documents (principle 4)', () => {
    const text = '{ "payload" : {"approval":{ "b" : 1.0, "a":"\\u00e9" } }, "n": [ {"x":1e2} ] }'
    const sources: SourceTexts = new WeakMap()
    const v = parseJsonText(text, sources) as Record<string, any>
    expect(sources.get(v)).toBe(text)
    expect(sources.get(v.payload.approval)).toBe('{ "b" : 1.0, "a":"\\u00e9" }')
    expect(sources.get(v.n[0])).toBe('{"x":1e2}')
    const bytes = Buffer.from(text)
    const sourceAt = sourcesIn(bytes)
    expect(sourceAt(['payload', 'approval'])).toBe('{ "b" : 1.0, "a":"\\u00e9" }')
    expect(sourceAt(['payload', 'missing'])).toBeUndefined()
    expect(sourceAt(['n'])).toBeUndefined() // arrays are not documents
  })

  it('treats __proto__ as an ordinary member name', () => {
    const v = parseJsonText('{"__proto__":{"polluted":true}}') as Record<string, unknown>
    expect(Object.keys(v)).toEqual(['__proto__'])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(reason(() => parseJsonText('{"__proto__":1,"__proto__":2}'))).toBe('duplicate-member')
  })
})

describe('RFC 8785 JCS (stage 5, ACCEPTANCE A8-A11)', () => {
  it('serializes numbers in the ECMAScript shortest round-trip form', () => {
    const cases: [string, string][] = [
      ['-0.0', '0'],
      ['1e30', '1e+30'],
      ['1e-07', '1e-7'],
      ['333333333.33333329', '333333333.3333333'],
      ['9007199254740993', '9007199254740992'],
      ['4.50', '4.5'],
      ['2e-3', '0.002'],
      ['1E21', '1e+21'],
      ['0.000001', '0.000001'],
      ['1e-400', '0'],
    ]
    for (const [lexeme, jcs] of cases) expect(canonicalize(parseJsonText(lexeme)), lexeme).toBe(jcs)
  })

  it('sorts member names by UTF-16 code units, not code points', () => {
    const v = parseJsonText('{"\\ue000":1,"\\ud83d\\ude00":2,"a":3,"B":4,"":5}')
    expect(canonicalize(v)).toBe('{"":5,"B":4,"a":3,"😀":2,"\ue000":1}')
  })

  it('escapes strings as RFC 8785 requires', () => {
    expect(canonicalize('\u0000\u001f"\\/\b\f\n\r\t\u007f€😀')).toBe('"\\u0000\\u001f\\"\\\\/\\b\\f\\n\\r\\t\u007f€😀"')
  })

  it('rejects numbers outside finite binary64 and unpaired surrogates, naming the location', () => {
    const e1 = (() => {
      try {
        canonicalize(parseJsonText('{"a":[1,{"b":1e400}]}'))
      } catch (e) {
        return e as JcsError
      }
    })()
    expect(e1).toBeInstanceOf(JcsError)
    expect(e1!.reason).toBe('non-finite-number')
    expect(e1!.pointer).toBe('/a/1/b')
    expect(reason(() => canonicalize(parseJsonText('{"x":"\\udc00"}')))).toBe('unpaired-surrogate')
    expect(reason(() => canonicalize(parseJsonText('{"\\ud800":1}')))).toBe('unpaired-surrogate')
    expect(reason(() => canonicalize(parseJsonText('"\\ud83d\\ude00"')))).toBe('accepted')
    expect(reason(() => canonicalize({a: undefined}))).toBe('unsupported-value')
  })

  it('names the first fault in JCS member order, through escaped pointer segments', () => {
    const pointer = (v: unknown) => {
      try {
        canonicalize(v)
      } catch (e) {
        return (e as JcsError).pointer
      }
      return 'accepted'
    }
    expect(pointer(parseJsonText('{"z":"\\ud800","a":[1,2,1e400]}'))).toBe('/a/2')
    expect(pointer(parseJsonText('{"a/b~c":{"\\udc00":1}}'))).toBe('/a~1b~0c/\udc00')
    expect(pointer(parseJsonText('"\\ud800"'))).toBe('')
  })

  it('canonicalizes without recursion: 100,000 levels, a fault at the bottom located', () => {
    let v: unknown = 'x'
    for (let i = 0; i < 100_000; i++) v = i % 2 === 0 ? [v] : {k: v}
    const text = canonicalize(v)
    expect(text.length).toBe(3 + 100_000 + 50_000 * 6)
    expect(text.startsWith('{"k":[{"k":[')).toBe(true)
    let bad: unknown = 1e400
    for (let i = 0; i < 100_000; i++) bad = [bad]
    try {
      canonicalize(bad)
      expect.unreachable()
    } catch (e) {
      expect((e as JcsError).reason).toBe('non-finite-number')
      expect((e as JcsError).pointer).toBe('/0'.repeat(100_000))
    }
  })

  it('refuses a cyclic value instead of looping', () => {
    const cyclic: Record<string, unknown> = {a: 1}
    cyclic.self = {back: cyclic}
    expect(reason(() => canonicalize(cyclic))).toBe('unsupported-value')
    const shared = {x: 1}
    expect(canonicalize({a: shared, b: [shared, shared]})).toBe('{"a":{"x":1},"b":[{"x":1},{"x":1}]}')
  })

  it('gives identical text and bytes above the output chunk size (multi-byte characters across chunks)', () => {
    const v = {s: 'é😀a'.repeat(40_000), n: Array.from({length: 30_000}, (_, i) => i / 3)}
    const text = canonicalize(v)
    expect(text).toBe(JSON.stringify({n: v.n, s: v.s}))
    expect(canonicalHash(v)).toBe('sha256:' + createHash('sha256').update(text, 'utf8').digest('hex'))
  })

  it('hashes the canonical bytes', () => {
    expect(canonicalHash({b: 1, a: 2})).toBe('sha256:' + createHash('sha256').update('{"a":2,"b":1}').digest('hex'))
  })
})

describe('canonical unpadded base64url (ACCEPTANCE A12, A13)', () => {
  it('round-trips canonical spellings', () => {
    for (const n of [0, 1, 2, 3, 31, 32, 64]) {
      const b = Uint8Array.from({length: n}, (_, i) => (i * 37 + 11) & 0xff)
      expect(decodeBase64url(encodeBase64url(b))).toEqual(b)
    }
  })

  it('rejects padding, foreign alphabets, impossible lengths and nonzero pad bits', () => {
    expect(decodeBase64url('AA==')).toBeNull()
    expect(decodeBase64url('AA')).toEqual(Uint8Array.from([0]))
    expect(decodeBase64url('AB')).toBeNull() // same byte, nonzero unused bits
    expect(decodeBase64url('A+')).toBeNull()
    expect(decodeBase64url('A/')).toBeNull()
    expect(decodeBase64url('A')).toBeNull()
    expect(decodeBase64url('AA A')).toBeNull()
    expect(decodeBase64url('AA\n')).toBeNull()
  })
})
