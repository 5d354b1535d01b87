// §15.1 idempotency (ACCEPTANCE H5/H6), the same on both Command paths: a Command is keyed by
// (actor ID, Action ID) plus the hash of its signed content. The same key and content get the
// stored receipt document back verbatim; the same key with other content is ACTION_ID_COLLISION.
// The store applies the same rule inside the append, so a Command accepted by another process
// between the lookup and the append is answered by its receipt too.

import type {AppendOutcome} from '../../store/group-log.js'
import type {OrgAppendOutcome} from '../../store/org-log.js'
import {type Refused, opaque, told} from './answers.js'
import {RETRY, type Retry} from './retry.js'

export interface ReceiptKey {
  actorId: string
  actionId: string
  contentHash: string
}

/** The receipts of one log: the Groups' (the store) or the Organization log's. */
export interface ReceiptLog {
  receipt(actorId: string, actionId: string): Promise<{contentHash: string; document: string} | null>
}

/** How a path turns a stored receipt document, or a refusal, into its answer. */
export interface Answers<R> {
  stored(document: string): R
  refused(r: Refused): R
}

/** The answer an earlier acceptance of the key gives, or null when there is none. */
export async function earlierAnswer<R>(log: ReceiptLog, key: ReceiptKey, answers: Answers<R>): Promise<R | null> {
  const prior = await log.receipt(key.actorId, key.actionId)
  if (prior === null) return null
  return prior.contentHash === key.contentHash ? answers.stored(prior.document) : answers.refused(COLLISION)
}

/** The answer to an append's outcome; `appended()` when this append wrote, RETRY when the head or version moved. */
export function appendAnswer<R>(
  outcome: AppendOutcome | OrgAppendOutcome,
  answers: Answers<R> & {appended(): R},
): R | Retry {
  switch (outcome.status) {
    case 'appended':
      return answers.appended()
    case 'duplicate':
      return answers.stored(outcome.receipt.document)
    case 'action-id-collision':
      return answers.refused(COLLISION)
    case 'head-moved':
    case 'version-moved':
      return RETRY // another process appended, or an earlier append of the Group's chain failed
    default:
      // sequence-mismatch / duplicate-event-id / invalid are our bugs; unavailable and
      // indeterminate leave the outcome unknown — the actor retries the same bytes and the
      // receipt lookup answers.
      return answers.refused(opaque('INTERNAL_ERROR', 'append', `append outcome ${outcome.status}`))
  }
}

/** The sender's own Action ID with other signed content: it needs a new Action ID (§19). */
const COLLISION: Refused = told(
  'ACTION_ID_COLLISION',
  'idempotency',
  'this Action ID was already used by this actor with other signed content: sign a new Command with a new Action ID',
)
