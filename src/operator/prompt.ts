// The one interactive question of the operator commands. Only asked on a TTY without --json;
// every caller has a flag (--yes) that answers it for scripts. The default answer is No: an
// accidental Enter must never sign an Approval.

import {confirm} from '@inquirer/prompts'

export function approvalQuestion(missionId: string, revision: number): {message: string; default: boolean} {
  return {message: `Approve revision ${revision} of ${missionId} with your signature?`, default: false}
}

export async function confirmApproval(missionId: string, revision: number): Promise<boolean> {
  return confirm(approvalQuestion(missionId, revision))
}
