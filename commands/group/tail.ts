import {Args, Flags} from '@oclif/core'
import {formerly, repeatable} from '../../src/cli/flags.js'
import type {Outcome} from '../../src/cli/base.js'
import type {ErrorCode} from '../../src/errors.js'
import {environment, exitCodesHelp} from '../../src/cli/base.js'
import {type OperatorContext, operatorFlags} from '../../src/operator/cli-context.js'
import {OperatorCommand, READING_CODES} from '../../src/operator/operator-command.js'
import {EventLines} from '../../src/operator/event-lines.js'
import {tableStyle} from '../../src/cli/output.js'
import type {EventDoc} from '../../src/operator/transport.js'

/** The longest wait between two reconnection attempts of --follow. */
const RECONNECT_MAX_DELAY_MS = 5000

export default class GroupTail extends OperatorCommand {
  static summary = "Print a Group's Events in order; --follow keeps printing new ones."
  static description = `Each Event is the verified signed document. Output is NDJSON (one Event per line) when stdout is not a terminal, with --json or with --output ndjson; on a terminal (or with --output text) it is one readable line per Event: sequence, time (UTC), who, what happened, and the goal of the WorkItem it names, cut to the terminal width. --event-kind filters by Event kind (repeatable; a prefix ending in . matches a family, e.g. work.). --follow runs until interrupted (Ctrl-C, exit 0): when the connection to the server is lost (a restart) it reconnects with backoff, saying so on stderr, and resumes right after the last sequence it printed.

${exitCodesHelp({...READING_CODES, environment: 'cannot read the configuration or a key, cannot reach the authority at the start'})}`

  static examples = [
    '<%= config.bin %> group tail G',
    '<%= config.bin %> group tail G --after 10 --event-kind work. --follow',
    '<%= config.bin %> group tail G | jq .kind',
  ]
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {
    ...operatorFlags,
    after: Flags.integer({description: 'Start after this Group sequence.', default: 0, min: 0}),
    follow: Flags.boolean({char: 'f', description: 'Keep printing new Events until interrupted.', default: false}),
    'event-kind': Flags.string({
      ...repeatable,
      ...formerly('kind'),
      delimiter: ',',
      description: 'Only these Event kinds (repeat the flag, or separate with commas; "work." matches a family).',
    }),
    output: Flags.string({
      description:
        'text: one readable line per Event; ndjson: the verified Events. Default: text on a terminal, ndjson when piped (and with --json).',
      options: ['text', 'ndjson'],
    }),
  }

  /** Set once Events are streamed: NDJSON is then the whole output, so no envelope follows. */
  #streamed = false

  protected printJson(value: unknown): void {
    if (this.#streamed && (value as {status?: string}).status === 'ok') return
    super.printJson(value)
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(GroupTail)
    const ndjson = flags.json || (flags.output ?? (process.stdout.isTTY ? 'text' : 'ndjson')) === 'ndjson'
    const lines = new EventLines()
    // A tail that starts after sequence 1 has not seen the work.authorized Events that name the
    // goals: they come from the WorkItems folded up to now, once, before the first line.
    const learnGoals = async (ctx: OperatorContext) => {
      if (!ndjson && flags.after > 0) lines.learn((await ctx.work(args.group)).workItems)
    }
    const text = (e: EventDoc) => {
      const style = tableStyle('table') // the terminal's width when stdout is one, else uncut
      return lines.line(e, style.format === 'table' ? style.columns : undefined)
    }
    const wanted = (e: EventDoc) =>
      !flags['event-kind'] || flags['event-kind'].some((k) => (k.endsWith('.') ? e.kind.startsWith(k) : e.kind === k))
    let printed = 0
    let last = flags.after
    const print = (e: EventDoc) => {
      last = e.sequence
      if (!wanted(e)) {
        if (!ndjson) lines.learnFrom(e) // a goal is named in an Event --event-kind may leave out
        return
      }
      printed++
      process.stdout.write((ndjson ? JSON.stringify(e) : text(e)) + '\n')
    }
    return this.withContext(flags, async (ctx) => {
      if (!flags.follow) {
        // An unknown Group, or one not visible to this principal, is GROUP_NOT_FOUND (one answer
        // for both, §17.2), whatever --after says; --follow reports it the same way.
        await learnGoals(ctx)
        for (const e of await ctx.events(args.group, flags.after)) print(e)
        this.#streamed = true
        return {status: 'ok', result: null}
      }
      // Runs until interrupted, or until the peer ends the subscription (its code is the outcome).
      // A lost connection is retried with backoff for as long as it takes (a restarting server):
      // the client resubscribes from its Cursor and drops what it already delivered, so the
      // output resumes right after the last printed sequence, with no gap and no duplicate.
      let end = (_why: ErrorCode | 'interrupted' | 'gave-up') => {}
      const ended = new Promise<ErrorCode | 'interrupted' | 'gave-up'>((resolve) => (end = resolve))
      process.once('SIGINT', () => end('interrupted'))
      process.once('SIGTERM', () => end('interrupted'))
      const transport = await ctx.transport({
        reconnect: {maxDelayMs: RECONNECT_MAX_DELAY_MS},
        onConnection: (state, attempt) => {
          if (state === 'gave-up') return end('gave-up')
          process.stderr.write(
            state === 'lost'
              ? `mwp: connection to the authority lost after sequence ${last}\n`
              : state === 'retrying'
                ? `mwp: reconnecting (attempt ${attempt})\n`
                : `mwp: reconnected; resuming after sequence ${last}\n`,
          )
        },
      })
      await learnGoals(ctx) // on the reconnecting transport just opened
      let sub
      try {
        sub = await transport.follow(args.group, flags.after, print, (code) => end(code))
      } catch (e) {
        throw environment(`cannot follow ${args.group} on ${transport.target}: ${(e as Error).message}`)
      }
      const code = await ended
      await sub.close()
      process.stderr.write(`mwp: ${printed} Event(s), last sequence ${last}\n`)
      if (code === 'gave-up') throw environment(`gave up reconnecting to ${transport.target}`)
      this.#streamed = true
      return code === 'interrupted' ? {status: 'ok', result: null} : {status: 'rejected', code}
    })
  }
}
