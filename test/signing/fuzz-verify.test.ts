// Mutation fuzzing of the six-stage verifier (spec §6.4) on the upstream valid Signed Documents.
//
// For every `complete` evaluation in the upstream cryptography manifest, the exact document bytes
// are mutated deterministically (fixed-seed PRNG) at the byte level (bit flip, delete, insert,
// duplicate span, swap) and at the JSON level (string characters, digits, whitespace, member
// order, \u escapes, number spellings). The oracle is the JSON value itself:
//
//   verify(...) is ok  <=>  canonicalize(parse(mutated)) === canonicalize(parse(original))
//
// Every stage of the verifier is a function of the parsed value (stage 1 aside), so a mutation that
// keeps the value must verify and one that changes it must not. Rejections must carry the wire
// code of their stage and the stage must be `parse` exactly when the strict reader rejects.
//
// The golden command's registry is mutated the same way (plus structural edits): verification
// may then succeed only if the selected signer binding is unchanged and the snapshot stays valid.
//
// Budget: 11 documents x 220 + 500 registry mutations = 2,920 verify calls (~5 s on 2 cores).

import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {Point} from '@noble/ed25519'
import {describe, expect, it} from 'vitest'
import {canonicalize} from '../../src/json/jcs.js'
import {type JsonObject, type JsonValue, JsonParseError, parseJsonBytes} from '../../src/json/parse.js'
import {compareInstants, parseTimestamp} from '../../src/json/timestamp.js'
import type {DocumentKind} from '../../src/signing/profiles.js'
import {RegistryEvidence, RegistryFault, validateSnapshot} from '../../src/signing/registry.js'
import {Rejection, STAGES, type Verified, type VerifyResult, verify} from '../../src/signing/verify.js'
import {HAVE_UPSTREAM, UPSTREAM} from '../support/upstream.js'
import {mulberry32 as prng} from '../../src/poc/faults/prng.js'

const SEED = 0x5eed_4242
const DOC_MUTATIONS_PER_CASE = 220
const REGISTRY_MUTATIONS = 500
/** Upper bound for one verify call (the real cost is ~0.1-3 ms; this only catches hangs). */
const CALL_BUDGET_MS = 1000

/** §6.4 stage -> wire code, written out independently of verify.ts's WIRE_CODE. */
const EXPECTED_CODE: Record<string, string> = {
  parse: 'PROTOCOL_VIOLATION',
  schema: 'SCHEMA_VALIDATION_FAILED',
  'signature-envelope': 'AUTH_INVALID_SIGNATURE',
  'key-resolution': 'AUTH_INVALID_SIGNATURE',
  canonicalization: 'PROTOCOL_VIOLATION',
  signature: 'AUTH_INVALID_SIGNATURE',
}

// ---------------------------------------------------------------------------------------------
// Upstream cases

interface Case {
  id: string
  kind: DocumentKind
  docPath: string
  registryPath: string
  doc: Buffer
  registry: Buffer
  keyId: string
  principal: {type: string; id: string}
  protectedTime: string
  signingHash: string
}

function loadCases(): Case[] {
  if (!HAVE_UPSTREAM) return []
  const manifest = JSON.parse(readFileSync(join(UPSTREAM, 'cryptography/manifest.json'), 'utf8'))
  const out: Case[] = []
  for (const c of manifest.cases) {
    for (const e of c.evaluations ?? []) {
      if (e.expect?.stage !== 'complete') continue
      out.push({
        id: `${c.id}/${e.profileId}/${e.document.split('/').pop()}`,
        kind: e.profileId,
        docPath: e.document,
        registryPath: e.registry,
        doc: readFileSync(join(UPSTREAM, e.document)),
        registry: readFileSync(join(UPSTREAM, e.registry)),
        keyId: e.expect.verified.keyId,
        principal: e.expect.verified.principal,
        protectedTime: e.expect.verified.protectedTime,
        signingHash: e.expect.verified.signingHash,
      })
    }
  }
  return out
}

const CASES = loadCases()

// ---------------------------------------------------------------------------------------------
// Deterministic randomness

function hashString(s: string): number {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619)
  return h >>> 0
}
type Rnd = () => number
const int = (rnd: Rnd, n: number) => Math.floor(rnd() * n)
const pick = <T>(rnd: Rnd, xs: readonly T[]): T => xs[int(rnd, xs.length)]!

// ---------------------------------------------------------------------------------------------
// A lexer for valid JSON text (the unmutated inputs), to aim mutations at tokens.

interface Token {
  type: 'string' | 'number' | 'literal' | 'punct'
  start: number
  end: number
  /** For strings: true when the string is a member name. */
  name?: boolean
  /** For punctuation: the character. */
  ch?: string
}

function tokenize(t: string): Token[] {
  const out: Token[] = []
  let i = 0
  while (i < t.length) {
    const c = t[i]!
    if (c === ' ' || c === '\n' || c === '\r' || c === '\t') {
      i++
    } else if ('{}[],:'.includes(c)) {
      out.push({type: 'punct', start: i, end: i + 1, ch: c})
      i++
    } else if (c === '"') {
      let j = i + 1
      while (t[j] !== '"') j += t[j] === '\\' ? 2 : 1
      out.push({type: 'string', start: i, end: j + 1})
      i = j + 1
    } else {
      const m = /-?[0-9][0-9.eE+-]*|true|false|null/y
      m.lastIndex = i
      const r = m.exec(t)
      if (r === null) throw new Error(`lexer: unexpected ${JSON.stringify(c)} at ${i}`)
      out.push({type: /[0-9]/.test(r[0][0]!) || r[0][0] === '-' ? 'number' : 'literal', start: i, end: i + r[0].length})
      i += r[0].length
    }
  }
  for (let k = 0; k < out.length; k++) {
    const tok = out[k]!
    if (tok.type === 'string') tok.name = out[k + 1]?.type === 'punct' && t[out[k + 1]!.start] === ':'
  }
  return out
}

