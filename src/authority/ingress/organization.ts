// The Organization-scoped Command path (spec §6.1, §6.3, §15.1/§15.2; ACCEPTANCE H3, H8): the
// two bootstrap kinds that belong to no Group. The order mirrors Group ingress:
//   1 acceptNew: six-stage verification, freshness, first admission
//   2 shape: no groupId and no epochs (the schema says so too; re-checked here)
//   3 idempotency by (actor, Action ID) against the Organization log receipt
//   4 payload schema (schemas/payloads/<kind>.schema.json)
//   5 authorization
//   6 decide on the subject's current version, sign the Event with the authority key, and append
//      Event + receipt atomically; a moved version (another process) decides again.
// The Events omit groupId, sequence and aggregateRevision (H8).
//
// Why a function beside ingress.submit() rather than inside it: submit()'s receipt type is the
// Group receipt (groupId and sequences) every Group caller relies on; these facts have neither.

import {acceptNew} from '../../admission/accept.js'
import type {Authority} from '../authority.js'
import {checkPayload} from './payloads.js'
import {internalError} from './command.js'
import {type ErrorCode, type ProtocolError, protocolError} from '../../errors.js'
import {type JsonObject, sourcesIn} from '../../json/parse.js'
import type {Principal} from '../../signing/profiles.js'
import {RegistryFault} from '../../signing/registry.js'
import {sign} from '../../signing/sign.js'
import {Rejection, verify} from '../../signing/verify.js'
import type {OrgEntry} from '../../store/org-log.js'

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

const ATTEMPTS = 5

export async function submitOrganizationCommand(authority: Authority, commandBytes: Uint8Array): Promise<OrganizationSubmitResult> {
  try {
    return await submitUnguarded(authority, commandBytes)
  } catch (e) {
    return internalError(authority, 'organization ingress', e)
  }
}

async function submitUnguarded(authority: Authority, commandBytes: Uint8Array): Promise<OrganizationSubmitResult> {
  const accepted = await acceptNew({bytes: commandBytes, kind: 'command', subject: 'organization ingress'}, authority.registry, authority.store)
  if (accepted instanceof Rejection) return {error: protocolError(accepted.code, authority.clock())}
  const command = accepted.verified.document as unknown as OrgCommand
  const fail = (code: ErrorCode): OrganizationSubmitResult => ({error: {...protocolError(code, authority.clock()), relatedActionId: command.actionId}})

  if (!isOrganizationKind(command.kind)) return fail('INVALID_COMMAND')
  if (command.actor.type !== 'service') return fail('AUTH_FORBIDDEN')
  const scoped = [command.groupId, command.sessionEpoch, command.membershipEpoch, command.coordinatorEpoch]
  if (scoped.some((v) => v !== undefined)) return fail('INVALID_COMMAND')

  const log = authority.store.organizationLog()
  const contentHash = accepted.verified.signingHash
  const answered = async (): Promise<OrganizationSubmitResult | null> => {
    const prior = await log.receipt(command.actor.id, command.actionId)
    if (prior === null) return null
    return prior.contentHash === contentHash ? {receipt: JSON.parse(prior.document) as OrganizationReceipt} : fail('ACTION_ID_COLLISION')
  }
  const earlier = await answered()
  if (earlier) return earlier

  const payload = checkPayload(command.kind, command.payload)
  if (payload === 'unknown-kind') return fail('INVALID_COMMAND')
  if (payload === 'invalid') return fail('SCHEMA_VALIDATION_FAILED')

  const subject = command.kind === SESSION_OPEN ? sessionSubject(authority, command) : cardSubject(authority, command, commandBytes)
  if (typeof subject === 'string') return fail(subject)

  const eventKind = EVENT_OF[command.kind]!
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await log.currentVersion(eventKind, subject.subjectId)
    const version = subject.version ?? current + 1
    // §6.1: a card version is registered once and only upward; §6.3: epochs strictly increase.
    if (version <= current) return (await answered()) ?? fail('INVALID_COMMAND')
    const acceptedAt = authority.clock()
    const eventId = authority.newId()
    const unsigned: JsonObject = {
      protocolVersion: '0.1',
      eventId,
      kind: eventKind,
      actor: {type: command.actor.type, id: command.actor.id},
      cause: {type: 'command', id: command.actionId},
      correlationId: command.correlationId,
      occurredAt: acceptedAt,
      payload: subject.payload(version),
      acceptedBy: {type: authority.principal.type, id: authority.principal.id},
      commandHash: contentHash,
    }
    const {document} = sign('event', unsigned, authority.key)
    const entry: OrgEntry = {eventId, kind: eventKind, subjectId: subject.subjectId, version, bytes: Buffer.from(JSON.stringify(document), 'utf8')}
    const receipt: OrganizationReceipt = {
      actionId: command.actionId,
      actor: {type: command.actor.type, id: command.actor.id},
      eventKind,
      eventIds: [eventId],
      subjectId: subject.subjectId,
      version,
    }
    const document_ = JSON.stringify(receipt)
    const outcome = await log.append(entry, current, {actorId: command.actor.id, actionId: command.actionId, contentHash, document: document_})
    switch (outcome.status) {
      case 'appended':
        return {receipt}
      case 'duplicate':
        return {receipt: JSON.parse(outcome.receipt.document) as OrganizationReceipt}
      case 'action-id-collision':
        return fail('ACTION_ID_COLLISION')
      case 'version-moved':
        continue
      default:
        return fail('INTERNAL_ERROR')
    }
  }
  return fail('INTERNAL_ERROR')
}

