// The checks as a program, for the Coordinator: `node dist/src/poc/work/check.js <check> <dir>`
// prints the CheckResult as one JSON line on stdout and exits 0 when it passed, 1 when it failed,
// 2 on a usage error (unknown check, missing directory).

import {stat} from 'node:fs/promises'
import type {CheckResult} from './check-result.js'
import {CHECKS, isCheckName} from './checks.js'

const USAGE = `usage: check <${Object.keys(CHECKS).join('|')}> <dir>`

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  )
}

async function main(args: readonly string[]): Promise<number> {
  const [name, dir, ...rest] = args
  if (name === undefined || dir === undefined || rest.length > 0) {
    process.stderr.write(`${USAGE}\n`)
    return 2
  }
  if (!isCheckName(name)) {
    process.stderr.write(`unknown check ${name}\n${USAGE}\n`)
    return 2
  }
  if (!(await isDirectory(dir))) {
    process.stderr.write(`no directory ${dir}\n${USAGE}\n`)
    return 2
  }
  // A check that throws (an unreadable file, say) still answers in one line: failed, and why.
  const result = await CHECKS[name](dir).catch((e: unknown): CheckResult => ({
    check: name,
    passed: false,
    measured: {crashed: true},
    detail: e instanceof Error ? e.message : String(e),
  }))
  process.stdout.write(`${JSON.stringify(result)}\n`)
  return result.passed ? 0 : 1
}

process.exitCode = await main(process.argv.slice(2))
