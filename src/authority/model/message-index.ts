// The Group's Message index (§9: corrections, retractions and redactions must find the Message
// they name) without making each message.posted cost O(Messages in the Group). State is immutable
// (apply returns a new object), so a flat map would be copied whole on every post. The index is a
// fixed-depth trie over a hash of the Message ID — three levels of 16 — so a post copies three
// 16-entry nodes and one small leaf (Messages / 4096 entries). Deterministic, so replay
// reproduces it (and its canonical hash) exactly.

import type {MessageIndexEntry} from './cooperation-state.js'

/** Nibble → nibble → nibble → Message ID → entry. */
export type MessageIndex = Record<string, Record<string, Record<string, Record<string, MessageIndexEntry>>>>

/** Three hex digits of the FNV-1a (32-bit) hash of the ID: the path to its leaf. */
function pathOf(id: string): [string, string, string] {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
  const hex = (h >>> 0).toString(16).padStart(8, '0')
  return [hex[0]!, hex[1]!, hex[2]!]
}

export function messageEntry(index: MessageIndex | undefined, id: string): MessageIndexEntry | undefined {
  const [a, b, c] = pathOf(id)
  return index?.[a]?.[b]?.[c]?.[id]
}

const NIBBLES = '0123456789abcdef'.split('')

/**
 * A trie node copied with one member replaced. An explicit loop over the 16 possible keys, not an
 * object spread: the digit keys are array indices to V8, and spreading an object that mixes them
 * with the letter keys took 20 µs per message.post (6 µs this way; the JSON, and so the canonical
 * state hash, is the same).
 */
function nodeWith<T>(node: Record<string, T> | undefined, key: string, value: T): Record<string, T> {
  const copy: Record<string, T> = {}
  if (node !== undefined) {
    for (const k of NIBBLES) {
      const v = node[k]
      if (v !== undefined) copy[k] = v
    }
  }
  copy[key] = value
  return copy
}

export function withMessage(index: MessageIndex | undefined, id: string, entry: MessageIndexEntry): MessageIndex {
  const [a, b, c] = pathOf(id)
  const l1 = index?.[a]
  const l2 = l1?.[b]
  return nodeWith(index, a, nodeWith(l1, b, nodeWith(l2, c, {...l2?.[c], [id]: entry})))
}
