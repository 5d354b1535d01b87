// §7.4 signed Group snapshots: the hash a snapshot binds, building and signing one (the archiving
// Organization service's side), verifying one presented in a group_archive Command (ingress), and
// the latest signed snapshot of a Group (the WebSocket server answers CURSOR_TOO_OLD with it).
//
// What a snapshot binds: `stateHash` is the canonical (JCS) hash of the GroupState at
// `throughSequence` — the fold of exactly the Events listed in `eventIds`, which must be the
// Group's Event IDs 1..throughSequence in order. The group.snapshot.created Event carries the
// signed snapshot and that state, so a reader can start from it and continue with later Events.
//
// Policy-log linkage (§15.2 "after its signed snapshot and policy-log linkage validate"): the
// snapshot's `policyLog` must carry one entry per row of the Group's authoritative Policy Log
// (store/policy-log.ts) through `throughSequence` — entryId = the row's Event ID, details naming
// its grant, action and sequence — plus the Organization decision(s) behind the archival itself.
// So no Cooperation Override issued or consumed in the Group can be left out of the final record.

import type {SigningKey} from '../../crypto/keyfile.js'
import type {ErrorCode} from '../../errors.js'
import {type JsonObject, sourcesIn} from '../../json/parse.js'
import {sign} from '../../signing/sign.js'
import {Rejection, verify} from '../../signing/verify.js'
import type {Authority} from '../authority.js'
import type {ReceivedCommand, VerifiedSnapshot} from '../decide/index.js'
import type {GroupArchiveView, GroupState} from '../model/state.js'
import {groupStateHash} from '../model/state-hash.js'

const PAGE = 500

/** The Group's Event IDs 1..throughSequence, in order, read from the store. */
export async function eventIdsThrough(
  authority: Authority,
  groupId: string,
  throughSequence: number,
): Promise<string[]> {
  const ids: string[] = []
  while (ids.length < throughSequence) {
    const page = await authority.store.read(groupId, ids.length, Math.min(PAGE, throughSequence - ids.length))
    if (page.events.length === 0) break
    for (const e of page.events) ids.push(e.eventId)
  }
  return ids
}

export interface SnapshotPolicyLogEntry {
  entryId: string
  decision: string
  actor: {type: string; id: string}
  occurredAt: string
  details: Record<string, unknown>
}

/** The snapshot policyLog entries the Group's Policy Log requires through `throughSequence`. */
export async function policyLogLinkage(
  authority: Authority,
  groupId: string,
  throughSequence: number,
): Promise<SnapshotPolicyLogEntry[]> {
  const rows = await authority.store.policyLog(groupId)
  const events = new Map<number, {actor: {type: string; id: string}; occurredAt: string}>()
  const linked: SnapshotPolicyLogEntry[] = []
  for (const row of rows.filter((r) => r.sequence <= throughSequence)) {
    if (!events.has(row.sequence)) {
      const page = await authority.store.read(groupId, row.sequence - 1, 1)
      const doc = JSON.parse(Buffer.from(page.events[0]!.bytes).toString('utf8')) as {
        actor: {type: string; id: string}
        occurredAt: string
      }
      events.set(row.sequence, {actor: {type: doc.actor.type, id: doc.actor.id}, occurredAt: doc.occurredAt})
    }
    const e = events.get(row.sequence)!
    linked.push({
      entryId: row.eventId,
      decision: `cooperation override ${row.action}`,
      actor: e.actor,
      occurredAt: e.occurredAt,
      details: {grantId: row.grantId, action: row.action, sequence: row.sequence},
    })
  }
  return linked
}

/** True when every required linkage entry appears in the snapshot's policyLog (same entryId and details). */
function linked(required: SnapshotPolicyLogEntry[], policyLog: SnapshotPolicyLogEntry[]): boolean {
  return required.every((r) =>
    policyLog.some(
      (e) =>
        e.entryId === r.entryId &&
        e.details.grantId === r.details.grantId &&
        e.details.action === r.details.action &&
        e.details.sequence === r.details.sequence,
    ),
  )
}

