// Shared plumbing of the operator commands (mwp command / mission / work / group): the flags with
// their MWP_* twins, reading defaults from the Organization configuration, choosing a transport,
// and sending a built Command. Commands stay thin: parse flags, call this and src/operator, render.
//
// Where a command talks to:
//   --store URL           the local transport: an in-process authority over that store (needs the
//                         configuration for the registry, authority key and policy)
//   --url wss://…         the wire transport (engineer E's client), trusting --ca
//   neither               the configuration's server URL over the wire
// A missing configuration, key or store is an environment error (exit 3); conflicting flags are
// usage errors (exit 2).
//
// What a command reads of a Group depends on where the principal's visibility starts (§8): a
// member that sees the whole history folds the Group (views.ts); a member whose visibility starts
// later (a just-in-time Worker, from its offer; a member granted by membership.change, from the
// grant) folds what it sees (visible-work.ts) — enough for the WorkItem views (work()) and for
// signing a Command under its own Membership Epoch (signing()). A command that needs the whole
// Group (history(), folded()) refuses such a member with AUTH_FORBIDDEN (exit 1), never by
// folding from the middle (ApplyError).

import {Flags} from '@oclif/core'
import {existsSync, readFileSync} from 'node:fs'
import type {SubmitResult} from '../authority/ingress/command.js'
import type {GroupState} from '../authority/model/state.js'
import {CliRejection, environment, readFailure, usage} from '../cli/base.js'
import {readKey} from '../cli/store.js'
import {refusalText} from '../cli/rejections.js'
import {
  DEFAULT_CONFIG_FILE,
  type OrgConfig,
  configRegistry,
  loadOrgConfig,
  resolveStoreUrl,
} from '../config/org-config.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {detailsOf} from '../errors.js'
import {RegistryEvidence, RegistryFault, type ValidatedRegistry} from '../signing/registry.js'
import {SignError} from '../signing/sign.js'
import {type BuiltCommand, type CommandSpec, type EpochSource, buildCommand} from './command-builder.js'
import {EventIntegrityError, type EventDoc, type Transport, openLocalTransport} from './transport.js'
import {visibleWork} from './visible-work.js'
import {type WorkSource, foldGroup, outsideVisibility} from './views.js'
import {type WireTarget, openWireTransport} from './wire-transport.js'

export const operatorFlags = {
  config: Flags.string({
    description: `Organization configuration file (default ./${DEFAULT_CONFIG_FILE} when present).`,
    env: 'MWP_CONFIG',
  }),
  store: Flags.string({
    description: 'Talk to an in-process authority over this store (sqlite:PATH or postgres://…) instead of a server.',
    env: 'MWP_STORE',
  }),
  url: Flags.string({
    description:
      "Authority server URL (wss://HOST:PORT); default: the configuration's server. An empty MWP_URL is a usage error.",
    env: 'MWP_URL',
  }),
  ca: Flags.string({description: "CA certificate file to trust for the server's TLS certificate.", env: 'MWP_CA'}),
  key: Flags.string({
    description: "Your private key file (signs Commands locally); default: the configuration's operatorKey.",
    env: 'MWP_KEY',
  }),
  registry: Flags.string({
    description: "Organization registry file Events from a server are verified against; default: the configuration's.",
    env: 'MWP_REGISTRY',
  }),
}

export interface OperatorFlags {
  config?: string
  store?: string
  url?: string
  ca?: string
  key?: string
  registry?: string
}

/**
 * What signing a Command in an existing Group reads (OperatorContext.signing): the epochs and the
 * aggregate revision (an expectedRevision guard, §15.3), of the whole Group's state or, for a
 * member whose visibility starts late, of what it sees (`visibleFrom` then says where that is).
 */
export interface SigningView extends EpochSource {
  groupId: string
  revision: number
  visibleFrom?: number
}

export class OperatorContext {
  #transport: Transport | undefined
  #key: SigningKey | undefined

  constructor(
    readonly flags: OperatorFlags,
    readonly config: OrgConfig | undefined,
  ) {}