/** The units inside a string token: a literal code point or one escape sequence, with positions. */
function stringUnits(t: string, tok: Token): {start: number; end: number; escape: boolean}[] {
  const units: {start: number; end: number; escape: boolean}[] = []
  let i = tok.start + 1
  while (i < tok.end - 1) {
    if (t[i] === '\\') {
      const len = t[i + 1] === 'u' ? 6 : 2
      units.push({start: i, end: i + len, escape: true})
      i += len
    } else {
      const cp = t.codePointAt(i)!
      const len = cp > 0xffff ? 2 : 1
      units.push({start: i, end: i + len, escape: false})
      i += len
    }
  }
  return units
}

const hex4 = (n: number, rnd: Rnd) => {
  const h = n.toString(16).padStart(4, '0')
  return rnd() < 0.5 ? h : h.toUpperCase()
}
/** \u escape(s) for one code point (a surrogate pair for astral code points). */
function uEscape(ch: string, rnd: Rnd): string {
  let out = ''
  for (let i = 0; i < ch.length; i++) out += '\\u' + hex4(ch.charCodeAt(i), rnd)
  return out
}

// ---------------------------------------------------------------------------------------------
// Mutation operators. Each returns the mutated bytes, or null when it does not apply.

type Mutator = (bytes: Buffer, rnd: Rnd) => Buffer | null

const INTERESTING_BYTES = [
  0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x0a, 0x30, 0x39, 0x2d, 0x2b, 0x2e, 0x65, 0x45, 0x00, 0x7f,
  0x80, 0xc3, 0xed, 0xef, 0xff,
]

function textOp(f: (text: string, tokens: Token[], rnd: Rnd) => string | null): Mutator {
  return (bytes, rnd) => {
    const text = bytes.toString('utf8')
    const out = f(text, tokenize(text), rnd)
    return out === null ? null : Buffer.from(out, 'utf8')
  }
}
const splice = (t: string, start: number, end: number, insert: string) => t.slice(0, start) + insert + t.slice(end)

/** Replacement texts for one unit inside a string literal: ordinary, exotic and escape spellings. */
const STRING_REPLACEMENTS = [
  'a',
  'Z',
  '0',
  '9',
  ':',
  '/',
  '-',
  '_',
  ' ',
  '~',
  '%',
  'é',
  '東',
  '😀',
  '\u2028',
  '\ue000',
  '\\u0000',
  '\\ud800',
  '\\udc00',
  '\\"',
  '\\\\',
  '\\/',
  '\\n',
  '\\u0041',
  '\u0001',
  '"',
  '\\x',
  '\\u12',
]

