// The Event envelope of both Command paths (spec §15.2, §17): one decided fact, caused by the
// Command, accepted and signed by this Group Authority with its service key. Group Events carry
// their place in the Group; Organization-scoped Events carry none (ACCEPTANCE H8).

import type {JsonObject} from '../../json/parse.js'
import type {Principal} from '../../signing/profiles.js'
import {sign} from '../../signing/sign.js'
import type {Authority} from '../authority.js'

/** The Command fields every Event it causes repeats. */
export interface Cause {
  actionId: string
  actor: Principal
  correlationId: string
}

export interface EventFacts {
  eventId: string
  kind: string
  /** Group Events only. */
  position?: {groupId: string; sequence: number; aggregateRevision: number}
  conversationId?: string
  occurredAt: string
  payload: JsonObject
  /** §17.4: the Command's Extension Profile data, relayed unchanged. */
  extensions?: JsonObject
}

/** The signed Event document and its exact bytes, as stored and delivered. */
export function signedEvent(
  authority: Authority,
  cause: Cause,
  contentHash: string,
  facts: EventFacts,
): {document: JsonObject; bytes: Buffer} {
  const at = facts.position
  const unsigned: JsonObject = {
    protocolVersion: '0.1',
    eventId: facts.eventId,
    kind: facts.kind,
    ...(at !== undefined ? {groupId: at.groupId, sequence: at.sequence, aggregateRevision: at.aggregateRevision} : {}),
    actor: {type: cause.actor.type, id: cause.actor.id},
    cause: {type: 'command', id: cause.actionId},
    correlationId: cause.correlationId,
    ...(facts.conversationId !== undefined ? {conversationId: facts.conversationId} : {}),
    occurredAt: facts.occurredAt,
    payload: facts.payload,
    ...(facts.extensions !== undefined ? {extensions: facts.extensions} : {}),
    acceptedBy: {type: authority.principal.type, id: authority.principal.id},
    commandHash: contentHash,
  }
  const {document} = sign('event', unsigned, authority.key)
  return {document, bytes: Buffer.from(JSON.stringify(document), 'utf8')}
}
