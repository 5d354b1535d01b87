// Steps 4-6 of Group ingress that depend on the Command alone: payload schema, unknown critical
// extensions, role and Organization policy, and the embedded signed documents. They run once,
// outside the Group's queue (and not again on a retry); ingress applies their verdict in its place
// in the order, after the receipt lookup and the Session Epoch.

import {sourcesIn} from '../../json/parse.js'
import {RegistryFault} from '../../signing/registry.js'
import {Rejection, verify} from '../../signing/verify.js'
import type {Authority} from '../authority.js'
import {type Refused, opaque, told} from './answers.js'
import {GROUP_ARCHIVE} from '../decide/archive.js'
import {LEASE_REVOKE} from '../model/work-leases.js'
import type {VerifiedApproval} from '../decide/index.js'
import {verifyOfferedContextPackage} from './context-package.js'
import type {EmbeddedRejection} from './embedded-rejection.js'
import {verifySubmittedEvidence} from './evidence.js'
import {offlineBinding, unknownCriticalExtension} from './extensions.js'
import type {GroupCommand} from './group-command.js'
import {payloadError} from './payloads.js'
import {servicePolicyAct} from './policy-records.js'

/**
 * The Command for the decider, or the first check it fails, in this order: payload schema,
 * critical extensions, role and Organization policy, and the embedded signed documents.
 * §7.3/§13.1/§13.2/§13.3: an Approval, an Artifact manifest, a submission's Evidence or an offer's
 * Context Package is a signed document of its own, verified with the six stages; the pure decider gets the verified signer and document (on a copy of the
 * Command), never raw bytes.
 */
export function checkCommand(
  authority: Authority,
  command: GroupCommand,
  bytes: Uint8Array,
): GroupCommand | Refused | EmbeddedRejection {
  const invalid = payloadError(command.kind, command.payload)
  if (invalid) return invalid
  const unknown = unknownCriticalExtension(command.extensions)
  if (unknown !== null)
    return told(
      'UNKNOWN_CRITICAL_EXTENSION',
      'extension',
      `this authority does not implement the critical extension ${unknown}`,
    )
  const offline = offlineBinding(command.kind, command.extensions)
  if (typeof offline === 'string')
    return told(offline, 'extension', OFFLINE_REASONS[offline] ?? 'the offline-execution extension is invalid')
  const forbidden = authorize(authority, command)
  if (forbidden) return forbidden
  const taken = principalNamedGroup(authority, command)
  if (taken) return taken
  // §11.5: the decider checks the binding against the historical lease (decide/offline.ts).
  return withEmbedded(authority, offline === null ? command : {...command, offline}, bytes)
}

/** Why offlineBinding() refuses, by its code (extensions.ts). */
const OFFLINE_REASONS: Partial<Record<string, string>> = {
  UNKNOWN_CRITICAL_EXTENSION: 'this authority does not implement that version of bounded offline execution',
  INVALID_COMMAND: 'bounded offline execution must be critical and is only for the Commands a Worker buffers',
  SCHEMA_VALIDATION_FAILED: 'the bounded offline execution binding does not match its schema',
}

/** Role and Organization policy (AUTH_FORBIDDEN, told: policy, not Group state); Membership checks are the decider's. */
function authorize(authority: Authority, c: GroupCommand): Refused | null {
  const forbidden = (reason: string) => told('AUTH_FORBIDDEN', 'policy', reason)
  if (c.kind === 'mission.create') {
    return c.actor.type === 'human' && authority.policy.rootMissionOwners.includes(c.actor.id)
      ? null
      : forbidden(`${c.actor.id} is not a root MissionOwner under this Organization's policy`)
  }
  // Services are not Group members: only Organization policy (`terminators`) lets one act in a
  // Group, and only to terminate the Mission (§7.1 "Coordinator or Organization policy").
  if (c.actor.type === 'service') {
    // §20 / §9.1: override grants and redactions by Organization policy actors (servicePolicyActs).
    if (servicePolicyAct(authority.policy, c.kind, c.actor.id)) return null
    // §6.3/§11.3 (B9): only this authority's own identity service, which opens sessions, revokes their leases.
    if (c.kind === LEASE_REVOKE)
      return c.actor.id === authority.principal.id
        ? null
        : forbidden("only this authority's identity service revokes leases")
    if (c.kind === GROUP_ARCHIVE)
      return (authority.policy.archivers ?? []).includes(c.actor.id)
        ? null
        : forbidden(`${c.actor.id} is not an archiver under this Organization's policy`) // §7.4
    return c.kind === 'mission.terminate' && (authority.policy.terminators ?? []).includes(c.actor.id)
      ? null
      : forbidden(`the Organization's policy does not let service ${c.actor.id} issue ${c.kind}`)
  }
  return null
}

