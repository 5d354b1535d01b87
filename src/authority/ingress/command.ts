// Authority ingress: a Command arrives as bytes and leaves as a receipt or one protocol error
// (spec §15.1, §19; ACCEPTANCE H1-H7, L1). The order is fixed, one step a function below:
//   1 admit: six-stage verification, Command freshness, first admission (audited; admit.ts)
//   2 epoch shape by actor type (epochs.ts; Organization-scoped kinds go to organization.ts instead)
//   3 idempotency by (actor ID, Action ID) against the stored receipt (idempotency.ts) — before the
//     Session Epoch check, so an unchanged retry across a session replacement gets its original receipt
//   4 Session Epoch fencing (sessions.ts), payload schema, unknown critical extensions
//   5 role / Organization policy (services: terminators, archivers, override issuers, redactors)
//   6 embedded signed documents (Approval, Artifact manifest, archive snapshot) verified with the
//     six-stage verifier; the pure decider gets the verified signer and document, never raw bytes
//   7 decide on the Group's current state (and, for child Missions and usage, its ancestry's)
//   8 rate limits and the cited Cooperation Override Grant (rate-limits.ts)
//   9 number, sign and append the Events with the receipt atomically (seal.ts; cross-group.ts
//     when a decision spans Groups)
// Steps 3-9 run inside the involved Groups' in-process queues, except the wait for step 9's COMMIT:
// the next Command of the Group decides on the state the in-flight append produces
// (append-pipeline.ts). The store's head check serializes across processes, and a moved head
// reloads state and decides again (retry.ts).

import type {ErrorCode, ProtocolError} from '../../errors.js'
import type {Authority} from '../authority.js'
import {GROUP_ARCHIVE} from '../decide/archive.js'
import {type EventDraft, decide} from '../decide/index.js'
import {cooperationGate} from '../decide/rate-limits.js'
import type {GroupState} from '../model/state.js'
import {admit} from './admit.js'
import {validWorkContract} from './payloads.js'
import {appendOnTip, drainTips, type Tip, tipOf} from './append-pipeline.js'
import {type Refusal, type Refused, audited, internalError, opaque, refusal, told} from './answers.js'
import {checkCommand} from './command-checks.js'
import {auditedEmbeddedCode} from './embedded-rejection.js'
import {appendAcross, crossesGroups, involvedGroups, otherStates} from './cross-group.js'
import {checkEpochs} from './epochs.js'
import {targetMessage} from './message-lookup.js'
import {type GroupCommand, type AdmittedCommand, inGroup} from './group-command.js'
import {type Answers, type ReceiptKey, appendAnswer, earlierAnswer} from './idempotency.js'
import {RETRY, type Retry, untilAnswered} from './retry.js'
import {seal} from './seal.js'
import {checkAgentSession} from './sessions.js'
import {verifyArchiveSnapshot} from './snapshot.js'

/** What the actor gets back for an accepted Command (stored verbatim as the receipt document). */
export interface CommandReceipt {
  actionId: string
  actor: {type: string; id: string}
  groupId: string
  eventIds: string[]
  firstSequence: number
  lastSequence: number
  aggregateRevision: number
  /** Set when the Command was refused but its decision recorded history (a late result, §11.5): retries get this error. */
  rejectedWith?: ErrorCode
}

export type SubmitResult = {receipt: CommandReceipt} | {error: ProtocolError}

/** A receipt, or a refusal with the audit entry submit() writes before it answers. */
type Answer = {receipt: CommandReceipt} | Refusal

export async function submit(authority: Authority, commandBytes: Uint8Array): Promise<SubmitResult> {
  try {
    return await audited(authority, await submitUnguarded(authority, commandBytes))
  } catch (e) {
    return internalError(authority, 'authority ingress', e)
  }
}

/** One admitted Group Command on its way through steps 3-9. */
interface Ingress {
  readonly authority: Authority
  readonly command: GroupCommand
  readonly bytes: Uint8Array
  readonly key: ReceiptKey
  /** Every Group the Command involves, its own included (cross-group.ts). */
  readonly groupIds: readonly string[]
  /** The verdict of the checks on the Command alone (command-checks.ts): the Command for the decider, or its error. */
  readonly checked: GroupCommand | Refused
  readonly answers: Answers<Answer>
}

/** An append handed to the store: its answer once it committed, or RETRY to decide again. */
interface InFlight {
  settled: Promise<Answer | Retry>
}

/** What a decision is made on: the Group's state (its in-flight tip's, else the stored one) and the other Groups'. */
interface Basis {
  tip: Tip | undefined
  state: GroupState | null
  groups: Record<string, GroupState | null>
  acceptedAt: string
}

