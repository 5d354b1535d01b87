// The base of every `mwp` command: one --json envelope, documented exit codes, stdin as `-`.
//
// Exit codes: 0 ok; 1 the document or command was rejected (the wire code is printed);
// 2 usage error; 3 environment error (unreadable file, unreachable service); 4 internal error (a
// bug: anything thrown that is not an MwpError); 130 cancelled at a prompt (Ctrl-C, 128 + SIGINT
// as shells report it). An MwpError thrown from execute() exits by its code's category
// (src/errors.ts categoryOf): a wire code is a rejection, a local code a usage or environment error.
// With --json, stdout carries exactly one JSON object: {status: "ok", result} on success,
// {status: "rejected", error} for a rejection (a protocol error object, schemas/error.schema.json),
// {status: "error", error: {code: "USAGE" | "ENVIRONMENT" | "INTERNAL" | "CANCELLED", message}}
// otherwise. Each command documents what its codes mean for it (exitCodesHelp below).

import {Command, Flags} from '@oclif/core'
import {readFileSync} from 'node:fs'
import {parseJsonBytes} from '../json/parse.js'
import {
  type CliErrorCode,
  type ErrorCategory,
  type ErrorCode,
  type ErrorDetails,
  MwpError,
  type ProtocolError,
  isErrorCode,
  protocolError,
} from '../errors.js'

export const EXIT = {
  ok: 0,
  rejected: 1,
  usage: 2,
  environment: 3,
  internal: 4,
  cancelled: 130,
} as const satisfies Record<'ok' | ErrorCategory | 'internal' | 'cancelled', number>

/**
 * What a command's exit codes mean for that command: `rejected` only for a command that can be
 * rejected (omitted: it never exits 1), `environment` when it touches files or services, `usage`
 * for what is checked beyond the flags' own syntax, `cancelled` for a command that prompts.
 */
export interface ExitCodes {
  rejected?: string
  usage?: string
  environment?: string
  cancelled?: boolean
}

/** The EXIT CODES section of a command's --help, from its own table (see ExitCodes). */
export function exitCodesHelp(codes: ExitCodes): string {
  const rows: [number, string][] = [
    [EXIT.ok, 'success'],
    ...(codes.rejected ? [[EXIT.rejected, `rejected: ${codes.rejected}`] as [number, string]] : []),
    [EXIT.usage, `usage error: bad flags or arguments${codes.usage ? `; ${codes.usage}` : ''}`],
    ...(codes.environment ? [[EXIT.environment, `environment error: ${codes.environment}`] as [number, string]] : []),
    [EXIT.internal, 'internal error (a bug in mwp; the stack is printed on stderr)'],
    ...(codes.cancelled ? [[EXIT.cancelled, 'cancelled at the prompt (Ctrl-C)'] as [number, string]] : []),
  ]
  return `EXIT CODES\n${rows.map(([code, text]) => `  ${String(code).padEnd(3)}  ${text}`).join('\n')}`
}

/** The table of a command that checks a signed document (verify, sign, admit, …). */
export const EXIT_CODES_HELP = exitCodesHelp({
  rejected: 'the document or command failed verification (the wire code is printed)',
  environment: 'cannot read a file, cannot reach a service',
})

/** A failure the command reports itself; thrown from execute(). Its code is its category. */
export class CliFailure extends MwpError<CliErrorCode> {}

/**
 * A rejection found before anything is sent (e.g. GROUP_NOT_FOUND for a Group this principal
 * cannot read); thrown from deep in execute() and reported like a returned rejected Outcome.
 */
export class CliRejection extends MwpError<ErrorCode> {
  constructor(
    code: ErrorCode,
    readonly note?: string,
  ) {
    super(code, note ?? code)
  }
}

export const usage = (message: string, options?: ErrorOptions): CliFailure => new CliFailure('usage', message, options)
export const environment = (message: string, options?: ErrorOptions): CliFailure =>
  new CliFailure('environment', message, options)

