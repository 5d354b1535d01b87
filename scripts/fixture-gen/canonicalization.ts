// Our own RFC 8785 (JCS) edge-case vector. The expected canonical text is written out by hand
// below and compared with what src/json/jcs.ts produces, so the vector is not just "whatever our
// canonicalizer does today".

import {canonicalize} from '../../src/json/jcs.js'
import {parseJsonText} from '../../src/json/parse.js'

/** Input file text: numbers in non-shortest spellings, keys that sort differently by code point and by UTF-16, escapes. */
export const JCS_INPUT = String.raw`{
  "numbers": [-0.0, 1e30, 1e-7, 333333333.33333329, 4.50, 2e-3, 0.000001, 1E21, 1e20, -1.5e+2, 9007199254740991, 5e-324],
  "\ue000": "private use U+E000: sorts after the surrogate pair",
  "\ud83d\ude00": "U+1F600 is the UTF-16 pair D83D DE00",
  "\u20ac": "euro sign",
  "escapes": "\u0000\u001f\"\\\/\b\f\n\r\t\u007f\u00e9\u2028",
  "literals": [true, false, null],
  "nested": {"b": 2, "a": 1, "A": 0, "aa": [], "": {}}
}
`

/**
 * The canonical form, checked by hand against RFC 8785:
 * - members sorted by UTF-16 code units: ASCII names, then U+20AC, then the pair D83D DE00, then
 *   U+E000 (by code point U+1F600 would sort last);
 * - numbers in ECMAScript shortest round-trip form: -0.0 -> 0, 1e30 -> 1e+30, 1e-7 stays 1e-7,
 *   333333333.33333329 -> 333333333.3333333, 4.50 -> 4.5, 2e-3 -> 0.002, 0.000001 stays,
 *   1E21 -> 1e+21, 1e20 -> 100000000000000000000, -1.5e+2 -> -150, 5e-324 stays;
 * - strings: controls as \u00XX except \b \f \n \r \t, `"` and `\` escaped, `/` unescaped,
 *   DEL, é and U+2028 written as raw UTF-8.
 */
export const JCS_EXPECTED = [
  '{"escapes":"',
  String.raw`\u0000\u001f\"\\/\b\f\n\r\t`,
  '\u007f\u00e9\u2028',
  '","literals":[true,false,null]',
  ',"nested":{"":{},"A":0,"a":1,"aa":[],"b":2}',
  ',"numbers":[0,1e+30,1e-7,333333333.3333333,4.5,0.002,0.000001,1e+21,100000000000000000000,-150,9007199254740991,5e-324]',
  ',"\u20ac":"euro sign"',
  ',"\ud83d\ude00":"U+1F600 is the UTF-16 pair D83D DE00"',
  ',"\ue000":"private use U+E000: sorts after the surrogate pair"}',
].join('')

/** The expected JCS, after checking that our canonicalizer agrees with the hand-written form. */
export function checkedJcs(): string {
  const actual = canonicalize(parseJsonText(JCS_INPUT))
  if (actual !== JCS_EXPECTED) {
    throw new Error(
      `src/json/jcs.ts disagrees with the hand-checked JCS vector:\n  got  ${JSON.stringify(actual)}\n  want ${JSON.stringify(JCS_EXPECTED)}`,
    )
  }
  return actual
}
