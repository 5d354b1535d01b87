// Agent Session Epochs (spec §6.3; ACCEPTANCE B5, B6). The Organization log is the only source:
// each accepted Agent session is a `session_open` Command issued by this Group Authority's own
// service key and answered by a signed `session_opened` Event carrying the next epoch. Issuing
// n + 1 fences every session at n or lower — the check below runs in ingress's epoch step for every
// Agent Command, so an old session is fenced even while its socket stays open.
//
// Execution Leases: a lease is bound to the Session Epoch of the work.start that created it
// (ExecutionLeaseView.sessionEpoch). Once a newer session exists, every Command of the old session
// is AUTH_STALE_SESSION here, so the old lease can no longer be used; the new session's Commands
// carry the new epoch, which no longer matches the lease's. Turning such leases into explicit
// `revoked` state (ACCEPTANCE B9) belongs to the lease decider.

import {randomUUID} from 'node:crypto'
import type {Authority} from '../authority.js'
import {type ErrorCode, MwpError} from '../../errors.js'
import {sign} from '../../signing/sign.js'
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

/** Issues the Agent's next Session Epoch through the Organization log and returns it. */
export async function openSession(authority: Authority, agentId: string): Promise<number> {
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

export class SessionError extends MwpError<ErrorCode> {
  constructor(code: ErrorCode) {
    super(code, `the session could not be opened: ${code}`)
  }
}
