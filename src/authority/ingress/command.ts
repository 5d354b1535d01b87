// Authority ingress: a Command arrives as bytes and leaves as a receipt or one protocol error
// (spec §15.1, §19; ACCEPTANCE H1-H7, L1). The order is fixed:
//   1 acceptNew: six-stage verification, Command freshness, first admission (audited)
//   2 epoch shape by actor type (Organization-scoped kinds go to organization.ts instead)
//   3 idempotency by (actor ID, Action ID) against the stored receipt — before the Session Epoch
//     check, so an unchanged retry across a session replacement gets its original receipt
//   4 Session Epoch fencing (sessions.ts), payload schema, unknown critical extensions
//   5 role / Organization policy (services: terminators, archivers, override issuers, redactors)
//   6 embedded signed documents (Approval, Artifact manifest, archive snapshot) verified with the
//     six-stage verifier; the pure decider gets the verified signer and document, never raw bytes
//   7 decide on the Group's current state (and, for child Missions and usage, its ancestry's)
//   8 rate limits and the cited Cooperation Override Grant (rate-limits.ts)
//   9 number, sign and append the Events with the receipt atomically (cross-group.ts when a
//     decision spans Groups)
// Steps 3-9 run inside the involved Groups' in-process queues, except the wait for step 9's COMMIT:
// the next Command of the Group decides on the state the in-flight append produces
// (append-pipeline.ts). The store's head check serializes across processes, and a moved head
// reloads state and decides again.

import {acceptNew} from '../../admission/accept.js'
import {type ErrorCode, type ProtocolError, protocolError} from '../../errors.js'
import {type JsonObject, sourcesIn} from '../../json/parse.js'
import {sign} from '../../signing/sign.js'
import {Rejection, verify} from '../../signing/verify.js'
import type {Receipt, StoredEvent} from '../../store/group-log.js'
import {StoreError} from '../../store/records.js'
import {checkAgentSession} from './sessions.js'
import {apply, revisionAfter} from '../apply/index.js'
import {type Authority, AuthorityIntegrityError} from '../authority.js'
import {type EventDraft, type ReceivedCommand, decide} from '../decide/index.js'
import {checkPayload, validWorkContract} from './payloads.js'
import {appendAcross, crossesGroups, involvedGroups, otherStates} from './cross-group.js'
import {GROUP_ARCHIVE} from '../decide/archive.js'
import {verifyArchiveSnapshot} from './snapshot.js'
import {unknownCriticalExtension} from './extensions.js'
import {cooperationGate} from '../decide/rate-limits.js'
import {appendOnTip, drainTips, tipOf} from './append-pipeline.js'
import {policyRecordOf, servicePolicyAct} from './policy-records.js'
import type {GroupState} from '../model/state.js'

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

/** Head moves are contention from another process; a few retries settle them. */
const MAX_ATTEMPTS = 5

interface Command extends ReceivedCommand {
  groupId: string
  correlationId: string
  sessionEpoch?: number
  /** §20: the one-shot Cooperation Override Grant this Command consumes (rate-limits.ts). */
  cooperationOverrideGrantId?: string
  /** §17.4/§18: Extension Profile data, relayed verbatim into the resulting Events (extensions.ts). */
  extensions?: JsonObject
}

export async function submit(authority: Authority, commandBytes: Uint8Array): Promise<SubmitResult> {
  try {
    return await submitUnguarded(authority, commandBytes)
  } catch (e) {
    return internalError(authority, 'authority ingress', e)
  }
}

/**
 * A store outage, a stored Event that no longer verifies or folds, or a bug: nothing was accepted
 * that the actor could not find again by its receipt. The wire gets INTERNAL_ERROR (retryable);
 * the operator gets the reason in the protected audit log.
 */
export async function internalError(authority: Authority, subject: string, e: unknown): Promise<{error: ProtocolError}> {
  const reason = e instanceof AuthorityIntegrityError ? 'log-integrity' : e instanceof StoreError ? `store-${e.code}` : 'internal'
  await authority.store
    .audit({at: new Date().toISOString(), stage: 'authority', reason, documentKind: 'command', subject, detail: (e as Error)?.message})
    .catch(() => undefined)
  return {error: protocolError('INTERNAL_ERROR', authority.clock())}
}