const MUTATORS: Record<string, Mutator> = {
  'flip-bit': (b, rnd) => {
    const out = Buffer.from(b)
    const i = int(rnd, out.length)
    out[i] = out[i]! ^ (1 << int(rnd, 8))
    return out
  },
  'delete-byte': (b, rnd) => {
    const i = int(rnd, b.length)
    return Buffer.concat([b.subarray(0, i), b.subarray(i + 1)])
  },
  'insert-byte': (b, rnd) => {
    const i = int(rnd, b.length + 1)
    const byte = rnd() < 0.5 ? int(rnd, 256) : pick(rnd, INTERESTING_BYTES)
    return Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)])
  },
  'duplicate-span': (b, rnd) => {
    const i = int(rnd, b.length)
    const j = Math.min(b.length, i + 1 + int(rnd, 24))
    const at = rnd() < 0.5 ? j : int(rnd, b.length + 1)
    return Buffer.concat([b.subarray(0, at), b.subarray(i, j), b.subarray(at)])
  },
  'swap-bytes': (b, rnd) => {
    const out = Buffer.from(b)
    const i = int(rnd, out.length)
    const j = rnd() < 0.5 ? Math.min(out.length - 1, i + 1 + int(rnd, 4)) : int(rnd, out.length)
    ;[out[i], out[j]] = [out[j]!, out[i]!]
    return out.equals(b) ? null : out
  },
  'replace-string-char': textOp((t, tokens, rnd) => {
    const strings = tokens.filter((k) => k.type === 'string')
    const tok = pick(rnd, strings)
    const units = stringUnits(t, tok)
    if (units.length === 0) return splice(t, tok.start + 1, tok.start + 1, pick(rnd, STRING_REPLACEMENTS))
    const u = pick(rnd, units)
    let rep = pick(rnd, STRING_REPLACEMENTS)
    if (rep === t.slice(u.start, u.end)) rep = rep === 'a' ? 'b' : 'a'
    return splice(t, u.start, u.end, rep)
  }),
  'change-digit': textOp((t, _tokens, rnd) => {
    const digits: number[] = []
    for (let i = 0; i < t.length; i++) if (t[i]! >= '0' && t[i]! <= '9') digits.push(i)
    const i = pick(rnd, digits)
    const d = (Number(t[i]) + 1 + int(rnd, 9)) % 10
    return splice(t, i, i + 1, String(d))
  }),
  'insert-whitespace': textOp((t, tokens, rnd) => {
    const gaps = [0, t.length, ...tokens.flatMap((k) => [k.start, k.end])]
    const at = pick(rnd, gaps)
    // Mostly JSON whitespace (value-preserving); sometimes characters JSON does not allow there.
    const legal = rnd() < 0.8
    const ws = legal
      ? Array.from({length: 1 + int(rnd, 4)}, () => pick(rnd, [' ', '\t', '\n', '\r'])).join('')
      : pick(rnd, ['\u00a0', '\f', '\v', '\u2028', '\ufeff', '\u0000', '\u3000'])
    return splice(t, at, at, ws)
  }),
  'reorder-members': (b, rnd) => {
    const value = parseJsonBytes(b)
    const shuffle = (v: JsonValue): JsonValue => {
      if (v === null || typeof v !== 'object') return v
      if (Array.isArray(v)) return v.map(shuffle)
      const keys = Object.keys(v)
      for (let i = keys.length - 1; i > 0; i--) {
        const j = int(rnd, i + 1)
        ;[keys[i], keys[j]] = [keys[j]!, keys[i]!]
      }
      const out: JsonObject = Object.create(null)
      for (const k of keys) out[k] = shuffle(v[k]!)
      return out
    }
    return Buffer.from(JSON.stringify(shuffle(value), null, pick(rnd, [undefined, 0, 1, 2, '\t'])), 'utf8')
  },
  'unicode-escape': textOp((t, tokens, rnd) => {
    const candidates = tokens
      .filter((k) => k.type === 'string')
      .flatMap((k) => stringUnits(t, k).filter((u) => !u.escape))
    if (candidates.length === 0) return null
    // Prefer non-ASCII characters (é, 東, 🚀, U+E000) when there are some.
    const wide = candidates.filter((u) => t.charCodeAt(u.start) > 0x7f)
    const u = wide.length > 0 && rnd() < 0.5 ? pick(rnd, wide) : pick(rnd, candidates)
    return splice(t, u.start, u.end, uEscape(t.slice(u.start, u.end), rnd))
  }),
  unescape: textOp((t, tokens, rnd) => {
    const escapes = tokens.filter((k) => k.type === 'string').flatMap((k) => stringUnits(t, k).filter((u) => u.escape))
    if (escapes.length === 0) return null
    const u = pick(rnd, escapes)
    const seq = t.slice(u.start, u.end)
    const SHORT: Record<string, string> = {'"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t'}
    let ch = seq[1] === 'u' ? String.fromCharCode(parseInt(seq.slice(2), 16)) : SHORT[seq[1]!]!
    let end = u.end
    const c = ch.charCodeAt(0)
    if (c >= 0xd800 && c <= 0xdbff) {
      // A high surrogate escape: write the pair literally if a low surrogate escape follows,
      // otherwise drop this half (which leaves the partner unpaired: a value change).
      const next = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(t.slice(u.end))
      if (next === null) return splice(t, u.start, u.end, '')
      ch += String.fromCharCode(parseInt(next[1]!, 16))
      end += 6
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return splice(t, u.start, u.end, '') // unpairs the preceding high surrogate
    }
    // Characters that must stay escaped get the other escape spelling instead.
    const literal = c < 0x20 || ch === '"' || ch === '\\' ? uEscape(ch, rnd) : ch
    return splice(t, u.start, end, literal)
  }),
  'respell-number': textOp((t, tokens, rnd) => {
    const numbers = tokens.filter((k) => k.type === 'number')
    if (numbers.length === 0) return null
    const tok = pick(rnd, numbers)
    const lex = t.slice(tok.start, tok.end)
    const n = Number(lex)
    const forms = [
      // Same value:
      n.toExponential(),
      n.toExponential().toUpperCase(),
      n.toExponential().replace('e+', 'e'),
      n.toExponential().replace(/e([+-])/, 'e$1000'),
      n.toPrecision(17),
      n.toPrecision(21),
      lex.includes('.') ? lex.replace(/(\.[0-9]*)/, '$10') : `${lex.replace(/([eE].*)?$/, '.0$1')}`,
      Object.is(n, -0) ? '0' : String(n),
      // Different value:
      String(n + 1),
      String(-n || 1),
      `${lex}0`,
      `${lex}e400`,
      // Not JSON:
      `0${lex}`,
      `+${lex}`,
      `${lex}.`,
      `.${lex}`,
    ]
    return splice(t, tok.start, tok.end, pick(rnd, forms))
  }),
  'duplicate-member': textOp((t, tokens, rnd) => {
    // Re-declare a member in its object: same value, another value, or a name spelled with escapes.
    // The strict reader must reject all of these (JSON.parse would keep the last one).
    const names = tokens.map((k, i) => [k, i] as const).filter(([k]) => k.type === 'string' && k.name)
    const [name, idx] = pick(rnd, names)
    const value = valueSpan(tokens, idx + 2)
    const nameText = t.slice(name.start, name.end)
    const units = stringUnits(t, name)
    const literal = units.filter((u) => !u.escape)
    let spelled = nameText
    if (literal.length > 0 && rnd() < 0.5) {
      const u = pick(rnd, literal)
      spelled = splice(nameText, u.start - name.start, u.end - name.start, uEscape(t.slice(u.start, u.end), rnd))
    }
    const member = `${spelled}:${rnd() < 0.5 ? t.slice(value.start, value.end) : pick(rnd, ['null', '0', '"x"', '{}'])}`
    return rnd() < 0.5 ? splice(t, value.end, value.end, `,${member}`) : splice(t, name.start, name.start, `${member},`)
  }),
  'inject-member': textOp((t, tokens, rnd) => {
    // Add a member with a name that means something to JavaScript objects to a random object.
    const opens = tokens.map((k, i) => [k, i] as const).filter(([k]) => k.ch === '{')
    const [open, i] = pick(rnd, opens)
    const name = pick(rnd, [
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      'valueOf',
      'prototype',
      '',
      'signature',
      '__defineGetter__',
    ])
    const value = pick(rnd, [
      'null',
      '{}',
      '[]',
      '"x"',
      '1',
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
    ])
    const empty = tokens[i + 1]?.ch === '}'
    return splice(t, open.end, open.end, `${JSON.stringify(name)}:${value}${empty ? '' : ','}`)
  }),
  'non-i-json': textOp((t, tokens, rnd) => {
    // Values valid JSON but outside I-JSON: a lone surrogate or a number beyond binary64.
    const targets = tokens.filter((k) => k.type === 'number' || (k.type === 'string' && !k.name))
    const tok = pick(rnd, targets)
    if (tok.type === 'number') return splice(t, tok.start, tok.end, pick(rnd, ['1e400', '-1e999', '1E+309']))
    const units = stringUnits(t, tok)
    const at = units.length === 0 ? tok.start + 1 : pick(rnd, units).start
    return splice(t, at, at, pick(rnd, ['\\ud800', '\\udfff', '\\uDBFF']))
  }),
}
const MUTATOR_NAMES = Object.keys(MUTATORS)

