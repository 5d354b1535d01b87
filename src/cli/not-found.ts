// oclif's command_not_found hook: an unknown command is a usage error (exit 2, src/cli/base.ts),
// not @oclif/plugin-not-found's exit 127, and with --json it prints one JSON object like every
// command. The closest command is suggested, never run: a typo must not run something else.

import type {Hook} from '@oclif/core'
import {EXIT} from './base.js'

/** Levenshtein distance: few and short command IDs, so the plain dynamic program will do. */
function distance(a: string, b: string): number {
  let row = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]!
}

const hook: Hook.CommandNotFound = async function (opts) {
  const ids = opts.config.commands.filter((c) => !c.hidden).map((c) => c.id)
  const closest = [...ids].sort((a: string, b: string) => distance(opts.id, a) - distance(opts.id, b))[0]
  const spaced = (id: string) => id.replaceAll(':', ' ')
  const message =
    `${spaced(opts.id)} is not a ${opts.config.bin} command` +
    (closest ? `; did you mean ${spaced(closest)}?` : '') +
    ` Run ${opts.config.bin} --help for the list.`
  process.exitCode = EXIT.usage
  if (opts.argv?.includes('--json') || process.argv.includes('--json'))
    process.stdout.write(JSON.stringify({status: 'error', error: {code: 'USAGE', message}}) + '\n')
  else process.stderr.write(`mwp: ${message}\n`)
}

export default hook

/**
 * oclif's init hook: a bare topic (`mwp mission`) shows the topic's help, which with --json would
 * be text on stdout and exit 0. With --json it is a usage error instead (exit 2), one JSON object
 * listing the topic's commands; without, oclif goes on to show the help.
 */
export const bareTopic: Hook.Init = async function (opts) {
  const {config, id} = opts
  if (id === undefined || !opts.argv.includes('--json')) return
  if (opts.argv.some((a) => a === '--help' || a === '-h')) return // help asked for: oclif shows it
  if (config.findCommand(id) || !config.findTopic(id)) return
  const spaced = (c: string) => c.replaceAll(':', ' ')
  const commands = config.commands
    .filter((c) => !c.hidden && c.id.startsWith(`${id}:`))
    .map((c) => `${config.bin} ${spaced(c.id)}`)
    .sort()
  const message = `${spaced(id)} is a topic: give one of its commands (${config.bin} ${spaced(id)} --help says what each does)`
  process.stdout.write(JSON.stringify({status: 'error', error: {code: 'USAGE', message, commands}}) + '\n')
  this.exit(EXIT.usage) // oclif ends quietly with this code instead of showing the help
}