async function submitUnguarded(authority: Authority, commandBytes: Uint8Array): Promise<Answer> {
  const admitted = await admit<AdmittedCommand>(authority, commandBytes, 'authority ingress')
  if ('error' in admitted) return admitted
  const {command, contentHash} = admitted
  const answers = answersFor(authority, command)
  const epochs = checkEpochs(command)
  if (epochs) return answers.refused(epochs)
  // Organization-scoped kinds have their own receipt shape: organization.ts submitOrganizationCommand()
  // (the wire server routes them there).
  if (!inGroup(command))
    return answers.refused(
      told('INVALID_COMMAND', 'envelope', `${command.kind} is a Group Command: it needs a groupId`),
    )
  const verdict = checkCommand(authority, command, commandBytes)
  // A rejected embedded document's diagnostic is audited once, here; the sender gets its code only.
  const checked =
    'kind' in verdict || 'code' in verdict
      ? verdict
      : opaque(await auditedEmbeddedCode(authority, command, verdict), 'embedded', `${verdict.member} does not verify`)
  // §12/§14: a Command spanning Groups (Mission ancestry, a child Group) holds all of them.
  const groupIds = await involvedGroups(authority, command)
  const key = {actorId: command.actor.id, actionId: command.actionId, contentHash}
  const ingress: Ingress = {authority, command, bytes: commandBytes, key, groupIds, checked, answers}
  return untilAnswered(
    async () => {
      const decided = await authority.serializeAll(groupIds, () => inQueue(ingress))
      // The COMMIT is waited for outside the queue; a moved head decides again, in the queue, on the new state.
      return 'settled' in decided ? decided.settled : decided
    },
    () => answers.refused(GAVE_UP),
  )
}

/** Contention past the retry budget (retry.ts): retryable, and nothing for the sender to correct. */
const GAVE_UP = opaque('INTERNAL_ERROR', 'append', 'the Group head kept moving: gave up deciding again')

/** A stored receipt document answers with its receipt, or with the error a refusal that recorded history carries. */
function answersFor(authority: Authority, command: AdmittedCommand): Answers<Answer> {
  const refused = (r: Refused): Answer => refusal(authority, command, r)
  return {
    refused,
    stored: (document) => {
      const r = JSON.parse(document) as CommandReceipt
      return r.rejectedWith !== undefined
        ? refused(opaque(r.rejectedWith, 'idempotency', 'a refused Command whose decision recorded history'))
        : {receipt: r}
    },
  }
}

/** Steps 3-9 in the involved Groups' queues. */
async function inQueue(ingress: Ingress): Promise<Answer | InFlight> {
  const {authority, command, groupIds, answers} = ingress
  // Commands that involve other Groups or check the stored state itself decide on committed
  // state only: they wait for the Group's pipelined appends (append-pipeline.ts) to settle.
  if (groupIds.length > 1 || command.kind === GROUP_ARCHIVE) await drainTips(authority, groupIds)
  const earlier = await earlierAnswer(authority.store, ingress.key, answers)
  if (earlier) return earlier
  // §6.3 Session Epoch fencing, after the receipt lookup: an unchanged retry of a Command
  // accepted under an older session still gets its original receipt (H5, L2, L5).
  const session = await checkAgentSession(authority, command)
  if (session) {
    // The original may still be committing (pipelined append, append-pipeline.ts): a retry sent
    // on a new session right after a dropped connection must find its receipt, not the fence.
    // §6.3: a session fence is an authentication failure: its sender gets the code alone.
    const fenced = opaque(session, 'session')
    if (session !== 'AUTH_STALE_SESSION' || tipOf(authority, command.groupId) === undefined)
      return answers.refused(fenced)
    await drainTips(authority, groupIds)
    return (await earlierAnswer(authority.store, ingress.key, answers)) ?? answers.refused(fenced)
  }
  const decided = await withSnapshot(ingress)
  if ('code' in decided) return answers.refused(decided)
  return untilAnswered(
    () => decideOnce(ingress, decided),
    () => answers.refused(GAVE_UP),
  )
}

/** Steps 4-6's verdict, then §7.4's archival snapshot checked against the stored log (snapshot.ts). */
async function withSnapshot(ingress: Ingress): Promise<GroupCommand | Refused> {
  const {checked} = ingress
  if ('code' in checked || checked.kind !== GROUP_ARCHIVE) return checked
  const snapshot = await verifyArchiveSnapshot(ingress.authority, checked, ingress.bytes)
  return typeof snapshot === 'string'
    ? opaque(snapshot, 'embedded', 'payload.snapshot does not check against the stored log')
    : {...checked, snapshot}
}