/** The span of the value starting at token index `i` (a scalar token or a bracketed group). */
function valueSpan(tokens: Token[], i: number): {start: number; end: number} {
  const first = tokens[i]!
  if (first.type !== 'punct') return first
  let depth = 0
  for (let k = i; k < tokens.length; k++) {
    const tok = tokens[k]!
    if (tok.ch === '{' || tok.ch === '[') depth++
    else if (tok.ch === '}' || tok.ch === ']') depth--
    if (depth === 0) return {start: first.start, end: tok.end}
  }
  throw new Error('unbalanced value')
}

// ---------------------------------------------------------------------------------------------
// Oracles and bookkeeping

function canonicalOf(bytes: Uint8Array): string | null {
  try {
    return canonicalize(parseJsonBytes(bytes))
  } catch {
    return null
  }
}
function parses(bytes: Uint8Array): boolean {
  try {
    parseJsonBytes(bytes)
    return true
  } catch (e) {
    if (!(e instanceof JsonParseError)) throw e
    return false
  }
}

interface Stats {
  calls: number
  ok: number
  stages: Record<string, number>
  byOp: Record<string, {ok: number; rejected: number}>
  maxMs: number
}
const stats: Stats = {calls: 0, ok: 0, stages: {}, byOp: {}, maxMs: 0}
const registryStats: Stats = {calls: 0, ok: 0, stages: {}, byOp: {}, maxMs: 0}

/** Runs verify, timing it and turning a thrown exception into a recorded failure. */
function timedVerify(
  kind: DocumentKind | undefined,
  bytes: Uint8Array,
  evidence: RegistryEvidence,
  s: Stats,
  op: string,
  failures: string[],
  label: string,
): VerifyResult | null {
  const t0 = performance.now()
  let result: VerifyResult
  try {
    result = verify(kind, bytes, evidence)
  } catch (e) {
    failures.push(
      `${label}: verify THREW ${(e as Error)?.stack ?? String(e)} on ${Buffer.from(bytes).toString('base64')}`,
    )
    return null
  }
  const ms = performance.now() - t0
  s.calls++
  s.maxMs = Math.max(s.maxMs, ms)
  if (ms > CALL_BUDGET_MS) failures.push(`${label}: verify took ${ms.toFixed(0)} ms`)
  const stage = result.ok ? 'complete' : Rejection.diagnostic(result).stage
  s.stages[stage] = (s.stages[stage] ?? 0) + 1
  const o = (s.byOp[op] ??= {ok: 0, rejected: 0})
  if (result.ok) {
    s.ok++
    o.ok++
  } else o.rejected++
  return result
}

/** Checks that a rejection is well-formed: a known stage, its wire code, and only the code on the wire. */
function checkRejection(r: Rejection, failures: string[], label: string): string {
  if (!(r instanceof Rejection)) {
    failures.push(`${label}: result is neither ok nor a Rejection: ${JSON.stringify(r)}`)
    return '?'
  }
  const d = Rejection.diagnostic(r)
  if (!(STAGES as readonly string[]).includes(d.stage)) failures.push(`${label}: unknown stage ${d.stage}`)
  if (r.code !== EXPECTED_CODE[d.stage]) failures.push(`${label}: stage ${d.stage} reported as ${r.code}`)
  if (!['PROTOCOL_VIOLATION', 'SCHEMA_VALIDATION_FAILED', 'AUTH_INVALID_SIGNATURE'].includes(r.code))
    failures.push(`${label}: code ${r.code}`)
  if (JSON.stringify(r) !== JSON.stringify({code: r.code}))
    failures.push(`${label}: rejection serializes as ${JSON.stringify(r)}`)
  if (typeof d.reason !== 'string' || d.reason === '') failures.push(`${label}: empty reason`)
  return d.stage
}