/** The environment error (exit 3) for a failed read of a file argument (`-`: stdin). */
export const readFailure = (path: string, e: unknown): CliFailure =>
  environment(
    `cannot read ${path === '-' ? 'standard input' : path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    {cause: e},
  )

/** What execute() returns: a result to print, or a rejection carrying a wire code. */
export type Outcome =
  | {status: 'ok'; result: unknown; text?: string}
  | {
      status: 'rejected'
      code: ErrorCode
      /** stdout text; defaults to the wire code alone. */
      text?: string
      /** A note for the local operator on stderr (never protocol diagnostics sent to a peer). */
      note?: string
      /** What the authority told the sender (a semantic refusal): kept in the --json error object. */
      details?: ErrorDetails
      /** Extra members of the --json envelope. */
      extra?: Record<string, unknown>
    }
  /**
   * execute() has already written its whole stdout (one JSON object with --json) as results came,
   * e.g. `mwp verify --ndjson`; only the exit code is left.
   */
  | {status: 'streamed'; exit: 'ok' | ErrorCategory}

export abstract class MwpCommand extends Command {
  static baseFlags = {
    json: Flags.boolean({
      description: 'Print exactly one JSON object {status, result|error} on stdout.',
      default: false,
    }),
  }

  protected abstract execute(): Promise<Outcome>

  private wantsJson(): boolean {
    // `--output json` (the listing views, src/operator/output.ts) is the same envelope.
    const at = this.argv.indexOf('--output')
    return (
      this.argv.includes('--json') || this.argv.includes('--output=json') || (at >= 0 && this.argv[at + 1] === 'json')
    )
  }

  async run(): Promise<void> {
    let outcome: Outcome
    try {
      outcome = await this.execute()
    } catch (e) {
      let failure: MwpError
      try {
        failure = asFailure(e)
      } catch {
        return this.reportUnexpected(e instanceof Error ? e : new Error(String(e)))
      }
      const {code} = failure
      if (isErrorCode(code)) {
        const note = failure instanceof CliRejection ? failure.note : failure.message
        return this.report({status: 'rejected', code, ...(note ? {note} : {})})
      }
      const {category} = failure
      process.exitCode = EXIT[category]
      if (this.wantsJson())
        this.printJson({status: 'error', error: {code: category.toUpperCase(), message: failure.message}})
      else process.stderr.write(`mwp: ${failure.message}\n`)
      return
    }
    this.report(outcome)
  }

  /**
   * Not an MwpError: Ctrl-C at a prompt (cancelled, 130) or a bug (internal, 4). Never exit 1,
   * which scripts read as "rejected"; with --json still exactly one object.
   */
  private reportUnexpected(e: Error): void {
    const cancelled = e.name === 'ExitPromptError' || e.name === 'AbortPromptError'
    const kind = cancelled ? 'cancelled' : 'internal'
    const message = cancelled ? 'cancelled at the prompt' : `internal error: ${e.message}`
    process.exitCode = EXIT[kind]
    if (this.wantsJson()) this.printJson({status: 'error', error: {code: kind.toUpperCase(), message}})
    else process.stderr.write(`mwp: ${message}\n`)
    if (!cancelled) process.stderr.write(`${e.stack ?? e.message}\n`)
  }

  private report(outcome: Outcome): void {
    if (outcome.status === 'streamed') {
      process.exitCode = EXIT[outcome.exit]
      return
    }
    if (outcome.status === 'ok') {
      if (this.wantsJson()) this.printJson({status: 'ok', result: outcome.result})
      else if (outcome.text !== undefined)
        process.stdout.write(outcome.text.endsWith('\n') ? outcome.text : outcome.text + '\n')
      return
    }
    process.exitCode = EXIT.rejected
    if (this.wantsJson()) {
      const error: ProtocolError = {...protocolError(outcome.code, undefined, outcome.details)}
      this.printJson({status: 'rejected', error, ...(outcome.note ? {note: outcome.note} : {}), ...outcome.extra})
    } else {
      process.stdout.write((outcome.text ?? outcome.code) + '\n')
      if (outcome.note) process.stderr.write(`mwp: ${outcome.note}\n`)
    }
  }

  protected printJson(value: unknown): void {
    process.stdout.write(JSON.stringify(value) + '\n')
  }

  /**
   * Reads one JSON object from a file argument (`-`: stdin) for `flag`. The strict parser refuses
   * duplicate members and non-finite numbers before anything is signed; what is returned is the
   * plain parse of the same text. `what` names the object in the usage error.
   */
  protected async readJsonObject(
    path: string,
    flag: string,
    what = 'one JSON object',
  ): Promise<Record<string, unknown>> {
    const bytes = await this.readInput(path)
    let parsed: unknown
    try {
      parsed = parseJsonBytes(bytes)
    } catch (e) {
      throw usage(`${flag} ${path}: ${(e as Error).message}`, {cause: e})
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw usage(`${flag} ${path} must hold ${what}`)
    return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>
  }

  /**
   * Reads a file argument; `-` reads all of stdin. Returns the exact bytes. Stdin is read as a
   * stream: readFileSync(0) fails with EAGAIN when stdin is a non-blocking pipe.
   */
  protected async readInput(path: string): Promise<Buffer> {
    try {
      if (path !== '-') return readFileSync(path)
      const chunks: Buffer[] = []
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
      return Buffer.concat(chunks)
    } catch (e) {
      throw readFailure(path, e)
    }
  }
}

/** oclif parse errors are usage errors; an MwpError keeps its code; anything else is a bug (rethrown). */
export function asFailure(e: unknown): MwpError {
  if (e instanceof MwpError) return e
  const err = e as Error & {oclif?: {exit?: number}; code?: string}
  if (
    err?.constructor?.name?.match(/Parse|Flag|Arg|Required|Unexpected|Exclusive|Option|Validation/) ||
    err?.oclif?.exit === 2
  ) {
    return usage(err.message)
  }
  throw e
}
