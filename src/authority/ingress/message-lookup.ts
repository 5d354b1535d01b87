// Step 7's Message lookup (spec §9; issue #15): a message.correct / retract / redact names a
// Message the decider must judge, and the Group state no longer holds the Messages. Ingress looks
// it up in the store's Message table (store/message-table.ts) and over the Message rows of the
// in-flight appends the Command is decided on (append-pipeline.ts), and hands it to the pure
// decider in DecideContext.message.

import type {MessageRecord, MessageRow} from '../../store/message-table.js'
import type {Authority} from '../authority.js'
import type {GroupCommand} from './group-command.js'
import {type Tip, pendingRows} from './append-pipeline.js'

const FOLLOW_UPS: ReadonlySet<string> = new Set(['message.correct', 'message.retract', 'message.redact'])

/** What a row does to the Message it names (rows are idempotent: applying a committed one again changes nothing). */
function applied(record: MessageRecord | null, row: MessageRow): MessageRecord | null {
  if ('posted' in row) return record ?? {...row.posted, status: 'posted', redacted: false}
  if (record === null) return null
  return row.change === 'redacted' ? {...record, redacted: true} : {...record, status: row.change}
}

/**
 * The named Message for a follow-up Command (null: not in the Group), undefined for other kinds.
 * Call inside the Group's queue with the tip the Command is decided on.
 */
export async function targetMessage(
  authority: Authority,
  command: GroupCommand,
  tip: Tip | undefined,
): Promise<MessageRecord | null | undefined> {
  if (!FOLLOW_UPS.has(command.kind)) return undefined
  const id = command.payload.messageId
  if (typeof id !== 'string') return null
  // Taken before the read: an append that commits during the read leaves its rows here or in
  // the table (or both), never in neither.
  const pending = pendingRows(authority, command.groupId, tip).filter((r) => r.messageId === id)
  let record = await authority.store.messages().get(command.groupId, id)
  for (const row of pending) record = applied(record, row)
  return record
}
