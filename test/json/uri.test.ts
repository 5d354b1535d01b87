import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {HAVE_UPSTREAM, UPSTREAM} from '../support/upstream.js'
import fc from 'fast-check'
import {identifiersEqual, isProtocolIdentifier} from '../../src/json/uri.js'

describe('isProtocolIdentifier: valid absolute URIs', () => {
  it.each([
    'example:', // A16: path-empty hier-part
    'urn:uuid:00000000-0000-4000-8000-000000000001',
    'urn:missionweaveprotocol:agent:developer-one',
    'https://example.com/a/b?c=d&e#frag',
    'HTTPS://EXAMPLE.COM/', // case is preserved, not judged
    'x://[V01.a]/', // A18: IPvFuture, uppercase V
    'x://[v1.a:b!$]/',
    'http://[::1]/',
    'http://[::]/',
    'http://[1::]/',
    'http://[2001:db8::7]:8080/path',
    'http://[1:2:3:4:5:6:7:8]/',
    'http://[1:2:3:4:5:6:7::]/',
    'http://[::2:3:4:5:6:7:8]/',
    'http://[1:2:3:4:5::1.2.3.4]/',
    'http://[::ffff:1.2.3.4]/',
    'http://[::ffff:255.255.255.0]/',
    'http://[1:2:3:4:5:6:1.2.3.4]/',
    'http://[ABCD:ef01::]/',
    'http://1.2.3.4:80/',
    'http://1.2.3.04/', // not an IPv4address, but a valid reg-name
    'http://256.1.1.1/', // reg-name too
    'x://user:pw@host:80/p',
    'x://u%20@h/',
    'x://host:/', // empty port
    'x://', // empty authority
    'x:///', // empty authority, path "/"
    'file:///etc/hosts',
    'x:/',
    'x:/a//b',
    'x:a//b',
    'x:?q',
    'x:#f',
    'x:a/b?c/d?e#f/g?h',
    'x:a@b:c', // ':' and '@' are pchars
    'mailto:someone@example.com',
    "x:!$&'()*+,;=-._~",
    'tag:example.com,2026:mission/1',
    'x:%41%4a%4A',
    'a+b-c.d:e',
    'x://h/%E4%BE%8B', // percent-encoded UTF-8
  ])('accepts %j', (text) => {
    expect(isProtocolIdentifier(text)).toBe(true)
  })
})

