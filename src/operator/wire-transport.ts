// The wire transport of the operator commands: engineer E's WebSocket client (src/wire/client.ts)
// over TLS 1.3. Commands are submitted as signed bytes; Events arrive verified by the client
// against the Organization registry, in order and deduplicated.
//
// One-shot reads (`events`) subscribe from the requested sequence and collect until the replay
// has gone quiet: the wire binding has no "replay complete" marker, so the transport waits until
// a PING round trip and a short idle interval pass without a new Event. A view built on an
// incomplete replay is never acted on blindly: structured Commands carry the revision the
// operator saw (expectedRevision), so a stale view yields REVISION_CONFLICT, not a wrong decision.

import {readFileSync} from 'node:fs'
import {RegistryEvidence, RegistryFault} from '../signing/registry.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {type DeliveredEvent, type ReconnectOptions, WireClient} from '../wire/client.js'
import type {EventDoc, Subscription, Transport} from './transport.js'

export interface WireTarget {
  url: string
  key: SigningKey
  /** CA certificate file trusted for the server's TLS certificate. */
  ca?: string
  /** Registry file of the Organization: delivered Events are verified against it. */
  registry?: string
  /** Reconnection after a lost connection (default: give up after 5 attempts). */
  reconnect?: ReconnectOptions
  /**
   * The connection was lost, is being retried (attempt 1, 2, …), is back (subscriptions resumed
   * from their Cursors), or is given up.
   */
  onConnection?: (state: 'lost' | 'retrying' | 'restored' | 'gave-up', attempt?: number) => void
}

/** How long the replay must stay quiet before a one-shot read is complete. */
const QUIET_MS = 150
/** A one-shot read never waits longer than this for a replay to finish. */
const READ_LIMIT_MS = 30_000

function readFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path)
  } catch (e) {
    throw new Error(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
  }
}

export async function openWireTransport(target: WireTarget): Promise<Transport> {
  if (!target.registry)
    throw new Error(
      'the wire transport verifies every Event against the Organization registry: give --registry FILE or --config FILE',
    )
  const registry = RegistryEvidence.fromBytes(readFile(target.registry, 'registry'))
  const resolved = registry.resolve()
  if (resolved instanceof RegistryFault)
    throw new Error(`registry ${target.registry} is not valid (${resolved.reason})`)
  const ca = target.ca ? readFile(target.ca, 'CA certificate') : undefined
  let client: WireClient
  try {
    client = await WireClient.connect({
      url: target.url,
      key: target.key,
      registry,
      ...(ca ? {ca} : {}),
      reconnect: target.reconnect ?? {maxAttempts: 5},
      // ACK what was processed (into the client's memory Cursors): it keeps the server's window open,
      // with no BACKPRESSURE round trip every sendWindow Events of a long replay, and the authority's
      // Cursor of this operator true, as its delivery metrics show it (wire/metrics-routes.ts).
      onDisconnected: () => target.onConnection?.('lost'),
      onNotice: ({code, detail}) => {
        if (code === 'RECONNECTING') target.onConnection?.('retrying', (detail as {attempt: number}).attempt)
        else if (code === 'RECONNECTED') target.onConnection?.('restored')
        else if (code === 'GAVE_UP') target.onConnection?.('gave-up')
      },
    })
  } catch (e) {
    throw new Error(`cannot connect to ${target.url}: ${(e as Error).message}`)
  }
  const doc = (e: DeliveredEvent) => e.document as unknown as EventDoc

  return {
    target: target.url,
    get sessionEpoch() {
      return client.sessionEpoch
    },
    submit: (bytes) => client.submit(bytes),
    async events(groupId, afterSequence = 0): Promise<EventDoc[] | null> {
      const out: EventDoc[] = []
      let missing = false
      let failure: string | null = null
      await client.subscribe(
        groupId,
        {afterSequence, onError: (err) => (err.code === 'GROUP_NOT_FOUND' ? (missing = true) : (failure = err.code))},
        (e) => {
          out.push(doc(e))
        },
      )
      try {
        const started = Date.now()
        for (;;) {
          const seen = out.length
          await client.ping()
          await new Promise((r) => setTimeout(r, QUIET_MS))
          if (missing) return null
          if (failure) throw new Error(`the server refused the subscription: ${failure}`)
          if (out.length === seen) return out
          if (Date.now() - started > READ_LIMIT_MS)
            throw new Error(`the replay of ${groupId} did not finish within ${READ_LIMIT_MS / 1000} s`)
        }
      } finally {
        client.unsubscribe(groupId)
      }
    },
    async groups(principalId) {
      if (principalId !== target.key.principal?.id)
        throw new Error(`a wire session lists the Groups of its own principal, not of ${principalId}`)
      // The server handles a connection's frames in order and announces the principal's live
      // Memberships before it reads the next frame (wire/connection.ts #subscribe): the PING's
      // answer comes after the whole first announcement.
      const seen = new Set<string>()
      await client.watchGroups((a) => seen.add(a.groupId))
      await client.ping()
      return [...seen]
    },
    watchGroups: (onGroup) => client.watchGroups((a) => onGroup(a.groupId)),
    async follow(groupId, afterSequence, onEvent, onEnd): Promise<Subscription> {
      // The client reports a subscription error only when it ended the subscription.
      await client.subscribe(groupId, {afterSequence, onError: (err) => onEnd(err.code)}, (e) => onEvent(doc(e)))
      return {
        async close() {
          client.unsubscribe(groupId)
        },
      }
    },
    presence: () => client.presence(),
    deliveryMetrics: () => client.deliveryMetrics(),
    artifacts: {
      put: (groupId, bytes) => client.putArtifact(groupId, bytes),
      get: (groupId, hash) => client.getArtifact(groupId, hash),
    },
    close: () => client.close(),
  }
}
