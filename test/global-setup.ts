import {execFileSync} from 'node:child_process'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * Generates the Command payload types, compiles src/ and commands/ to dist/ (incremental),
 * rewrites the oclif manifest and the precompiled schema validators (the build's steps), so the
 * tests run the current code.
 */
export default function setup(): void {
  // Library-only test runs while developing (no CLI subprocess): MWP_SKIP_BUILD=1 skips the build.
  if (process.env.MWP_SKIP_BUILD === '1') return
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  execFileSync(process.execPath, ['scripts/payload-types.mjs'], {cwd: root, stdio: 'inherit'}) // src/ imports its output
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], {cwd: root, stdio: 'inherit'})
  execFileSync(process.execPath, ['dist/scripts/oclif-manifest.js'], {cwd: root, stdio: 'inherit'})
  execFileSync(process.execPath, ['dist/scripts/compile-schemas.js'], {cwd: root, stdio: 'inherit'})
}
