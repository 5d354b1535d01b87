import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CLI tests run bin/run.js, which loads dist/: build once before any test file runs.
    globalSetup: ['test/global-setup.ts'],
    // oclif commands write straight to stdout; keep vitest from swallowing it.
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})
