// Agent Session Epochs (spec §6.3; ACCEPTANCE B5, B6). The Organization log is the only source:
// each accepted Agent session is a `session_open` Command issued by this Group Authority's own
// service key and answered by a signed `session_opened` Event carrying the next epoch. Issuing
// n + 1 fences every session at n or lower — the check below runs in ingress's epoch step for every
// Agent Command, so an old session is fenced even while its socket stays open.
//
// Execution Leases (§11.3; ACCEPTANCE B9): a lease is bound to the Session Epoch of the work.start
// that created it (ExecutionLeaseView.sessionEpoch). Once a newer session exists, every Command of
// the old session is AUTH_STALE_SESSION here, and the new session's Commands carry an epoch that
// no longer matches the lease's (model/work-leases.ts currentLease). Opening the session then
// revokes those leases outright: for each active lease the store's lease index lists for the
// Agent under an older epoch (store/lease-table.ts — the Agent's leases, never a scan of Groups or
// a fold of their logs), this authority's identity service submits an
// ext.missionweaveprotocol.core.lease_revoke Command through Group ingress, answered by
// ext.missionweaveprotocol.core.lease_revoked: the WorkItem is `queued` again under the same owner
// and Ownership Epoch, and the new session starts it under a new lease. The session is announced
// only after these revocations were decided. Should the authority stop in between, the new
// session's work.start revokes and starts in one decision (decide/work.ts), so nothing depends on
// the revocations having all been appended.

import {randomUUID} from 'node:crypto'
import type {Authority} from '../authority.js'
import {type ErrorCode, MwpError} from '../../errors.js'
import {sign} from '../../signing/sign.js'
import type {ActiveLeaseRecord, LeaseCursor} from '../../store/lease-table.js'
import {LEASE_REVOKE, SESSION_REPLACED, executionLeaseExpired, replacedSessionLease} from '../model/work-leases.js'
import {submit} from './command.js'
import {SESSION_OPEN, SESSION_OPENED, submitOrganizationCommand} from './organization.js'

/** The Agent's current Session Epoch, 0 when none was ever issued. */
export function currentSessionEpoch(authority: Authority, agentId: string): Promise<number> {
  return authority.store.organizationLog().currentVersion(SESSION_OPENED, agentId)
}

/**
 * §6.3, §19: an Agent Command's sessionEpoch must be the Agent's current one. Lower is fenced
 * (AUTH_STALE_SESSION); higher was never issued (also AUTH_STALE_SESSION: the epoch is not a
 * valid session). No session at all is AUTH_REQUIRED when the policy requires sessions.
 */
export async function checkAgentSession(
  authority: Authority,
  command: {actor: {type: string; id: string}; sessionEpoch?: number},
): Promise<ErrorCode | null> {
  if (command.actor.type !== 'agent' || command.sessionEpoch === undefined) return null
  const current = await currentSessionEpoch(authority, command.actor.id)
  if (current === 0) return authority.policy.requireAgentSessions ? 'AUTH_REQUIRED' : null
  return command.sessionEpoch === current ? null : 'AUTH_STALE_SESSION'
}

/**
 * Issues the Agent's next Session Epoch through the Organization log, revokes the Agent's active
 * leases of older sessions (revokeReplacedLeases), and returns the epoch.
 */
export async function openSession(authority: Authority, agentId: string): Promise<number> {
  const epoch = await issueSession(authority, agentId)
  await revokeReplacedLeases(authority, agentId, epoch)
  return epoch
}

async function issueSession(authority: Authority, agentId: string): Promise<number> {
  const issuedAt = authority.clock()
  const unsigned = {
    protocolVersion: '0.1',
    actionId: `urn:uuid:${randomUUID()}`,
    actor: {type: authority.principal.type, id: authority.principal.id},
    kind: SESSION_OPEN,
    correlationId: `urn:uuid:${randomUUID()}`,
    issuedAt,
    payload: {agentId},
  }
  const {document} = sign('command', unsigned, authority.key)
  const result = await submitOrganizationCommand(authority, Buffer.from(JSON.stringify(document), 'utf8'))
  if ('error' in result) throw new SessionError(result.error.code)
  return result.receipt.version
}