interface Subject {
  subjectId: string
  /** A fixed version (card version), or undefined for "the next one" (Session Epoch). */
  version?: number
  payload(version: number): JsonObject
}

/** §6.3: only this Group Authority's own identity service opens sessions, for registered Agents. */
function sessionSubject(authority: Authority, command: OrgCommand): Subject | ErrorCode {
  if (command.actor.id !== authority.principal.id) return 'AUTH_FORBIDDEN'
  const agentId = command.payload.agentId as string
  const registry = authority.registry.resolve()
  if (registry instanceof RegistryFault) return 'INTERNAL_ERROR'
  const known = [...registry.bindings.values()].some((b) => b.principal.type === 'agent' && b.principal.id === agentId)
  if (!known) return 'INVALID_COMMAND'
  return {subjectId: agentId, payload: (sessionEpoch) => ({agentId, sessionEpoch})}
}

/**
 * §6.1: the Organization issues and signs each Agent Card. The embedded card is a Signed Document
 * of its own, verified with the six stages; its signer must be the issuing service itself and it
 * must belong to this Organization.
 */
function cardSubject(authority: Authority, command: OrgCommand, commandBytes: Uint8Array): Subject | ErrorCode {
  // The card exactly as it stood in the received Command (principle 4), never a re-serialization.
  const bytes = Buffer.from(sourcesIn(commandBytes)(['payload', 'agentCard']) ?? '', 'utf8')
  const card = verify('agent-card', bytes, authority.registry)
  if (card instanceof Rejection) return card.code === 'SCHEMA_VALIDATION_FAILED' ? 'SCHEMA_VALIDATION_FAILED' : 'INVALID_COMMAND'
  if (card.principal.id !== command.actor.id) return 'AUTH_FORBIDDEN'
  const doc = card.document as unknown as {agentId: string; organizationId: string; cardVersion: number}
  if (doc.organizationId !== authority.store.config.organizationId) return 'INVALID_COMMAND'
  return {
    subjectId: doc.agentId,
    version: doc.cardVersion,
    payload: (cardVersion) => ({agentId: doc.agentId, cardVersion, cardHash: card.signingHash, agentCard: card.document}),
  }
}
