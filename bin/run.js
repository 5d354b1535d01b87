#!/usr/bin/env node
import {execute, settings} from '@oclif/core'

// Always run the compiled commands in dist/: with NODE_ENV=development or test (vitest sets it)
// oclif would otherwise try to load the TypeScript sources.
settings.enableAutoTranspile = false

await execute({dir: import.meta.url})
