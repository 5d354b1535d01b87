// A setup file of every recorded run (vitest.config.ts): stores in each test's meta how many
// expect() assertions it made and whether it was an it.fails test, so the JSON results that
// `mwp conformance behavior` reads can tell a test that proved something from one that merely
// did not throw (an empty body, or checks through node:assert) or passed by failing.

import {afterEach, expect} from 'vitest'

declare module 'vitest' {
  interface TaskMeta {
    /** expect() calls of the test body and its hooks; absent when the test did not run. */
    assertionCalls?: number
    expectedToFail?: boolean
  }
}

afterEach(({task, expect: local}) => {
  // vitest resets the global expect's count before each test; a test using its context's expect
  // counts there instead (read here, that one starts at zero when the test never touched it).
  // Concurrent tests must use the context's expect, as vitest itself requires for them.
  task.meta.assertionCalls = expect.getState().assertionCalls + local.getState().assertionCalls
  if (task.fails) task.meta.expectedToFail = true
})
