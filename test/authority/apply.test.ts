// apply() refuses what does not fold: an Event out of sequence or revision, for another Group, an
// opening Event on an existing Group, anything before the Group is opened, and a kind this
// authority never emits (the one check the typed narrowing makes, model/events.ts knownEvent).

import {describe, expect, it} from 'vitest'
import {ApplyError, apply, type AppliedEvent} from '../../src/authority/apply/index.js'
import {decide} from '../../src/authority/decide/index.js'
import {validWorkContract} from '../../src/authority/ingress/payloads.js'
import {isEventKind} from '../../src/authority/model/events.js'
import type {GroupState} from '../../src/authority/model/state.js'
import {missionPayload, owner} from '../support/authority-helpers.js'

const groupId = 'urn:mwp:test:group:apply'

/** The two opening Events of a Group, as the decider drafts them, numbered 1 and 2. */
function opening(): AppliedEvent[] {
  let n = 0
  const ctx = {acceptedAt: '2026-11-30T00:00:00Z', newId: () => `urn:mwp:test:apply:${++n}`, validWorkContract}
  const create = {
    actionId: 'urn:mwp:test:a:1',
    actor: owner.principal!,
    kind: 'mission.create',
    groupId,
    payload: missionPayload(groupId),
  }
  const d = decide(null, create, ctx)
  if ('error' in d) throw new Error(d.reason)
  return d.events.map((e, i) => ({
    kind: e.kind,
    groupId,
    sequence: i + 1,
    aggregateRevision: i + 1,
    payload: e.payload,
  }))
}

const opened = (): GroupState => opening().reduce<GroupState | null>(apply, null)!

/** An Event of `kind` at `sequence` (and the revision that follows), with an empty payload. */
const bare = (kind: string, sequence: number): AppliedEvent => ({
  kind,
  groupId,
  sequence,
  aggregateRevision: sequence,
  payload: {},
})

const refusal = (state: GroupState | null, event: AppliedEvent): string => {
  try {
    apply(state, event)
  } catch (e) {
    expect(e).toBeInstanceOf(ApplyError)
    return (e as Error).message
  }
  throw new Error(`${event.kind} applied`)
}

describe('apply refuses what does not fold', () => {
  it('an Event out of sequence, out of revision or for another Group', () => {
    const state = opened()
    const next = bare('work.proposed', 3)
    expect(refusal(state, {...next, sequence: 4})).toBe('event sequence 4 does not follow 2')
    expect(refusal(state, {...next, aggregateRevision: 2})).toBe('event 3 carries revision 2, expected 3')
    const other = 'urn:mwp:test:group:other'
    expect(refusal(state, {...next, groupId: other})).toBe(`event for Group ${other} applied to ${groupId}`)
  })

  it('an opening Event on an existing Group, and any other Event before the Group is opened', () => {
    const [created] = opening()
    expect(refusal(opened(), {...created!, sequence: 3, aggregateRevision: 3})).toBe(
      'mission.created on an existing Group',
    )
    expect(refusal(null, bare('membership.changed', 1))).toBe('membership.changed before mission.created')
  })

  it('a kind this authority never emits: before the Group is opened, and after', () => {
    const unknown = 'ext.example.never_emitted'
    expect(isEventKind(unknown)).toBe(false)
    expect(refusal(null, bare(unknown, 1))).toBe(`${unknown} before mission.created`)
    expect(refusal(opened(), bare(unknown, 3))).toBe(`unknown Event kind ${unknown}`)
    // An inherited member name is not a kind either.
    expect(isEventKind('toString')).toBe(false)
    expect(refusal(opened(), bare('toString', 3))).toBe('unknown Event kind toString')
  })

  it('the opening Events fold into the Group they open', () => {
    const state = opened()
    expect(state).toMatchObject({groupId, sequence: 2, revision: 2})
    expect(state.mission).toMatchObject({state: 'active', coordinator: {coordinatorEpoch: 1}})
    expect(
      Object.values(state.members)
        .map((m) => m.role)
        .sort(),
    ).toEqual(['coordinator', 'mission_owner'])
  })
})
