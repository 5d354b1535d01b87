// Groups for the authority tests: a root Mission created by the MissionOwner through the full
// ingress, with the members a suite needs joined by the MissionOwner's membership.change.

import type {SubmitResult} from '../../src/authority/ingress/command.js'
import type {MemberRole} from '../../src/authority/model/state.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {
  command,
  developer,
  groupCommand,
  missionPayload,
  newGroup,
  owner,
  receiptOf,
  reviewer,
} from './authority-helpers.js'

/** Submits signed Command bytes through an authority's ingress. */
export type Run = (bytes: Buffer) => Promise<SubmitResult>

/** A member to join: a key joins as a Worker, `[key, role]` in that role. */
export type Joiner = SigningKey | [SigningKey, MemberRole]

/** Joins `members` (default developer and reviewer, as Workers) to Group `g`, in order. */
export async function addWorkers(run: Run, g: string, members: Joiner[] = [developer, reviewer]): Promise<void> {
  for (const m of members) {
    const [key, role] = Array.isArray(m) ? m : [m, 'worker']
    receiptOf(await run(groupCommand(owner, 'membership.change', g, {member: key.principal, role})))
  }
}

export interface GroupOptions {
  /** Who joins after mission.create (default developer and reviewer as Workers; `[]` for nobody). */
  members?: Joiner[]
  /** mission.create payload fields over missionPayload's (e.g. a budget). */
  mission?: Record<string, unknown>
  /** Gets the new Group ID, for suites that replay every Group they touched. */
  touched?: string[]
}

/** A new Group named after `tag` with the MissionOwner's root Mission and `members` joined; returns its ID. */
export async function missionGroup(run: Run, tag: string, options: GroupOptions = {}): Promise<string> {
  const g = newGroup(tag)
  options.touched?.push(g)
  receiptOf(
    await run(command(owner, {kind: 'mission.create', groupId: g, payload: missionPayload(g, options.mission)})),
  )
  await addWorkers(run, g, options.members)
  return g
}
