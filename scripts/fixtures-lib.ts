// Deterministic generator of the development fixtures and of our own conformance bundles.
//
//   generateFixtures()    every generated file in memory: same bytes on every run (seeds derived
//                         from names, fixed timestamps, no randomness, no clock)
//   makeFixtures(outDir)  writes them under outDir and removes stale files from the generated
//                         directories (fixtures/, conformance/, cryptography/, admission/)
//
// scripts/make-fixtures.ts is the command-line entry (`npm run fixtures`).

import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import {dirname, join, relative, sep} from 'node:path'
import {serializeKeyFile} from '../src/crypto/keyfile.js'
import {DOCUMENT_KINDS} from '../src/signing/profiles.js'
import {admissionBundle} from './fixture-gen/admission.js'
import {cryptographyBundle} from './fixture-gen/cryptography.js'
import {buildDocuments} from './fixture-gen/documents.js'
import {IDENTITIES, type IdentityName, devRegistry, keyOf} from './fixture-gen/identities.js'
import {fixturesReadme} from './fixture-gen/readme.js'
import {structuralBundle} from './fixture-gen/structural.js'
import {type GeneratedFile, jsonText} from './fixture-gen/util.js'

export type {GeneratedFile} from './fixture-gen/util.js'

/** Top-level directories owned by the generator: stale files in them are removed. */
export const GENERATED_ROOTS = ['fixtures', 'conformance', 'cryptography', 'admission'] as const

const text = (path: string, content: string, mode = 0o644): GeneratedFile => ({
  path,
  bytes: Buffer.from(content, 'utf8'),
  mode,
})

/** Every generated file, sorted by path. */
export function generateFixtures(): GeneratedFile[] {
  const docs = buildDocuments()
  const cryptography = cryptographyBundle(docs)
  const files: GeneratedFile[] = [
    ...IDENTITIES.map((i) =>
      text(`fixtures/keys/${i.name}.key.json`, serializeKeyFile(keyOf(i.name as IdentityName)), 0o600),
    ),
    text('fixtures/registry.json', jsonText(devRegistry())),
    ...DOCUMENT_KINDS.map((kind) => text(`fixtures/unsigned/${kind}.json`, jsonText(docs.unsigned[kind]))),
    ...DOCUMENT_KINDS.map((kind) => text(`fixtures/documents/${kind}.json`, jsonText(docs.signed[kind].document))),
    text('fixtures/README.md', fixturesReadme()),
    ...structuralBundle(docs),
    ...cryptography,
    ...admissionBundle(docs, cryptography), // pins cryptography/manifest.json by digest
  ]
  const seen = new Set<string>()
  for (const f of files) {
    if (seen.has(f.path)) throw new Error(`generated twice: ${f.path}`)
    if (!GENERATED_ROOTS.some((root) => f.path.startsWith(`${root}/`)))
      throw new Error(`generated outside the owned directories: ${f.path}`)
    seen.add(f.path)
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

export interface MakeResult {
  files: GeneratedFile[]
  /** Paths (relative to outDir) whose content or mode changed. */
  written: string[]
  /** Stale files removed from the generated directories. */
  removed: string[]
}

/** Files (relative paths with '/') under dir, recursively. */
export function listFiles(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return []
  const out: string[] = []
  for (const entry of readdirSync(dir, {withFileTypes: true})) {
    const full = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...listFiles(full, base))
    else out.push(relative(base, full).split(sep).join('/'))
  }
  return out.sort()
}

function removeEmptyDirs(dir: string, keep: string): void {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return
  for (const entry of readdirSync(dir, {withFileTypes: true}))
    if (entry.isDirectory()) removeEmptyDirs(join(dir, entry.name), keep)
  if (dir !== keep && readdirSync(dir).length === 0) rmdirSync(dir)
}

/** Writes every generated file under outDir (unchanged files are left alone) and prunes stale ones. */
export function makeFixtures(outDir: string): MakeResult {
  const files = generateFixtures()
  const written: string[] = []
  for (const f of files) {
    const target = join(outDir, f.path)
    mkdirSync(dirname(target), {recursive: true})
    const same =
      existsSync(target) && readFileSync(target).equals(f.bytes) && (statSync(target).mode & 0o777) === f.mode
    if (same) continue
    writeFileSync(target, f.bytes, {mode: f.mode})
    chmodSync(target, f.mode) // the mode given to writeFile applies only to new files, minus the umask
    written.push(f.path)
  }
  const wanted = new Set(files.map((f) => f.path))
  const removed: string[] = []
  for (const root of GENERATED_ROOTS) {
    for (const path of listFiles(join(outDir, root)).map((p) => `${root}/${p}`)) {
      if (!wanted.has(path)) {
        unlinkSync(join(outDir, path))
        removed.push(path)
      }
    }
    removeEmptyDirs(join(outDir, root), join(outDir, root))
  }
  return {files, written, removed}
}
