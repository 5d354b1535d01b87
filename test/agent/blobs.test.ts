// The Agent's local content-addressed blobs: the hash is checked on write and on every read.

import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {BlobIntegrityError, BlobStore} from '../../src/agent/blobs.js'
import {contentHash} from '../../src/crypto/hash.js'

const dir = mkdtempSync(join(tmpdir(), 'mwp-blobs-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('BlobStore', () => {
  it('stores by content hash and reads back the same bytes', () => {
    const blobs = new BlobStore(dir)
    const hash = blobs.put(Buffer.from('checkpoint state'))
    expect(hash).toBe(contentHash(Buffer.from('checkpoint state')))
    expect(blobs.get(hash)!.toString()).toBe('checkpoint state')
    expect(blobs.get(contentHash(Buffer.from('never stored')))).toBeNull()
  })
  it('refuses a file whose content no longer matches its hash', () => {
    const blobs = new BlobStore(dir)
    const hash = blobs.put(Buffer.from('original'))
    writeFileSync(join(dir, hash.slice('sha256:'.length)), 'tampered')
    expect(() => blobs.get(hash)).toThrow(BlobIntegrityError)
  })
  it('refuses a name that is not a content hash', () => {
    expect(() => new BlobStore(dir).get('../../etc/passwd')).toThrow(BlobIntegrityError)
  })
})
