// `mwp poc run --self-test`: the proof of concept run again against deliberately broken runtimes
// (src/mutants.ts), each a whole run of real processes with MWP_POC_MUTANT naming the one
// behaviour it breaks. A mutant is caught when at least one check fails; the result names which.
// A check suite that lets a broken runtime pass proves nothing about the real one.

import {MUTANTS, type Mutant} from '../mutants.js'
import type {SelfTestResult} from './report/trace.js'
import {runPoc} from './run.js'

export interface SelfTestOptions {
  seed: number
  /** Runs at once (each takes about one core). */
  parallel?: number
  /** Per broken run: a stalled one gives up after this (its checks then say what did not happen). */
  timeoutMs?: number
  progress?: (line: string) => void
  /** Only these mutants (default all). */
  only?: Mutant[]
}

export async function selfTest(o: SelfTestOptions): Promise<SelfTestResult[]> {
  const names = o.only ?? (Object.keys(MUTANTS) as Mutant[])
  const results: SelfTestResult[] = []
  let next = 0
  const worker = async () => {
    for (;;) {
      const i = next++
      const mutant = names[i]
      if (mutant === undefined) return
      const run = await runPoc({
        seed: o.seed,
        env: {MWP_POC_MUTANT: mutant},
        timeoutMs: o.timeoutMs ?? 150_000,
      })
      const caughtBy = run.trace.checks.filter((c) => !c.passed).map((c) => c.id)
      o.progress?.(`self-test: ${mutant} — ${caughtBy.length > 0 ? `caught by ${caughtBy.join(', ')}` : 'NOT CAUGHT'}`)
      results[i] = {mutant, description: MUTANTS[mutant], caughtBy}
    }
  }
  await Promise.all(Array.from({length: Math.max(1, o.parallel ?? 2)}, worker))
  return results
}
