// Real signed Group histories for the Agent's local store tests (test/agent/*): WorkItems driven
// through the in-process Authority's full ingress, read back from its store as the wire client
// hands them over (DeliveredEvent: the stored bytes, parsed).

import type {Store} from '../../src/store/index.js'
import {type JsonObject, parseJsonBytes} from '../../src/json/parse.js'
import type {DeliveredEvent} from '../../src/wire/client.js'
import type {Authority} from '../../src/authority/authority.js'
import {coord, developer, groupCommand, receiptOf, reviewer} from './authority-helpers.js'
import {type Run, missionGroup} from './groups.js'
import {workDriver} from './work-driver.js'

/** The Agent whose local store the tests keep. */
export const AGENT = developer.principal!.id

/** Group `g`'s stored Events after `afterSequence`, as delivered Events. */
export async function deliveredEvents(store: Store, g: string, afterSequence = 0): Promise<DeliveredEvent[]> {
  const {events} = await store.read(g, afterSequence, 100_000)
  return events.map((e) => ({
    groupId: g,
    sequence: e.sequence,
    eventId: e.eventId,
    kind: e.kind,
    document: parseJsonBytes(e.bytes) as JsonObject,
    bytes: e.bytes,
  }))
}

/**
 * A Group whose WorkItems end in every situation the Agent's queue distinguishes: verified,
 * queued after a checkpoint (its own), blocked, offered to it, queued under another Worker,
 * cancelled while it held the lease, and an offer to it withdrawn by cancellation.
 */
export async function workHistory(run: Run, authority: () => Authority, tag: string): Promise<string> {
  const g = await missionGroup(run, tag)
  const d = workDriver(authority)
  await d.drive(g, 'verified')
  const checkpointed = await d.drive(g, 'active')
  const active = await d.item(g, checkpointed)
  receiptOf(
    await run(
      groupCommand(developer, 'work.checkpoint', g, {
        workItemId: checkpointed,
        ownershipEpoch: active.ownershipEpoch,
        leaseId: active.lease!.leaseId,
        progress: 'Drafted the first half.',
        artifactHashes: [`sha256:${'d'.repeat(64)}`],
      }),
    ),
  )
  await d.drive(g, 'blocked')
  await d.drive(g, 'offered')
  await d.drive(g, 'queued', {worker: reviewer})
  const revoked = await d.drive(g, 'active')
  receiptOf(await run(coord('work.cancel', g, {workItemId: revoked, reason: 'Superseded by the new plan.'})))
  const withdrawn = await d.drive(g, 'offered')
  receiptOf(await run(coord('work.cancel', g, {workItemId: withdrawn, reason: 'No longer needed.'})))
  return g
}
