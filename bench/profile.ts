// Optional CPU profile of one measured window (MWP_BENCH_PROFILE=DIR): the live phase of a bench
// scenario only, without the setup around it, written as DIR/<name>.cpuprofile (Chrome DevTools
// format). Profiling slows the process down: figures from a profiled run are not the bench's.

import {Session} from 'node:inspector/promises'
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

const DIR = process.env.MWP_BENCH_PROFILE

export async function profiled<T>(name: string, window: () => Promise<T>): Promise<T> {
  if (!DIR) return window()
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.start')
  try {
    return await window()
  } finally {
    const {profile} = await session.post('Profiler.stop')
    mkdirSync(DIR, {recursive: true})
    writeFileSync(join(DIR, `${name.replace(/[^A-Za-z0-9]+/g, '-')}.cpuprofile`), JSON.stringify(profile))
    session.disconnect()
  }
}