/** The Command kinds that open a Group, whose payload.groupId names the new Group. */
const OPENING_KINDS: ReadonlySet<string> = new Set([
  'mission.create',
  'mission.create_follow_up',
  'mission.create_child',
])

/**
 * INVALID_COMMAND when a Group would be opened under the ID of a principal the Registry knows.
 * On the wire a SUBSCRIBE naming one's own principal ID asks for the directory of one's Groups
 * (wire/directory.ts), never for a Group: such a Group could not be subscribed to by that principal.
 */
function principalNamedGroup(authority: Authority, c: GroupCommand): Refused | null {
  if (!OPENING_KINDS.has(c.kind)) return null
  const groupId = (c.payload as {groupId?: unknown}).groupId
  const registry = authority.registry.resolve()
  if (registry instanceof RegistryFault) return opaque('INTERNAL_ERROR', 'policy', `registry: ${registry.reason}`)
  return [...registry.bindings.values()].some((b) => b.principal.id === groupId)
    ? told(
        'INVALID_COMMAND',
        'policy',
        `payload.groupId ${String(groupId)} is the ID of a registered principal`,
        '/payload/groupId',
      )
    : null
}

/**
 * The Command with its verified embedded documents attached: INVALID_COMMAND when an Approval or
 * manifest does not verify (opaque: a verification failure, §6.4); the failing document when an
 * Evidence document or a Context Package does not (its wire code is the verifier's, and ingress
 * audits its diagnostic).
 */
function withEmbedded(
  authority: Authority,
  command: GroupCommand,
  commandBytes: Uint8Array,
): GroupCommand | Refused | EmbeddedRejection {
  // An embedded document is verified exactly as it stood in the received Command (principle 4);
  // the Command is parsed for its source texts once, and only when it embeds one. A failure's
  // stage and reason go to the audit entry only.
  let sources: ReturnType<typeof sourcesIn> | undefined
  const embedded = (kind: 'approval' | 'artifact', member: string): VerifiedApproval | Refused => {
    sources ??= sourcesIn(commandBytes)
    const v = verify(kind, Buffer.from(sources(['payload', member]) ?? '', 'utf8'), authority.registry)
    if (!(v instanceof Rejection)) return {signer: v.principal, document: v.document}
    const d = Rejection.diagnostic(v)
    return opaque('INVALID_COMMAND', 'embedded', `payload.${member} fails verification: ${d.stage} ${d.reason}`)
  }
  if (command.kind === 'mission.approve') {
    const approval = embedded('approval', 'approval')
    if ('code' in approval) return approval
    if (command.payload.rootApproval === undefined) return {...command, approval}
    const rootApproval = embedded('approval', 'rootApproval')
    return 'code' in rootApproval ? rootApproval : {...command, approval, rootApproval}
  }
  if (command.kind === 'work.submit') {
    // §13.2: a failing Evidence document comes back whole, for ingress to audit (evidence.ts).
    const evidence = verifySubmittedEvidence(authority.registry, commandBytes)
    return Array.isArray(evidence) ? {...command, evidence} : evidence
  }
  if (command.kind === 'work.offer' && command.payload.contextPackage !== undefined) {
    // §8 step 2: likewise a failing Context Package (context-package.ts).
    const contextPackage = verifyOfferedContextPackage(authority.registry, commandBytes)
    return 'rejection' in contextPackage ? contextPackage : {...command, contextPackage}
  }
  if (command.kind === 'artifact.publish') {
    const artifact = embedded('artifact', 'artifact')
    return 'code' in artifact ? artifact : {...command, artifact}
  }
  return command
}
