// Step 2 of Group ingress: the epochs a Command must and must not carry, by actor type.

import {type Refused, told} from './answers.js'
import type {AdmittedCommand} from './group-command.js'

/**
 * Epoch rules by actor type (ACCEPTANCE H1-H3). command.schema.json already requires groupId,
 * sessionEpoch and membershipEpoch of Agent Commands, membershipEpoch (and no sessionEpoch) of
 * human Commands in an existing Group, no epochs on mission.create, and no membership or
 * coordinator epoch from services; this re-checks the shape so the decider never depends on the
 * schema file alone. The Session Epoch's value is checked later, against the Organization log
 * (sessions.ts checkAgentSession).
 */
export function checkEpochs(c: AdmittedCommand): Refused | null {
  const invalid = (reason: string) => told('INVALID_COMMAND', 'envelope', reason)
  const creates = c.kind === 'mission.create' || c.kind === 'mission.create_follow_up'
  if (creates) {
    if (c.actor.type !== 'human')
      return told('AUTH_FORBIDDEN', 'envelope', `only a human creates a Mission with ${c.kind}`)
    return c.sessionEpoch !== undefined || c.membershipEpoch !== undefined
      ? invalid(`${c.kind} carries no sessionEpoch or membershipEpoch`)
      : null
  }
  switch (c.actor.type) {
    case 'agent':
      return c.sessionEpoch === undefined || c.membershipEpoch === undefined
        ? invalid('an Agent Command carries its sessionEpoch and membershipEpoch')
        : null
    case 'human':
      return c.sessionEpoch !== undefined || c.membershipEpoch === undefined
        ? invalid('a human Command carries a membershipEpoch and no sessionEpoch')
        : null
    case 'service':
      return c.sessionEpoch !== undefined || c.membershipEpoch !== undefined
        ? invalid('a service Command carries no sessionEpoch or membershipEpoch')
        : null
  }
}
