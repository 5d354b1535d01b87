// Extension data on Commands (spec §17.4, §18; ACCEPTANCE K1/K2). A Command's `extensions` member
// maps Extension Profile URIs to {version, critical, data}. This authority interprets no Extension
// Profile yet, so:
//   - a critical extension it does not implement → UNKNOWN_CRITICAL_EXTENSION (the transition
//     depends on semantics it cannot apply, so it must not be accepted without them);
//   - noncritical extension data is retained and relayed unchanged: ingress copies the Command's
//     `extensions` member verbatim into every Event the Command produces, inside the signed bytes.

/** Extension Profile URIs whose semantics this authority implements (none in v0.1 core). */
export const IMPLEMENTED_EXTENSION_PROFILES: ReadonlySet<string> = new Set()

type Extensions = Record<string, {version: string; critical: boolean; data: unknown}>

/** The first critical extension this authority cannot interpret, or null. */
export function unknownCriticalExtension(extensions: unknown): string | null {
  if (extensions === undefined || extensions === null || typeof extensions !== 'object') return null
  for (const [profile, ext] of Object.entries(extensions as Extensions)) {
    if (ext.critical === true && !IMPLEMENTED_EXTENSION_PROFILES.has(profile)) return profile
  }
  return null
}
