// The second run of `npm test`: the tests that read the results the first run (vitest.config.ts)
// just wrote. It records nothing itself, so those results stay the whole suite's.

import {defineConfig} from 'vitest/config'
import {AFTER_RUN, common} from './vitest.config.js'

export default defineConfig({test: {include: AFTER_RUN, ...common}})
