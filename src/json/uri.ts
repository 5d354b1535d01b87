// Protocol identifiers (spec §2): an absolute RFC 3986 URI, checked against the complete grammar.
//
//   URI       = scheme ":" hier-part [ "?" query ] [ "#" fragment ]
//   hier-part = "//" authority path-abempty / path-absolute / path-rootless / path-empty
//   authority = [ userinfo "@" ] host [ ":" port ]
//   host      = IP-literal / IPv4address / reg-name
//
// A small hand-written parser rather than one giant regex: it is linear in the input, it is
// readable against the RFC, and it gets the details generic validators miss (ajv-formats rejects
// the valid `example:` and accepts leading-zero IPv4 octets inside IPv6 literals).
//
// Identifiers are compared byte-for-byte (`identifiersEqual`): the spec forbids recipients from
// inventing normalization, so there is no case folding, percent decoding or dot-segment removal.
// The normative common schema additionally caps identifiers at 512 characters; that limit lives in
// the schema, this module only decides the grammar.

// Every character RFC 3986 permits anywhere in a URI: unreserved, gen-delims, sub-delims and '%'.
// Anything else (whitespace, controls, a trailing LF, non-ASCII IRI characters) fails here.
const URI_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/
// A '%' not followed by two hex digits (`%GG`, `%4`, trailing `%`).
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/
const PORT = /^[0-9]*$/
// Characters outside a given component's alphabet (the global checks above already ran).
const NOT_IN_PATH_QUERY_FRAGMENT = /[[\]#]/ // pchar / "/" / "?" minus the '?' split below
const NOT_IN_USERINFO = /[[\]/?#@]/
const NOT_IN_REG_NAME = /[[\]/?#@:]/
const H16 = /^[0-9A-Fa-f]{1,4}$/
const DEC_OCTET = /^(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$/ // no leading zeros
// IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ); ABNF literals are
// case-insensitive, so "V" is allowed too.
const IPV_FUTURE = /^[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+$/

/** True when `text` is an absolute RFC 3986 URI consuming the complete string. */
export function isProtocolIdentifier(text: string): boolean {
  if (typeof text !== 'string' || !URI_CHARS.test(text) || BAD_PERCENT.test(text)) return false
  const scheme = SCHEME.exec(text)
  if (scheme === null) return false // a relative reference has no scheme
  let rest = text.slice(scheme[0].length)

  // The first '#' starts the fragment and the first '?' before it starts the query: no earlier
  // component may contain either character.
  const hash = rest.indexOf('#')
  if (hash >= 0) {
    if (NOT_IN_PATH_QUERY_FRAGMENT.test(rest.slice(hash + 1))) return false
    rest = rest.slice(0, hash)
  }
  const question = rest.indexOf('?')
  if (question >= 0) {
    if (NOT_IN_PATH_QUERY_FRAGMENT.test(rest.slice(question + 1))) return false
    rest = rest.slice(0, question)
  }

  let path = rest
  if (rest.startsWith('//')) {
    // "//" authority path-abempty: the authority runs to the next '/'.
    const slash = rest.indexOf('/', 2)
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash)
    path = slash < 0 ? '' : rest.slice(slash)
    if (!isAuthority(authority)) return false
  }
  // path-abempty, path-absolute (a leading "/" not followed by "/", guaranteed by the branch
  // above), path-rootless and path-empty all reduce to: segments of pchar separated by "/".
  return !NOT_IN_PATH_QUERY_FRAGMENT.test(path)
}

function isAuthority(authority: string): boolean {
  let hostPort = authority
  const at = authority.indexOf('@')
  if (at >= 0) {
    if (NOT_IN_USERINFO.test(authority.slice(0, at))) return false
    hostPort = authority.slice(at + 1)
  }
  let port: string
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']')
    if (close < 0 || !isIpLiteralBody(hostPort.slice(1, close))) return false
    const after = hostPort.slice(close + 1)
    if (after !== '' && !after.startsWith(':')) return false
    port = after.slice(1)
  } else {
    // reg-name (which also covers every IPv4address spelling) cannot contain ':'.
    const colon = hostPort.indexOf(':')
    const host = colon < 0 ? hostPort : hostPort.slice(0, colon)
    if (NOT_IN_REG_NAME.test(host)) return false
    port = colon < 0 ? '' : hostPort.slice(colon + 1)
  }
  return PORT.test(port)
}

function isIpLiteralBody(body: string): boolean {
  return IPV_FUTURE.test(body) || isIpv6Address(body)
}

/**
 * RFC 3986 IPv6address: eight 16-bit pieces, or fewer with exactly one "::" standing for at least
 * one zero piece; the last 32 bits may be spelled as an IPv4address. No zone identifier.
 */
function isIpv6Address(text: string): boolean {
  const gap = text.indexOf('::')
  if (gap >= 0 && text.indexOf('::', gap + 1) >= 0) return false // at most one "::" (rejects ":::")
  if (gap < 0) return countPieces(text, true) === 8
  const head = countPieces(text.slice(0, gap), false)
  const tail = countPieces(text.slice(gap + 2), true)
  return head >= 0 && tail >= 0 && head + tail <= 7
}

/**
 * Counts the 16-bit pieces of a colon-separated run ("" is zero pieces); an IPv4address is allowed
 * as the final piece when `allowIpv4` and counts as two. Returns -1 when malformed.
 */
function countPieces(run: string, allowIpv4: boolean): number {
  if (run === '') return 0
  const parts = run.split(':')
  let count = 0
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (H16.test(part)) count += 1
    else if (allowIpv4 && i === parts.length - 1 && isIpv4Address(part)) count += 2
    else return -1
  }
  return count
}

function isIpv4Address(text: string): boolean {
  const octets = text.split('.')
  return octets.length === 4 && octets.every((octet) => DEC_OCTET.test(octet))
}

/**
 * Identifier equality is byte-for-byte string equality. The spec lets only the issuing
 * Organization choose URI normalization; a recipient must not add any (no case folding of the
 * scheme or host, no percent-decoding, no removal of default ports or dot segments).
 */
export function identifiersEqual(a: string, b: string): boolean {
  return a === b
}
