// The base of the operator commands: MwpCommand (one --json envelope, exit codes) plus an
// OperatorContext that is always closed, so a run never leaves a store or socket open.

import {type ExitCodes, MwpCommand, type Outcome} from '../cli/base.js'
import {OperatorContext, type OperatorFlags} from './cli-context.js'

export abstract class OperatorCommand extends MwpCommand {
  /** Runs `body` with a context built from the parsed flags and closes it afterwards. */
  protected async withContext(
    flags: OperatorFlags,
    body: (ctx: OperatorContext) => Promise<Outcome>,
  ): Promise<Outcome> {
    const ctx = OperatorContext.load(flags)
    try {
      return await body(ctx)
    } finally {
      await ctx.close()
    }
  }
}

const NOT_VISIBLE =
  'the Group is unknown or not visible to you (GROUP_NOT_FOUND), or the command needs Group history outside your visibility (AUTH_FORBIDDEN, §8)'

/** Exit codes of a command that sends a Command to the authority. */
export const SENDING_CODES = {
  rejected: `the authority refused the Command (the wire code is printed); or ${NOT_VISIBLE}`,
  environment: 'cannot read the configuration or a key, cannot reach the authority',
} as const satisfies ExitCodes

/** Exit codes of a command that only reads a Group. */
export const READING_CODES = {...SENDING_CODES, rejected: NOT_VISIBLE} as const satisfies ExitCodes
