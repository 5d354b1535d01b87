// The Organization-scoped Command path (spec §6.1, §6.3, §15.1/§15.2; ACCEPTANCE H3, H8): the
// two bootstrap kinds that belong to no Group. The order mirrors Group ingress (command.ts), and
// the steps they share are the same modules:
//   1 admit: six-stage verification, freshness, first admission (admit.ts)
//   2 shape: no groupId and no epochs (the schema says so too; re-checked here)
//   3 idempotency by (actor, Action ID) against the Organization log receipt (idempotency.ts)
//   4 payload schema (schemas/payloads/<kind>.schema.json)
//   5 authorization
//   6 decide on the subject's current version, sign the Event with the authority key
//      (event-envelope.ts), and append Event + receipt atomically; a moved version (another
//      process) decides again (retry.ts).
// The Events omit groupId, sequence and aggregateRevision (H8).
//
// Why a function beside ingress.submit() rather than inside it: submit()'s receipt type is the
// Group receipt (groupId and sequences) every Group caller relies on; these facts have neither.

import type {Authority} from '../authority.js'
import {payloadError} from './payloads.js'
import type {ProtocolError} from '../../errors.js'
import {type JsonObject, sourcesIn} from '../../json/parse.js'
import type {Principal} from '../../signing/profiles.js'
import {RegistryFault} from '../../signing/registry.js'
import {Rejection, verify} from '../../signing/verify.js'
import type {OrgEntry, OrgLog} from '../../store/org-log.js'
import {admit} from './admit.js'
import {type Refusal, type Refused, audited, internalError, opaque, refusal, told} from './answers.js'
import {signedEvent} from './event-envelope.js'
import {type Answers, type ReceiptKey, appendAnswer, earlierAnswer} from './idempotency.js'
import {type Retry, untilAnswered} from './retry.js'

export const SESSION_OPEN = 'ext.missionweaveprotocol.identity.session_open'
export const SESSION_OPENED = 'ext.missionweaveprotocol.identity.session_opened'
export const CARD_REGISTER = 'ext.missionweaveprotocol.registry.agent_card_register'
export const CARD_REGISTERED = 'ext.missionweaveprotocol.registry.agent_card_registered'

const EVENT_OF: Readonly<Record<string, string>> = {[SESSION_OPEN]: SESSION_OPENED, [CARD_REGISTER]: CARD_REGISTERED}

export function isOrganizationKind(kind: unknown): boolean {
  return typeof kind === 'string' && Object.hasOwn(EVENT_OF, kind)
}

/** What the issuing service gets back (stored verbatim as the Organization receipt). */
export interface OrganizationReceipt {
  actionId: string
  actor: Principal
  eventKind: string
  eventIds: string[]
  /** The Agent the fact is about. */
  subjectId: string
  /** The Session Epoch issued, or the card version registered. */
  version: number
}

export type OrganizationSubmitResult = {receipt: OrganizationReceipt} | {error: ProtocolError}

/** A receipt, or a refusal with the audit entry written before the answer. */
type Answer = {receipt: OrganizationReceipt} | Refusal

interface OrgCommand {
  actionId: string
  actor: Principal
  kind: string
  correlationId: string
  payload: Record<string, unknown>
  groupId?: string
  sessionEpoch?: number
  membershipEpoch?: number
  coordinatorEpoch?: number
}

export async function submitOrganizationCommand(
  authority: Authority,
  commandBytes: Uint8Array,
): Promise<OrganizationSubmitResult> {
  try {
    return await audited(authority, await submitUnguarded(authority, commandBytes))
  } catch (e) {
    return internalError(authority, 'organization ingress', e)
  }
}

/** One admitted Organization-scoped Command on its way through steps 3-6. */
interface Ingress {
  readonly authority: Authority
  readonly command: OrgCommand
  readonly log: OrgLog
  readonly key: ReceiptKey
  readonly answers: Answers<Answer>
}

async function submitUnguarded(authority: Authority, commandBytes: Uint8Array): Promise<Answer> {
  const admitted = await admit<OrgCommand>(authority, commandBytes, 'organization ingress')
  if ('error' in admitted) return admitted
  const {command, contentHash} = admitted
  const refused = (r: Refused): Answer => refusal(authority, command, r)
  const stored = (document: string): Answer => ({
    receipt: JSON.parse(document) as OrganizationReceipt,
  })
  const answers: Answers<Answer> = {refused, stored}
  const shape = checkShape(command)
  if (shape) return refused(shape)

  const key = {actorId: command.actor.id, actionId: command.actionId, contentHash}
  const ingress: Ingress = {authority, command, log: authority.store.organizationLog(), key, answers}
  const earlier = await earlierAnswer(ingress.log, key, answers)
  if (earlier) return earlier
  const payload = payloadError(command.kind, command.payload)
  if (payload) return refused(payload)
  const subject =
    command.kind === SESSION_OPEN ? sessionSubject(authority, command) : cardSubject(authority, command, commandBytes)
  if ('code' in subject) return refused(subject)
  return untilAnswered(
    () => appendOnce(ingress, subject),
    () => refused(opaque('INTERNAL_ERROR', 'append', 'the Organization log kept moving: gave up')),
  )
}

