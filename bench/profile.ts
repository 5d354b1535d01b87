// Optional profiles of one measured window: the live phase of a bench scenario only, without the
// setup around it. Profiling slows the process down: figures from a profiled run are not the bench's.
//
// MWP_BENCH_PROFILE=DIR — V8's CPU profile of the main thread, DIR/<name>.cpuprofile (Chrome
//   DevTools format). It samples wall time: on a machine with fewer free cores than busy threads,
//   a call that wakes another thread (a socket write, a thread-pool job) also gets the time this
//   thread then waits for a core.
// MWP_BENCH_PERF=DIR — `perf record` of every thread of the process, DIR/<name>.perf.data: CPU
//   time only, per thread (`perf report -i FILE --tid TID --no-children --sort dso,sym`). Run node
//   with --perf-basic-prof to name JavaScript frames. Needs Linux perf; without it, says so and
//   records nothing.
// MWP_BENCH_HEAP=DIR — V8's sampling heap profile of the main thread, DIR/<name>.heapprofile: where
//   the window's allocations were made (every 32 KB sampled), the ones the GC already collected
//   included, so it shows what makes the collector run rather than what stays alive.

import {spawn} from 'node:child_process'
import {once} from 'node:events'
import {Session} from 'node:inspector/promises'
import {mkdirSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'

const PROFILE_DIR = process.env.MWP_BENCH_PROFILE
const PERF_DIR = process.env.MWP_BENCH_PERF
const HEAP_DIR = process.env.MWP_BENCH_HEAP

const fileName = (name: string) => name.replace(/[^A-Za-z0-9]+/g, '-')

export async function profiled<T>(name: string, window: () => Promise<T>): Promise<T> {
  let run = window
  if (HEAP_DIR) {
    const sampling = {
      samplingInterval: 32 * 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    }
    run = inspected(
      join(HEAP_DIR, `${fileName(name)}.heapprofile`),
      'HeapProfiler',
      ['startSampling', sampling],
      'stopSampling',
      run,
    )
  }
  if (PERF_DIR) run = perfRecorded(PERF_DIR, name, run)
  if (PROFILE_DIR)
    run = inspected(join(PROFILE_DIR, `${fileName(name)}.cpuprofile`), 'Profiler', ['start', {}], 'stop', run)
  return run()
}

/** `window` inside an inspector session of this thread: the domain's `start` before it, `stop` after it, whose profile goes to `file`. */
function inspected<T>(
  file: string,
  domain: string,
  start: [string, object],
  stop: string,
  window: () => Promise<T>,
): () => Promise<T> {
  return async () => {
    const session = new Session()
    session.connect()
    await session.post(`${domain}.enable`)
    await session.post(`${domain}.${start[0]}`, start[1])
    try {
      return await window()
    } finally {
      const {profile} = (await session.post(`${domain}.${stop}`)) as unknown as {profile: unknown}
      mkdirSync(dirname(file), {recursive: true})
      writeFileSync(file, JSON.stringify(profile))
      session.disconnect()
    }
  }
}

function perfRecorded<T>(dir: string, name: string, window: () => Promise<T>): () => Promise<T> {
  return async () => {
    mkdirSync(dir, {recursive: true})
    const perf = spawn(
      'perf',
      ['record', '-F', '999', '-p', String(process.pid), '-o', join(dir, `${fileName(name)}.perf.data`)],
      {stdio: 'ignore'},
    )
    const started = await new Promise<boolean>((resolve) =>
      perf.once('spawn', () => resolve(true)).once('error', () => resolve(false)),
    )
    if (!started) console.error('MWP_BENCH_PERF: cannot run perf; no record written')
    try {
      return await window()
    } finally {
      if (started) {
        perf.kill('SIGINT') // perf writes its file and exits
        await once(perf, 'exit')
      }
    }
  }
}
