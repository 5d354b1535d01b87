// No existence oracle (spec §17.2, §19 GROUP_NOT_FOUND "absent or intentionally undisclosed",
// ACCEPTANCE J4): an actor that never held a Membership in a Group cannot tell that Group from one
// that does not exist — same code, same error object apart from its time and Action ID — whatever
// Command kind it sends. A former member already knows the Group and keeps MEMBERSHIP_REQUIRED.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Authority} from '../../src/authority/authority.js'
import {type SubmitResult, submit} from '../../src/authority/ingress/command.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityOn,
  codeOf,
  contract,
  coordinator,
  developer,
  groupCommand,
  newGroup,
  otherHuman,
  owner,
  post,
  receiptOf,
  reviewer,
  sqliteStore,
  uuid,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'

let store: Store
let cleanup: () => Promise<void>
let authority: Authority

beforeAll(async () => {
  ;({store, cleanup} = await sqliteStore())
  authority = authorityOn(store)
}, 60_000)
afterAll(async () => cleanup?.())

const run = (bytes: Buffer) => submit(authority, bytes)

const created = () => missionGroup(run, 'oracle', {members: []})

/** The wire error minus what differs per request by construction (its time, the echoed Action ID). */
function shape(r: SubmitResult) {
  if (!('error' in r)) throw new Error('expected a rejection')
  const {occurredAt: _t, relatedActionId: _a, ...rest} = r.error
  return rest
}

// One Command per aggregate the stranger might probe, signed by an Agent or a human stranger.
const probes: [string, SigningKey, (g: string) => Buffer][] = [
  ['message.post (Agent)', reviewer, (g) => post(reviewer, g)],
  ['message.post (human)', otherHuman, (g) => post(otherHuman, g)],
  [
    'work.propose',
    reviewer,
    (g) => groupCommand(reviewer, 'work.propose', g, {proposalId: uuid(7), contract: contract()}),
  ],
  ['mission.cancel', otherHuman, (g) => groupCommand(otherHuman, 'mission.cancel', g, {reason: 'probe'})],
  [
    'mission.submit_for_approval',
    reviewer,
    (g) =>
      groupCommand(
        reviewer,
        'mission.submit_for_approval',
        g,
        {artifactHashes: [`sha256:${'a'.repeat(64)}`]},
        {coordinatorEpoch: 1},
      ),
  ],
  [
    'membership.change',
    otherHuman,
    (g) => groupCommand(otherHuman, 'membership.change', g, {member: developer.principal, role: 'worker'}),
  ],
  [
    'work.offer',
    reviewer,
    (g) =>
      groupCommand(
        reviewer,
        'work.offer',
        g,
        {workItemId: uuid(8), candidates: [reviewer.principal!.id], expiresAt: '2027-01-01T00:00:00Z'},
        {coordinatorEpoch: 1},
      ),
  ],
]

describe('a stranger cannot tell an existing Group from an absent one', () => {
  it.each(probes)(
    '%s: GROUP_NOT_FOUND for both, identical error objects, nothing appended',
    async (_name, _signer, make) => {
      const existing = await created()
      const absent = newGroup('absent')
      const head = (await store.head(existing))!.sequence
      const onExisting = await run(make(existing))
      const onAbsent = await run(make(absent))
      expect(codeOf(onExisting)).toBe('GROUP_NOT_FOUND')
      expect(shape(onExisting)).toEqual(shape(onAbsent))
      expect((await store.head(existing))!.sequence).toBe(head)
      expect(await store.head(absent)).toBeNull()
    },
  )

  it('a member of another Group is a stranger here too', async () => {
    const mine = await created()
    const theirs = await created()
    receiptOf(await run(groupCommand(owner, 'membership.change', mine, {member: developer.principal, role: 'worker'})))
    receiptOf(await run(post(developer, mine)))
    expect(shape(await run(post(developer, theirs)))).toEqual(shape(await run(post(developer, newGroup('absent')))))
    expect(codeOf(await run(post(developer, theirs)))).toBe('GROUP_NOT_FOUND')
  })

  it('a former member, who already knows the Group, gets MEMBERSHIP_REQUIRED — and a member its real answer', async () => {
    const g = await created()
    receiptOf(await run(groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'})))
    receiptOf(await run(groupCommand(owner, 'membership.end', g, {member: developer.principal, reason: 'Done.'})))
    expect(codeOf(await run(post(developer, g)))).toBe('MEMBERSHIP_REQUIRED')
    // The Coordinator is a member: an epoch never issued to it is refused openly, not hidden.
    expect(codeOf(await run(post(coordinator, g, {membershipEpoch: 2})))).toBe('MEMBERSHIP_REQUIRED')
    receiptOf(await run(post(coordinator, g)))
  })
})
