// Extension data on Commands (spec §17.4, §18; ACCEPTANCE K1/K2). A Command's `extensions` member
// maps Extension Profile URIs to {version, critical, data}:
//   - a critical extension it does not implement → UNKNOWN_CRITICAL_EXTENSION (the transition
//     depends on semantics it cannot apply, so it must not be accepted without them);
//   - noncritical extension data is retained and relayed unchanged: ingress copies the Command's
//     `extensions` member verbatim into every Event the Command produces, inside the signed bytes;
//   - the one profile it implements, §11.5's bounded-offline-execution binding, is checked here
//     for shape (offlineBinding) and handed to the decider, which checks it against the state
//     (decide/offline.ts).

import {join} from 'node:path'
import type {ErrorCode} from '../../errors.js'
import {defaultSchemaDir, schemaCatalog, type SchemaValidator} from '../../schema/catalog.js'
import {
  BOUNDED_OFFLINE_EXECUTION,
  OFFLINE_KINDS,
  type OfflineBinding,
  implementedOfflineVersion,
} from '../model/offline-execution.js'

/** Extension Profile URIs whose semantics this authority implements. */
export const IMPLEMENTED_EXTENSION_PROFILES: ReadonlySet<string> = new Set([BOUNDED_OFFLINE_EXECUTION])

type Extensions = Record<string, {version: string; critical: boolean; data: unknown}>

const asExtensions = (extensions: unknown): Extensions | null =>
  extensions === undefined || extensions === null || typeof extensions !== 'object' ? null : (extensions as Extensions)

/** The first critical extension this authority cannot interpret, or null. */
export function unknownCriticalExtension(extensions: unknown): string | null {
  for (const [profile, ext] of Object.entries(asExtensions(extensions) ?? {})) {
    if (ext.critical === true && !IMPLEMENTED_EXTENSION_PROFILES.has(profile)) return profile
  }
  return null
}

let bindingValidator: SchemaValidator | undefined
const validBinding = (data: unknown): data is OfflineBinding => {
  bindingValidator ??= schemaCatalog().compileExternalFile(
    join(defaultSchemaDir(), 'extensions', 'bounded-offline-execution.schema.json'),
  )
  return bindingValidator(data)
}

/**
 * §11.5: the Command's bounded-offline-execution binding (null: it carries none), or why it is
 * unusable: a binding of an unimplemented major version is an unknown critical extension, one
 * that is not critical or sits on a kind that cannot be buffered is INVALID_COMMAND, and data
 * that does not match the binding schema is SCHEMA_VALIDATION_FAILED.
 */
export function offlineBinding(kind: string, extensions: unknown): OfflineBinding | ErrorCode | null {
  const ext = asExtensions(extensions)?.[BOUNDED_OFFLINE_EXECUTION]
  if (ext === undefined) return null
  if (!implementedOfflineVersion(ext.version)) return 'UNKNOWN_CRITICAL_EXTENSION'
  // §11.5 "MUST carry the critical … binding": a noncritical one would let an authority that
  // ignores it apply buffered progress as if it were live.
  if (ext.critical !== true || !OFFLINE_KINDS.has(kind)) return 'INVALID_COMMAND'
  return validBinding(ext.data) ? ext.data : 'SCHEMA_VALIDATION_FAILED'
}
