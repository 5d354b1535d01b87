// The Authority's Artifact content store (spec §13.1, §17.4): immutable bytes addressed by their
// content hash, outside the Group log. One file per hash, DIR/<hex>, shared by every Group that
// holds those bytes; DIR/groups/<sha256 of the Group ID>/<hex> is an empty marker saying the bytes
// were put into that Group, so that a Group's members reach only what was put into their Group
// (knowing a hash is not access to it, nor proof that another Group holds it).
//
// Where DIR is: beside an embedded SQLite store, `<store file>.artifacts` (artifactDirFor). A
// PostgreSQL store has no file to sit beside, so the operator names a directory (mwp authority
// serve --artifact-dir); files rather than a bytea table keep multi-megabyte bodies out of the
// database's WAL and replication, and one code path serves both stores. Every process serving the
// same store must see the same directory.
//
// The hash is checked on write (the caller states the hash it expects; other bytes are refused)
// and on every read: a damaged file is never returned (ArtifactBlobError 'artifact-integrity'). Writes are
// atomic: a temporary file is written, fsynced and renamed over the final name, then the directory
// is fsynced, so a crash leaves either the whole file or none.

import {randomBytes} from 'node:crypto'
import {mkdir, open, readFile, rename, rm, stat} from 'node:fs/promises'
import {join} from 'node:path'
import {contentHash, sha256Hex} from '../crypto/hash.js'
import {type ArtifactErrorCode, MwpError} from '../errors.js'
import {parseStoreUrl} from './index.js'

/** ServerOptions.artifactMaxBytes when not given: 64 MiB. */
export const DEFAULT_ARTIFACT_MAX_BYTES = 64 * 1024 * 1024

export class ArtifactBlobError extends MwpError<ArtifactErrorCode> {}

const HASH = /^sha256:([0-9a-f]{64})$/

export const isContentHash = (value: string): boolean => HASH.test(value)

/** The embedded default directory for a store URL: `<file>.artifacts` for SQLite, none for PostgreSQL. */
export function artifactDirFor(storeUrl: string): string | undefined {
  if (!storeUrl.startsWith('sqlite:')) return undefined
  const target = parseStoreUrl(storeUrl)
  return target.kind === 'sqlite' ? `${target.path}.artifacts` : undefined
}

export class ArtifactBlobs {
  constructor(
    readonly dir: string,
    readonly maxBytes: number = DEFAULT_ARTIFACT_MAX_BYTES,
  ) {}

  #hex(hash: string): string {
    const m = HASH.exec(hash)
    if (!m) throw new ArtifactBlobError('artifact-not-a-hash', `not a content hash (sha256:<64 hex>): ${hash}`)
    return m[1]!
  }

  /** The file holding the bytes of `hash` (exposed for operators and tests that inspect the store). */
  pathOf(hash: string): string {
    return join(this.dir, this.#hex(hash))
  }

  #marker(groupId: string, hex: string): string {
    return join(this.dir, 'groups', sha256Hex(groupId), hex)
  }

  /**
   * Stores `bytes` as `expectedHash` in Group `groupId`. Refused, with nothing written: a malformed
   * hash, bytes over maxBytes, bytes whose hash is not `expectedHash`. Idempotent; `created` says
   * whether the Group did not hold them before.
   */
  async put(groupId: string, expectedHash: string, bytes: Uint8Array): Promise<{created: boolean}> {
    const hex = this.#hex(expectedHash)
    if (bytes.length > this.maxBytes)
      throw new ArtifactBlobError('artifact-too-large', `${bytes.length} bytes exceed the limit of ${this.maxBytes}`)
    const actual = contentHash(bytes)
    if (actual !== expectedHash)
      throw new ArtifactBlobError('artifact-mismatch', `the bytes hash to ${actual}, not the stated ${expectedHash}`)
    const path = join(this.dir, hex)
    // A file already there is trusted only if it still matches: a damaged one is replaced.
    if (!(await this.#matches(path, expectedHash))) await atomicWrite(this.dir, path, bytes)
    const marker = this.#marker(groupId, hex)
    if (await exists(marker)) return {created: false}
    await mkdir(join(this.dir, 'groups', sha256Hex(groupId)), {recursive: true})
    await atomicWrite(join(this.dir, 'groups', sha256Hex(groupId)), marker, new Uint8Array())
    return {created: true}
  }

  /**
   * The bytes of `hash` in Group `groupId`, or null when that Group holds no such Artifact.
   * Throws ArtifactBlobError 'artifact-integrity' when the stored bytes no longer match their hash.
   */
  async get(groupId: string, hash: string): Promise<Buffer | null> {
    const hex = this.#hex(hash)
    if (!(await exists(this.#marker(groupId, hex)))) return null
    let bytes: Buffer
    try {
      bytes = await readFile(join(this.dir, hex))
    } catch (e) {
      // The Group's marker without the bytes: lost content is damage, not absence.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new ArtifactBlobError('artifact-integrity', `the content of ${hash} is missing from ${this.dir}`)
      throw e
    }
    const actual = contentHash(bytes)
    if (actual !== hash)
      throw new ArtifactBlobError('artifact-integrity', `${this.pathOf(hash)} hashes to ${actual}, not ${hash}`)
    return bytes
  }

  async #matches(path: string, hash: string): Promise<boolean> {
    try {
      return contentHash(await readFile(path)) === hash
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw e
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw e
  }
}

/** Writes `bytes` to `path` via a fsynced temporary file in `dir`, renamed into place; then fsyncs `dir`. */
async function atomicWrite(dir: string, path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dir, {recursive: true})
  const tmp = join(dir, `.tmp-${process.pid}-${randomBytes(8).toString('hex')}`)
  try {
    const file = await open(tmp, 'wx')
    try {
      await file.writeFile(bytes)
      await file.sync()
    } finally {
      await file.close()
    }
    await rename(tmp, path)
  } catch (e) {
    await rm(tmp, {force: true})
    throw e
  }
  const d = await open(dir, 'r')
  try {
    await d.sync()
  } finally {
    await d.close()
  }
}
