// mwp/json: the strict JSON layer every signed document goes through.

// Strict, lossless parser (duplicate members, lone surrogates and out-of-range numbers refused).
export {JsonParseError, MAX_DEPTH, parseJsonBytes, parseJsonText, sourcesIn} from './parse.js'
export type {JsonObject, JsonParseReason, JsonValue, ParseOptions, SourceOf, SourceTexts} from './parse.js'
// RFC 8785 canonicalization and the canonical hash.
export {JcsError, canonicalBytes, canonicalHash, canonicalize} from './jcs.js'
export type {JcsReason} from './jcs.js'
// The protocol's timestamp profile (RFC 3339, UTC Z).
export {
  compareInstants,
  compareTimestampText,
  formatUtcNow,
  isProfileTimestamp,
  isUppercaseUtcZ,
  parseTimestamp,
} from './timestamp.js'
export type {Instant} from './timestamp.js'
// Unpadded base64url.
export {decodeBase64url, encodeBase64url} from './base64url.js'
// Protocol identifiers (absolute URIs) and their comparison.
export {identifiersEqual, isProtocolIdentifier} from './uri.js'