/** Steps 7-9 once: decide, gate and append, or RETRY on a moved tip or head. */
async function decideOnce(ingress: Ingress, command: GroupCommand): Promise<Answer | InFlight | Retry> {
  const {authority, answers} = ingress
  const tip = tipOf(authority, command.groupId)
  const basis: Basis = {
    tip,
    state: tip !== undefined ? tip.state : await authority.current(command.groupId),
    groups: await otherStates(authority, ingress.groupIds, command.groupId),
    acceptedAt: authority.clock(),
  }
  const {state, groups, acceptedAt} = basis
  const {maxMissionDepth, leases, limits} = authority.policy
  const message = await targetMessage(authority, command, tip)
  const decision = decide(state, command, {
    acceptedAt,
    newId: authority.newId,
    groups,
    maxMissionDepth,
    leases,
    validWorkContract,
    ...(message !== undefined ? {message} : {}),
  })
  if ('error' in decision) {
    // §4 invariant 5: a refusal that still records non-authoritative history (a late result) is
    // appended with a receipt carrying the error, so the actor and its retries get the error.
    const refused = decided(decision)
    if (decision.record !== undefined) return appendOnGroup(ingress, command, basis, decision.record, refused)
    if (!(await committed(tip))) return RETRY
    // Another process may have accepted this very Command since the receipt check; its Events
    // then make the decider refuse it (e.g. the Group now exists). The receipt wins (H5).
    return (await earlierAnswer(authority.store, ingress.key, answers)) ?? answers.refused(refused)
  }
  // §20: rate limits and the cited Cooperation Override Grant, on the accepted decision only.
  const gated =
    state === null
      ? decision
      : cooperationGate(state, command, decision.events, limits, {acceptedAt, newId: authority.newId})
  if ('error' in gated)
    return (await committed(tip)) ? answers.refused(told(gated.error, 'rate-limit', gated.reason)) : RETRY
  if (crossesGroups(command.groupId, gated.events)) return appendToGroups(ingress, command, basis, gated.events)
  return appendOnGroup(ingress, command, basis, gated.events)
}

/**
 * The decider's refusal as its sender gets it: the reason, told — the decider sees only a
 * verified, admitted, fresh Command, and decides after the Membership check whatever a member may
 * know — except GROUP_NOT_FOUND, which must say nothing more than its code (§17.2/§19, no
 * existence oracle: common.ts activeMember).
 */
function decided(decision: {error: ErrorCode; reason: string}): Refused {
  return decision.error === 'GROUP_NOT_FOUND'
    ? opaque(decision.error, 'decision', decision.reason)
    : told(decision.error, 'decision', decision.reason)
}

/** A refusal decided on in-flight appends stands only once they committed (append-pipeline.ts). */
async function committed(tip: Tip | undefined): Promise<boolean> {
  return tip === undefined || (await tip.appended)
}

/** Seals the Events and hands them to the Group's pipeline: the queue moves on, the answer waits for the COMMIT. */
function appendOnGroup(
  ingress: Ingress,
  command: GroupCommand,
  basis: Basis,
  events: EventDraft[],
  refused?: Refused,
): InFlight {
  const {authority, answers, key} = ingress
  const {stored, next, receipt} = seal(
    authority,
    basis.state,
    command,
    key.contentHash,
    basis.acceptedAt,
    events,
    refused?.code,
  )
  const outcome = appendOnTip(authority, command.groupId, basis.tip, basis.state, stored, receipt, next)
  const appended = (): Answer => {
    authority.committed(next, stored)
    return refused !== undefined ? answers.refused(refused) : answers.stored(receipt.document)
  }
  return {settled: outcome.then((o) => appendAnswer(o, {...answers, appended}))}
}

/** A decision spanning Groups is appended on stored state only, to all its Groups at once (cross-group.ts). */
async function appendToGroups(
  ingress: Ingress,
  command: GroupCommand,
  basis: Basis,
  events: EventDraft[],
): Promise<Answer | Retry> {
  const {authority, answers, key} = ingress
  if (basis.tip !== undefined) {
    await drainTips(authority, [command.groupId])
    return RETRY
  }
  const {state, groups, acceptedAt} = basis
  const across = await appendAcross(authority, command, state, groups, key.contentHash, acceptedAt, events, seal)
  if (across === RETRY) return RETRY
  return 'code' in across ? answers.refused(across) : {receipt: across.document as unknown as CommandReceipt}
}
