// The V8 heap setting of a process that serves the wire binding: `mwp authority serve`, and
// bench/wire.ts, which measures its server as that command runs it.
//
// V8 grows the old generation by a factor it picks between 1.1 and 4 after each full collection,
// from how fast it collects against how fast the program allocates. A serving authority allocates
// moderately (about 70 MB/s at 500 Commands/s) and collects its small heap quickly, so V8 picks a
// low factor: on a 20 MB heap promoting 1-2 MB/s, a full mark-compact every 1.3 s. Each one pauses
// the main thread 2-6 ms and runs marking threads that compete for the cores, and the slowest 2 %
// of Command→Event latencies sat on them (bench/wire.ts, 1 Group × 100 subscribers). At V8's own
// upper factor, 4, a full collection comes every tens of seconds for a heap about twice the size
// (under 100 MB there); interleaved bench pairs: p99 median 26.4 → 19.5 ms.
//
// Set at run time with v8.setFlagsFromString: V8 reads this flag at every full collection, so it
// applies from the next one on. A process started with its own --heap-growing-percent keeps it
// (`node --heap-growing-percent=0 bin/run.js authority serve`: V8's own choice again). In the
// bench the server's heap in use after the live window was 36-40 MB instead of 22-26 MB.

import {setFlagsFromString} from 'node:v8'

/** --heap-growing-percent for serving: growing factor 1 + 300 / 100 = 4. */
export const SERVING_HEAP_GROWING_PERCENT = 300

/** Applies SERVING_HEAP_GROWING_PERCENT unless the process was started with its own; returns the setting in force. */
export function tuneHeapForServing(execArgv: readonly string[] = process.execArgv): string {
  const own = execArgv.find((a) => /^--heap[-_]growing[-_]percent(=|$)/.test(a))
  if (own !== undefined) return own
  const flag = `--heap-growing-percent=${SERVING_HEAP_GROWING_PERCENT}`
  setFlagsFromString(flag)
  return flag
}
