// apply() for the §7.4 archival facts. group.snapshot.created records the reference to the signed
// final snapshot; group.archived closes the Group. Both come from one atomic append
// (decide-archive.ts), so no Command ever sees the first without the second.

import {ApplyError, type AppliedEvent} from './index.js'
import type {GroupState} from '../model/state.js'

export const ARCHIVE_EVENT_KINDS: ReadonlySet<string> = new Set(['group.snapshot.created', 'group.archived'])

export function applyArchiveEvent(next: GroupState, event: AppliedEvent): GroupState {
  const p = event.payload
  if (event.kind === 'group.snapshot.created') {
    const snapshot = p.snapshot as {snapshotId: string; throughSequence: number; stateHash: string}
    return {
      ...next,
      archive: {
        snapshotId: snapshot.snapshotId,
        snapshotHash: p.snapshotHash as string,
        throughSequence: snapshot.throughSequence,
        stateHash: snapshot.stateHash,
        snapshotEventSequence: event.sequence,
        archivedAt: null,
      },
    }
  }
  // group.archived: the tombstone. It names the snapshot it closes over.
  if (next.archive === undefined || next.archive.snapshotId !== p.snapshotId) throw new ApplyError(`group.archived without its snapshot ${String(p.snapshotId)}`)
  return {...next, archive: {...next.archive, archivedAt: p.archivedAt as string}}
}
