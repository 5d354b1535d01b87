import {Args, Flags} from '@oclif/core'
import {repeatable} from '../../src/cli/flags.js'
import {type Outcome, usage, exitCodesHelp} from '../../src/cli/base.js'
import {buildFinalApproval} from '../../src/operator/command-builder.js'
import {operatorFlags, submissionOutcome} from '../../src/operator/cli-context.js'
import {OperatorCommand, SENDING_CODES} from '../../src/operator/operator-command.js'
import {messageFlag} from '../../src/cli/flags.js'
import {approvalQuestion, confirmed, requireConfirmation, yesFlag} from '../../src/cli/prompt.js'
import {tableStyle} from '../../src/cli/output.js'
import {renderSubmission, renderWorkEvidence} from '../../src/operator/render.js'
import {inspectFolded} from '../../src/operator/views.js'

export default class MissionApprove extends OperatorCommand {
  static summary =
    'Review the submitted revision, its Artifact set and Evidence, and approve it with your own signature.'
  static description = `Shows what the Coordinator submitted (revision, Artifact hashes, the WorkItems that produced them, the acceptance criteria and the Evidence they require) and asks for confirmation. The final Approval (§7.3) is signed locally with your key and names exactly the submitted revision and Artifact set; mission.approve carries it, guarded by the revision you reviewed.

The prompt appears only on a terminal without --json; scripts pass --yes (without it, a non-interactive run is a usage error, exit 2).

A child Mission whose approval policy asks for final human approval (§14) is approved by its own MissionOwner with the root human MissionOwner's Approval beside it: the root human runs this command with --sign-only and hands the printed Approval over; the child's MissionOwner passes that file as --root-approval.

${exitCodesHelp({...SENDING_CODES, usage: 'not on a terminal (or with --json) without --yes; nothing awaits approval', cancelled: true})}`

  static examples = [
    '<%= config.bin %> mission approve G',
    '<%= config.bin %> mission approve G --yes --message "Reviewed the release notes." --json',
    '<%= config.bin %> mission approve CHILD --sign-only --yes > root-approval.json',
    '<%= config.bin %> mission approve CHILD --key coordinator.key.json --root-approval root-approval.json --yes',
  ]
  static args = {group: Args.string({description: 'Group ID.', required: true})}
  static flags = {
    ...operatorFlags,
    yes: yesFlag('Approve'),
    message: messageFlag('Comments on the revision', "the Approval's comments", 'comments', false),
    condition: Flags.string({...repeatable, description: 'A condition recorded in the Approval (repeatable).'}),
    'sign-only': Flags.boolean({
      description:
        "Print the signed Approval instead of sending it: the root human's Approval of a child Mission, for its MissionOwner's --root-approval.",
      default: false,
      exclusive: ['root-approval'],
    }),
    'root-approval': Flags.string({
      description:
        "The root human MissionOwner's signed Approval (a file from --sign-only, or - for stdin), for a child Mission whose approval policy asks for it.",
    }),
  }

  protected async execute(): Promise<Outcome> {
    const {args, flags} = await this.parse(MissionApprove)
    requireConfirmation(flags, 'approving')
    const rootApproval =
      flags['root-approval'] === undefined
        ? undefined
        : await this.readJsonObject(flags['root-approval'], '--root-approval', 'one signed Approval')
    return this.withContext(flags, async (ctx) => {
      const {events, state} = await ctx.folded(args.group, 'mission approve')
      const view = inspectFolded(state, events)
      if (view.submission === null)
        throw usage(`Mission ${view.missionId} has nothing awaiting approval (state ${view.state})`)
      // §13.2 step 5: the Evidence the WorkItems were submitted with is retained for this Approval.
      // With --sign-only stdout carries the Approval alone (for a file); the review goes to stderr.
      const out = flags['sign-only'] ? process.stderr : process.stdout
      const style = tableStyle(undefined, out)
      const evidence = view.workEvidence.length > 0 ? [renderWorkEvidence(view.workEvidence, style)] : []
      const review = [renderSubmission(view.submission, style), ...evidence].join('\n')
      if (!flags.json) out.write(`Mission ${view.missionId}: ${view.objective}\n${review}\n`)
      if (!(await confirmed(flags, approvalQuestion(view.missionId, view.submission.missionRevision).message))) {
        return {status: 'ok', result: {approved: false, submission: view.submission}, text: 'not approved'}
      }
      const approval = buildFinalApproval(ctx.key(), state, {
        ...(flags.message ? {comments: flags.message} : {}),
        ...(flags.condition ? {conditions: flags.condition} : {}),
      })
      if (flags['sign-only']) return {status: 'ok', result: {approval}, text: JSON.stringify(approval, null, 2)}
      const built = ctx.build({
        kind: 'mission.approve',
        groupId: args.group,
        payload: {approval, ...(rootApproval ? {rootApproval} : {})},
        state,
        expectedRevision: state.revision,
      })
      return submissionOutcome(
        await ctx.send(built.bytes),
        {groupId: args.group, approved: true, approvalId: approval.approvalId, submission: view.submission},
        (r) =>
          `approved revision ${view.submission!.missionRevision} (Approval ${String(approval.approvalId)}, Event sequence ${String(r.lastSequence)})`,
      )
    })
  }
}
