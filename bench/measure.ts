// The one timing loop of `npm run bench`: a synchronous operation run repeatedly for about
// `seconds`, with per-call latency.

export interface Figure {
  name: string
  opsPerSec: number
  p50us: number
  p99us: number
}

export const benchSeconds = () => Number(process.env.MWP_BENCH_SECONDS ?? 2)

/** Runs fn repeatedly for about `seconds`, in batches, and records per-call latency. */
export function measure(name: string, fn: () => unknown, seconds = benchSeconds()): Figure {
  for (let i = 0; i < 200; i++) fn() // warm up (JIT, caches)
  const samples: number[] = []
  const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9))
  let calls = 0
  const start = process.hrtime.bigint()
  while (process.hrtime.bigint() < deadline) {
    const t0 = process.hrtime.bigint()
    fn()
    samples.push(Number(process.hrtime.bigint() - t0))
    calls++
  }
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9
  samples.sort((a, b) => a - b)
  return {
    name,
    opsPerSec: calls / elapsed,
    p50us: percentile(samples, 0.5) / 1000,
    p99us: percentile(samples, 0.99) / 1000,
  }
}

/** The p-quantile of ascending samples. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
}

export const fmt = (n: number) => n.toLocaleString('en-US', {maximumFractionDigits: 0})
