// The console's actions: each one a normal Command, built and signed in this process with the
// operator's key by the same builder the CLI uses (OperatorContext.build, command-builder.ts) and
// sent through the same transport (OperatorContext.send). The epochs come from the Group state the
// console keeps live (live.ts) — the EpochSource the CLI folds per call — and a structured
// transition carries the revision the page showed as expectedRevision (§15.3): a decision taken on
// a view that has since changed is refused by the authority (REVISION_CONFLICT), never misapplied.
//
// The final Approval (§7.3) names exactly the revision and Artifact set the page showed (the form
// carries them), not whatever the console has heard since.

import {refusalText} from '../cli/rejections.js'
import type {GroupState} from '../authority/model/state.js'
import {detailsOf, MwpError} from '../errors.js'
import {type OperatorContext, registeredAgent} from '../operator/cli-context.js'
import {buildFinalApproval, newUrn} from '../operator/command-builder.js'
import {LIMIT_POLICIES} from '../authority/decide/rate-limits.js'
import {formatUtcSeconds} from '../json/timestamp.js'

export type ActionOutcome =
  | {ok: true; what: string; sequence?: number; document?: string}
  | {ok: false; code: string; reason?: string; hint?: string}

/** What the form posted: each name's values in order. */
export type Form = Map<string, string[]>

export const ACTIONS = [
  'approve',
  'request-changes',
  'cancel',
  'direct',
  'replace-coordinator',
  'execution-approval',
  'override-grant',
  'root-approval',
] as const
export type ActionName = (typeof ACTIONS)[number]
export const isAction = (s: string): s is ActionName => (ACTIONS as readonly string[]).includes(s)

/** Destructive actions ask first (the page shows a confirmation step). */
export const CONFIRMED: ReadonlySet<ActionName> = new Set(['cancel', 'replace-coordinator'])

/** A form value that is missing or malformed: the action is refused before anything is signed. */
export class ActionInputError extends MwpError<'usage'> {
  constructor(message: string) {
    super('usage', message)
  }
}

const one = (form: Form, name: string): string => {
  const v = form.get(name)?.[0]?.trim()
  if (v === undefined || v === '') throw new ActionInputError(`the form has no ${name}`)
  return v
}

const integer = (form: Form, name: string): number => {
  const v = one(form, name)
  if (!/^\d{1,15}$/.test(v)) throw new ActionInputError(`${name} is not a whole number: ${v}`)
  return Number(v)
}

const HINTS: Record<string, string> = {
  REVISION_CONFLICT:
    'The Mission changed after the page showed it: nothing was applied. Go back, review the current state and decide again.',
  AUTH_FORBIDDEN: 'Your principal may not do this in this Group.',
  INVALID_STATE_TRANSITION: 'The Mission or WorkItem is not in a state that allows this any more.',
}

export async function runAction(
  ctx: OperatorContext,
  action: ActionName,
  groupId: string,
  state: GroupState,
  form: Form,
): Promise<ActionOutcome> {
  const guard = () => ({expectedRevision: integer(form, 'expectedRevision')})
  /** The state with the submission the page showed: an Approval names exactly that (§7.3). */
  const shownSubmission = (): GroupState => ({
    ...state,
    mission: {
      ...state.mission,
      submission: {
        missionRevision: integer(form, 'missionRevision'),
        artifactHashes: [...(form.get('artifactHash') ?? [])],
      },
    },
  })
  if (action === 'root-approval') {
    // §14: the root human's child_mission Approval, signed and handed over, not sent (mission approve --sign-only).
    const approval = buildFinalApproval(ctx.key(), shownSubmission())
    return {
      ok: true,
      what: `Your Approval of revision ${String(approval.missionRevision)} is signed. Give it to ${state.mission.missionOwner.id}: it goes with their mission.approve as rootApproval (mwp mission approve ${groupId} --root-approval FILE).`,
      document: JSON.stringify(approval, null, 2),
    }
  }
  let spec: {kind: string; payload: Record<string, unknown>; expectedRevision?: number; workItemId?: string}
  let what: string
  switch (action) {
    case 'approve': {
      // The Approval names what the page showed; the authority checks it against the submission.
      const shown = shownSubmission()
      const {missionRevision, artifactHashes} = shown.mission.submission!
      const comments = form.get('comments')?.[0]?.trim()
      const approval = buildFinalApproval(ctx.key(), shown, comments ? {comments} : {})
      spec = {kind: 'mission.approve', payload: {approval}, ...guard()}
      what = `Approved revision ${missionRevision} with ${artifactHashes.length} Artifact(s) (Approval ${String(approval.approvalId)}).`
      break
    }
    case 'request-changes':
      spec = {kind: 'mission.request_changes', payload: {reason: one(form, 'reason')}, ...guard()}
      what = 'Changes requested: the Mission is active again.'
      break
    case 'cancel':
      spec = {kind: 'mission.cancel', payload: {reason: one(form, 'reason')}, ...guard()}
      what = 'The Mission is cancelled.'
      break
    case 'direct':
      // A Message is conversation, not a structured transition: no revision guard (mission direct).
      spec = {kind: 'message.post', payload: {text: one(form, 'text')}}
      what = 'Direction posted as a Message in the planning Conversation.'
      break
    case 'replace-coordinator': {
      const agentId = registeredAgent(one(form, 'agent'), ctx.flags, ctx.config, 'agent')
      spec = {kind: 'mission.assign_coordinator', payload: {agentId}, ...guard()}
      what = `The Coordinator lease went to ${agentId}.`
      break
    }
    case 'execution-approval': {
      const workItemId = one(form, 'workItemId')
      spec = {
        kind: 'approval.grant_execution',
        payload: {workItemId, ownershipEpoch: integer(form, 'ownershipEpoch')},
        workItemId,
      }
      what = `Execution of ${workItemId} approved.`
      break
    }
    case 'override-grant': {
      // §20: a one-shot Cooperation Override Grant for one refused Command (its Action ID) of one member.
      const [policy, targetKind] = one(form, 'target').split(' ')
      if (policy === undefined || targetKind === undefined || !LIMIT_POLICIES[policy]?.includes(targetKind))
        throw new ActionInputError(`no policy and Command kind named ${one(form, 'target')}`)
      const beneficiary = state.members[one(form, 'beneficiary')]
      if (beneficiary === undefined) throw new ActionInputError('the beneficiary is no member of this Group')
      const minutes = integer(form, 'minutes')
      if (minutes < 1 || minutes > 7 * 24 * 60) throw new ActionInputError('the grant lasts 1 minute to 7 days')
      spec = {
        kind: 'policy.grant_cooperation_override',
        payload: {
          grantId: newUrn(),
          policy,
          beneficiary: {type: beneficiary.principal.type, id: beneficiary.principal.id},
          targetKind,
          targetActionId: one(form, 'targetActionId'),
          reason: one(form, 'reason'),
          expiresAt: formatUtcSeconds(Date.now() + minutes * 60_000),
        },
      }
      what = `Override of ${policy} granted to ${beneficiary.principal.id} for ${targetKind} ${one(form, 'targetActionId')}.`
      break
    }
  }
  const built = ctx.build({...spec, groupId, state})
  const result = await ctx.send(built.bytes)
  if ('error' in result) {
    const code = result.error.code
    const details = detailsOf(result.error)
    return {
      ok: false,
      code,
      ...(details !== undefined ? {reason: refusalText(code, details).split('\n').slice(1).join('; ').trim()} : {}),
      ...(HINTS[code] !== undefined ? {hint: HINTS[code]} : {}),
    }
  }
  return {ok: true, what, sequence: result.receipt.lastSequence}
}
