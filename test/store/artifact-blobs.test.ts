// The Authority's Artifact content store (spec §13.1): real files in a temp directory. A round
// trip per Group, the stated hash checked on write, a damaged or lost file refused on read, the
// size limit, and the embedded default directory beside a SQLite store.

import {existsSync, mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {contentHash} from '../../src/crypto/hash.js'
import {ArtifactBlobError, ArtifactBlobs, artifactDirFor} from '../../src/store/artifact-blobs.js'

const dir = mkdtempSync(join(tmpdir(), 'mwp-artifacts-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const G = 'urn:mwp:test:group:a'
const H = 'urn:mwp:test:group:b'

async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (e: unknown) => e,
  )
  expect(e).toBeInstanceOf(ArtifactBlobError)
  return (e as ArtifactBlobError).code
}

describe('ArtifactBlobs', () => {
  it('round-trips bytes in their Group, idempotently, leaving no temporary file; another Group does not hold them', async () => {
    const blobs = new ArtifactBlobs(join(dir, 'round-trip'))
    const bytes = Buffer.from('a report\n')
    const hash = contentHash(bytes)
    expect(await blobs.put(G, hash, bytes)).toEqual({created: true})
    expect(await blobs.put(G, hash, bytes)).toEqual({created: false})
    expect(await blobs.get(G, hash)).toEqual(bytes)
    expect(await blobs.get(H, hash)).toBeNull() // the same bytes, not put into H
    expect(await blobs.get(G, contentHash('other'))).toBeNull()
    expect(readdirSync(blobs.dir).filter((f) => f.startsWith('.tmp'))).toEqual([])
    expect(existsSync(join(blobs.dir, hash.slice('sha256:'.length)))).toBe(true)
  })

  it('refuses bytes that do not hash to the stated hash, and writes nothing', async () => {
    const blobs = new ArtifactBlobs(join(dir, 'mismatch'))
    const stated = contentHash('what the client meant')
    expect(await refusal(blobs.put(G, stated, Buffer.from('something else')))).toBe('artifact-mismatch')
    expect(existsSync(blobs.pathOf(stated))).toBe(false)
    expect(await blobs.get(G, stated)).toBeNull()
    expect(await refusal(blobs.put(G, 'sha256:ABC', Buffer.from('x')))).toBe('artifact-not-a-hash')
  })

  it('detects a damaged file on read and never returns its bytes; a later put of the right bytes repairs it', async () => {
    const blobs = new ArtifactBlobs(join(dir, 'damaged'))
    const bytes = Buffer.from('precious content')
    const hash = contentHash(bytes)
    await blobs.put(G, hash, bytes)
    writeFileSync(blobs.pathOf(hash), 'precious c0ntent')
    expect(await refusal(blobs.get(G, hash))).toBe('artifact-integrity')
    await blobs.put(G, hash, bytes)
    expect(await blobs.get(G, hash)).toEqual(bytes)
    unlinkSync(blobs.pathOf(hash)) // lost content of a Group that holds it is damage, not absence
    expect(await refusal(blobs.get(G, hash))).toBe('artifact-integrity')
  })

  it('refuses bytes over the size limit', async () => {
    const blobs = new ArtifactBlobs(join(dir, 'limit'), 8)
    const nine = Buffer.alloc(9, 1)
    expect(await refusal(blobs.put(G, contentHash(nine), nine))).toBe('artifact-too-large')
    const eight = Buffer.alloc(8, 1)
    expect(await blobs.put(G, contentHash(eight), eight)).toEqual({created: true})
  })

  it('defaults to <store file>.artifacts beside a SQLite store and has no default for PostgreSQL', () => {
    expect(artifactDirFor(`sqlite:${join(dir, 'authority.db')}`)).toBe(join(dir, 'authority.db.artifacts'))
    expect(artifactDirFor('postgres://mwp@127.0.0.1/mwp')).toBeUndefined()
  })
})