const show = (b: Uint8Array) => {
  const s = Buffer.from(b).toString('utf8')
  return s.length > 400 ? `${s.slice(0, 400)}… (base64 ${Buffer.from(b).toString('base64')})` : JSON.stringify(s)
}

// ---------------------------------------------------------------------------------------------
// Independent registry checks (used only when a mutated registry verifies)

const URI_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/
const B64URL_32 = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}
function primeOrderKey(b64: string): boolean {
  try {
    const p = Point.fromBytes(Uint8Array.from(Buffer.from(b64, 'base64url')), false)
    return !p.is0() && p.isTorsionFree()
  } catch {
    return false
  }
}

/** Problems an acceptable complete snapshot must not have (a light, independent re-statement of §6.4). */
function snapshotProblems(v: unknown): string[] {
  const problems: string[] = []
  if (!isRecord(v)) return ['not an object']
  const top = Object.keys(v).sort().join(',')
  if (top !== 'bindings,organizationId') problems.push(`members ${top}`)
  if (typeof v.organizationId !== 'string' || !URI_LIKE.test(v.organizationId)) problems.push('organizationId')
  if (!Array.isArray(v.bindings) || v.bindings.length === 0) return [...problems, 'bindings']
  const byKeyId = new Map<string, {identity: string; from: ReturnType<typeof parseTimestamp>; history: string[]}>()
  const byKey = new Map<string, string>()
  v.bindings.forEach((b: unknown, i: number) => {
    if (!isRecord(b)) return problems.push(`binding ${i} not an object`)
    const members = Object.keys(b).sort().join(',')
    if (members !== 'algorithm,keyId,principal,publicKey,validFrom,validityHistory')
      problems.push(`binding ${i} members ${members}`)
    if (typeof b.keyId !== 'string' || !URI_LIKE.test(b.keyId)) problems.push(`binding ${i} keyId`)
    const p = b.principal
    if (
      !isRecord(p) ||
      Object.keys(p).length !== 2 ||
      !['agent', 'human', 'service'].includes(p.type as string) ||
      typeof p.id !== 'string' ||
      !URI_LIKE.test(p.id)
    ) {
      problems.push(`binding ${i} principal`)
    }
    if (b.algorithm !== 'Ed25519') problems.push(`binding ${i} algorithm`)
    if (typeof b.publicKey !== 'string' || !B64URL_32.test(b.publicKey) || !primeOrderKey(b.publicKey))
      problems.push(`binding ${i} publicKey`)
    if (typeof b.validFrom !== 'string' || parseTimestamp(b.validFrom) === null) problems.push(`binding ${i} validFrom`)
    const history: string[] = []
    if (!Array.isArray(b.validityHistory)) problems.push(`binding ${i} history`)
    else {
      let lastRecorded: ReturnType<typeof parseTimestamp> = null
      const effective: Record<string, ReturnType<typeof parseTimestamp>> = {validUntil: null, revokedAt: null}
      b.validityHistory.forEach((r: unknown, j: number) => {
        if (
          !isRecord(r) ||
          r.sequence !== j + 1 ||
          typeof r.recordedAt !== 'string' ||
          parseTimestamp(r.recordedAt) === null
        )
          return problems.push(`binding ${i} record ${j}`)
        history.push(canon(r))
        for (const k of Object.keys(r))
          if (!['sequence', 'recordedAt', 'validUntil', 'revokedAt'].includes(k))
            problems.push(`binding ${i} record ${j} member ${k}`)
        const recorded = parseTimestamp(r.recordedAt)!
        if (lastRecorded !== null && compareInstants(recorded, lastRecorded) < 0)
          problems.push(`binding ${i} record ${j} recorded earlier`)
        lastRecorded = recorded
        for (const k of ['validUntil', 'revokedAt']) {
          if (r[k] === undefined) continue
          const at = typeof r[k] === 'string' ? parseTimestamp(r[k] as string) : null
          if (at === null) problems.push(`binding ${i} record ${j} ${k}`)
          else if (effective[k] && compareInstants(at, effective[k]!) > 0)
            problems.push(`binding ${i} record ${j} moves ${k} later`)
          else effective[k] = at
        }
        return undefined
      })
    }
    if (typeof b.keyId === 'string' && isRecord(p) && typeof b.publicKey === 'string') {
      // One key ID, one logical binding: same Principal, key and validFrom instant, and validity
      // histories of which one is a prefix of the other.
      const identity = canon({principal: p, publicKey: b.publicKey})
      const from = typeof b.validFrom === 'string' ? parseTimestamp(b.validFrom) : null
      const earlier = byKeyId.get(b.keyId)
      if (earlier !== undefined) {
        if (earlier.identity !== identity) problems.push(`binding ${i} rebinds ${b.keyId}`)
        if (from === null || earlier.from === null || compareInstants(from, earlier.from) !== 0)
          problems.push(`binding ${i} changes validFrom of ${b.keyId}`)
        const n = Math.min(history.length, earlier.history.length)
        if (history.slice(0, n).some((rec, j) => rec !== earlier.history[j]))
          problems.push(`binding ${i} rewrites the history of ${b.keyId}`)
      }
      byKeyId.set(b.keyId, {
        identity,
        from,
        history: earlier && earlier.history.length > history.length ? earlier.history : history,
      })
      const holder = byKey.get(b.publicKey)
      if (holder !== undefined && holder !== b.keyId) problems.push(`binding ${i} reuses the public key of ${holder}`)
      byKey.set(b.publicKey, b.keyId)
    }
    return undefined
  })
  return problems
}

