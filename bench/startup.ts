// MWP_BENCH_ONLY=startup (issue #18): the CPU time (user + sys) of one `mwp --version` and of one
// `mwp verify` of a signed document, next to `node -e 0` measured in the same run (the primitive:
// what starting Node costs at all). The three run interleaved, round after round, so a busy moment
// of the machine weighs on all of them alike; the figures are medians.
//
// Each child's CPU time comes from bash's `times` builtin, which reports the rusage of the shell's
// waited-for children (the one node process) to the millisecond; Node itself exposes only its
// own. Goals: --version under 2× and verify under 3× the primitive.

import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {packageRoot} from '../src/schema/catalog.js'

const ROUNDS = Number(process.env.MWP_BENCH_STARTUP_ROUNDS ?? 20)
const root = packageRoot()
const run = join(root, 'bin/run.js')

const subjects: {name: string; args: string[]; goal?: number}[] = [
  {name: 'node -e 0', args: ['-e', '0']},
  {name: 'mwp --version', args: [run, '--version'], goal: 2},
  {
    name: 'mwp verify (one signed Command)',
    args: [
      run,
      'verify',
      '--registry',
      join(root, 'fixtures/registry.json'),
      join(root, 'fixtures/documents/command.json'),
    ],
    goal: 3,
  },
]

/** The CPU seconds (user + sys) of one `node ...args` run; throws if it does not exit 0. */
function cpuSeconds(args: string[]): number {
  // `times` prints the shell's own line, then its children's: "0m0.041s 0m0.008s".
  const r = spawnSync('bash', ['-c', '"$@" >/dev/null; rc=$?; times; exit $rc', 'bash', process.execPath, ...args], {
    encoding: 'utf8',
  })
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr}`)
  const children = r.stdout.trim().split('\n').at(-1)!
  const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map(([, m, s]) => Number(m) * 60 + Number(s))
  if (seconds.length !== 2) throw new Error(`unexpected output of times: ${r.stdout}`)
  return Math.round((seconds[0] + seconds[1]) * 1000) / 1000
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

export function runStartupBench(): void {
  const samples = subjects.map(() => [] as number[])
  for (const s of subjects) cpuSeconds(s.args) // warm the file cache
  for (let round = 0; round < ROUNDS; round++) subjects.forEach((s, i) => samples[i].push(cpuSeconds(s.args)))
  const medians = samples.map(median)
  const base = medians[0]
  console.log(`\nCLI start-up, CPU time (user + sys) per run, median of ${ROUNDS} interleaved rounds`)
  console.log(`  ${subjects[0].name.padEnd(34)} ${(base * 1000).toFixed(0).padStart(5)} ms (the primitive)`)
  const results = subjects.slice(1).map((s, j) => {
    const ms = medians[j + 1] * 1000
    const ratio = medians[j + 1] / base
    console.log(
      `  ${s.name.padEnd(34)} ${ms.toFixed(0).padStart(5)} ms   ratio ${ratio.toFixed(2)}   goal < ${s.goal}: ${ratio < s.goal! ? 'met' : 'NOT met'}`,
    )
    return {id: s.name, cpuMs: ms, baselineCpuMs: base * 1000, ratio: Number(ratio.toFixed(3)), goal: s.goal}
  })
  console.log(JSON.stringify({bench: 'startup', rounds: ROUNDS, results}))
}
