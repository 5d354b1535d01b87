// The interactive questions of the commands that cannot be undone: signing an Approval, a
// terminal Command (mission cancel), a permanent registry record (registry revoke, expire). Only
// asked on a TTY without --json; every such command has --yes, which answers it for scripts, and
// without either it refuses before anything is read, sent or written. The default answer is No: an accidental Enter must never sign or end anything.

import {Flags} from '@oclif/core'
import {confirm} from '@inquirer/prompts'
import {usage} from './base.js'

export const yesFlag = (what: string) =>
  Flags.boolean({description: `${what} without asking (for scripts; needed off a terminal).`, default: false})

/** A usage error (exit 2) when the run can neither ask (no TTY, or --json) nor was told --yes. */
export function requireConfirmation(flags: {yes: boolean; json: boolean}, doing: string): void {
  if (!flags.yes && !(process.stdin.isTTY && !flags.json))
    throw usage(`${doing} needs a confirmation: run on a terminal without --json, or pass --yes`)
}

/** --yes, or the operator's answer to `message` (default No). Ctrl-C rejects: exit 130 (src/cli/base.ts). */
export async function confirmed(flags: {yes: boolean}, message: string): Promise<boolean> {
  return flags.yes || confirm({message, default: false})
}

export function approvalQuestion(missionId: string, revision: number): {message: string; default: boolean} {
  return {message: `Approve revision ${revision} of ${missionId} with your signature?`, default: false}
}
