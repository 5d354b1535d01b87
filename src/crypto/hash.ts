// SHA-256 helpers. The protocol's hash spelling (signing hash, content hashes) is
// `sha256:` followed by 64 lowercase hex digits (spec §6.4).

import {createHash} from 'node:crypto'

/** Lowercase hex SHA-256; a string is hashed as its UTF-8 bytes. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/** `sha256:<lowercase hex>` of the exact bytes (a string is hashed as UTF-8). */
export function contentHash(bytes: Uint8Array | string): string {
  return `sha256:${sha256Hex(bytes)}`
}
