// §7.4: the hash a group snapshot's `stateHash` binds, shared by the decider (archival checks it
// against the current state) and ingress (building and verifying snapshots).

import {canonicalHash} from '../../json/jcs.js'
import type {GroupState} from './state.js'

/** JCS SHA-256 of the plain-JSON Group state. */
export const groupStateHash = (state: GroupState): string => canonicalHash(state)
