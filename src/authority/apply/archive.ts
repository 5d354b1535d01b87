// apply() for the §7.4 archival facts. group.snapshot.created records the reference to the signed
// final snapshot; group.archived closes the Group. Both come from one atomic append
// (decide/archive.ts), so no Command ever sees the first without the second.

import {ApplyError} from './index.js'
import type {EventOf} from '../model/events.js'
import type {GroupState} from '../model/state.js'

export function snapshotCreated(next: GroupState, event: EventOf<'group.snapshot.created'>): GroupState {
  const {snapshot, snapshotHash} = event.payload
  return {
    ...next,
    archive: {
      snapshotId: snapshot.snapshotId,
      snapshotHash,
      throughSequence: snapshot.throughSequence,
      stateHash: snapshot.stateHash,
      snapshotEventSequence: event.sequence,
      archivedAt: null,
    },
  }
}

/** group.archived: the tombstone. It names the snapshot it closes over. */
export function archived(next: GroupState, {payload: p}: EventOf<'group.archived'>): GroupState {
  if (next.archive === undefined || next.archive.snapshotId !== p.snapshotId) {
    throw new ApplyError(`group.archived without its snapshot ${p.snapshotId}`)
  }
  return {...next, archive: {...next.archive, archivedAt: p.archivedAt}}
}
