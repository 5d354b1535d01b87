// Per-thread CPU accounting for the wire bench (Linux /proc; empty elsewhere). On a machine with
// fewer free cores than busy threads, latency includes the time a thread waits for a core: the
// bench prints both, so a slow figure can be told apart from a busy machine.

import {readFileSync, readdirSync, readlinkSync} from 'node:fs'

/** This thread's OS thread ID ('' where /proc is missing). */
export function threadId(): string {
  try {
    return readlinkSync('/proc/thread-self').split('/').pop()!
  } catch {
    return ''
  }
}

/** Per thread ID: [nanoseconds on a CPU, nanoseconds runnable but waiting for one]. */
export function threadTimes(): Map<string, [number, number]> {
  const times = new Map<string, [number, number]>()
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const [run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number)
      times.set(tid, [run!, wait!])
    }
  } catch {
    // not Linux: no per-thread figures
  }
  return times
}

/** "server 0.75/0.23, subscribers …, other threads …" over `seconds`: the named threads, then the rest together (V8's GC and compiler helpers, libuv's pool, the store's writer). */
export function threadUse(
  before: Map<string, [number, number]>,
  after: Map<string, [number, number]>,
  seconds: number,
  names: Record<string, string>,
): string {
  const use = new Map<string, [number, number]>()
  for (const [tid, [run, wait]] of after) {
    const [run0, wait0] = before.get(tid) ?? [0, 0]
    const name = names[tid] ?? 'other threads'
    const [r, w] = use.get(name) ?? [0, 0]
    use.set(name, [r + (run - run0) / 1e9 / seconds, w + (wait - wait0) / 1e9 / seconds])
  }
  return [...use].map(([name, [r, w]]) => `${name} ${r.toFixed(2)}/${w.toFixed(2)}`).join(', ')
}