describe('isProtocolIdentifier: invalid identifiers', () => {
  it.each([
    ['urn:uuid:00000000-0000-4000-8000-000000000001\n', 'A17 trailing LF'],
    ['urn:a\r', 'trailing CR'],
    ['actions/mission-submit-for-approval', 'A17 relative reference'],
    ['organizations/acme', 'relative reference'],
    ['//host/path', 'network-path reference'],
    ['/a/b', 'absolute-path reference'],
    ['?q', 'query only'],
    ['https://例え.テスト/actions/x', 'A17 IRI-only spelling'],
    ['urn:é', 'non-ASCII'],
    ['urn:a\u00a0b', 'no-break space'],
    ['urn:missionweaveprotocol:human:security-owner%GG', 'A18 bad percent escape'],
    ['x:%4', 'truncated escape'],
    ['x:%', 'lone percent'],
    ['x:%%41', 'percent percent'],
    ['x://[not-an-ip]/', 'A18 bracketed non-IP'],
    ['x://[::ffff:01.2.3.4]/', 'A18 leading-zero embedded IPv4'],
    ['x://[::ffff:1.2.3.004]/', 'leading-zero last octet'],
    ['x://[::1.2.3.256]/', 'IPv4 octet > 255'],
    ['x://[::1.2.3]/', 'three-octet IPv4'],
    ['x://[1.2.3.4]/', 'bare IPv4 in brackets'],
    ['x://[1:2:3:4:5:6:7:8:9]/', 'nine pieces'],
    ['x://[1:2:3:4:5:6:7]/', 'seven pieces without ::'],
    ['x://[1:2:3:4:5:6:7:8::]/', ':: with eight pieces'],
    ['x://[1:2:3:4:5:6::1.2.3.4]/', ':: with IPv4 making eight'],
    ['x://[1::2::3]/', 'two ::'],
    ['x://[:::]/', 'triple colon'],
    ['x://[:1::]/', 'leading single colon'],
    ['x://[1::2:]/', 'trailing single colon'],
    ['x://[12345::]/', 'five hex digits'],
    ['x://[1.2.3.4::]/', 'IPv4 before ::'],
    ['x://[::1.2.3.4:1]/', 'IPv4 not last'],
    ['x://[fe80::1%25eth0]/', 'zone identifier (RFC 6874, not RFC 3986)'],
    ['x://[]/', 'empty literal'],
    ['x://[v.a]/', 'IPvFuture without version'],
    ['x://[vG.a]/', 'IPvFuture non-hex version'],
    ['x://[v1.]/', 'IPvFuture empty body'],
    ['x://[v1.a/b]/', 'IPvFuture with /'],
    ['x://[::1/', 'unclosed literal'],
    ['x://[::1]x/', 'junk after literal'],
    ['x://[::1]:8a/', 'non-digit port after literal'],
    ['x://host:80a/', 'non-digit port'],
    ['x://host:-1/', 'negative port'],
    ['x://ho:st:80/', 'two colons in host'],
    ['x://ho[st/', 'bracket in reg-name'],
    ['x://a@b@c/', 'two @ in authority'],
    ['x://u[@h/', 'bracket in userinfo'],
    ['x:/a[b', 'bracket in path'],
    ['x:a]', 'bracket in rootless path'],
    ['x:?[', 'bracket in query'],
    ['x:#a#b', 'second # in fragment'],
    ['x:#[', 'bracket in fragment'],
    ['x:a b', 'space'],
    [' x:a', 'leading space'],
    ['x:a\t', 'tab'],
    ['x:a\u0000', 'NUL'],
    ['x:a\u007f', 'DEL'],
    ['x:a\\b', 'backslash'],
    ['x:"a"', 'double quote'],
    ['x:<a>', 'angle brackets'],
    ['x:{a}', 'braces'],
    ['x:a|b', 'pipe'],
    ['x:a^b', 'caret'],
    ['x:a`b', 'backtick'],
    ['', 'empty'],
    [':', 'empty scheme'],
    [':a', 'empty scheme with path'],
    ['1x:a', 'scheme starts with digit'],
    ['-x:a', 'scheme starts with dash'],
    ['x_y:a', 'underscore in scheme'],
    ['x', 'no colon'],
  ])('rejects %j (%s)', (text) => {
    expect(isProtocolIdentifier(text)).toBe(false)
  })

  it('rejects non-string input without throwing', () => {
    for (const value of [null, undefined, 1, {}, ['example:']]) {
      expect(isProtocolIdentifier(value as unknown as string)).toBe(false)
    }
  })
})

describe('isProtocolIdentifier: properties', () => {
  it('rejects any string containing a character outside the URI alphabet', () => {
    const uriChar = /[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/
    const foreign = fc.string({unit: 'binary', minLength: 1, maxLength: 1}).filter((c) => !uriChar.test(c))
    fc.assert(
      fc.property(fc.string({maxLength: 20}), foreign, fc.string({maxLength: 20}), (a, c, b) => {
        expect(isProtocolIdentifier(`urn:${a}${c}${b}`)).toBe(false)
      }),
      {numRuns: 2000},
    )
  })

  it('accepts scheme ":" followed by any pchar segments (not starting with "//")', () => {
    const scheme = fc.stringMatching(/^[A-Za-z][A-Za-z0-9+.-]{0,8}$/)
    const segment = fc.stringMatching(/^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2}){0,10}$/)
    // A leading "//" would start an authority, whose grammar is narrower (tested above).
    const path = fc
      .array(segment, {maxLength: 5})
      .map((s) => s.join('/'))
      .filter((p) => !p.startsWith('//'))
    fc.assert(
      fc.property(scheme, path, fc.array(segment, {maxLength: 3}), (s, p, tail) => {
        expect(isProtocolIdentifier(`${s}:${p}`)).toBe(true)
        expect(isProtocolIdentifier(`${s}:${p}?${tail.join('/?')}#${tail.join('?/')}`)).toBe(true)
      }),
      {numRuns: 2000},
    )
  })

  it('is linear on long hostile input', () => {
    const inputs = [
      'x:' + '%'.repeat(200_000),
      'x:' + '%4'.repeat(100_000),
      'x://[' + ':'.repeat(200_000) + ']/',
      'x://[' + '1:'.repeat(100_000) + ']/',
      'x://' + '@'.repeat(200_000),
      'x:' + 'a'.repeat(200_000) + '\n',
    ]
    const start = performance.now()
    for (const input of inputs) expect(isProtocolIdentifier(input)).toBe(false)
    expect(performance.now() - start).toBeLessThan(500)
  })
})

