// Small helpers shared by the fixture generator: deterministic seeds, JSON text, targeted text
// edits. Nothing here reads the clock or a random source.

import {createHash} from 'node:crypto'

/** One file the generator produces: a path relative to the output root and its exact bytes. */
export interface GeneratedFile {
  path: string
  bytes: Buffer
  /** File mode; private key files are 0600, everything else 0644. */
  mode: number
}

export const SEED_PREFIX = 'mwp dev fixture seed v1:'

/** The 32-byte Ed25519 seed of a named development key: sha256("mwp dev fixture seed v1:" + name). */
export function seedFor(name: string): Uint8Array {
  return new Uint8Array(
    createHash('sha256')
      .update(SEED_PREFIX + name, 'utf8')
      .digest(),
  )
}

/** `sha256:<hex>` of UTF-8 text (content hashes of the sample artifacts). */
export function sha256Text(text: string): string {
  return 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex')
}

/** Pretty JSON as written by every generated `.json` file: two-space indent, final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

/** A deep copy of plain JSON data (the generator mutates copies, never the originals). */
export function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}

/** Applies `edit` to a copy of `value` and returns the copy. */
export function edited<T>(value: T, edit: (copy: T) => void): T {
  const copy = clone(value)
  edit(copy)
  return copy
}

/**
 * Replaces the single occurrence of `from` in `text`. Throws when `from` occurs zero or several
 * times, so a text-level mutation can never silently miss its target.
 */
export function replaceOnce(text: string, from: string, to: string): string {
  const first = text.indexOf(from)
  if (first < 0) throw new Error(`replaceOnce: ${JSON.stringify(from)} not found`)
  if (text.indexOf(from, first + 1) >= 0) throw new Error(`replaceOnce: ${JSON.stringify(from)} occurs more than once`)
  return text.slice(0, first) + to + text.slice(first + from.length)
}

/** Escapes every UTF-16 code unit outside printable ASCII as \uXXXX (valid JSON, same value). */
export function escapeNonAscii(jsonTextValue: string): string {
  return jsonTextValue.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))
}

/** The same JSON value with every object's members in reverse order (arrays keep their order). */
export function reverseMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseMembers)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).reverse()) out[key] = reverseMembers((value as Record<string, unknown>)[key])
    return out
  }
  return value
}

/** Base64url with one unused pad bit set: decodes (leniently) to the same bytes, but is not canonical. */
export function setUnusedPadBit(b64: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const unusedBits = (b64.length * 6) % 8
  if (unusedBits === 0) throw new Error('setUnusedPadBit: this length has no unused bits')
  const last = alphabet.indexOf(b64[b64.length - 1]!)
  if ((last & 1) !== 0) throw new Error('setUnusedPadBit: the lowest unused bit is already set')
  return b64.slice(0, -1) + alphabet[last | 1]
}

export const b64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url')
export const fromHex = (hex: string): Uint8Array => new Uint8Array(Buffer.from(hex, 'hex'))
