// How the operator commands reach a Group Authority. One interface, two implementations:
//   local — an in-process Authority over the configured store (`--store sqlite:PATH` or the
//           config's store): Commands go through ingress.submit(), Events are read from the store.
//   wire  — the WebSocket binding (src/wire/client.ts), see wire-transport.ts.
// Either way every Event handed to a view is the stored signed document, re-verified with the
// six-stage verifier against the Organization registry before it is folded.

import {type ErrorCode, MwpError} from '../errors.js'
import type {SubmitResult} from '../authority/ingress/command.js'
import {submit} from '../authority/ingress/command.js'
import type {OrgConfig} from '../config/org-config.js'
import type {JsonObject} from '../json/parse.js'
import {openAuthorityFromConfig} from '../config/org-config.js'
import type {RegistryEvidence} from '../signing/registry.js'
import {Rejection, verify} from '../signing/verify.js'
import type {GroupDelivery} from '../wire/metrics-routes.js'

/** A verified Group Event document (the fields the views read, plus the rest). */
export interface EventDoc {
  eventId: string
  kind: string
  groupId: string
  sequence: number
  aggregateRevision: number
  actor: {type: string; id: string}
  occurredAt: string
  correlationId: string
  payload: Record<string, unknown>
  [field: string]: unknown
}

export interface Subscription {
  close(): Promise<void>
}

export interface Transport {
  /** Where the transport points (for messages). */
  readonly target: string
  /** The Session Epoch Agent Commands must carry on this connection (wire sessions), if any. */
  readonly sessionEpoch?: number
  submit(commandBytes: Uint8Array): Promise<SubmitResult>
  /**
   * Every Event of the Group after `afterSequence` (all pages), verified; null when the Group is
   * unknown or not visible to this principal (one answer for both, §17.2).
   */
  events(groupId: string, afterSequence?: number): Promise<EventDoc[] | null>
  /**
   * The Groups where `principalId` holds a live (provisional or active) Membership, from the
   * store's membership index (store/member-table.ts); over the wire the session's own principal,
   * announced by the directory subscription (wire/directory.ts). A list of Groups worth looking
   * at: only a Group's Events say what the principal may see there.
   */
  groups(principalId: string): Promise<string[]>
  /**
   * Keeps announcing the Groups where the session's own principal holds a live Membership, the
   * existing ones at once and new ones as they are granted (wire sessions: the directory
   * subscription, wire/directory.ts; absent on the local transport, whose callers poll groups()).
   * A long-running viewer (the console) uses it; it replaces what groups() watches on the session.
   */
  watchGroups?(onGroup: (groupId: string) => void): Promise<void>
  /**
   * Delivers the Group's Events after `afterSequence` in order, then new ones as they are accepted,
   * until closed; `onEnd` reports why the peer or the store ended it (GROUP_NOT_FOUND for a Group
   * that is unknown or not visible, as `events` answers null).
   */
  follow(
    groupId: string,
    afterSequence: number,
    onEvent: (event: EventDoc) => void,
    onEnd: (code: ErrorCode) => void,
  ): Promise<Subscription>
  /**
   * The Organization's unexpired Presence Records, one per Agent (§6.2; wire sessions only: the
   * server's GET /mwp/0.1/presence, wire/presence-routes.ts). Absent on the local transport: a
   * store holds no Presence, only a live server's sessions do. A record carries capacity and
   * capability availability, never a Group's content, so any viewer may see every record.
   */
  presence?(): Promise<JsonObject[]>
  /**
   * The authority's delivery metrics (Cursor lag, window, BACKPRESSURE) of the Groups this
   * principal may read (wire sessions only: GET /mwp/0.1/metrics, wire/metrics-routes.ts).
   */
  deliveryMetrics?(): Promise<GroupDelivery[]>
  /**
   * The Artifact store of the server (wire sessions only: it is served over HTTPS beside the
   * WebSocket binding, src/wire/artifact-client.ts); absent on the local transport.
   */
  readonly artifacts?: {
    put(groupId: string, bytes: Uint8Array): Promise<string>
    get(groupId: string, hash: string): Promise<Buffer>
  }
  close(): Promise<void>
}

/** An Event that fails verification is never shown or folded: the log (or the peer) is broken. */
export class EventIntegrityError extends MwpError<'event-integrity'> {
  constructor(message: string) {
    super('event-integrity', message)
  }
}

export function verifiedEvent(bytes: Uint8Array, registry: RegistryEvidence, where: string): EventDoc {
  const v = verify('event', bytes, registry)
  if (v instanceof Rejection)
    throw new EventIntegrityError(
      `${where}: an Event fails verification (${Rejection.diagnostic(v).stage}: ${Rejection.diagnostic(v).reason})`,
    )
  return v.document as unknown as EventDoc
}

const PAGE = 500
/** Polling interval of a local follow: the store has no cross-process notification for SQLite. */
const LOCAL_POLL_MS = 250

export async function openLocalTransport(config: OrgConfig): Promise<Transport> {
  const {authority, store, registry, close} = await openAuthorityFromConfig(config, {inlineWrites: true})
  const read = async (groupId: string, after: number): Promise<EventDoc[]> => {
    const out: EventDoc[] = []
    for (;;) {
      const page = await store.read(groupId, after, PAGE)
      for (const e of page.events)
        out.push(verifiedEvent(e.bytes, registry, `${config.store} ${groupId}#${e.sequence}`))
      if (page.events.length === 0) return out
      after = page.events.at(-1)!.sequence
    }
  }
  const known = async (groupId: string) => (await store.head(groupId)) !== null
  const subscriptions = new Set<() => void>()
  return {
    target: config.store,
    submit: (bytes) => submit(authority, bytes),
    events: async (groupId, afterSequence = 0) => ((await known(groupId)) ? read(groupId, afterSequence) : null),
    async groups(principalId) {
      const out: string[] = []
      for (let after = 0; ;) {
        const rows = await store.members().live(principalId, after, PAGE)
        out.push(...rows.map((r) => r.groupId))
        if (rows.length < PAGE) return [...new Set(out)]
        after = rows.at(-1)!.position
      }
    },
    async follow(groupId, afterSequence, onEvent, onEnd) {
      if (!(await known(groupId))) {
        queueMicrotask(() => onEnd('GROUP_NOT_FOUND')) // after the caller holds the subscription, as over the wire
        return {close: async () => undefined}
      }
      let after = afterSequence
      let stopped = false
      let timer: NodeJS.Timeout | undefined
      let running: Promise<void> = Promise.resolve()
      const tick = async () => {
        for (const e of await read(groupId, after)) {
          if (stopped) return
          after = e.sequence
          onEvent(e)
        }
      }
      const schedule = () => {
        if (stopped) return
        timer = setTimeout(() => {
          running = tick().then(schedule, (err) => {
            stopped = true
            process.stderr.write(`mwp: ${(err as Error).message}\n`)
            onEnd('INTERNAL_ERROR')
          })
        }, LOCAL_POLL_MS)
      }
      await tick()
      schedule()
      const stop = () => {
        stopped = true
        if (timer) clearTimeout(timer)
      }
      subscriptions.add(stop)
      return {
        async close() {
          stop()
          subscriptions.delete(stop)
          await running.catch(() => undefined)
        },
      }
    },
    async close() {
      for (const stop of subscriptions) stop()
      await close()
    },
  }
}