/**
 * Builds and signs the final snapshot of a Group at its current head with `key` (an Organization
 * service key: group-snapshot documents are service-signed, §6.4). The archiving service then
 * submits it in ext.missionweaveprotocol.core.group_archive.
 */
export async function buildGroupSnapshot(
  authority: Authority,
  groupId: string,
  key: SigningKey,
  options: {snapshotId: string; policyLog: SnapshotPolicyLogEntry[]; now?: string},
): Promise<JsonObject> {
  const state = await authority.current(groupId)
  if (state === null) throw new Error(`no Group ${groupId}`)
  const unsigned = {
    snapshotId: options.snapshotId,
    groupId,
    throughSequence: state.sequence,
    eventIds: await eventIdsThrough(authority, groupId, state.sequence),
    stateHash: groupStateHash(state),
    policyLog: [...(await policyLogLinkage(authority, groupId, state.sequence)), ...options.policyLog],
    createdBy: {type: key.principal!.type, id: key.principal!.id},
    createdAt: options.now ?? new Date().toISOString(),
  }
  return sign('group-snapshot', unsigned, key).document
}

/**
 * Ingress stage for group_archive: six-stage verification of payload.snapshot, the signer must be
 * the archiving service itself, `eventIds` must be the Group's stored Event IDs through
 * `throughSequence`, and the policy-log linkage must hold (the decider, which sees only state, checks the head and the state hash).
 * Returns the verified facts, which ingress attaches to its copy of the Command for the pure decider.
 */
export async function verifyArchiveSnapshot(
  authority: Authority,
  command: ReceivedCommand & {groupId: string},
  commandBytes: Uint8Array,
): Promise<VerifiedSnapshot | ErrorCode> {
  // The snapshot exactly as it stood in the received Command (principle 4), never a re-serialization.
  const bytes = Buffer.from(sourcesIn(commandBytes)(['payload', 'snapshot']) ?? '', 'utf8')
  const verified = verify('group-snapshot', bytes, authority.registry)
  if (verified instanceof Rejection) return 'INVALID_COMMAND'
  if (verified.principal.type !== command.actor.type || verified.principal.id !== command.actor.id)
    return 'AUTH_FORBIDDEN'
  const doc = verified.document as unknown as {
    groupId: string
    throughSequence: number
    eventIds: string[]
    policyLog: SnapshotPolicyLogEntry[]
  }
  if (doc.groupId !== command.groupId) return 'INVALID_COMMAND'
  const stored = await eventIdsThrough(authority, command.groupId, doc.throughSequence)
  if (stored.length !== doc.eventIds.length || stored.some((id, i) => id !== doc.eventIds[i])) return 'INVALID_COMMAND'
  if (!linked(await policyLogLinkage(authority, command.groupId, doc.throughSequence), doc.policyLog))
    return 'INVALID_COMMAND'
  return {signer: verified.principal, document: verified.document, signingHash: verified.signingHash}
}

export interface SnapshotReference extends GroupArchiveView {
  groupId: string
  /** The signed group-snapshot document, as carried in group.snapshot.created. */
  snapshot: Record<string, unknown>
  /** The Group state at throughSequence (its canonical hash is snapshot.stateHash). */
  state: GroupState
}

/** The latest signed snapshot of a Group, or null when it has none (or no Group exists). */
export async function latestSnapshot(authority: Authority, groupId: string): Promise<SnapshotReference | null> {
  const current = await authority.current(groupId)
  const archive = current?.archive
  if (archive === undefined) return null
  const page = await authority.store.read(groupId, archive.snapshotEventSequence - 1, 1)
  const event = page.events[0]
  if (event === undefined || event.kind !== 'group.snapshot.created')
    throw new Error(`Group ${groupId} has no snapshot Event at ${archive.snapshotEventSequence}`)
  const payload = (
    JSON.parse(Buffer.from(event.bytes).toString('utf8')) as {
      payload: {snapshot: Record<string, unknown>; state: GroupState}
    }
  ).payload
  return {...archive, groupId, snapshot: payload.snapshot, state: payload.state}
}
