// A long Group log built fast, for the cold-start bench and tests (issue #15): message.post
// decisions of the real decider, numbered, signed and applied by ingress's seal() with the
// Authority's key, and appended `batch` Events per store append (one receipt each). Every Event
// is a real signed Event a cold start must verify and fold; only the per-Command ingress steps
// (Command verification, admission, idempotency) are skipped, which a log's replay never repeats.

import {randomUUID} from 'node:crypto'
import type {Authority} from '../src/authority/authority.js'
import {type EventDraft, decide} from '../src/authority/decide/index.js'
import type {GroupCommand} from '../src/authority/ingress/group-command.js'
import {validWorkContract} from '../src/authority/ingress/payloads.js'
import {seal} from '../src/authority/ingress/seal.js'
import type {Principal} from '../src/signing/profiles.js'

const uuid = () => `urn:uuid:${randomUUID()}`

export interface PostOptions {
  /** Events per append (default 500). */
  batch?: number
  /**
   * Tell the Authority of every append as the live path does (Authority.committed): its cache
   * follows, and it writes its checkpoints every CHECKPOINT_EVERY Events, as a running server
   * would have. Default false: the log alone, as an older build or another process left it.
   */
  live?: boolean
}

/**
 * Appends `count` message.posted Events by `author` (an active member) to the existing Group
 * `groupId`, on the Authority's current state. Returns the Message IDs posted.
 */
export async function appendPosts(
  authority: Authority,
  groupId: string,
  author: Principal,
  count: number,
  {batch = 500, live = false}: PostOptions = {},
): Promise<string[]> {
  let state = await authority.current(groupId)
  if (state === null) throw new Error(`no Group ${groupId}`)
  const messageIds: string[] = []
  for (let done = 0; done < count;) {
    const n = Math.min(batch, count - done)
    const command: GroupCommand = {
      kind: 'message.post',
      actionId: uuid(),
      actor: author,
      groupId,
      membershipEpoch: 1,
      correlationId: uuid(),
      payload: {text: 'bulk'},
    }
    const acceptedAt = authority.clock()
    const drafts: EventDraft[] = []
    for (let i = 0; i < n; i++) {
      const decided = decide(
        state,
        {...command, payload: {text: `post ${done + i}`}},
        {
          acceptedAt,
          newId: uuid,
          validWorkContract,
        },
      )
      if ('error' in decided) throw new Error(`message.post refused: ${decided.error}`)
      drafts.push(...decided.events)
      for (const e of decided.events) messageIds.push((e.payload as {message: {messageId: string}}).message.messageId)
    }
    const contentHash = `sha256:${'0'.repeat(64 - String(done).length)}${done}`
    const {stored, next, receipt} = seal(authority, state, command, contentHash, acceptedAt, drafts)
    const outcome = await authority.store.append(groupId, state.sequence, stored, receipt)
    if (outcome.status !== 'appended') throw new Error(`bulk append: ${outcome.status}`)
    if (live) authority.committed(next, stored)
    state = next
    done += n
  }
  return messageIds
}
