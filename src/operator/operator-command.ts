// The base of the operator commands: MwpCommand (one --json envelope, exit codes) plus an
// OperatorContext that is always closed, so a run never leaves a store or socket open.

import {MwpCommand, type Outcome} from '../cli/base.js'
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

export const OPERATOR_EXIT_CODES = `EXIT CODES
  0  success
  1  rejected: the authority refused the Command, the Group is unknown or not visible to you
     (GROUP_NOT_FOUND), or the command needs Group history outside your visibility
     (AUTH_FORBIDDEN, §8); the wire code is printed
  2  usage error (bad flags or arguments)
  3  environment error (cannot read the configuration or a key, cannot reach the authority)`
