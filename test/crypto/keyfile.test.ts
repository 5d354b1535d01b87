import {mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {provePublicKey, publicKeyFromSeed, signEd25519, strictVerify} from '../../src/crypto/ed25519.js'
import {
  KeyFileError,
  generateSigningKey,
  parseKeyFile,
  readKeyFile,
  serializeKeyFile,
  writeKeyFile,
  type SigningKey,
} from '../../src/crypto/keyfile.js'

const KEYS = '/work/shared/protocol/cryptography/keys'
const dir = mkdtempSync(join(tmpdir(), 'mwp-keyfile-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const principal = {type: 'agent' as const, id: 'urn:missionweaveprotocol:agent:test'}
const fresh = () => generateSigningKey({keyId: 'urn:missionweaveprotocol:key:test-1', principal})
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64url')

function keyJson(key: SigningKey, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({...JSON.parse(serializeKeyFile(key)), ...overrides})
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(KeyFileError)
    return (error as KeyFileError).code
  }
  return undefined
}

describe('generate / write / read', () => {
  it('round-trips a generated key through a file', () => {
    const key = fresh()
    expect(key.seed).toHaveLength(32)
    expect(key.publicKeyB64).toBe(b64(key.publicKey))
    expect(provePublicKey(key.publicKey).ok).toBe(true)

    const path = join(dir, 'roundtrip.json')
    writeKeyFile(path, key)
    const loaded = readKeyFile(path)
    expect(loaded).toEqual(key)

    const json = JSON.parse(readFileSync(path, 'utf8'))
    expect(Object.keys(json).sort()).toEqual(['algorithm', 'keyId', 'principal', 'publicKey', 'seed'])
    expect(json.algorithm).toBe('Ed25519')
  })

  it('creates the file with mode 0600', () => {
    const path = join(dir, 'mode.json')
    const previous = process.umask(0o000) // even with a permissive umask the file is owner-only
    try {
      writeKeyFile(path, fresh())
    } finally {
      process.umask(previous)
    }
    expect(statSync(path).mode & 0o777).toBe(0o600)
  })

  it('refuses to overwrite an existing file and leaves it untouched', () => {
    const path = join(dir, 'existing.json')
    const first = fresh()
    writeKeyFile(path, first)
    const before = readFileSync(path, 'utf8')
    expect(codeOf(() => writeKeyFile(path, fresh()))).toBe('file-exists')
    expect(readFileSync(path, 'utf8')).toBe(before)

    const other = join(dir, 'operator-file.txt')
    writeFileSync(other, 'not a key')
    expect(codeOf(() => writeKeyFile(other, first))).toBe('file-exists')
    expect(readFileSync(other, 'utf8')).toBe('not a key')
  })

  it('reports a missing file as an io-error', () => {
    expect(codeOf(() => readKeyFile(join(dir, 'missing.json')))).toBe('io-error')
    expect(readdirSync(dir)).not.toContain('missing.json')
  })
})

describe('validation', () => {
  const key = fresh()

  it('rejects a public key that does not belong to the seed', () => {
    const other = fresh()
    expect(codeOf(() => parseKeyFile(keyJson(key, {publicKey: other.publicKeyB64})))).toBe('seed-public-key-mismatch')
  })

  it('rejects weak or malformed public keys before comparing', () => {
    const identity = 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
    expect(codeOf(() => parseKeyFile(keyJson(key, {publicKey: identity})))).toBe('invalid-public-key')
    expect(() => parseKeyFile(keyJson(key, {publicKey: identity}))).toThrow(/identity/)
    // 42 characters ending in 'B' always leave nonzero unused bits (a random key's prefix may not).
    expect(codeOf(() => parseKeyFile(keyJson(key, {publicKey: key.publicKeyB64.slice(0, 41) + 'B'})))).toBe(
      'noncanonical-base64url',
    )
  })

  it('requires canonical unpadded base64url and a 32-byte seed', () => {
    expect(codeOf(() => parseKeyFile(keyJson(key, {seed: `${b64(key.seed)}=`})))).toBe('noncanonical-base64url')
    expect(codeOf(() => parseKeyFile(keyJson(key, {seed: b64(key.seed.subarray(0, 31))})))).toBe('seed-wrong-length')
    // Nonzero unused pad bits: the last character of a 43-char string carries 2 unused bits.
    const seedText = b64(key.seed)
    const last = seedText.at(-1)!
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const padBits = alphabet[alphabet.indexOf(last) ^ 1]!
    expect(Buffer.from(seedText.slice(0, -1) + padBits, 'base64url')).toEqual(Buffer.from(key.seed))
    expect(codeOf(() => parseKeyFile(keyJson(key, {seed: seedText.slice(0, -1) + padBits})))).toBe(
      'noncanonical-base64url',
    )
  })

  it('rejects bad JSON, shapes, algorithms, principals and unknown members', () => {
    expect(codeOf(() => parseKeyFile('{'))).toBe('invalid-json')
    expect(codeOf(() => parseKeyFile('[]'))).toBe('invalid-field')
    expect(codeOf(() => parseKeyFile(keyJson(key, {algorithm: 'ed25519'})))).toBe('unsupported-algorithm')
    expect(codeOf(() => parseKeyFile(keyJson(key, {keyId: 'not a uri'})))).toBe('invalid-field')
    expect(codeOf(() => parseKeyFile(keyJson(key, {principal: {type: 'robot', id: 'urn:x:y'}})))).toBe('invalid-field')
    expect(codeOf(() => parseKeyFile(keyJson(key, {principal: undefined})))).toBe('invalid-field')
    expect(codeOf(() => parseKeyFile(keyJson(key, {extra: 1})))).toBe('invalid-field')
    expect(codeOf(() => parseKeyFile(keyJson(key, {testOnly: false})))).toBe('invalid-field')
  })
})

describe('upstream test-only fixtures', () => {
  const files = readdirSync(KEYS).filter((f) => f.startsWith('signing-'))

  it('there are upstream signing fixtures to load', () => {
    expect(files.length).toBeGreaterThan(0)
  })

  for (const file of files) {
    it(`loads ${file} and signs with it`, () => {
      const key = readKeyFile(join(KEYS, file))
      const fixture = JSON.parse(readFileSync(join(KEYS, file), 'utf8'))
      expect(key.testOnly).toBe(true)
      expect(key.principal).toBeUndefined()
      expect(key.keyId).toBe(fixture.keyId)
      expect(key.publicKeyB64).toBe(fixture.publicKey)
      expect(b64(publicKeyFromSeed(key.seed))).toBe(fixture.publicKey)
      const proof = provePublicKey(key.publicKey)
      expect(proof.ok).toBe(true)
      const message = new TextEncoder().encode(`signed by ${file}`)
      if (proof.ok) expect(strictVerify(proof.key, message, signEd25519(key.seed, message)).ok).toBe(true)
    })
  }

  it('a tampered fixture (seed of another key) is a mismatch', () => {
    const a = JSON.parse(readFileSync(join(KEYS, 'signing-coordinator.json'), 'utf8'))
    const b = JSON.parse(readFileSync(join(KEYS, 'signing-developer-one.json'), 'utf8'))
    expect(codeOf(() => parseKeyFile(JSON.stringify({...a, seed: b.seed})))).toBe('seed-public-key-mismatch')
  })

  it('a fixture key written back keeps its testOnly marker and reloads', () => {
    const key = readKeyFile(join(KEYS, 'signing-coordinator.json'))
    const path = join(dir, 'fixture-copy.json')
    writeKeyFile(path, key)
    expect(readKeyFile(path)).toEqual(key)
  })
})
