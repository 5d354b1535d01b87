// The Group's Message index (§9: corrections, retractions and redactions must find the Message
// they name) without making each message.posted cost O(Messages in the Group). State is immutable
// (apply returns a new object), so a flat map would be copied whole on every post; the index is
// split into a fixed number of buckets by a hash of the Message ID, and a post copies one bucket
// and the bucket table. Deterministic, so replay reproduces it (and its canonical hash) exactly.

import type {MessageIndexEntry} from './cooperation-state.js'

/** Bucket key → Message ID → entry. */
export type MessageIndex = Record<string, Record<string, MessageIndexEntry>>

const BUCKETS = 1024

/** FNV-1a (32-bit) of the ID, as a short bucket key. */
function bucketOf(id: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
  return ((h >>> 0) % BUCKETS).toString(36)
}

export function messageEntry(index: MessageIndex | undefined, id: string): MessageIndexEntry | undefined {
  return index?.[bucketOf(id)]?.[id]
}

export function withMessage(index: MessageIndex | undefined, id: string, entry: MessageIndexEntry): MessageIndex {
  const b = bucketOf(id)
  return {...index, [b]: {...index?.[b], [id]: entry}}
}