// An independent oracle: the RFC 3986 ABNF transcribed mechanically into one (slow but obviously
// faithful) regular expression. Used only here, to cross-check the hand-written parser.
const RFC3986 = (() => {
  const unreserved = '[A-Za-z0-9\\-._~]'
  const subDelims = "[!$&'()*+,;=]"
  const pct = '%[0-9A-Fa-f]{2}'
  const pchar = `(?:${unreserved}|${pct}|${subDelims}|[:@])`
  const h16 = '[0-9A-Fa-f]{1,4}'
  const dec = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9][0-9]|[0-9])'
  const v4 = `${dec}\\.${dec}\\.${dec}\\.${dec}`
  const ls32 = `(?:${h16}:${h16}|${v4})`
  const v6 = [
    `(?:${h16}:){6}${ls32}`,
    `::(?:${h16}:){5}${ls32}`,
    `(?:${h16})?::(?:${h16}:){4}${ls32}`,
    `(?:(?:${h16}:){0,1}${h16})?::(?:${h16}:){3}${ls32}`,
    `(?:(?:${h16}:){0,2}${h16})?::(?:${h16}:){2}${ls32}`,
    `(?:(?:${h16}:){0,3}${h16})?::${h16}:${ls32}`,
    `(?:(?:${h16}:){0,4}${h16})?::${ls32}`,
    `(?:(?:${h16}:){0,5}${h16})?::${h16}`,
    `(?:(?:${h16}:){0,6}${h16})?::`,
  ]
    .map((alt) => `(?:${alt})`)
    .join('|')
  const future = `[vV][0-9A-Fa-f]+\\.(?:${unreserved}|${subDelims}|:)+`
  const host = `(?:\\[(?:${v6}|${future})\\]|${v4}|(?:${unreserved}|${pct}|${subDelims})*)`
  const authority = `(?:(?:${unreserved}|${pct}|${subDelims}|:)*@)?${host}(?::[0-9]*)?`
  const hier = `(?://${authority}(?:/${pchar}*)*|/(?:${pchar}+(?:/${pchar}*)*)?|${pchar}+(?:/${pchar}*)*|)`
  const tail = `(?:\\?(?:${pchar}|[/?])*)?(?:#(?:${pchar}|[/?])*)?`
  return new RegExp(`^[A-Za-z][A-Za-z0-9+.\\-]*:${hier}${tail}$`)
})()

