// ext.missionweaveprotocol.core.group_archive (spec §7.4, §15.2): an Organization service that
// policy lists in `archivers` (ingress.ts) archives the Group of a finished Mission. The Command
// carries the signed final snapshot; ingress has verified its signature, signer and Event IDs
// (snapshot.ts). Here, on the current state: the snapshot must cover exactly the current head and
// hash exactly the current state. The authority then appends group.snapshot.created and
// group.archived in one atomic append. The archived Group is a tombstone: decide.ts refuses every
// later Command with INVALID_STATE_TRANSITION, while its complete history stays readable.

import {type DecideContext, type DecidedCommand, type Decision, refuse, revisionConflict} from './common.js'
import {groupStateHash} from '../ingress/snapshot.js'
import {type GroupState, TERMINAL} from '../model/state.js'

export const GROUP_ARCHIVE = 'ext.missionweaveprotocol.core.group_archive'

export function groupArchive(state: GroupState | null, command: DecidedCommand, ctx: DecideContext): Decision {
  if (state === null) return refuse('GROUP_NOT_FOUND', 'no such Group')
  if (command.actor.type !== 'service') return refuse('AUTH_FORBIDDEN', 'Group archival is an Organization service\'s')
  const conflict = revisionConflict(state, command)
  if (conflict) return conflict
  // §7.4: the snapshot is final — only a Group whose Mission reached a terminal state is archived.
  if (!TERMINAL.has(state.mission.state)) return refuse('INVALID_STATE_TRANSITION', `archival of a ${state.mission.state} Mission`)
  const verified = command.snapshot
  if (verified === undefined) return refuse('INVALID_COMMAND', 'no verified snapshot')
  const snapshot = verified.document as {snapshotId: string; groupId: string; throughSequence: number; stateHash: string}
  if (snapshot.groupId !== state.groupId) return refuse('INVALID_COMMAND', 'the snapshot names another Group')
  if (snapshot.throughSequence !== state.sequence) return refuse('REVISION_CONFLICT', `snapshot through ${snapshot.throughSequence}, head ${state.sequence}`)
  if (snapshot.stateHash !== groupStateHash(state)) return refuse('INVALID_COMMAND', 'the snapshot stateHash does not match the Group state')
  const at = ctx.acceptedAt
  return {
    events: [
      {eventId: ctx.newId(), kind: 'group.snapshot.created', payload: {snapshot: verified.document, snapshotHash: verified.signingHash, state: state as unknown as Record<string, unknown>}},
      {
        eventId: ctx.newId(),
        kind: 'group.archived',
        payload: {snapshotId: snapshot.snapshotId, snapshotHash: verified.signingHash, throughSequence: snapshot.throughSequence, archivedAt: at},
      },
    ],
  }
}
