// §7.4: the hash a group snapshot's `stateHash` binds, shared by the decider (archival checks it
// against the current state) and ingress (building and verifying snapshots).
//
// It covers the Group state exactly as the Authority holds it in memory (model/state.ts): the
// Mission, members, proposals, WorkItems, Artifacts, grants, rate buckets, ledger and archive.
// Since issue #15 the committed Messages are not part of that state but of the store's Message
// table (store/message-table.ts), so the hash no longer covers them; the snapshot's
// throughSequence and the signed Events it names still bind every Message. The same hash is the
// state hash of a cold-start checkpoint (authority/checkpoints.ts).

import {canonicalHash} from '../../json/jcs.js'
import type {GroupState} from './state.js'

/** JCS SHA-256 of the plain-JSON Group state. */
export const groupStateHash = (state: GroupState): string => canonicalHash(state)
