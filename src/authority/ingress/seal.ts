// Step 9's first half on Group ingress: the decided drafts become numbered, signed Events (the
// exact bytes to store), the state they produce, and the Command's receipt.

import type {ErrorCode} from '../../errors.js'
import type {JsonObject} from '../../json/parse.js'
import type {Receipt, StoredEvent} from '../../store/group-log.js'
import {apply, revisionAfter} from '../apply/index.js'
import type {Authority} from '../authority.js'
import type {EventDraft} from '../decide/index.js'
import type {GroupState} from '../model/state.js'
import type {CommandReceipt} from './command.js'
import {signedEvent} from './event-envelope.js'
import type {GroupCommand} from './group-command.js'
import {policyRecordOf} from './policy-records.js'
import {type MessageRow, messageRowOf} from '../../store/message-table.js'
import {type MemberRow, memberRowsOf} from '../../store/member-table.js'
import {type LeaseRow, leaseRowsOf} from '../../store/lease-table.js'

/** `{message}` for an Event that posts or follows up a Message (its group_messages row), `{}` otherwise. */
function messageRowFor(draft: EventDraft): {message?: MessageRow} {
  const message = messageRowOf(draft.kind, draft.payload)
  return message !== undefined ? {message} : {}
}

/** `{members}` for an Event that carries Membership documents (their group_members rows), `{}` otherwise. */
function memberRowsFor(draft: EventDraft): {members?: MemberRow[]} {
  const members = memberRowsOf(draft.kind, draft.payload)
  return members.length > 0 ? {members} : {}
}

/** `{leases}` for an Event that opens or closes an Execution Lease (its group_leases rows), `{}` otherwise. */
function leaseRowsFor(draft: EventDraft): {leases?: LeaseRow[]} {
  const leases = leaseRowsOf(draft.kind, draft.payload)
  return leases.length > 0 ? {leases} : {}
}

export interface Sealed {
  stored: StoredEvent[]
  next: GroupState
  receipt: Receipt
}

/** Numbers, signs and applies the drafts; `rejectedWith` marks a refusal that still records history. */
export function seal(
  authority: Authority,
  state: GroupState | null,
  command: GroupCommand,
  contentHash: string,
  acceptedAt: string,
  drafts: EventDraft[],
  rejectedWith?: ErrorCode,
): Sealed {
  let next = state
  const stored: StoredEvent[] = []
  for (const draft of drafts) {
    const sequence = (next?.sequence ?? 0) + 1
    const aggregateRevision = revisionAfter(draft.kind, next?.revision ?? 0)
    const {document, bytes} = signedEvent(authority, command, contentHash, {
      eventId: draft.eventId,
      kind: draft.kind,
      position: {groupId: command.groupId, sequence, aggregateRevision},
      ...(draft.conversationId !== undefined ? {conversationId: draft.conversationId} : {}),
      occurredAt: acceptedAt,
      payload: draft.payload as JsonObject,
      ...(command.extensions !== undefined ? {extensions: command.extensions} : {}),
    })
    stored.push({
      eventId: draft.eventId,
      kind: draft.kind,
      sequence,
      aggregateRevision,
      bytes,
      ...policyRecordOf(draft),
      ...messageRowFor(draft),
      ...memberRowsFor(draft),
      ...leaseRowsFor(draft),
    })
    next = apply(next, document as unknown as Parameters<typeof apply>[1])
  }
  if (next === null || stored.length === 0) throw new Error('a Command is sealed with at least one Event')
  const receiptDoc: CommandReceipt = {
    actionId: command.actionId,
    actor: {type: command.actor.type, id: command.actor.id},
    groupId: command.groupId,
    eventIds: stored.map((e) => e.eventId),
    firstSequence: stored[0]!.sequence,
    lastSequence: stored[stored.length - 1]!.sequence,
    aggregateRevision: next.revision,
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
  return {stored, next, receipt}
}
