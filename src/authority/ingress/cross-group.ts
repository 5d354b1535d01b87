// Ingress support for Commands whose transition spans several Groups (spec §12, §14): which
// Groups a Command involves (so the Authority serializes on all of them, in sorted order), their
// states for the decider, and the one atomic multi-Group append of the decided Events
// (store/multi-append.ts). Every other Command keeps the single-Group path unchanged.

import type {JsonObject} from '../../json/parse.js'
import type {Receipt, StoredEvent} from '../../store/group-log.js'
import type {GroupAppend} from '../../store/multi-append.js'
import type {Authority} from '../authority.js'
import type {EventDraft, ReceivedCommand} from '../decide/index.js'
import {RESOURCE_USAGE_RECORD, runningChild} from '../model/mission-tree.js'
import {BOUNDED_OFFLINE_EXECUTION} from '../model/offline-execution.js'
import type {GroupState} from '../model/state.js'
import {type Refused, opaque} from './answers.js'
import {appendAnswer} from './idempotency.js'
import type {Retry} from './retry.js'

/** Kinds whose decision reads (and may append to) the Mission ancestry of the Command's Group. */
const ANCESTRY_KINDS: ReadonlySet<string> = new Set([
  RESOURCE_USAGE_RECORD,
  'mission.create_child',
  'mission.approve',
  'mission.terminate',
  'mission.cancel',
  'work.cancel',
  'work.fail',
])

/** Kinds that can end running child Missions anywhere below the tree's root (cascadeCancellation). */
const TREE_KINDS: ReadonlySet<string> = new Set(['mission.terminate', 'mission.cancel', 'work.cancel', 'work.fail'])

/** Bounds a corrupt (cyclic) parent chain; far beyond any legitimate Mission depth. */
const MAX_CHAIN = 1000

/**
 * The Groups `command` involves: its own, plus its Mission ancestry for the kinds above, the child
 * Group of mission.create_child and the earlier Group of mission.create_follow_up. Read before
 * serializing: parent links are fixed when a Group is created, so the set cannot change under us.
 */
export async function involvedGroups(
  authority: Authority,
  command: ReceivedCommand & {groupId: string; extensions?: JsonObject},
): Promise<string[]> {
  const ids = [command.groupId]
  const p = command.payload as Record<string, unknown> | undefined
  if (command.kind === 'mission.create_follow_up') {
    const earlier = (p?.followUpTo as {groupId?: unknown} | undefined)?.groupId
    if (typeof earlier === 'string') ids.push(earlier)
    return [...new Set(ids)]
  }
  // §11.5: a reconciled offline delta is charged up the ancestry like a usage record.
  const offline = command.extensions !== undefined && Object.hasOwn(command.extensions, BOUNDED_OFFLINE_EXECUTION)
  if (!ANCESTRY_KINDS.has(command.kind) && !offline) return ids
  if (command.kind === 'mission.create_child' && typeof p?.groupId === 'string') ids.push(p.groupId)
  const chain = new Set([command.groupId])
  let state = await authority.current(command.groupId)
  for (let i = 0; state?.mission.parent !== undefined && i < MAX_CHAIN; i++) {
    const up = state.mission.parent.groupId
    if (chain.has(up)) break // a cyclic chain: the decider reports it
    chain.add(up)
    state = await authority.current(up)
  }
  if (TREE_KINDS.has(command.kind)) {
    // The running descendants of the whole tree: an ending Mission (or one failed by an
    // indispensable child) cancels every child Mission still running below it.
    const root = [...chain].at(-1)!
    const queue = [root]
    while (queue.length > 0 && chain.size < MAX_CHAIN) {
      const s = await authority.current(queue.shift()!)
      for (const w of Object.values(s?.workItems ?? {})) {
        const g = runningChild(w)?.groupId
        if (g !== undefined && !chain.has(g)) {
          chain.add(g)
          queue.push(g)
        }
      }
    }
  }
  return [...new Set([...ids, ...chain])]
}

/** The states of the involved Groups other than the Command's own (null: no such Group yet). */
export async function otherStates(
  authority: Authority,
  groupIds: readonly string[],
  own: string,
): Promise<Record<string, GroupState | null>> {
  const out: Record<string, GroupState | null> = {}
  for (const g of groupIds) if (g !== own) out[g] = await authority.current(g)
  return out
}

/** True when a decided Event belongs to another Group than the Command's. */
export const crossesGroups = (own: string, drafts: readonly EventDraft[]) =>
  drafts.some((d) => d.groupId !== undefined && d.groupId !== own)

type Sealed = {stored: StoredEvent[]; next: GroupState; receipt: Receipt}
type Seal<C> = (
  authority: Authority,
  state: GroupState | null,
  command: C,
  contentHash: string,
  acceptedAt: string,
  drafts: EventDraft[],
) => Sealed

/**
 * Numbers, signs and applies each Group's Events (with ingress's own `seal`), then appends them
 * all with the one receipt atomically. The receipt is the Command's Group's, naming the other
 * Groups' Events in `linkedGroups`. RETRY when a head moved (decide again on fresh states).
 */
export async function appendAcross<C extends ReceivedCommand & {groupId: string}>(
  authority: Authority,
  command: C,
  own: GroupState | null,
  others: Readonly<Record<string, GroupState | null>>,
  contentHash: string,
  acceptedAt: string,
  drafts: EventDraft[],
  seal: Seal<C>,
): Promise<{document: Record<string, unknown>} | Refused | Retry> {
  const byGroup = new Map<string, EventDraft[]>([[command.groupId, []]])
  for (const d of drafts) {
    const g = d.groupId ?? command.groupId
    if (!byGroup.has(g)) byGroup.set(g, [])
    const {groupId: _ignored, ...draft} = d
    byGroup.get(g)!.push(draft)
  }
  if (byGroup.get(command.groupId)!.length === 0)
    return opaque('INTERNAL_ERROR', 'append', "no Event in the Command's own Group for its receipt")
  const appends: GroupAppend[] = []
  const nexts: GroupState[] = []
  const linked: {groupId: string; eventIds: string[]; firstSequence: number; lastSequence: number}[] = []
  let receipt: Receipt | undefined
  for (const [groupId, events] of byGroup) {
    const before = groupId === command.groupId ? own : (others[groupId] ?? null)
    const sealed = seal(authority, before, {...command, groupId}, contentHash, acceptedAt, events)
    appends.push({groupId, expectedHead: before?.sequence ?? 0, events: sealed.stored})
    nexts.push(sealed.next)
    if (groupId === command.groupId) receipt = sealed.receipt
    else
      linked.push({
        groupId,
        eventIds: sealed.stored.map((e) => e.eventId),
        firstSequence: sealed.stored[0]!.sequence,
        lastSequence: sealed.stored[sealed.stored.length - 1]!.sequence,
      })
  }
  const document = {...(JSON.parse(receipt!.document) as Record<string, unknown>), linkedGroups: linked}
  const full: Receipt = {...receipt!, document: JSON.stringify(document)}
  const outcome = await authority.store.appendGroups(appends, full)
  return appendAnswer<{document: Record<string, unknown>} | Refused>(outcome, {
    appended: () => {
      nexts.forEach((n, i) => authority.committed(n, appends[i]!.events))
      return {document}
    },
    stored: (stored) => ({document: JSON.parse(stored) as Record<string, unknown>}),
    refused: (r) => r,
  })
}
