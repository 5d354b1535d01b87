// Payload schemas for Command kinds (issue 4: the spec leaves payloads as objects; ours live in
// schemas/payloads/). Compiled once through the default catalog's compileExternalFile, so they
// can $ref ../common.schema.json by $id.

import {join} from 'node:path'
import {defaultSchemaDir, schemaCatalog, type SchemaValidator} from '../schema/catalog.js'

const KINDS = [
  'mission.create',
  'message.post',
  'mission.submit_for_approval',
  'mission.request_changes',
  'mission.approve',
  'mission.cancel',
  'mission.terminate',
  'mission.assign_coordinator',
  'mission.renew_coordinator',
  'membership.change',
  'membership.end',
  'work.propose',
  'work.authorize',
  'work.offer',
  'work.accept_offer',
  'work.start',
  'work.submit',
  'work.accept_result',
  'work.cancel',
  'work.checkpoint',
  'work.block',
  'work.unblock',
  'work.fail',
  'approval.grant_execution',
] as const
const validators = new Map<string, SchemaValidator>()

function validatorFor(kind: string): SchemaValidator | null {
  if (!(KINDS as readonly string[]).includes(kind)) return null
  let v = validators.get(kind)
  if (v === undefined) {
    v = schemaCatalog().compileExternalFile(join(defaultSchemaDir(), 'payloads', `${kind}.schema.json`))
    validators.set(kind, v)
  }
  return v
}

/** 'valid', 'invalid', or 'unknown-kind' when mwp defines no payload schema for the kind yet. */
export function checkPayload(kind: string, payload: unknown): 'valid' | 'invalid' | 'unknown-kind' {
  const v = validatorFor(kind)
  if (v === null) return 'unknown-kind'
  return v(payload) ? 'valid' : 'invalid'
}
