#!/usr/bin/env node
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
