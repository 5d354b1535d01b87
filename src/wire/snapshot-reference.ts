// The signed snapshot reference CURSOR_TOO_OLD carries (spec §16; ACCEPTANCE I5): a
// group-snapshot Signed Document, signed by this Group Authority's service key, binding the Group,
// the sequence it covers, every Event ID through it and the canonical hash of the folded state.
// The client verifies it (schema, signature, Group, sequence, hash) and resumes after
// `throughSequence`. Built by folding the verified stored Events, exactly like replay.

import {randomUUID} from 'node:crypto'
import {type AppliedEvent, apply} from '../authority/apply/index.js'
import type {Authority} from '../authority/authority.js'
import {latestSnapshot} from '../authority/ingress/snapshot.js'
import type {GroupState} from '../authority/model/state.js'
import {canonicalHash} from '../json/jcs.js'
import type {JsonObject} from '../json/parse.js'
import {sign} from '../signing/sign.js'
import {Rejection, verify} from '../signing/verify.js'

export interface SnapshotReferenceDoc {
  document: JsonObject
  /** Canonical (JCS) hash of the whole signed snapshot document. */
  hash: string
  throughSequence: number
  /** The Group state at throughSequence; its canonical hash is the snapshot's stateHash. */
  state: GroupState
}

/**
 * The snapshot CURSOR_TOO_OLD refers to: the Group's archive snapshot (signed by the archiving
 * Organization service, src/authority/ingress/snapshot.ts) when it covers the floor, else one this
 * authority signs through the floor.
 */
export async function snapshotFor(authority: Authority, groupId: string, floor: number): Promise<SnapshotReferenceDoc> {
  const archived = await latestSnapshot(authority, groupId)
  if (archived && archived.throughSequence >= floor) {
    const document = archived.snapshot as JsonObject
    return {document, hash: canonicalHash(document), throughSequence: archived.throughSequence, state: archived.state}
  }
  return buildSnapshotReference(authority, groupId, floor)
}

const PAGE = 500

export async function buildSnapshotReference(
  authority: Authority,
  groupId: string,
  throughSequence: number,
): Promise<SnapshotReferenceDoc> {
  let state: GroupState | null = null
  const eventIds: string[] = []
  let after = 0
  while (after < throughSequence) {
    const page = await authority.store.read(groupId, after, Math.min(PAGE, throughSequence - after))
    if (page.events.length === 0) throw new Error(`Group ${groupId} has no Event after ${after}`)
    for (const e of page.events) {
      const v = verify('event', e.bytes, authority.registry)
      if (v instanceof Rejection) throw new Error(`stored Event ${e.sequence} of ${groupId} fails verification`)
      state = apply(state, v.document as unknown as AppliedEvent)
      eventIds.push(e.eventId)
      after = e.sequence
    }
  }
  const createdAt = authority.clock()
  const createdBy = {type: authority.principal.type, id: authority.principal.id}
  const unsigned: JsonObject = {
    snapshotId: `urn:uuid:${randomUUID()}`,
    groupId,
    throughSequence,
    eventIds,
    stateHash: canonicalHash(state),
    policyLog: [
      {
        entryId: `urn:uuid:${randomUUID()}`,
        decision: 'online-log-floor: replay before this sequence is served from this snapshot',
        actor: createdBy,
        occurredAt: createdAt,
        details: {throughSequence},
      },
    ],
    createdBy,
    createdAt,
  }
  const {document} = sign('group-snapshot', unsigned, authority.key)
  return {document, hash: canonicalHash(document), throughSequence, state: state!}
}
