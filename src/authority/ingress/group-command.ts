// The Command as Group ingress reads it: the verified document (command.schema.json checked its
// shape), before and after the check that it names a Group.

import type {JsonObject} from '../../json/parse.js'
import type {DecidedCommand} from '../decide/index.js'

export interface ReceivedCommand extends DecidedCommand {
  correlationId: string
  sessionEpoch?: number
  /** §20: the one-shot Cooperation Override Grant this Command consumes (rate-limits.ts). */
  cooperationOverrideGrantId?: string
  /** §17.4/§18: Extension Profile data, relayed verbatim into the resulting Events (extensions.ts). */
  extensions?: JsonObject
}

/** A Command addressed to one Group: every kind but the Organization-scoped ones (organization.ts). */
export interface GroupCommand extends ReceivedCommand {
  groupId: string
}

export function inGroup(command: ReceivedCommand): command is GroupCommand {
  return typeof command.groupId === 'string'
}