async function submitUnguarded(authority: Authority, commandBytes: Uint8Array): Promise<SubmitResult> {
  const accepted = await acceptNew({bytes: commandBytes, kind: 'command', subject: 'authority ingress'}, authority.registry, authority.store)
  if (accepted instanceof Rejection) return {error: protocolError(accepted.code, authority.clock())}
  const command = accepted.verified.document as unknown as Command
  const fail = (code: ErrorCode): SubmitResult => ({error: {...protocolError(code, authority.clock()), relatedActionId: command.actionId}})

  const epochs = checkEpochs(command)
  if (epochs) return fail(epochs)
  // Organization-scoped kinds have their own receipt shape: src/authority/organization.ts
  // submitOrganizationCommand() (the wire server routes them there).
  if (typeof command.groupId !== 'string') return fail('INVALID_COMMAND')

  // The checks that depend on the Command alone run once, outside the Group's queue (and not again
  // on a retry); their verdict is applied in its place in the order below.
  const preflight = commandChecks(authority, command, commandBytes)
  // §12/§14: a Command spanning Groups (Mission ancestry, a child Group) holds all of them.
  const groupIds = await involvedGroups(authority, command)
  const decideInQueue = async (): Promise<SubmitResult | InFlight> => {
    // Commands that involve other Groups or check the stored state itself decide on committed
    // state only: they wait for the Group's pipelined appends (append-pipeline.ts) to settle.
    if (groupIds.length > 1 || command.kind === GROUP_ARCHIVE) await drainTips(authority, groupIds)
    // Idempotency (§15.1, H5/H6): the signing hash is the canonical hash of the signed content.
    const contentHash = accepted.verified.signingHash
    const answered = async (): Promise<SubmitResult | null> => {
      const prior = await authority.store.receipt(command.actor.id, command.actionId)
      if (prior === null) return null
      return prior.contentHash === contentHash ? answerOf(prior.document) : fail('ACTION_ID_COLLISION')
    }
    const answerOf = (document: string): SubmitResult => {
      const r = JSON.parse(document) as CommandReceipt
      return r.rejectedWith !== undefined ? fail(r.rejectedWith) : {receipt: r}
    }
    const earlier = await answered()
    if (earlier) return earlier
    // §6.3 Session Epoch fencing, after the receipt lookup: an unchanged retry of a Command
    // accepted under an older session still gets its original receipt (H5, L2, L5).
    const session = await checkAgentSession(authority, command)
    if (session) return fail(session)

    if (preflight) return fail(preflight)
    // §7.4: the archival snapshot, checked against the stored log (signature, signer, Event IDs: snapshot.ts).
    if (command.kind === GROUP_ARCHIVE) {
      const invalid = await verifyArchiveSnapshot(authority, command, commandBytes)
      if (invalid) return fail(invalid)
    }

    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      // The state the Group's in-flight appends produce, else the stored state.
      const tip = tipOf(authority, command.groupId)
      const state = tip !== undefined ? tip.state : await authority.current(command.groupId)
      const groups = await otherStates(authority, groupIds, command.groupId)
      const acceptedAt = authority.clock()
      const decision = decide(state, command, {acceptedAt, newId: authority.newId, groups, maxMissionDepth: authority.policy.maxMissionDepth, leases: authority.policy.leases, validWorkContract})
      // Another process may have accepted this very Command since the receipt check; its Events
      // then make the decider refuse it (e.g. the Group now exists). The receipt wins (H5).
      // A refusal decided on in-flight appends stands only once they committed (append-pipeline.ts).
      const onCommitted = async () => tip === undefined || (await tip.appended)
      if ('error' in decision && decision.record === undefined) {
        if (!(await onCommitted())) continue
        return (await answered()) ?? fail(decision.error)
      }
      // §4 invariant 5: a refusal that still records non-authoritative history (a late result) is
      // appended with a receipt carrying the error, so the actor and its retries get the error.
      const refused = 'error' in decision ? decision.error : undefined
      const drafts = 'error' in decision ? {events: decision.record!} : decision
      // §20: rate limits and the cited Cooperation Override Grant, on the accepted decision only.
      const gated = state === null || refused !== undefined ? drafts : cooperationGate(state, command, drafts.events, authority.policy.limits, {acceptedAt, newId: authority.newId})
      if ('error' in gated) {
        if (!(await onCommitted())) continue
        return fail(gated.error)
      }
      if (refused === undefined && crossesGroups(command.groupId, gated.events)) {
        if (tip !== undefined) {
          await drainTips(authority, [command.groupId]) // a multi-Group append decides on stored state only
          continue
        }
        const across = await appendAcross(authority, command, state, groups, contentHash, acceptedAt, gated.events, seal)
        if (across === 'retry') continue
        return typeof across === 'string' ? fail(across) : {receipt: across.document as unknown as CommandReceipt}
      }

      const {stored, next, receipt} = seal(authority, state, command, contentHash, acceptedAt, gated.events, refused)
      // The Group's queue moves on once the append is handed over; the answer waits for the COMMIT.
      const settled = appendOnTip(authority, command.groupId, tip, state, stored, receipt, next).then((outcome): SubmitResult | 'retry' => {
        switch (outcome.status) {
          case 'appended':
            authority.committed(next, stored)
            return answerOf(receipt.document)
          case 'duplicate':
            return answerOf(outcome.receipt.document)
          case 'action-id-collision':
            return fail('ACTION_ID_COLLISION')
          case 'head-moved':
            return 'retry' // another process appended, or an earlier append of the chain failed
          default:
            // sequence-mismatch / duplicate-event-id / invalid are our bugs; unavailable and
            // indeterminate leave the outcome unknown — the actor retries the same bytes and the
            // receipt lookup answers.
            return fail('INTERNAL_ERROR')
        }
      })
      return {settled}
    }
    return fail('INTERNAL_ERROR')
  }
  for (let attempt = 1; ; attempt++) {
    const decided = await authority.serializeAll(groupIds, decideInQueue)
    if (!('settled' in decided)) return decided
    const answer = await decided.settled
    if (answer !== 'retry') return answer
    if (attempt >= MAX_ATTEMPTS) return fail('INTERNAL_ERROR') // decide again, in the queue, on the new state
  }
}