/** canonicalize() for oracle comparisons on arbitrary (possibly invalid) data: never throws. */
function canon(v: unknown): string {
  try {
    return canonicalize(v)
  } catch (e) {
    return `<not JCS: ${(e as Error).message}>`
  }
}

/** Every declaration of `keyId` in a (parsed) snapshot. */
function declarations(v: unknown, keyId: string): Record<string, unknown>[] {
  if (!isRecord(v) || !Array.isArray(v.bindings)) return []
  return v.bindings.filter((b): b is Record<string, unknown> => isRecord(b) && b.keyId === keyId)
}

// ---------------------------------------------------------------------------------------------
// Registry-specific structural mutations (the byte/text mutators above apply too)

let redeclareCounter = 0
const REGISTRY_MUTATORS: Record<string, (reg: JsonObject, signerKeyId: string, rnd: Rnd) => JsonValue> = {
  'drop-binding': (reg, _s, rnd) => {
    const bindings = [...(reg.bindings as JsonValue[])]
    bindings.splice(int(rnd, bindings.length), 1)
    return {...reg, bindings}
  },
  'duplicate-binding': (reg, _s, rnd) => {
    const bindings = reg.bindings as JsonValue[]
    const copy = bindings[int(rnd, bindings.length)]!
    return {...reg, bindings: [...bindings, copy]}
  },
  'reorder-bindings': (reg, _s, rnd) => {
    const bindings = [...(reg.bindings as JsonValue[])]
    for (let i = bindings.length - 1; i > 0; i--) {
      const j = int(rnd, i + 1)
      ;[bindings[i], bindings[j]] = [bindings[j]!, bindings[i]!]
    }
    return {...reg, bindings}
  },
  'extend-history': (reg, signer, rnd) => {
    // Append a validity record to a binding (often the signer's) with a boundary around the
    // protected time: earlier boundaries cut the key off, later ones are rejected as moved later.
    const bindings = (reg.bindings as JsonObject[]).map((b) => ({...b}))
    const target = rnd() < 0.7 ? bindings.find((b) => b.keyId === signer)! : pick(rnd, bindings)
    const history = [...(target.validityHistory as JsonValue[])]
    const boundary = pick(rnd, [
      '2026-07-14T23:59:59Z',
      '2026-07-15T00:00:00Z',
      '2026-07-15T00:00:00.000000001Z',
      '2026-07-15T08:00:00+08:00',
      '2026-07-15T12:00:00Z',
      '2026-07-16T00:00:00Z',
      '2026-07-17T00:00:00Z',
    ])
    const record: JsonObject = {
      sequence: history.length + 1,
      recordedAt: pick(rnd, ['2026-07-16T00:00:00Z', '2026-07-18T00:00:00Z', '2026-06-01T00:00:00Z']),
    }
    record[rnd() < 0.5 ? 'validUntil' : 'revokedAt'] = boundary
    history.push(record)
    target.validityHistory = history
    return {...reg, bindings}
  },
  'borrow-identity': (reg, signer, rnd) => {
    // Give another binding the signer's key ID or public key (rebinding / reuse), or vice versa.
    const bindings = (reg.bindings as JsonObject[]).map((b) => ({...b}))
    const s = bindings.find((b) => b.keyId === signer)!
    const other = pick(
      rnd,
      bindings.filter((b) => b !== s),
    )
    const what = pick(rnd, ['keyId', 'publicKey', 'principal'] as const)
    if (rnd() < 0.5) other[what] = s[what]!
    else s[what] = other[what]!
    return {...reg, bindings}
  },
  'redeclare-signer': (reg, signer, rnd) => {
    // Declare the signer's key ID again (C17 allows an identical logical binding) with one field
    // possibly changed, before or after the original declaration. Cycles through every
    // (change, position) pair so each is exercised.
    const bindings = [...(reg.bindings as JsonObject[])]
    const s = bindings.find((b) => b.keyId === signer)!
    const other = pick(
      rnd,
      bindings.filter((b) => b !== s),
    )
    const copy: JsonObject = {...s}
    const CHANGES = [
      'none',
      'principal',
      'principal-id',
      'publicKey',
      'validFrom',
      'validFrom-respelled',
      'history-longer',
      'history-empty',
      'history-rewritten',
    ] as const
    const k = redeclareCounter++
    const change = CHANGES[k % CHANGES.length]!
    const before = Math.floor(k / CHANGES.length) % 2 === 0
    if (change === 'principal') copy.principal = other.principal!
    else if (change === 'principal-id')
      copy.principal = {...(s.principal as JsonObject), id: `${(s.principal as JsonObject).id as string}-2`}
    else if (change === 'publicKey') copy.publicKey = other.publicKey!
    else if (change === 'validFrom') copy.validFrom = '2026-07-01T00:00:00Z'
    else if (change === 'validFrom-respelled')
      copy.validFrom = '2026-07-15T00:00:00.000Z' // same instant as +08:00 spelling
    else if (change === 'history-longer')
      copy.validityHistory = [
        ...(s.validityHistory as JsonValue[]),
        {sequence: (s.validityHistory as JsonValue[]).length + 1, recordedAt: '2026-07-17T00:00:00Z'},
      ]
    else if (change === 'history-empty') copy.validityHistory = []
    else if (change === 'history-rewritten')
      copy.validityHistory = [{sequence: 1, recordedAt: '2026-07-16T00:00:00Z', validUntil: '2026-07-15T12:00:00Z'}]
    bindings.splice(before ? bindings.indexOf(s) : bindings.length, 0, copy)
    return {...reg, bindings}
  },
}
// Structural edits get double weight: they are what reaches the C11-C21 registry rules.
const REGISTRY_MUTATOR_NAMES = [...MUTATOR_NAMES, ...Object.keys(REGISTRY_MUTATORS), ...Object.keys(REGISTRY_MUTATORS)]

