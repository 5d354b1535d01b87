// Canonical unpadded base64url (RFC 4648 §5, spec §2).
//
// Buffer.from(s, 'base64url') is lenient: it accepts '=' padding, stray characters and non-zero
// unused pad bits. The protocol requires rejecting every noncanonical spelling even when it would
// decode to the expected bytes, so decoding is: alphabet check, length check, decode, and a
// re-encode round trip that catches non-zero pad bits.

const ALPHABET = /^[A-Za-z0-9_-]*$/

export function encodeBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')
}

/** Decodes a canonical unpadded base64url string, or returns null for any noncanonical spelling. */
export function decodeBase64url(text: string): Uint8Array | null {
  if (!ALPHABET.test(text) || text.length % 4 === 1) return null
  const bytes = Buffer.from(text, 'base64url')
  if (bytes.toString('base64url') !== text) return null
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