/** An append handed to the store: its answer once it committed, or 'retry' to decide again. */
interface InFlight {
  settled: Promise<SubmitResult | 'retry'>
}

/**
 * Epoch rules by actor type (ACCEPTANCE H1-H3). command.schema.json already requires groupId,
 * sessionEpoch and membershipEpoch of Agent Commands, membershipEpoch (and no sessionEpoch) of
 * human Commands in an existing Group, no epochs on mission.create, and no membership or
 * coordinator epoch from services; this re-checks the shape so the decider never depends on the
 * schema file alone. The Session Epoch's value is checked next, against the Organization log
 * (src/authority/sessions.ts checkAgentSession).
 */
function checkEpochs(c: Command): ErrorCode | null {
  const creates = c.kind === 'mission.create' || c.kind === 'mission.create_follow_up'
  if (creates) {
    if (c.actor.type !== 'human') return 'AUTH_FORBIDDEN'
    return c.sessionEpoch !== undefined || c.membershipEpoch !== undefined ? 'INVALID_COMMAND' : null
  }
  switch (c.actor.type) {
    case 'agent':
      return c.sessionEpoch === undefined || c.membershipEpoch === undefined ? 'INVALID_COMMAND' : null
    case 'human':
      return c.sessionEpoch !== undefined || c.membershipEpoch === undefined ? 'INVALID_COMMAND' : null
    case 'service':
      return c.sessionEpoch !== undefined || c.membershipEpoch !== undefined ? 'INVALID_COMMAND' : null
  }
}

/**
 * What the Command alone decides, in this order: payload schema, critical extensions, role and
 * Organization policy, and the embedded signed documents. §7.3/§13.1: an Approval or an Artifact
 * manifest is a signed document of its own, verified with the six stages; the pure decider gets
 * the verified signer and document (attached to the command), never raw bytes.
 */
