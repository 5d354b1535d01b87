// The Message index's trie (src/authority/model/message-index.ts) is part of the Group state, whose
// canonical hash archive snapshots bind: however a node is copied, the index must hold exactly
// the members the plain nested-spread definition gives, and every entry must be found again.

import {describe, expect, it} from 'vitest'
import type {MessageIndexEntry} from '../../src/authority/model/cooperation-state.js'
import {type MessageIndex, messageEntry, withMessage} from '../../src/authority/model/message-index.js'
import {canonicalHash} from '../../src/json/jcs.js'

/** The definition: the path's three nodes and the leaf copied by spreading, the entry set. */
function reference(index: MessageIndex | undefined, id: string, entry: MessageIndexEntry): MessageIndex {
  const probe = withMessage(undefined, id, entry)
  const a = Object.keys(probe)[0]!
  const b = Object.keys(probe[a]!)[0]!
  const c = Object.keys(probe[a]![b]!)[0]!
  const l1 = index?.[a]
  const l2 = l1?.[b]
  return {...index, [a]: {...l1, [b]: {...l2, [c]: {...l2?.[c], [id]: entry}}}}
}

describe('Message index', () => {
  it('holds what the nested-spread definition holds (same canonical hash), finds every entry, and never changes an earlier index', () => {
    let index: MessageIndex | undefined
    let expected: MessageIndex | undefined
    const entries = Array.from(
      {length: 600},
      (_, i) =>
        [
          `urn:uuid:00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          {sequence: i + 1} as unknown as MessageIndexEntry,
        ] as const,
    )
    for (const [id, entry] of entries) {
      const before = index === undefined ? undefined : canonicalHash(index)
      const next = withMessage(index, id, entry)
      if (index !== undefined) expect(canonicalHash(index)).toBe(before) // immutable: the old state is untouched
      index = next
      expected = reference(expected, id, entry)
    }
    expect(index).toEqual(expected)
    expect(canonicalHash(index!)).toBe(canonicalHash(expected!))
    for (const [id, entry] of entries) expect(messageEntry(index, id)).toBe(entry)
    // A later entry for the same Message (a correction) replaces it in place.
    const [firstId] = entries[0]!
    const corrected = {sequence: 999} as unknown as MessageIndexEntry
    expect(messageEntry(withMessage(index, firstId, corrected), firstId)).toBe(corrected)
  })
})