  static load(flags: OperatorFlags): OperatorContext {
    let path = flags.config
    if (path === undefined && existsSync(DEFAULT_CONFIG_FILE)) path = DEFAULT_CONFIG_FILE
    // An OrgConfigError reaches the command's base, which exits by its code (usage or environment).
    return new OperatorContext(flags, path === undefined ? undefined : loadOrgConfig(path))
  }

  /** The signing key: --key / MWP_KEY, else the configuration's operatorKey. */
  key(): SigningKey {
    if (this.#key) return this.#key
    const path = this.flags.key ?? this.config?.operatorKey
    if (!path) throw usage('no key: give --key FILE (or set MWP_KEY, or name operatorKey in the configuration)')
    const key = readKey(path, '--key')
    if (!key.principal) throw usage(`--key ${path} names no principal: it cannot act`)
    return (this.#key = key)
  }

  /**
   * The principal the operator acts as, when a key is given or configured: the views say "your
   * approval" to the MissionOwner. A view over --store reads without one (undefined).
   */
  principalId(): string | undefined {
    if (this.flags.key === undefined && this.config?.operatorKey === undefined) return undefined
    return this.key().principal!.id
  }

  /** The Groups where this operator holds a live Membership (Transport.groups; needs the key). */
  async groups(): Promise<string[]> {
    const me = this.key().principal!.id
    const t = await this.transport()
    try {
      return await t.groups(me)
    } catch (e) {
      throw environment(`cannot list the Groups of ${me} on ${t.target}: ${(e as Error).message}`, {cause: e})
    }
  }

  /** `wire` tunes a server connection (reconnection, e.g. for `group tail --follow`); the local transport has none. */
  async transport(wire: Pick<WireTarget, 'reconnect' | 'onConnection'> = {}): Promise<Transport> {
    if (this.#transport) return this.#transport
    const {store, url} = this.flags
    if (store !== undefined && url !== undefined) throw usage('give either --store (local) or --url (server), not both')
    if (store !== undefined) {
      if (!this.config)
        throw usage(
          '--store needs the Organization configuration (--config FILE or MWP_CONFIG) for the registry, authority key and policy',
        )
      this.#transport = await openLocalTransport({...this.config, store: resolveStoreUrl(process.cwd(), store)}) // a flag's relative path is relative to the working directory
    } else {
      // oclif drops an empty env twin as if unset: a script that meant to name a server would then
      // silently talk to the configuration's, so an empty MWP_URL is refused instead.
      if (url === undefined && process.env.MWP_URL === '')
        throw usage(
          "MWP_URL is set but empty: unset it to use the configuration's server, or set it to wss://HOST:PORT",
        )
      const target = url ?? this.config?.server.url
      if (!target) throw usage('nowhere to send: give --url wss://HOST:PORT, --store URL, or --config FILE')
      checkServerUrl(target, url !== undefined ? '--url' : `server.url of ${this.config!.file}`)
      const ca = this.flags.ca ?? this.config?.server.tls?.ca
      const key = this.key() // HELLO authenticates with the operator's own key
      try {
        this.#transport = await openWireTransport({
          url: target,
          key,
          ca,
          registry: this.flags.registry ?? this.config?.registry,
          ...wire,
        })
      } catch (e) {
        throw environment((e as Error).message, {cause: e}) // unreachable server, TLS trust, unreadable CA or registry
      }
    }
    return this.#transport
  }

  /**
   * The Group's verified Events after `afterSequence`: an environment error when unreadable, the
   * rejection GROUP_NOT_FOUND when the Group is unknown or not visible to this principal.
   */
  async events(groupId: string, afterSequence = 0): Promise<EventDoc[]> {
    const t = await this.transport()
    let events: EventDoc[] | null
    try {
      events = await t.events(groupId, afterSequence)
    } catch (e) {
      if (e instanceof EventIntegrityError) throw e // an environment error by its code
      throw environment(`cannot read ${groupId} from ${t.target}: ${(e as Error).message}`, {cause: e})
    }
    if (events === null)
      throw new CliRejection('GROUP_NOT_FOUND', `Group ${groupId} is unknown on ${t.target}, or not visible to you`)
    return events
  }

  /**
   * The Group's whole history, from sequence 1 (GROUP_NOT_FOUND as in events()). A member whose
   * visibility starts later (§8) does not have it: AUTH_FORBIDDEN, saying that `needs` (what the
   * command shows or signs) needs it and where this member's visibility starts.
   */
  async history(groupId: string, needs: string): Promise<EventDoc[]> {
    const events = await this.events(groupId)
    const from = lateStart(events)
    if (from !== undefined)
      throw new CliRejection(
        'AUTH_FORBIDDEN',
        `${needs} needs the whole history of ${groupId}, and ${outsideVisibility(from)} (§8)`,
      )
    return events
  }

  /** The Group's whole history and the state it folds to (GROUP_NOT_FOUND, AUTH_FORBIDDEN as in history()). */
  async folded(groupId: string, needs: string): Promise<{events: EventDoc[]; state: GroupState}> {
    const events = await this.history(groupId, needs)
    return {events, state: foldedOrNone(groupId, events)}
  }

  /**
   * What the WorkItem views fold (GROUP_NOT_FOUND as in events()): the Group's state when this
   * principal sees its whole history, else the WorkItems it sees from its visibility start on (§8
   * just-in-time Membership; visible-work.ts), marked with where that is.
   */
  async work(groupId: string): Promise<WorkSource> {
    const events = await this.events(groupId)
    return lateStart(events) !== undefined ? visibleWork(events)! : foldedOrNone(groupId, events)
  }

  /**
   * What signing a Command in the Group needs (GROUP_NOT_FOUND as in events()): the Group's state
   * when this principal sees its whole history, else the Memberships — its own among them — and
   * the revision it sees from its visibility start on (visible-work.ts).
   */
  async signing(groupId: string): Promise<SigningView> {
    const events = await this.events(groupId)
    if (lateStart(events) === undefined) return foldedOrNone(groupId, events)
    const seen = visibleWork(events)!
    return {
      groupId: seen.groupId,
      revision: seen.revision,
      visibleFrom: seen.visibleFrom,
      members: seen.members,
      // A Coordinator's Membership sees the whole Group (§8): a late reader holds no lease.
      mission: {coordinator: null},
    }
  }

  /** Builds with the operator's key (epochs from `spec.state`); a build failure is a usage error. */
  build(spec: CommandSpec): BuiltCommand {
    try {
      return buildCommand(this.key(), {
        ...spec,
        ...(this.#transport?.sessionEpoch !== undefined && spec.sessionEpoch === undefined
          ? {sessionEpoch: this.#transport.sessionEpoch}
          : {}),
      })
    } catch (e) {
      // A CommandBuildError is a usage error by its code. The one signer refuses a document that
      // would fail its own schema (e.g. an Agent key on mission.create): nothing is sent, and the
      // operator learns why.
      if (e instanceof SignError) throw usage(`cannot sign this Command: ${e.message}`, {cause: e})
      throw e
    }
  }

  async send(bytes: Uint8Array): Promise<SubmitResult> {
    const t = await this.transport()
    try {
      return await t.submit(bytes)
    } catch (e) {
      throw environment(`cannot submit to ${t.target}: ${(e as Error).message}`, {cause: e})
    }
  }

  async close(): Promise<void> {
    await this.#transport?.close()
    this.#transport = undefined
  }
}

/** Resolves a short Agent name (`coordinator`) to the dev Organization's ID scheme; URIs pass through. */
function agentId(value: string, config: OrgConfig | undefined, flag = '--agent'): string {
  if (value.includes(':')) return value
  if (!config)
    throw usage(`${flag} ${value} is not a URI and there is no configuration to resolve a short name against`)
  return `${config.organization}:agent:${value}`
}

/**
 * The Agent ID `flag` names, checked against the Organization registry (the configuration's, else
 * --registry): a principal that does not exist, or is a human or a service, is a usage error here
 * rather than a Command the authority refuses after it was signed and sent. With no registry at
 * hand there is nothing to check against, and the authority decides.
 */
export function registeredAgent(
  value: string,
  flags: OperatorFlags,
  config: OrgConfig | undefined,
  flag: string,
): string {
  const id = agentId(value, config, flag)
  const registry = registryOf(flags, config)
  if (!registry) return id
  const principals = [...registry.bindings.values()].map((b) => b.principal)
  // A short name is tried as every principal type, so `owner` is reported as the human it names.
  const named =
    principals.find((p) => p.id === id) ?? principals.find((p) => p.id === shortNameId(value, config, p.type))
  if (!named)
    throw usage(`${flag} ${value}: no Agent ${id} in the Organization registry (${flags.registry ?? config!.registry})`)
  if (named.type !== 'agent') throw usage(`${flag} ${value}: ${named.id} is a ${named.type}, not an Agent`)
  return id
}

/** A server URL the wire client can dial (wss://, or ws:// for an --insecure-loopback server), else a usage error. */
function checkServerUrl(target: string, source: string): void {
  let protocol: string
  try {
    protocol = new URL(target).protocol
  } catch {
    throw usage(`${source} ${target} is not a URL: give wss://HOST:PORT`)
  }
  if (protocol !== 'wss:' && protocol !== 'ws:') throw usage(`${source} ${target} is not a wss:// URL`)
}

const shortNameId = (value: string, config: OrgConfig | undefined, type: string) =>
  value.includes(':') || !config ? undefined : `${config.organization}:${type}:${value}`

function registryOf(flags: OperatorFlags, config: OrgConfig | undefined): ValidatedRegistry | undefined {
  if (flags.registry === undefined) return config ? (configRegistry(config).resolve() as ValidatedRegistry) : undefined
  let bytes: Buffer
  try {
    bytes = readFileSync(flags.registry)
  } catch (e) {
    throw readFailure(flags.registry, e)
  }
  const resolved = RegistryEvidence.fromBytes(bytes).resolve()
  if (resolved instanceof RegistryFault) throw usage(`--registry ${flags.registry} is not valid (${resolved.reason})`)
  return resolved
}

/**
 * The Outcome of a submission: the receipt, or exit 1 with the wire code. When the authority said
 * why (a semantic refusal, e.g. Evidence missing for a criterion, a payload member that fails its
 * schema), its `details` are printed under the code and kept in the --json error object.
 */
export function submissionOutcome(
  result: SubmitResult,
  extra: Record<string, unknown> = {},
  text?: (receipt: Record<string, unknown>) => string,
) {
  if ('error' in result) {
    const {code} = result.error
    const details = detailsOf(result.error)
    return {
      status: 'rejected' as const,
      code,
      ...(details !== undefined ? {details, text: refusalText(code, details)} : {}),
      extra: {...(result.error.relatedActionId ? {actionId: result.error.relatedActionId} : {}), ...extra},
    }
  }
  const receipt = result.receipt as unknown as Record<string, unknown>
  return {
    status: 'ok' as const,
    result: {receipt, ...extra},
    text: text
      ? text(receipt)
      : `accepted ${String(receipt.actionId)}: ${(receipt.eventIds as string[]).length} Event(s), sequence ${String(receipt.firstSequence)}-${String(receipt.lastSequence)}, revision ${String(receipt.aggregateRevision)}`,
  }
}

/**
 * Sends one human control Command to an existing Group: epochs from what the principal sees of it
 * (OperatorContext.signing) and, for a structured transition, `expectedRevision` = the revision
 * the operator is looking at (§15.3), so a decision made on a view that has since changed is
 * refused rather than misapplied. Whether the principal may send it is the authority's to say.
 */
export async function sendToGroup(
  ctx: OperatorContext,
  groupId: string,
  kind: string,
  payload: Record<string, unknown>,
  options: {guardRevision?: boolean} = {},
) {
  const view = await ctx.signing(groupId)
  const built = ctx.build({
    kind,
    groupId,
    payload,
    state: view,
    ...((options.guardRevision ?? true) ? {expectedRevision: view.revision} : {}),
  })
  return submissionOutcome(await ctx.send(built.bytes), {groupId, actionId: built.actionId})
}

/** Where this principal's visibility starts when it is after sequence 1 (§8), else undefined. */
function lateStart(events: readonly EventDoc[]): number | undefined {
  const first = events[0]?.sequence
  return first !== undefined && first > 1 ? first : undefined
}

function foldedOrNone(groupId: string, events: readonly EventDoc[]): GroupState {
  const state = foldGroup(events)
  if (state === null) throw new CliRejection('GROUP_NOT_FOUND', `Group ${groupId} has no Events`)
  return state
}
