// Bundle integrity (spec §22, ACCEPTANCE N1): before any case runs, the manifest's
// `artifactDigest` (SHA-256 of the JCS of the manifest with only that top-level member removed)
// and every listed artifact's byte length and SHA-256 are checked. A mismatch stops the run.

import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {MwpError} from '../errors.js'
import {canonicalize} from '../json/jcs.js'
import {type JsonObject, parseJsonBytes} from '../json/parse.js'

/** A bundle that cannot be trusted or read: nothing of it runs. */
export class BundleError extends MwpError<'bundle-invalid'> {
  constructor(message: string, options?: ErrorOptions) {
    super('bundle-invalid', message, options)
  }
}

export function sha256(bytes: Uint8Array | string): string {
  return 'sha256:' + createHash('sha256').update(bytes).digest('hex')
}

/** Reads files of one bundle root; paths in manifests are relative to the root. */
export class BundleRoot {
  readonly dir: string
  private readonly files = new Map<string, Buffer>()

  constructor(dir: string) {
    this.dir = resolve(dir)
  }

  bytes(path: string): Buffer {
    let b = this.files.get(path)
    if (b === undefined) {
      if (path.split('/').includes('..')) throw new BundleError(`path escapes the bundle root: ${path}`)
      try {
        b = readFileSync(join(this.dir, path))
      } catch (e) {
        throw new BundleError(`cannot read ${path}: ${(e as Error).message}`, {cause: e})
      }
      this.files.set(path, b)
    }
    return b
  }

  json(path: string): unknown {
    try {
      return parseJsonBytes(this.bytes(path))
    } catch (e) {
      if (e instanceof BundleError) throw e
      throw new BundleError(`${path} is not strict JSON: ${(e as Error).message}`, {cause: e})
    }
  }
}

/** SHA-256 of the JCS of a manifest with only its top-level `artifactDigest` removed. */
export function manifestDigest(manifest: JsonObject): string {
  const {artifactDigest: _removed, ...rest} = manifest
  return sha256(canonicalize(rest))
}

export interface ArtifactEntry {
  path: string
  byteLength: number
  sha256: string
}

/** Verifies the manifest digest and every artifact's length and hash; throws on the first mismatch. */
export function verifyIntegrity(root: BundleRoot, manifest: JsonObject, label: string): void {
  const declared = manifest.artifactDigest
  const actual = manifestDigest(manifest)
  if (declared !== actual)
    throw new BundleError(`${label}: artifactDigest mismatch (manifest says ${String(declared)}, computed ${actual})`)
  const artifacts = manifest.artifacts as unknown as ArtifactEntry[]
  if (!Array.isArray(artifacts)) throw new BundleError(`${label}: manifest has no artifacts list`)
  for (const a of artifacts) {
    const bytes = root.bytes(a.path)
    if (bytes.length !== a.byteLength)
      throw new BundleError(`${label}: ${a.path} is ${bytes.length} bytes, manifest says ${a.byteLength}`)
    const h = sha256(bytes)
    if (h !== a.sha256) throw new BundleError(`${label}: ${a.path} hashes to ${h}, manifest says ${a.sha256}`)
  }
}

/** Every file a manifest references must be a declared artifact, so nothing unverified is used. */
export function requireDeclared(manifest: JsonObject, paths: Iterable<string>, label: string): void {
  const declared = new Set((manifest.artifacts as unknown as ArtifactEntry[]).map((a) => a.path))
  for (const p of paths)
    if (!declared.has(p)) throw new BundleError(`${label}: ${p} is used by a case but not declared in artifacts`)
}