/** Step 2: an Organization-scoped kind, from a service, outside every Group and epoch. */
function checkShape(command: OrgCommand): Refused | null {
  if (!isOrganizationKind(command.kind))
    return told('INVALID_COMMAND', 'envelope', `${command.kind} is not an Organization-scoped Command`)
  if (command.actor.type !== 'service')
    return told('AUTH_FORBIDDEN', 'envelope', `only a service issues ${command.kind}`)
  const scoped = [command.groupId, command.sessionEpoch, command.membershipEpoch, command.coordinatorEpoch]
  return scoped.some((v) => v !== undefined)
    ? told('INVALID_COMMAND', 'envelope', 'an Organization-scoped Command carries no groupId or epochs')
    : null
}

/** Step 6 once: the next version of the subject, signed and appended, or RETRY when the version moved. */
async function appendOnce(ingress: Ingress, subject: Subject): Promise<Answer | Retry> {
  const {authority, command, log, key, answers} = ingress
  const eventKind = EVENT_OF[command.kind]!
  const current = await log.currentVersion(eventKind, subject.subjectId)
  const version = subject.version ?? current + 1
  // §6.1: a card version is registered once and only upward; §6.3: epochs strictly increase.
  if (version <= current)
    return (
      (await earlierAnswer(log, key, answers)) ??
      answers.refused(told('INVALID_COMMAND', 'append', `version ${version} is not above the current ${current}`))
    )
  const occurredAt = authority.clock()
  const eventId = authority.newId()
  const payload = subject.payload(version)
  const {bytes} = signedEvent(authority, command, key.contentHash, {eventId, kind: eventKind, occurredAt, payload})
  const entry: OrgEntry = {eventId, kind: eventKind, subjectId: subject.subjectId, version, bytes}
  const receipt: OrganizationReceipt = {
    actionId: command.actionId,
    actor: {type: command.actor.type, id: command.actor.id},
    eventKind,
    eventIds: [eventId],
    subjectId: subject.subjectId,
    version,
  }
  const outcome = await log.append(entry, current, {...key, document: JSON.stringify(receipt)})
  return appendAnswer(outcome, {...answers, appended: () => ({receipt})})
}

interface Subject {
  subjectId: string
  /** A fixed version (card version), or undefined for "the next one" (Session Epoch). */
  version?: number
  payload(version: number): JsonObject
}

/** §6.3: only this Group Authority's own identity service opens sessions, for registered Agents. */
function sessionSubject(authority: Authority, command: OrgCommand): Subject | Refused {
  if (command.actor.id !== authority.principal.id)
    return told('AUTH_FORBIDDEN', 'policy', "only this authority's identity service opens sessions")
  const agentId = command.payload.agentId as string
  const registry = authority.registry.resolve()
  if (registry instanceof RegistryFault) return opaque('INTERNAL_ERROR', 'policy', `registry: ${registry.reason}`)
  const known = [...registry.bindings.values()].some((b) => b.principal.type === 'agent' && b.principal.id === agentId)
  if (!known) return told('INVALID_COMMAND', 'policy', `${agentId} is not a registered Agent`)
  return {subjectId: agentId, payload: (sessionEpoch) => ({agentId, sessionEpoch})}
}

/**
 * §6.1: the Organization issues and signs each Agent Card. The embedded card is a Signed Document
 * of its own, verified with the six stages; its signer must be the issuing service itself and it
 * must belong to this Organization.
 */
function cardSubject(authority: Authority, command: OrgCommand, commandBytes: Uint8Array): Subject | Refused {
  // The card exactly as it stood in the received Command (principle 4), never a re-serialization.
  const bytes = Buffer.from(sourcesIn(commandBytes)(['payload', 'agentCard']) ?? '', 'utf8')
  const card = verify('agent-card', bytes, authority.registry)
  // The embedded card is a Signed Document: how it fails verification stays opaque (§6.4).
  if (card instanceof Rejection)
    return opaque(card.code === 'SCHEMA_VALIDATION_FAILED' ? 'SCHEMA_VALIDATION_FAILED' : 'INVALID_COMMAND', 'embedded')
  if (card.principal.id !== command.actor.id)
    return told('AUTH_FORBIDDEN', 'policy', 'the Agent Card is signed by another service than the Command')
  const doc = card.document as unknown as {agentId: string; organizationId: string; cardVersion: number}
  if (doc.organizationId !== authority.store.config.organizationId)
    return told('INVALID_COMMAND', 'policy', `the Agent Card is for Organization ${doc.organizationId}`)
  return {
    subjectId: doc.agentId,
    version: doc.cardVersion,
    payload: (cardVersion) => ({
      agentId: doc.agentId,
      cardVersion,
      cardHash: card.signingHash,
      agentCard: card.document,
    }),
  }
}
