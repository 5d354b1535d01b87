import {fileURLToPath} from 'node:url'
import {type TestUserConfig, configDefaults, defineConfig} from 'vitest/config'
import {RESULTS_FILE} from './src/conformance/behavior.js'

/**
 * Tests that read the results of the run before them (the behavior gate, and the README, which runs
 * `mwp conformance behavior`): `npm test` runs them in a second vitest run (vitest.after-run.config.ts)
 * once this one has written its results.
 */
export const AFTER_RUN = ['test/project/readme.test.ts', 'test/conformance/behavior-evidence.test.ts']

/**
 * What makes a run leave the evidence `mwp conformance behavior` reads: vitest's JSON results
 * beside the default reporter, and each test's assertion count in its meta.
 */
export const recordRun = {
  reporters: ['default', 'json'],
  outputFile: {json: RESULTS_FILE},
  setupFiles: [fileURLToPath(new URL('test/support/record-assertions.ts', import.meta.url))],
} satisfies TestUserConfig

/** Options both runs share. */
export const common = {
  // CLI tests run bin/run.js, which loads dist/: build once before any test file runs.
  globalSetup: ['test/global-setup.ts'],
  // oclif commands write straight to stdout; keep vitest from swallowing it.
  disableConsoleIntercept: true,
  testTimeout: 60_000,
  hookTimeout: 120_000,
} satisfies TestUserConfig

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...AFTER_RUN],
    ...common,
    ...recordRun,
  },
})