/** Leases read from the index per page. */
const REVOCATION_PAGE = 100

/**
 * What one listed lease came to: revoked (the Event appended); refused with `code`; or `skipped`
 * without a Command because this authority's state already shows it closed, lapsed or replaced.
 */
export interface RevocationOutcome {
  lease: ActiveLeaseRecord
  revoked: boolean
  code?: ErrorCode
  skipped?: string
}

/**
 * §11.3 (ACCEPTANCE B9): revokes every active Execution Lease the store's lease index lists for
 * `agentId` under a Session Epoch below `sessionEpoch`, one lease_revoke Command each, the
 * Commands of one index page in parallel (different Groups never wait on each other). A lease
 * the Group's current state (the state every Command of the Group is decided on) shows closed,
 * lapsed or not the listed one is skipped: the index keeps a lease that timed out until the
 * WorkItem's next transition (store/lease-table.ts), and an unneeded Command would only be
 * refused. A refusal is an answer, not a failure: the decider refuses a lease that closed or
 * lapsed meanwhile, and appends nothing. Never throws for one lease (only when the index cannot
 * be read): the new session's work.start revokes whatever was left (decide/work.ts).
 */
export async function revokeReplacedLeases(
  authority: Authority,
  agentId: string,
  sessionEpoch: number,
): Promise<RevocationOutcome[]> {
  const outcomes: RevocationOutcome[] = []
  let after: LeaseCursor | undefined
  for (;;) {
    const page = await authority.store.leases().olderThan(agentId, sessionEpoch, after, REVOCATION_PAGE)
    outcomes.push(...(await Promise.all(page.map((lease) => revokeOne(authority, lease, sessionEpoch)))))
    const last = page.at(-1)
    if (last === undefined || page.length < REVOCATION_PAGE) return outcomes
    after = {groupId: last.groupId, workItemId: last.workItemId}
  }
}

/** revoke(), with a failure to load the Group or to submit answered INTERNAL_ERROR for this lease alone. */
async function revokeOne(
  authority: Authority,
  lease: ActiveLeaseRecord,
  sessionEpoch: number,
): Promise<RevocationOutcome> {
  try {
    return await revoke(authority, lease, sessionEpoch)
  } catch {
    return {lease, revoked: false, code: 'INTERNAL_ERROR'}
  }
}

async function revoke(
  authority: Authority,
  lease: ActiveLeaseRecord,
  sessionEpoch: number,
): Promise<RevocationOutcome> {
  const item = (await authority.current(lease.groupId))?.workItems[lease.workItemId]
  const held = item === undefined ? null : replacedSessionLease(item, sessionEpoch)
  if (held === null || held.leaseId !== lease.leaseId)
    return {lease, revoked: false, skipped: 'not an active lease of an older session'}
  if (executionLeaseExpired(held, authority.clock())) return {lease, revoked: false, skipped: 'expired'}
  const unsigned = {
    protocolVersion: '0.1',
    actionId: `urn:uuid:${randomUUID()}`,
    actor: {type: authority.principal.type, id: authority.principal.id},
    kind: LEASE_REVOKE,
    groupId: lease.groupId,
    correlationId: `urn:uuid:${randomUUID()}`,
    issuedAt: authority.clock(),
    payload: {
      workItemId: lease.workItemId,
      agentId: lease.agentId,
      ownershipEpoch: lease.ownershipEpoch,
      leaseId: lease.leaseId,
      sessionEpoch,
      reason: SESSION_REPLACED,
    },
  }
  const {document} = sign('command', unsigned, authority.key)
  const result = await submit(authority, Buffer.from(JSON.stringify(document), 'utf8'))
  return 'error' in result ? {lease, revoked: false, code: result.error.code} : {lease, revoked: true}
}

export class SessionError extends MwpError<ErrorCode> {
  constructor(code: ErrorCode) {
    super(code, `the session could not be opened: ${code}`)
  }
}
