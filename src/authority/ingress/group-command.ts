// The Command as Group ingress reads it: the verified document (command.schema.json checked its
// shape), before and after the check that it names a Group.

import type {JsonObject} from '../../json/parse.js'
import type {ReceivedCommand} from '../decide/index.js'

export interface AdmittedCommand extends ReceivedCommand {
  correlationId: string
  sessionEpoch?: number
  /** §20: the one-shot Cooperation Override Grant this Command consumes (rate-limits.ts). */
  cooperationOverrideGrantId?: string
  /** §17.4/§18: Extension Profile data, relayed verbatim into the resulting Events (extensions.ts). */
  extensions?: JsonObject
}

/** A Command addressed to one Group: every kind but the Organization-scoped ones (organization.ts). */
export interface GroupCommand extends AdmittedCommand {
  groupId: string
}

export function inGroup(command: AdmittedCommand): command is GroupCommand {
  return typeof command.groupId === 'string'
}
