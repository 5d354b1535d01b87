#!/usr/bin/env node
// oclif checks its own package's Node engines on every start by loading semver (about 15 ms of a
// 0.2 s command); npm already checks ours at install. Set before oclif loads, hence the dynamic import.
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
const {execute, settings} = await import('@oclif/core')

// Always run the compiled commands in dist/: with NODE_ENV=development or test (vitest sets it)
// oclif would otherwise try to load the TypeScript sources.
settings.enableAutoTranspile = false

await execute({dir: import.meta.url})
