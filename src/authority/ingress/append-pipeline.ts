// Pipelined single-Group appends (ingress/command.ts step 6). One Group's Commands are still decided one
// at a time, in the Group's in-process queue, but the queue moves on as soon as a Command's append
// is handed to the store instead of after its COMMIT: the next Command decides on the state that
// append produces (the Group's "tip"), and the store's group commit writes both in one
// transaction. Every actor still gets its receipt only after its own append committed.
//
// Safety: a Command decided on the tip names the tip's last Event ID as `expectedHeadEventId`
// (GroupLog.append), so the store writes it only on top of exactly the Events it was decided on.
// If an earlier append of the chain is refused or fails, every later one in the chain is refused
// as `head-moved` (nothing written) and decided again, in the queue, on the stored state. A
// refusal decided on a tip is answered only once the tip's append committed (else the Command is
// decided again): no actor is refused because of Events that were never appended. The tip is
// never the committed state: `Authority.current()` and every reader keep seeing the store.

import type {AppendOutcome, Receipt, StoredEvent} from '../../store/group-log.js'
import type {MessageRow} from '../../store/message-table.js'
import type {Authority} from '../authority.js'
import type {GroupState} from '../model/state.js'

/**
 * The Message rows (store/message-table.ts) of one in-flight append: the store has them only once
 * it committed, so a follow-up decided on the tip finds its target here (ingress/message-lookup.ts).
 */
export interface PendingMessages {
  readonly chain: number
  readonly rows: readonly MessageRow[]
}

/** The newest in-flight append of a Group: the state it produces and what it ends with. */
export interface Tip {
  /** Appends decided one on top of the other share a chain; a failure ends the whole chain. */
  readonly chain: number
  readonly state: GroupState
  readonly lastEventId: string
  /** Settles (never rejects) when the append is decided by the store. */
  readonly settled: Promise<unknown>
  /** Whether this append (and so every earlier one of its chain) was appended. */
  readonly appended: Promise<boolean>
}

let chains = 0

/** The Group's in-flight tip, if an append of it has not settled yet. Call inside the Group's queue. */
export function tipOf(authority: Authority, groupId: string): Tip | undefined {
  return authority.tips.get(groupId)
}

/**
 * Waits until no append of these Groups is in flight (for Commands that read or write other
 * Groups, or check the stored state itself: they decide on committed state only).
 */
export async function drainTips(authority: Authority, groupIds: readonly string[]): Promise<void> {
  for (;;) {
    const pending = groupIds.map((g) => authority.tips.get(g)?.settled).filter((p) => p !== undefined)
    if (pending.length === 0) return
    await Promise.all(pending)
  }
}

/**
 * Hands the append to the store and makes its result the Group's tip. `tip` is the tip the
 * Command was decided on (undefined: decided on the stored state, `state`). Call inside the
 * Group's queue; the returned outcome may be awaited outside it.
 */
export function appendOnTip(
  authority: Authority,
  groupId: string,
  tip: Tip | undefined,
  state: GroupState | null,
  stored: StoredEvent[],
  receipt: Receipt,
  next: GroupState,
): Promise<AppendOutcome> {
  const map = authority.tips
  const chain = tip?.chain ?? ++chains
  const outcome = authority.store.append(groupId, state?.sequence ?? 0, stored, receipt, tip?.lastEventId)
  const rows = stored.flatMap((e) => (e.message !== undefined ? [e.message] : []))
  const unpend = rows.length > 0 ? pend(authority, groupId, {chain, rows}) : () => {}
  const settled = outcome.then(
    (o) => {
      unpend()
      const current = map.get(groupId)
      // Appended: the tip is the stored state once nothing later is in flight. Refused or failed:
      // every later append of this chain is refused too, so the chain's tip goes.
      if (current !== undefined && (o.status === 'appended' ? current.state === next : current.chain === chain))
        map.delete(groupId)
      return o
    },
    (e: unknown) => {
      unpend()
      if (map.get(groupId)?.chain === chain) map.delete(groupId)
      throw e
    },
  )
  const done = settled.then(
    (o) => o.status === 'appended',
    () => false,
  )
  map.set(groupId, {chain, state: next, lastEventId: stored[stored.length - 1]!.eventId, settled: done, appended: done})
  return settled
}

/** Records an append's Message rows until it settles; returns the function that forgets them. */
function pend(authority: Authority, groupId: string, pending: PendingMessages): () => void {
  const all = authority.pendingMessages
  const of = all.get(groupId) ?? new Set<PendingMessages>()
  all.set(groupId, of.add(pending))
  return () => {
    of.delete(pending)
    if (of.size === 0 && all.get(groupId) === of) all.delete(groupId)
  }
}

/** The Message rows of the in-flight appends of `tip`'s chain, oldest first (nothing without a tip). */
export function pendingRows(authority: Authority, groupId: string, tip: Tip | undefined): MessageRow[] {
  if (tip === undefined) return []
  return [...(authority.pendingMessages.get(groupId) ?? [])].filter((p) => p.chain === tip.chain).flatMap((p) => p.rows)
}
