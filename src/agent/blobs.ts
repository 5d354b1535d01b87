// The Agent's local content-addressed blob store: checkpoint states and Artifact contents, one file
// per content hash under DIR/blobs/. The hash is verified on every write and every read (§13.1:
// content identity is the hash, never the path), so a damaged file is never handed to a handler.

import {mkdirSync, readFileSync, renameSync, writeFileSync, existsSync} from 'node:fs'
import {join} from 'node:path'
import {contentHash} from '../crypto/hash.js'
import {MwpError} from '../errors.js'

export class BlobIntegrityError extends MwpError<'blob-integrity'> {
  constructor(message: string) {
    super('blob-integrity', message)
  }
}

export class BlobStore {
  constructor(readonly dir: string) {
    mkdirSync(dir, {recursive: true})
  }

  #path(hash: string): string {
    if (!/^sha256:[0-9a-f]{64}$/.test(hash)) throw new BlobIntegrityError(`not a content hash: ${hash}`)
    return join(this.dir, hash.slice('sha256:'.length))
  }

  /** Stores `bytes` durably (write, fsync by rename of a complete file) and returns their hash. */
  put(bytes: Uint8Array): string {
    const hash = contentHash(bytes)
    const path = this.#path(hash)
    if (!existsSync(path)) {
      const tmp = `${path}.${process.pid}.tmp`
      writeFileSync(tmp, bytes, {flush: true})
      renameSync(tmp, path)
    }
    return hash
  }

  /** The bytes of `hash`, or null when absent; throws when the stored bytes do not match it. */
  get(hash: string): Buffer | null {
    const path = this.#path(hash)
    if (!existsSync(path)) return null
    const bytes = readFileSync(path)
    if (contentHash(bytes) !== hash) throw new BlobIntegrityError(`blob ${hash} does not match its content`)
    return bytes
  }
}
