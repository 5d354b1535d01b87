#!/usr/bin/env node
import {existsSync, readFileSync} from 'node:fs'
import {arch, release} from 'node:os'

/**
 * Whether this may be WSL, where oclif prints the platform as `wsl`: any of the markers its
 * wsl-utils looks at (which alone costs about 20 ms to load). oclif then decides.
 */
function mayBeWsl() {
  if (process.platform !== 'linux') return false
  if (release().toLowerCase().includes('microsoft')) return true
  try {
    if (readFileSync('/proc/version', 'utf8').toLowerCase().includes('microsoft')) return true
  } catch {
    // no /proc: not WSL either
  }
  return existsSync('/proc/sys/fs/binfmt_misc/WSLInterop') || existsSync('/run/WSL')
}

// `mwp --version` (oclif's rule: the first argument, whatever follows) prints oclif's user agent
// without loading oclif, whose import alone is about 2x the CPU of starting Node (bench/startup.ts).
// Same line as config.userAgent; our only init hook (src/cli/not-found.ts, a bare topic with --json)
// has nothing to do for --version, and no plugin of ours has a finally hook.
function printVersion() {
  const {name, version} = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  const cpu = arch() === 'ia32' ? 'x86' : arch()
  process.stdout.write(`${name}/${version} ${process.platform}-${cpu} node-${process.version}\n`)
}

async function runOclif() {
  // oclif checks its own package's Node engines on every start by loading semver (about 15 ms of a
  // 0.2 s command); npm already checks ours at install. Set before oclif loads, hence the dynamic import.
  process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
  const {execute, settings} = await import('@oclif/core')

  // Always run the compiled commands in dist/: with NODE_ENV=development or test (vitest sets it)
  // oclif would otherwise try to load the TypeScript sources.
  settings.enableAutoTranspile = false

  // A command whose event loop drains while it still awaits something (a subscription nobody will
  // end) would exit 13, Node's "unsettled top-level await", with nothing said: that is a bug in mwp,
  // so it exits 4 (internal error, see src/cli/base.ts) and says so.
  let finished = false
  process.on('beforeExit', () => {
    if (finished) return
    process.stderr.write('mwp: internal error: the command stopped before it finished (nothing left to wait for)\n')
    process.exit(4)
  })
  await execute({dir: import.meta.url})
  finished = true
}

if (process.argv[2] === '--version' && !mayBeWsl()) printVersion()
else await runOclif()
