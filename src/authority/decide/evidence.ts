// §10.2 "Artifacts and Evidence required" / §13.2 "WorkItem submission MUST include Evidence
// mapped to acceptance criteria": the decider's checks of the Evidence a work.submit carries.
// Ingress has verified each document with the six stages (ingress/evidence.ts); here each must be
// about this submission and the whole set must cover the Work Contract's acceptance criteria.
//
// What each Evidence document must say:
//   - its producer (generatedBy, the §6.4 signer) is the submitting owner: a Worker submits its
//     own Evidence; reviewer or human Evidence is gathered in the Coordinator's review (§13.2 3-5);
//   - its Mission, Group and WorkItem are this WorkItem's;
//   - its subject is this WorkItem or one of the Artifacts submitted with it;
//   - every Artifact it references is among the submitted ones or the Work Contract's declared
//     input Artifacts (a test compares output with input); Evidence referencing an Artifact the
//     Coordinator was never handed cannot be reviewed, so it cannot back this result;
//   - every criterion it names is an acceptance criterion of the Work Contract.
// Together they must name every acceptance criterion at least once. The Evidence types a criterion
// requires (`evidenceRequired`) are not all the Worker's to give (human_review, reviewer
// assessments): they are shown beside the submitted Evidence for the review, not enforced here.
// Nor is an Evidence result: `failed` or `inconclusive` Evidence is submitted as it is, and
// evaluating it is the Coordinator's review (§13.2 step 4, work.accept_result).
//
// Every refusal is told to the actor (as every decider refusal but GROUP_NOT_FOUND): it comes after the gate established that the
// actor is the authenticated, active owner of the WorkItem, so the reason discloses nothing the
// actor may not know, and without it the Worker could not fix the submission.

import {type Refusal, refuse} from './common.js'
import type {DecidedCommand, VerifiedEvidence} from './command.js'
import type {WorkItemView} from '../model/state.js'

/** The submitted Evidence for the work.submitted Event, or the refusal of the first failing check. */
export function submittedEvidence(
  ids: {missionId: string; groupId: string},
  item: WorkItemView,
  command: DecidedCommand<'work.submit'>,
): VerifiedEvidence[] | Refusal {
  const evidence = command.evidence
  if (evidence === undefined || evidence.length === 0)
    return refuse('INVALID_COMMAND', 'work.submit carries no verified Evidence')
  const submitted = new Set(command.payload.artifactHashes)
  const referable = new Set([...submitted, ...item.contract.inputArtifacts])
  const criteria = item.contract.acceptanceCriteria.map((c) => c.criterionId)
  const known = new Set(criteria)
  const seen = new Set<string>()
  for (const {signer, document: e} of evidence) {
    const name = `Evidence ${e.evidenceId}`
    if (seen.has(e.evidenceId)) return refuse('INVALID_COMMAND', `${name} is submitted twice`)
    seen.add(e.evidenceId)
    if (signer.type !== command.actor.type || signer.id !== command.actor.id)
      return refuse(
        'AUTH_FORBIDDEN',
        `${name} was produced by ${signer.type} ${signer.id}; the owner submits its own Evidence`,
      )
    if (e.missionId !== ids.missionId || e.groupId !== ids.groupId)
      return refuse('INVALID_COMMAND', `${name} names another Mission or Group`)
    if (e.workItemId !== item.workItemId)
      return refuse('INVALID_COMMAND', `${name} is Evidence for WorkItem ${e.workItemId}, not ${item.workItemId}`)
    const subject = e.subject
    const aboutThis =
      (subject.type === 'work_item' && subject.id === item.workItemId) ||
      (subject.type === 'artifact' && submitted.has(subject.id))
    if (!aboutThis)
      return refuse(
        'INVALID_COMMAND',
        `${name} is about ${subject.type} ${subject.id}, not this WorkItem or an Artifact submitted with it`,
      )
    const foreign = e.artifactHashes.find((h) => !referable.has(h))
    if (foreign !== undefined)
      return refuse(
        'INVALID_COMMAND',
        `${name} references Artifact ${foreign}, which is neither submitted nor an input Artifact of the Work Contract`,
      )
    const unknown = e.criterionIds.find((c) => !known.has(c))
    if (unknown !== undefined)
      return refuse(
        'INVALID_COMMAND',
        `${name} names criterion ${unknown}, which is not an acceptance criterion of the Work Contract`,
      )
  }
  const covered = new Set(evidence.flatMap((v) => v.document.criterionIds))
  const missing = criteria.filter((c) => !covered.has(c))
  if (missing.length > 0)
    return refuse('INVALID_COMMAND', `no Evidence for acceptance criteria ${missing.join(', ')} of the Work Contract`)
  return evidence
}