// ---------------------------------------------------------------------------------------------

describe.skipIf(!HAVE_UPSTREAM)('mutation fuzzing of verify() on the upstream valid Signed Documents', () => {
  const started = performance.now()
  const docFailures: string[] = []

  it('finds the complete evaluations in the manifest and verifies every original', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(11)
    expect(new Set(CASES.map((c) => c.kind)).size).toBe(9)
    for (const c of CASES) {
      const r = verify(c.kind, c.doc, RegistryEvidence.fromBytes(c.registry))
      expect(r.ok, `${c.id}: ${r.ok ? '' : JSON.stringify(Rejection.diagnostic(r as Rejection))}`).toBe(true)
      expect((r as Verified).signingHash).toBe(c.signingHash)
    }
  })

  for (const c of CASES) {
    it(`${c.id}: ${DOC_MUTATIONS_PER_CASE} mutations verify exactly when the JSON value is unchanged`, () => {
      const failures: string[] = []
      const evidence = RegistryEvidence.fromBytes(c.registry)
      const reference = canonicalOf(c.doc)!
      expect(reference).not.toBeNull()
      // Detection by members is exercised too, when it works for the original.
      const detects = verify(undefined, c.doc, evidence).ok
      let produced = 0
      for (let i = 0; produced < DOC_MUTATIONS_PER_CASE; i++) {
        const op = MUTATOR_NAMES[i % MUTATOR_NAMES.length]!
        const rnd = prng(SEED ^ hashString(`${c.id}#${i}`))
        const mutated = MUTATORS[op]!(c.doc, rnd)
        if (mutated === null) {
          if (i > DOC_MUTATIONS_PER_CASE * 4) throw new Error('mutators keep declining')
          continue
        }
        produced++
        const label = `${c.id} #${i} ${op}`
        const kind = detects && i % 4 === 3 ? undefined : c.kind
        const result = timedVerify(kind, mutated, evidence, stats, op, failures, label)
        if (result === null) continue
        const same = canonicalOf(mutated) === reference
        if (result.ok) {
          if (!same) failures.push(`${label}: ACCEPTED a different JSON value: ${show(mutated)}`)
          if (result.signingHash !== c.signingHash) failures.push(`${label}: signing hash ${result.signingHash}`)
          if (result.keyId !== c.keyId || result.protectedTime !== c.protectedTime)
            failures.push(`${label}: verified facts changed`)
        } else {
          const stage = checkRejection(result, failures, label)
          if (same)
            failures.push(
              `${label}: rejected (${stage}/${Rejection.diagnostic(result).reason}) although the JSON value is unchanged: ${show(mutated)}`,
            )
          if ((stage === 'parse') !== !parses(mutated))
            failures.push(
              `${label}: stage ${stage} but the strict reader ${parses(mutated) ? 'accepts' : 'rejects'} it: ${show(mutated)}`,
            )
        }
      }
      docFailures.push(...failures)
      expect(failures.slice(0, 10)).toEqual([])
    })
  }

  const golden = CASES.find((c) => c.id.startsWith('accept.command.golden'))

  it.skipIf(golden === undefined)(
    `golden command: ${REGISTRY_MUTATIONS} registry mutations verify only with the signer's binding intact`,
    () => {
      const c = golden!
      const failures: string[] = []
      const refRegistry = canonicalOf(c.registry)!
      const original = parseJsonBytes(c.registry) as JsonObject
      const [signerBinding] = declarations(original, c.keyId)
      expect(signerBinding).toBeDefined()
      const t = parseTimestamp(c.protectedTime)!
      let changedButOk = 0
      let intervalMoved = 0
      let produced = 0
      for (let i = 0; produced < REGISTRY_MUTATIONS; i++) {
        const op = REGISTRY_MUTATOR_NAMES[i % REGISTRY_MUTATOR_NAMES.length]!
        const rnd = prng(SEED ^ hashString(`registry#${i}`))
        let mutated: Buffer | null
        if (MUTATORS[op]) mutated = MUTATORS[op](c.registry, rnd)
        else
          mutated = Buffer.from(
            JSON.stringify(REGISTRY_MUTATORS[op]!(parseJsonBytes(c.registry) as JsonObject, c.keyId, rnd), null, 2),
            'utf8',
          )
        if (mutated === null) continue
        produced++
        const label = `registry #${i} ${op}`
        const result = timedVerify(
          c.kind,
          c.doc,
          RegistryEvidence.fromBytes(mutated),
          registryStats,
          op,
          failures,
          label,
        )
        if (result === null) continue
        const sameRegistry = canonicalOf(mutated) === refRegistry
        if (!result.ok) {
          const stage = checkRejection(result, failures, label)
          // The document is untouched, so only stage 4 can fail.
          if (stage !== 'key-resolution') failures.push(`${label}: rejected at ${stage}`)
          if (sameRegistry) failures.push(`${label}: rejected an unchanged registry: ${show(mutated)}`)
          continue
        }
        if (result.signingHash !== c.signingHash || result.keyId !== c.keyId)
          failures.push(`${label}: verified facts changed`)
        if (sameRegistry) continue
        changedButOk++
        // Verified against a changed registry: the snapshot must still be valid...
        let parsed: unknown
        try {
          parsed = parseJsonBytes(mutated)
        } catch (e) {
          failures.push(
            `${label}: ACCEPTED evidence the strict reader rejects (${(e as Error).message}): ${show(mutated)}`,
          )
          continue
        }
        if (validateSnapshot(parsed, 'sha256:test') instanceof RegistryFault)
          failures.push(`${label}: verified although validateSnapshot rejects the registry`)
        const problems = snapshotProblems(parsed)
        if (problems.length > 0)
          failures.push(`${label}: ACCEPTED an invalid snapshot (${problems.join('; ')}): ${show(mutated)}`)
        // ...and every declaration of the selected key must be the signer's binding.
        const decls = declarations(parsed, c.keyId)
        if (decls.length === 0) failures.push(`${label}: verified with no binding for ${c.keyId}`)
        for (const d of decls) {
          if (canon(d.principal) !== canon(signerBinding!.principal))
            failures.push(`${label}: ACCEPTED with principal ${JSON.stringify(d.principal)}`)
          if (d.publicKey !== signerBinding!.publicKey)
            failures.push(`${label}: ACCEPTED with public key ${String(d.publicKey)}`)
          if (canon(d.principal) !== canon(c.principal))
            failures.push(`${label}: principal differs from the manifest's`)
          // The interval may legitimately change, but must still contain the protected time.
          if (
            d.validFrom !== signerBinding!.validFrom ||
            canon(d.validityHistory) !== canon(signerBinding!.validityHistory)
          )
            intervalMoved++
          const from = parseTimestamp(d.validFrom as string)
          if (from === null || compareInstants(from, t) > 0)
            failures.push(`${label}: ACCEPTED before validFrom ${String(d.validFrom)}`)
          for (const rec of Array.isArray(d.validityHistory) ? d.validityHistory.filter(isRecord) : []) {
            for (const k of ['validUntil', 'revokedAt']) {
              if (rec[k] === undefined) continue
              const end = parseTimestamp(rec[k] as string)
              if (end === null || compareInstants(t, end) >= 0)
                failures.push(`${label}: ACCEPTED at or after ${k} ${String(rec[k])}`)
            }
          }
        }
        if (result.binding.publicKey !== signerBinding!.publicKey)
          failures.push(`${label}: selected another public key`)
      }
      console.log(
        `fuzz-verify registry: ${registryStats.ok} verified (${changedButOk} with a changed registry, ${intervalMoved} of them with a moved but still covering signer interval)`,
      )
      docFailures.push(...failures)
      expect(failures.slice(0, 10)).toEqual([])
    },
  )

  it('summary', () => {
    const fmt = (s: Stats) => ['complete', ...STAGES].map((k) => `${k}=${s.stages[k] ?? 0}`).join(' ')
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    console.log(
      `fuzz-verify: ${stats.calls} document mutations over ${CASES.length} documents [${fmt(stats)}]; ` +
        `${registryStats.calls} registry mutations [${fmt(registryStats)}]; ` +
        `max verify ${Math.max(stats.maxMs, registryStats.maxMs).toFixed(1)} ms; ${seconds} s; ${docFailures.length} failures`,
    )
    if (process.env.MWP_FUZZ_VERBOSE) {
      for (const [name, s] of [
        ['document', stats],
        ['registry', registryStats],
      ] as const) {
        console.log(
          `fuzz-verify ${name} mutations by operator: ${Object.entries(s.byOp)
            .map(([op, o]) => `${op} ${o.ok}/${o.ok + o.rejected}`)
            .join(', ')}`,
        )
      }
    }
    // Not vacuous: value-preserving mutations verified and every reachable stage was hit.
    expect(stats.calls).toBe(CASES.length * DOC_MUTATIONS_PER_CASE)
    expect(stats.calls + registryStats.calls).toBeLessThanOrEqual(3000)
    for (const stage of [
      'complete',
      'parse',
      'schema',
      'signature-envelope',
      'key-resolution',
      'canonicalization',
      'signature',
    ]) {
      expect(stats.stages[stage] ?? 0, `document stage ${stage}`).toBeGreaterThan(0)
    }
    for (const op of ['insert-whitespace', 'reorder-members', 'unicode-escape'])
      expect(stats.byOp[op]!.ok, `${op} verified`).toBeGreaterThan(0)
    expect(registryStats.stages.complete ?? 0).toBeGreaterThan(0)
    // Member names such as __proto__ stayed data: nothing reached Object.prototype.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted')
    expect(registryStats.stages['key-resolution'] ?? 0).toBeGreaterThan(0)
  })
})