function commandChecks(authority: Authority, command: Command, commandBytes: Uint8Array): ErrorCode | null {
  const payload = checkPayload(command.kind, command.payload)
  if (payload === 'unknown-kind') return 'INVALID_COMMAND'
  if (payload === 'invalid') return 'SCHEMA_VALIDATION_FAILED'
  if (unknownCriticalExtension(command.extensions) !== null) return 'UNKNOWN_CRITICAL_EXTENSION'
  const forbidden = authorize(authority, command)
  if (forbidden) return forbidden
  // An embedded document is verified exactly as it stood in the received Command (principle 4);
  // the Command is parsed for its source texts once, and only when it embeds one.
  let sources: ReturnType<typeof sourcesIn> | undefined
  const embedded = (kind: 'approval' | 'artifact', member: string) => {
    sources ??= sourcesIn(commandBytes)
    const v = verify(kind, Buffer.from(sources(['payload', member]) ?? '', 'utf8'), authority.registry)
    return v instanceof Rejection ? null : {signer: v.principal, document: v.document as Record<string, unknown>}
  }
  if (command.kind === 'mission.approve') {
    const approval = embedded('approval', 'approval')
    if (approval === null) return 'INVALID_COMMAND'
    command.approval = approval
    if (command.payload.rootApproval !== undefined) {
      const root = embedded('approval', 'rootApproval')
      if (root === null) return 'INVALID_COMMAND'
      command.rootApproval = root
    }
  }
  if (command.kind === 'artifact.publish') {
    const artifact = embedded('artifact', 'artifact')
    if (artifact === null) return 'INVALID_COMMAND'
    command.artifact = artifact
  }
  return null
}

/** Role and Organization policy (AUTH_FORBIDDEN); Membership checks are the decider's. */
function authorize(authority: Authority, c: Command): ErrorCode | null {
  if (c.kind === 'mission.create') {
    return c.actor.type === 'human' && authority.policy.rootMissionOwners.includes(c.actor.id) ? null : 'AUTH_FORBIDDEN'
  }
  // Services are not Group members: only Organization policy (`terminators`) lets one act in a
  // Group, and only to terminate the Mission (§7.1 "Coordinator or Organization policy").
  if (c.actor.type === 'service') {
    // §20 / §9.1: override grants and redactions by Organization policy actors (servicePolicyActs).
    if (servicePolicyAct(authority.policy, c.kind, c.actor.id)) return null
    if (c.kind === GROUP_ARCHIVE) return (authority.policy.archivers ?? []).includes(c.actor.id) ? null : 'AUTH_FORBIDDEN' // §7.4
    return c.kind === 'mission.terminate' && (authority.policy.terminators ?? []).includes(c.actor.id) ? null : 'AUTH_FORBIDDEN'
  }
  return null
}

/** Numbers, signs and applies the drafts: exact signed bytes, the next state and the receipt. */
function seal(authority: Authority, state: GroupState | null, command: Command, contentHash: string, acceptedAt: string, drafts: EventDraft[], rejectedWith?: ErrorCode) {
  let next = state
  const stored: StoredEvent[] = []
  for (const draft of drafts) {
    const sequence = (next?.sequence ?? 0) + 1
    const aggregateRevision = revisionAfter(draft.kind, next?.revision ?? 0)
    const unsigned: JsonObject = {
      protocolVersion: '0.1',
      eventId: draft.eventId,
      kind: draft.kind,
      groupId: command.groupId,
      sequence,
      aggregateRevision,
      actor: {type: command.actor.type, id: command.actor.id},
      cause: {type: 'command', id: command.actionId},
      correlationId: command.correlationId,
      ...(draft.conversationId !== undefined ? {conversationId: draft.conversationId} : {}),
      occurredAt: acceptedAt,
      payload: draft.payload as JsonObject,
      ...(command.extensions !== undefined ? {extensions: command.extensions} : {}), // §17.4 relay unchanged
      acceptedBy: {type: authority.principal.type, id: authority.principal.id},
      commandHash: contentHash,
    }
    const {document} = sign('event', unsigned, authority.key)
    stored.push({eventId: draft.eventId, kind: draft.kind, sequence, aggregateRevision, bytes: Buffer.from(JSON.stringify(document), 'utf8'), ...policyRecordOf(draft)})
    next = apply(next, document as unknown as Parameters<typeof apply>[1])
  }
  const receiptDoc: CommandReceipt = {
    actionId: command.actionId,
    actor: {type: command.actor.type, id: command.actor.id},
    groupId: command.groupId,
    eventIds: stored.map((e) => e.eventId),
    firstSequence: stored[0]!.sequence,
    lastSequence: stored[stored.length - 1]!.sequence,
    aggregateRevision: next!.revision,
    ...(rejectedWith !== undefined ? {rejectedWith} : {}),
  }
  const receipt: Receipt = {
    actorId: command.actor.id,
    actionId: command.actionId,
    contentHash,
    groupId: command.groupId,
    firstSequence: receiptDoc.firstSequence,
    lastSequence: receiptDoc.lastSequence,
    document: JSON.stringify(receiptDoc),
  }
  return {stored, next: next!, receipt}
}
