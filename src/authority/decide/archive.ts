// ext.missionweaveprotocol.core.group_archive (spec §7.4, §15.2): an Organization service that
// policy lists in `archivers` (ingress/command.ts) archives the Group of a finished Mission. The Command
// carries the signed final snapshot; ingress has verified its signature, signer and Event IDs
// (snapshot.ts). Here, on the current state: the snapshot must cover exactly the current head and
// hash exactly the current state. The authority then appends group.snapshot.created and
// group.archived in one atomic append. The archived Group is a tombstone: decide/index.ts refuses every
// later Command with INVALID_STATE_TRANSITION, while its complete history stays readable.

import {refuse} from './common.js'
import type {Handlers} from './gate.js'
import type {GroupSnapshotDocument} from '../model/events.js'
import {groupStateHash} from '../model/state-hash.js'
import {TERMINAL} from '../model/state.js'

export const GROUP_ARCHIVE = 'ext.missionweaveprotocol.core.group_archive'

export const ARCHIVE_HANDLERS: Handlers = {
  [GROUP_ARCHIVE]: {
    on: 'group',
    gate: {
      // Archivers are Organization services (policy `archivers`, checked in ingress): no Membership.
      membership: 'none',
      who: {by: 'service', reason: "Group archival is an Organization service's"},
      // §7.4: the snapshot is final — only a Group whose Mission reached a terminal state is archived.
      mission: {from: (s) => TERMINAL.has(s), reason: (_, s) => `archival of a ${s} Mission`},
    },
    decide: ({state}, command, ctx) => {
      const verified = command.snapshot
      if (verified === undefined) return refuse('INVALID_COMMAND', 'no verified snapshot')
      // Ingress verified it against group-snapshot.schema.json with the six stages.
      const snapshot = verified.document as GroupSnapshotDocument
      if (snapshot.groupId !== state.groupId) return refuse('INVALID_COMMAND', 'the snapshot names another Group')
      if (snapshot.throughSequence !== state.sequence)
        return refuse('REVISION_CONFLICT', `snapshot through ${snapshot.throughSequence}, head ${state.sequence}`)
      if (snapshot.stateHash !== groupStateHash(state))
        return refuse('INVALID_COMMAND', 'the snapshot stateHash does not match the Group state')
      const at = ctx.acceptedAt
      return {
        events: [
          {
            eventId: ctx.newId(),
            kind: 'group.snapshot.created',
            payload: {
              snapshot: verified.document,
              snapshotHash: verified.signingHash,
              state: state as unknown as Record<string, unknown>,
            },
          },
          {
            eventId: ctx.newId(),
            kind: 'group.archived',
            payload: {
              snapshotId: snapshot.snapshotId,
              snapshotHash: verified.signingHash,
              throughSequence: snapshot.throughSequence,
              archivedAt: at,
            },
          },
        ],
      }
    },
  },
}