describe('isProtocolIdentifier agrees with the RFC 3986 ABNF', () => {
  const check = (atoms: string[], prefixes: string[], middles: string[]) => {
    const piece = fc.array(fc.constantFrom(...atoms), {maxLength: 12}).map((a) => a.join(''))
    fc.assert(
      fc.property(fc.constantFrom(...prefixes), piece, fc.constantFrom(...middles), piece, (p, a, m, b) => {
        const text = p + a + m + b
        expect(isProtocolIdentifier(text), JSON.stringify(text)).toBe(RFC3986.test(text))
      }),
      {numRuns: 20_000},
    )
  }

  it('oracle sanity', () => {
    for (const ok of ['example:', 'x://[V01.a]/', 'x://[::ffff:1.2.3.4]/', 'x://u@h:1/p?q#f'])
      expect(RFC3986.test(ok)).toBe(true)
    for (const bad of ['x://[::ffff:01.2.3.4]/', 'x:%GG', 'a/b', 'x:a\n']) expect(RFC3986.test(bad)).toBe(false)
  })

  it('on random URI-like strings', () => {
    const atoms = [
      'a',
      '1',
      'F',
      'v',
      '.',
      ':',
      '::',
      '/',
      '//',
      '?',
      '#',
      '[',
      ']',
      '@',
      '%',
      '%4',
      '%41',
      '%GG',
      '256',
      '01',
      '-',
      '!',
      ' ',
      '\n',
      'é',
      '1.2.3.4',
      ':80',
    ]
    check(atoms, ['x:', 'x://', 'x://[', 'x://u@[', 'ab+c:', '', 'x:/'], ['', ']', ']/', ']:8/'])
  })

  it('on random IP literals', () => {
    const atoms = ['1', 'ffff', '12345', 'abcd', ':', '::', '1.2.3.4', '01.2.3.4', '1.2.3', 'v1.a', 'V', 'g', '.']
    check(atoms, ['x://['], [']/'])
  })
})

describe('identifiersEqual (A19): byte-for-byte, no normalization', () => {
  it.each([
    ['urn:a', 'URN:a'],
    ['http://Example.com/', 'http://example.com/'],
    ['x:%41', 'x:A'],
    ['x:%4a', 'x:%4A'],
    ['http://h:80/', 'http://h/'],
    ['http://h/a/../b', 'http://h/b'],
    ['urn:uuid:ABC', 'urn:uuid:abc'],
    ['x:a', 'x:a\n'],
  ])('%j differs from %j', (a, b) => {
    expect(identifiersEqual(a, b)).toBe(false)
  })

  it('equal strings are equal', () => {
    expect(
      identifiersEqual(
        'urn:uuid:00000000-0000-4000-8000-000000000001',
        'urn:uuid:00000000-0000-4000-8000-000000000001',
      ),
    ).toBe(true)
  })
})

// The identifiers the upstream bundles use to probe the grammar, read from their files.
describe('upstream identifier vectors', () => {
  if (!HAVE_UPSTREAM) {
    if (process.env.CI === 'true')
      it('upstream protocol bundle is present', () => expect.fail(`${UPSTREAM} is missing`))
    else it.skip(`upstream protocol bundle not found at ${UPSTREAM}`, () => {})
    return
  }
  const read = (path: string) => JSON.parse(readFileSync(join(UPSTREAM, path), 'utf8'))

  it('accepts command-action-id-empty-hier-part and rejects the invalid action IDs', () => {
    expect(
      isProtocolIdentifier(read('conformance/vectors/valid/command-action-id-empty-hier-part.json').actionId),
    ).toBe(true)
    for (const name of ['iri-only', 'relative-reference', 'trailing-line-feed']) {
      const actionId = read(`conformance/vectors/invalid/command-action-id-${name}.json`).actionId
      expect(isProtocolIdentifier(actionId), name).toBe(false)
    }
  })

  it('rejects exactly one bad identifier in each malformed-identifier registry and none in the valid one', () => {
    const identifiers = (registry: any): string[] => [
      registry.organizationId,
      ...registry.bindings.flatMap((b: any) => [b.keyId, b.principal.id]),
    ]
    const bad = (file: string) =>
      identifiers(read(`cryptography/keys/${file}`)).filter((id) => !isProtocolIdentifier(id))
    expect(bad('registry-valid.json')).toEqual([])
    expect(bad('registry-unrelated-key-id-trailing-line-feed.json')).toEqual([
      'urn:missionweaveprotocol:key:crypto-vector-security-owner\n',
    ])
    expect(bad('registry-unrelated-principal-id-malformed-percent.json')).toEqual([
      'urn:missionweaveprotocol:human:security-owner%GG',
    ])
    expect(bad('registry-organization-id-relative-reference.json')).toEqual(['organizations/acme'])
    expect(bad('registry-selected-service-principal-id-iri-only.json')).toEqual([
      'https://例え.テスト/services/organization-registry',
    ])
  })
})
