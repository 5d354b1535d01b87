// The WebSocket client (spec §6.3, §16, §17): used by the CLI, the Agent runtime and the tests.
//
//   const client = await WireClient.connect({url, key, registry, ca})
//   await client.subscribe(groupId, {afterSequence: 0}, (e) => …)   // in order, verified, deduped
//   const r = await client.submit(commandBytes)                      // {receipt} | {error}
//   await client.close()
//
// Delivery rules (§16): Events are routed by Group, deduplicated by Event ID and sequence,
// buffered when they arrive out of order, and handed to `onEvent` strictly in sequence. The
// Cursor advances only over contiguous sequences — a delivered one, or one the server announced
// as deliberately not delivered (server ACK "delivered through", see frames.ts) — never over a
// gap. Every Event is verified with the six-stage verifier before anything else looks at it.
// After a lost connection the client reconnects with backoff, opens a new session (a new
// Session Epoch for Agents) and resubscribes from its Cursors; duplicates are dropped.
//
//   await client.watchGroups(({groupId, afterSequence}) => client.subscribe(groupId, {afterSequence}, …))
//
// announces each Group where this principal holds a live Membership, now and as it is granted (the
// gateway's directory subscription, wire/directory.ts): a server ACK for a Group the client does
// not subscribe to. It is asked for again after every reconnect.

import {randomBytes} from 'node:crypto'
import WebSocket from 'ws'
import type {CommandReceipt, SubmitResult} from '../authority/ingress/command.js'
import {signEd25519} from '../crypto/ed25519.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {type ErrorCode, MwpError, type ProtocolError, type WireErrorCode, protocolError} from '../errors.js'
import {encodeBase64url} from '../json/base64url.js'
import {canonicalHash} from '../json/jcs.js'
import {type JsonObject, type SourceOf, parseJsonBytes} from '../json/parse.js'
import type {Principal} from '../signing/profiles.js'
import type {RegistryEvidence} from '../signing/registry.js'
import {Rejection, verify} from '../signing/verify.js'
import {type CursorStore, MemoryCursorStore} from './cursor-store.js'
import {type Frame, PROTOCOL_VERSION, frame, newFrameId, parseFrame, receiptPosition} from './frames.js'
import {transcriptBytes} from './hello.js'
import type {OrganizationReceipt, OrganizationSubmitResult} from '../authority/ingress/organization.js'
import {getArtifact, putArtifact} from './artifact-client.js'
import {mutated} from '../mutants.js'
import {type HttpsSession, exchange, refusal} from './https-exchange.js'
import {type GroupDelivery, METRICS_PATH, parseDeliveryMetrics} from './metrics-routes.js'
import {PRESENCE_PATH} from './presence-routes.js'
import {type IssuedToken, type TokenAsk, requestToken} from './token-client.js'

export {FileCursorStore, MemoryCursorStore, type CursorStore} from './cursor-store.js'

/** §8/§17.2: attention filters change live delivery only (websocket-frame attentionFilter). */
export interface AttentionFilter {
  eventKinds?: string[]
  conversationIds?: string[]
  workItemIds?: string[]
  mentionsOnly?: boolean
  announcements?: boolean
}

/** A verified Event as delivered to `onEvent`. */
export interface DeliveredEvent {
  groupId: string
  sequence: number
  eventId: string
  kind: string
  /** The verified Event document. */
  document: JsonObject
  /** The Event bytes as received (JSON text of the signed document). */
  bytes: Uint8Array
}

/** A verified signed Group snapshot reference received with CURSOR_TOO_OLD (§16, I5). */
export interface SnapshotReference {
  groupId: string
  throughSequence: number
  snapshotHash: string
  document: JsonObject
  /** The Group state at throughSequence, when the server sent it (full-visibility members); its canonical hash was checked against the snapshot's stateHash. */
  state?: JsonObject
}

/** watchGroups: a Group where this principal holds a live Membership, visible after `afterSequence`. */
export interface GroupAnnouncement {
  groupId: string
  /** The Membership's visibility start - 1: subscribe from here (§8). */
  afterSequence: number
}

export interface SubscribeOptions {
  /** Replay strictly after this sequence (default: the stored Cursor, else 0). */
  afterSequence?: number
  /** Shorthand for attention.eventKinds. */
  kinds?: string[]
  attention?: AttentionFilter
  /**
   * CURSOR_TOO_OLD: restore from the verified snapshot, then the subscription resumes after its
   * sequence. Without a handler the subscription stops and `onError` gets CURSOR_TOO_OLD.
   */
  onSnapshot?: (snapshot: SnapshotReference) => void | Promise<void>
  /**
   * The server's "delivered through" marker: sequences up to it that never arrive were not for
   * this subscriber (before its visibility start, or filtered). A client keeping its own durable
   * Cursor (the Agent runtime) records it so its Cursor may pass them.
   */
  onDeliveredThrough?: (sequence: number) => void
  /** GROUP_NOT_FOUND (absent or not visible), CURSOR_TOO_OLD without handler, integrity failures. */
  onError?: (error: ProtocolError) => void
}

export interface ReconnectOptions {
  initialDelayMs?: number
  maxDelayMs?: number
  /** Give up after this many consecutive failed attempts (default: never). */
  maxAttempts?: number
}

export interface ConnectOptions {
  /** wss://host:port (or ws:// for an --insecure-loopback server). */
  url: string
  /** The principal's signing key (must carry its principal). */
  key: SigningKey
  /** Registry evidence: every delivered Event and snapshot is verified against it. */
  registry: RegistryEvidence
  /**
   * H9: principal IDs trusted to accept Events (the Group Authority services). When given, an
   * Event whose `acceptedBy` is anyone else is dropped even if its signature verifies.
   */
  acceptedBy?: string[]
  /** PEM CA certificate(s) to trust (e.g. the --dev-tls CA file's contents). */
  ca?: string | Buffer
  cursors?: CursorStore
  /** Reconnect after a lost connection (default true). */
  reconnect?: boolean | ReconnectOptions
  /** ACK (and persist) contiguous Cursors automatically after `onEvent` returns (default true). */
  autoAck?: boolean
  /** Called after every (re)authentication with the new Session Epoch (Agents). */
  onSession?: (session: {sessionEpoch: number | undefined; reconnect: boolean}) => void
  /** Called when an open connection is lost (before reconnecting); not on close(). */
  onDisconnected?: () => void
  /** Connection-level notices: BACKPRESSURE, unsolicited ERROR frames, reconnect failures. */
  onNotice?: (notice: {
    code: ErrorCode | 'RECONNECTING' | 'RECONNECTED' | 'GAVE_UP'
    groupId?: string
    detail?: unknown
  }) => void
  /** How long a HELLO exchange may take (default 10 s). */
  handshakeTimeoutMs?: number
}

/** A wire code the peer answered with, or a local failure of the connection itself. */
export class WireError extends MwpError<ErrorCode | WireErrorCode> {}

interface Subscription {
  groupId: string
  attention?: AttentionFilter
  onEvent: (event: DeliveredEvent) => void | Promise<void>
  options: SubscribeOptions
  /** Highest contiguous sequence processed. */
  cursor: number
  /**
   * The sequence being handed to onEvent right now (always cursor + 1), or null: an application
   * that made it durable inside onEvent may ACK it from there (the Agent runtime does).
   */
  handing: number | null
  /** Out-of-order Events waiting for the gap before them to close. */
  buffer: Map<number, DeliveredEvent>
  /** Event IDs recently received (deduplication by Event ID, bounded). */
  seen: Set<string>
  /** Server "delivered through" marker: sequences up to here that never arrive were filtered. */
  skipThrough: number
  draining: Promise<void>
  acked: number
  active: boolean
  subscriptionId: string
}

interface PendingCommand {
  frameId: string
  actorId: string
  actionId: string
  events: DeliveredEvent[]
  count: number | null
  resolve: (r: {events: DeliveredEvent[]} | {error: ProtocolError}) => void
}

const ACK_BATCH = 64
const SEEN_IDS = 4096
const ACK_DELAY_MS = 20

export class WireClient {
  readonly principal: Principal
  readonly #options: ConnectOptions
  readonly #cursors: CursorStore
  #ws: WebSocket | null = null
  #sessionEpoch: number | undefined
  #sessionToken: string | undefined
  #closed = false
  readonly #subs = new Map<string, Subscription>()
  readonly #pending = new Map<string, PendingCommand>()
  readonly #pings = new Map<string, () => void>()
  #ackTimer: NodeJS.Timeout | null = null
  #duplicates = 0
  /** watchGroups' callback and the ID of its SUBSCRIBE, once asked for. */
  #directory: {onGroup: (group: GroupAnnouncement) => void; subscriptionId: string} | null = null

  private constructor(options: ConnectOptions) {
    if (!options.key.principal) throw new WireError('HANDSHAKE_FAILED', 'the key file names no principal')
    this.principal = options.key.principal
    this.#options = options
    this.#cursors = options.cursors ?? new MemoryCursorStore()
  }

  /** Opens the connection and completes HELLO; rejects with WireError when that fails. */
  static async connect(options: ConnectOptions): Promise<WireClient> {
    const client = new WireClient(options)
    await client.#open(false)
    return client
  }

  /** The Session Epoch of the current session (Agents; undefined for humans and services). */
  get sessionEpoch(): number | undefined {
    return this.#sessionEpoch
  }

  get sessionToken(): string | undefined {
    return this.#sessionToken
  }

  /** Redelivered Events dropped by the Event ID / sequence deduplication so far. */
  get duplicatesDropped(): number {
    return this.#duplicates
  }

  get connected(): boolean {
    return this.#ws?.readyState === WebSocket.OPEN
  }

  /** Puts Artifact content into a Group over HTTPS with this session's token (artifact-client.ts); its hash. */
  putArtifact(groupId: string, bytes: Uint8Array): Promise<string> {
    return putArtifact(this.#httpsSession(), groupId, bytes)
  }

  /** Artifact content of a Group, refused unless it hashes to `hash` (artifact-client.ts). */
  getArtifact(groupId: string, hash: string): Promise<Buffer> {
    return getArtifact(this.#httpsSession(), groupId, hash)
  }

  /** §6.2: the Organization's unexpired Presence Records, one per Agent (presence-routes.ts). */
  async presence(): Promise<JsonObject[]> {
    const answer = await exchange(this.#httpsSession(), 'GET', PRESENCE_PATH)
    if (answer.status !== 200) throw refusal(answer)
    const body: unknown = JSON.parse(answer.body.toString('utf8'))
    const records = typeof body === 'object' && body !== null && 'presence' in body ? body.presence : []
    return Array.isArray(records)
      ? records.filter((r): r is JsonObject => typeof r === 'object' && r !== null && !Array.isArray(r))
      : []
  }

  /** The authority's delivery metrics of the Groups this session may read (metrics-routes.ts). */
  async deliveryMetrics(): Promise<GroupDelivery[]> {
    const answer = await exchange(this.#httpsSession(), 'GET', METRICS_PATH)
    if (answer.status !== 200) throw refusal(answer)
    return parseDeliveryMetrics(JSON.parse(answer.body.toString('utf8')))
  }

  /** §12: the capability token of this session's current execution of the WorkItem (token-client.ts). */
  requestToken(groupId: string, workItemId: string, ask: TokenAsk): Promise<IssuedToken> {
    return requestToken(this.#httpsSession(), groupId, workItemId, ask)
  }

  #httpsSession(): HttpsSession {
    if (this.#sessionToken === undefined || !this.connected) throw new WireError('CLOSED', 'no open session')
    return {url: this.#options.url, ca: this.#options.ca, token: this.#sessionToken}
  }

  /** Submits one signed Group Command: its receipt (from the Events it produced) or its error. */
  async submit(commandBytes: Uint8Array): Promise<SubmitResult> {
    const r = await this.#send(commandBytes)
    if ('error' in r) return r
    const last = r.events[r.events.length - 1]!
    const first = r.events[0]!
    const receipt: CommandReceipt = {
      actionId: (first.document.cause as JsonObject).id as string,
      actor: {
        type: (first.document.actor as JsonObject).type as string,
        id: (first.document.actor as JsonObject).id as string,
      },
      groupId: first.groupId,
      eventIds: r.events.map((e) => e.eventId),
      firstSequence: first.sequence,
      lastSequence: last.sequence,
      aggregateRevision: last.document.aggregateRevision as number,
    }
    return {receipt}
  }

  /** Submits one Organization-scoped Command (agent_card_register …). */
  async submitOrganization(commandBytes: Uint8Array): Promise<OrganizationSubmitResult> {
    const r = await this.#send(commandBytes)
    if ('error' in r) return r
    const e = r.events[0]!
    const payload = e.document.payload as JsonObject
    const receipt: OrganizationReceipt = {
      actionId: (e.document.cause as JsonObject).id as string,
      actor: e.document.actor as unknown as Principal,
      eventKind: e.kind,
      eventIds: r.events.map((x) => x.eventId),
      subjectId: payload.agentId as string,
      version: (payload.sessionEpoch ?? payload.cardVersion) as number,
    }
    return {receipt}
  }

  /**
   * Subscribes to one Group. Replays after `afterSequence` (or the stored Cursor), then delivers
   * live Events, each once and in order. Resolves once the SUBSCRIBE frame is sent.
   */
  async subscribe(
    groupId: string,
    options: SubscribeOptions,
    onEvent: (event: DeliveredEvent) => void | Promise<void>,
  ): Promise<void> {
    const stored = (await this.#cursors.load(groupId)) ?? 0
    const cursor = options.afterSequence ?? stored
    const attention = options.attention ?? (options.kinds ? {eventKinds: options.kinds} : undefined)
    const sub: Subscription = {
      groupId,
      attention,
      onEvent,
      options,
      cursor,
      handing: null,
      buffer: new Map(),
      seen: new Set(),
      skipThrough: cursor,
      draining: Promise.resolve(),
      acked: cursor,
      active: true,
      subscriptionId: newFrameId(),
    }
    this.#subs.set(groupId, sub)
    this.#sendSubscribe(sub)
  }

  /**
   * Asks the server for the Groups where this principal holds a live (provisional or active)
   * Membership: `onGroup` gets each one, with the sequence its visibility starts after, once the
   * server announces it — at once for the existing ones, later as Memberships are granted (a
   * Worker's just-in-time Membership comes with the offer, §8). A Group may be announced again
   * (its Membership changed, or after a reconnect); one this client subscribes to is not.
   * Resolves once the SUBSCRIBE frame is sent.
   */
  async watchGroups(onGroup: (group: GroupAnnouncement) => void): Promise<void> {
    this.#directory = {onGroup, subscriptionId: newFrameId()}
    this.#sendDirectory()
  }

  /** Stops delivering a Group's Events on this client (the server stops at the next reconnect). */
  unsubscribe(groupId: string): void {
    const sub = this.#subs.get(groupId)
    if (sub) sub.active = false
    this.#subs.delete(groupId)
  }

  /** The highest contiguous sequence processed for the Group (0 before any). */
  cursor(groupId: string): number {
    return this.#subs.get(groupId)?.cursor ?? 0
  }

  /**
   * Reports a durable Cursor for a Group (never beyond what was processed contiguously). Called
   * from inside onEvent, it may cover the Event being handed over: the caller has made it durable.
   */
  async ack(groupId: string, sequence: number): Promise<void> {
    const sub = this.#subs.get(groupId)
    const upTo = sub ? Math.min(sequence, sub.handing ?? sub.cursor) : sequence
    await this.#cursors.save(groupId, upTo)
    if (sub) sub.acked = Math.max(sub.acked, upTo)
    this.#raw(frame('ACK', {acknowledgements: [{groupId, sequence: upTo}], sentAt: new Date().toISOString()}))
  }

  /** Sends a PING (optionally with a Presence Record) and resolves when the server echoes it. */
  ping(presence?: JsonObject): Promise<void> {
    const nonce = encodeBase64url(randomBytes(16))
    return new Promise((resolve) => {
      this.#pings.set(nonce, resolve)
      this.#raw(frame('PING', {nonce, sentAt: new Date().toISOString(), ...(presence ? {presence} : {})}))
    })
  }

  async close(): Promise<void> {
    this.#closed = true
    if (this.#ackTimer) clearTimeout(this.#ackTimer)
    await this.#flushAcks()
    for (const p of this.#pending.values()) p.resolve({error: indeterminate()})
    this.#pending.clear()
    const ws = this.#ws
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        ws.once('close', () => resolve())
        ws.close(1000)
        setTimeout(() => {
          ws.terminate()
          resolve()
        }, 2000).unref()
      })
    }
  }

  // ------------------------------------------------------------------------------------------
  // Connection and HELLO

  async #open(reconnect: boolean): Promise<void> {
    const {url, ca, key} = this.#options
    const ws = new WebSocket(url, {ca, minVersion: 'TLSv1.3', maxPayload: 16 * 1024 * 1024, perMessageDeflate: false})
    const frames: {frame: Frame; source: SourceOf}[] = []
    let wake: (() => void) | null = null
    let failure: Error | null = null
    const next = async (): Promise<Frame> => {
      const deadline = Date.now() + (this.#options.handshakeTimeoutMs ?? 10_000)
      while (frames.length === 0) {
        if (failure) throw failure
        const left = deadline - Date.now()
        if (left <= 0) throw new WireError('HANDSHAKE_FAILED', 'the HELLO exchange timed out')
        await new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, left).unref()
        })
        wake = null
      }
      return frames.shift()!.frame
    }
    const onHelloMessage = (data: WebSocket.RawData, isBinary: boolean) => {
      const parsed = isBinary ? null : parseFrame(data.toString())
      if (parsed?.ok) frames.push(parsed)
      else failure = new WireError('PROTOCOL_VIOLATION', 'the server sent a malformed frame during HELLO')
      wake?.()
    }
    ws.on('message', onHelloMessage)
    ws.on('error', (e) => {
      failure ??= new WireError('HANDSHAKE_FAILED', e.message, {cause: e})
      wake?.()
    })
    ws.on('close', () => {
      failure ??= new WireError('CLOSED', 'the connection closed')
      wake?.()
    })
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve())
      ws.once('error', reject)
      ws.once('close', () => reject(failure ?? new WireError('CLOSED', 'the connection closed')))
    }).catch((e: Error) => {
      throw e instanceof WireError ? e : new WireError('HANDSHAKE_FAILED', e.message, {cause: e})
    })

    try {
      const clientNonce = encodeBase64url(randomBytes(32))
      ws.send(
        frame('HELLO', {
          phase: 'client_init',
          agentId: this.principal.id,
          keyId: key.keyId,
          clientNonce,
          supportedVersions: [PROTOCOL_VERSION],
        }),
      )
      const challenge = await next()
      if (challenge.frameType === 'ERROR')
        throw new WireError((challenge.error as JsonObject).code as ErrorCode, 'HELLO refused')
      // Never sign what the server chose alone: the transcript is rebuilt from our own values.
      if (
        challenge.phase !== 'server_challenge' ||
        challenge.clientNonce !== clientNonce ||
        challenge.selectedVersion !== PROTOCOL_VERSION
      ) {
        throw new WireError('PROTOCOL_VIOLATION', 'unexpected HELLO challenge')
      }
      const serverNonce = challenge.serverNonce as string
      const signature = signEd25519(
        key.seed,
        transcriptBytes({
          principalId: this.principal.id,
          keyId: key.keyId,
          clientNonce,
          serverNonce,
          challenge: challenge.challenge as string,
          selectedVersion: PROTOCOL_VERSION,
        }),
      )
      ws.send(
        frame('HELLO', {
          phase: 'client_response',
          agentId: this.principal.id,
          keyId: key.keyId,
          clientNonce,
          serverNonce,
          challengeSignature: encodeBase64url(signature),
        }),
      )
      const accept = await next()
      if (accept.frameType === 'ERROR')
        throw new WireError((accept.error as JsonObject).code as ErrorCode, 'HELLO refused')
      if (accept.phase !== 'server_accept') throw new WireError('PROTOCOL_VIOLATION', 'unexpected HELLO frame')
      this.#sessionEpoch = this.principal.type === 'agent' ? (accept.sessionEpoch as number) : undefined
      this.#sessionToken = accept.sessionToken as string
    } catch (e) {
      ws.terminate()
      throw e
    }
    ws.off('message', onHelloMessage)
    ws.removeAllListeners('error')
    ws.removeAllListeners('close')
    ws.on('error', () => undefined) // the close handler below does the work
    ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary))
    ws.on('close', () => this.#onClose(ws))
    this.#ws = ws
    this.#options.onSession?.({sessionEpoch: this.#sessionEpoch, reconnect})
    // Frames that arrived right behind server_accept.
    for (const f of frames) this.#onFrame(f.frame, f.source)
  }

  #onClose(ws: WebSocket): void {
    if (this.#ws !== ws) return
    this.#ws = null
    // Anything in flight has no authoritative answer: the caller looks up or retries the same
    // bytes (same Action ID), which the receipt answers (L5).
    for (const p of this.#pending.values()) p.resolve({error: indeterminate()})
    this.#pending.clear()
    if (this.#closed) return
    this.#options.onDisconnected?.()
    const r = this.#options.reconnect ?? true
    if (r === false) return
    void this.#reconnect(r === true ? {} : r)
  }

  async #reconnect(o: ReconnectOptions): Promise<void> {
    let delay = o.initialDelayMs ?? 100
    for (let attempt = 1; !this.#closed; attempt++) {
      this.#options.onNotice?.({code: 'RECONNECTING', detail: {attempt}})
      await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random() / 2)))
      if (this.#closed) return
      try {
        await this.#open(true)
        // Resume from the durable Cursor: Events processed after it come again and are dropped
        // as duplicates (§16 "possibly including duplicates around a prior disconnect").
        for (const sub of this.#subs.values()) {
          dropBuffered(sub)
          sub.skipThrough = sub.cursor
          const durable = (await this.#cursors.load(sub.groupId)) ?? 0
          this.#sendSubscribe(sub, Math.min(durable, sub.cursor))
        }
        this.#sendDirectory()
        this.#options.onNotice?.({code: 'RECONNECTED'})
        return
      } catch (e) {
        if (o.maxAttempts !== undefined && attempt >= o.maxAttempts) {
          this.#options.onNotice?.({code: 'GAVE_UP', detail: (e as Error).message})
          return
        }
        delay = Math.min(delay * 2, o.maxDelayMs ?? 5000)
      }
    }
  }

  #raw(text: string): void {
    const ws = this.#ws
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(text)
  }

  /** The directory subscription: a group entry naming this principal's own ID (wire/directory.ts). */
  #sendDirectory(): void {
    if (this.#directory === null) return
    const g: JsonObject = {groupId: this.principal.id, afterSequence: 0}
    this.#raw(frame('SUBSCRIBE', {subscriptionId: this.#directory.subscriptionId, groups: [g]}))
  }

  #sendSubscribe(sub: Subscription, afterSequence = sub.cursor): void {
    const g: JsonObject = {groupId: sub.groupId, afterSequence}
    if (sub.attention) g.attention = sub.attention as JsonObject
    this.#raw(frame('SUBSCRIBE', {subscriptionId: sub.subscriptionId, groups: [g]}))
  }

  #send(commandBytes: Uint8Array): Promise<{events: DeliveredEvent[]} | {error: ProtocolError}> {
    let command: JsonObject
    try {
      command = parseJsonBytes(commandBytes) as JsonObject
    } catch {
      return Promise.resolve({error: protocolError('PROTOCOL_VIOLATION')})
    }
    const actor = command?.actor as JsonObject | undefined
    if (typeof command?.actionId !== 'string' || typeof actor?.id !== 'string')
      return Promise.resolve({error: protocolError('SCHEMA_VALIDATION_FAILED')})
    if (!this.connected) return Promise.resolve({error: indeterminate()})
    const frameId = newFrameId()
    const text = Buffer.from(commandBytes).toString('utf8')
    return new Promise((resolve) => {
      this.#pending.set(frameId, {
        frameId,
        actorId: actor.id as string,
        actionId: command.actionId as string,
        events: [],
        count: null,
        resolve,
      })
      this.#raw(
        `{"protocolVersion":"${PROTOCOL_VERSION}","frameId":${JSON.stringify(frameId)},"frameType":"COMMAND","command":${text}}`,
      )
    })
  }

  // ------------------------------------------------------------------------------------------
  // Incoming frames

  #onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (isBinary) return this.#options.onNotice?.({code: 'PROTOCOL_VIOLATION', detail: 'binary frame from the server'})
    const parsed = parseFrame(data.toString())
    if (!parsed.ok) return this.#options.onNotice?.({code: parsed.code, detail: 'malformed frame from the server'})
    this.#onFrame(parsed.frame, parsed.source)
  }

  /** `source`: the exact text each object of the frame arrived as; signed documents are verified from it. */
  #onFrame(f: Frame, source: SourceOf): void {
    switch (f.frameType) {
      case 'EVENT':
        return this.#onEvent(f, source)
      case 'ACK':
        for (const a of f.acknowledgements as unknown as {groupId: string; sequence: number}[]) {
          const sub = this.#subs.get(a.groupId)
          if (sub && a.sequence > sub.skipThrough) {
            sub.skipThrough = a.sequence
            this.#drain(sub)
            // The marker covers the Events of the page it follows: tell the application only once
            // those are handed over, or it would pass them as filtered before they arrive (and
            // then drop them as already passed).
            const through = a.sequence
            sub.draining = sub.draining.then(() => {
              if (sub.active) sub.options.onDeliveredThrough?.(through)
            })
          } else if (!sub) {
            // Not subscribed here: a directory announcement (watchGroups), or nothing.
            this.#directory?.onGroup({groupId: a.groupId, afterSequence: a.sequence})
          }
        }
        return
      case 'PING':
        if (typeof f.replyToNonce === 'string') {
          this.#pings.get(f.replyToNonce)?.()
          this.#pings.delete(f.replyToNonce)
        } else {
          this.#raw(
            frame('PING', {
              nonce: encodeBase64url(randomBytes(16)),
              replyToNonce: f.nonce as string,
              sentAt: new Date().toISOString(),
            }),
          )
        }
        return
      case 'ERROR':
        return this.#onError(f.error as unknown as ProtocolError, source)
      default:
        this.#options.onNotice?.({code: 'PROTOCOL_VIOLATION', detail: `unexpected ${f.frameType} frame`})
    }
  }

  /** The Event exactly as received (`text`), six-stage verified. */
  #verified(text: string | undefined): DeliveredEvent | null {
    if (text === undefined) return null
    const bytes = Buffer.from(text, 'utf8')
    const v = verify('event', bytes, this.#options.registry)
    if (v instanceof Rejection) return null
    const d = v.document
    const trusted = this.#options.acceptedBy
    if (trusted && !trusted.includes((d.acceptedBy as JsonObject).id as string)) return null
    return {
      groupId: d.groupId as string,
      sequence: d.sequence as number,
      eventId: d.eventId as string,
      kind: d.kind as string,
      document: d,
      bytes,
    }
  }

  #onEvent(f: Frame, source: SourceOf): void {
    const event = this.#verified(source(f.event as JsonObject))
    if (event === null) {
      this.#options.onNotice?.({code: 'AUTH_INVALID_SIGNATURE', detail: 'an Event failed verification and was dropped'})
      return
    }
    const position = receiptPosition(f.frameId)
    if (position) return this.#onReceiptEvent(event, position)
    const sub = this.#subs.get(event.groupId)
    if (!sub || !sub.active || !Number.isSafeInteger(event.sequence)) return
    // I1: a redelivered Event changes nothing — known by its Event ID, or by a position already
    // processed or buffered (the ID set is bounded; positions cover everything older).
    if (sub.seen.has(event.eventId) || event.sequence <= sub.cursor || sub.buffer.has(event.sequence)) {
      this.#duplicates++
      return
    }
    sub.seen.add(event.eventId)
    if (sub.seen.size > SEEN_IDS) sub.seen.delete(sub.seen.values().next().value!)
    sub.buffer.set(event.sequence, event)
    this.#drain(sub)
  }

  #onReceiptEvent(event: DeliveredEvent, position: {index: number; count: number}): void {
    const cause = event.document.cause as JsonObject
    const actor = event.document.actor as JsonObject
    for (const p of this.#pending.values()) {
      if (p.actionId !== cause.id || p.actorId !== actor.id) continue
      if (position.index === 1) p.events = []
      p.events.push(event)
      if (position.index === position.count) {
        this.#pending.delete(p.frameId)
        p.resolve({events: p.events})
      }
      return
    }
  }

  #onError(error: ProtocolError, source: SourceOf): void {
    const related = error.relatedFrameId
    if (typeof related === 'string' && this.#pending.has(related)) {
      const p = this.#pending.get(related)!
      this.#pending.delete(related)
      return p.resolve({error})
    }
    const groupId = error.groupId as string | undefined
    const sub = groupId ? this.#subs.get(groupId) : undefined
    if (sub && error.code === 'CURSOR_TOO_OLD') return void this.#restore(sub, error, source)
    if (sub && error.code === 'BACKPRESSURE') {
      // The server paused this Group until we ACK (§17.3): report what was processed so far, so a
      // slow consumer throttles delivery and a fast one resumes it. Without autoAck the Cursor
      // store is left to the application; the ACK only opens the server's window.
      this.#options.onNotice?.({code: 'BACKPRESSURE', groupId, detail: {retryAfterMs: error.retryAfterMs}})
      void sub.draining.then(() =>
        (this.#options.autoAck ?? true)
          ? this.#flushAcks()
          : this.#raw(
              frame('ACK', {
                acknowledgements: [{groupId: sub.groupId, sequence: sub.cursor}],
                sentAt: new Date().toISOString(),
              }),
            ),
      )
      return
    }
    if (sub && error.code === 'GROUP_NOT_FOUND') {
      sub.active = false
      this.#subs.delete(sub.groupId)
      return sub.options.onError?.(error)
    }
    this.#options.onNotice?.({code: error.code, groupId, detail: error})
  }

  async #restore(sub: Subscription, error: ProtocolError, source: SourceOf): Promise<void> {
    const details = error.details as JsonObject | undefined
    const snapshot = details?.snapshot as JsonObject | undefined
    const reference = snapshot
      ? this.#checkSnapshot(
          sub,
          source(snapshot),
          error.snapshotArtifactHash as string | undefined,
          details?.state as JsonObject | undefined,
        )
      : null
    if (reference === null || !sub.options.onSnapshot) {
      sub.active = false
      this.#subs.delete(sub.groupId)
      return sub.options.onError?.(error)
    }
    await sub.draining
    await sub.options.onSnapshot(reference)
    sub.cursor = reference.throughSequence
    sub.skipThrough = reference.throughSequence
    dropBuffered(sub)
    await this.#cursors.save(sub.groupId, sub.cursor)
    this.#sendSubscribe(sub)
  }

  /** I5: schema, hash, signature, Group binding and sequence of the snapshot, or null. */
  #checkSnapshot(
    sub: Subscription,
    snapshot: string | undefined,
    hash: string | undefined,
    state: JsonObject | undefined,
  ): SnapshotReference | null {
    if (snapshot === undefined) return null
    const v = verify('group-snapshot', Buffer.from(snapshot, 'utf8'), this.#options.registry)
    if (v instanceof Rejection) return null
    const d = v.document
    if (d.groupId !== sub.groupId || typeof d.throughSequence !== 'number' || d.throughSequence <= sub.cursor)
      return null
    const snapshotHash = canonicalHash(d)
    if (hash !== undefined && hash !== snapshotHash) return null
    if (state !== undefined && canonicalHash(state) !== d.stateHash) return null
    return {
      groupId: sub.groupId,
      throughSequence: d.throughSequence,
      snapshotHash,
      document: d,
      ...(state !== undefined ? {state} : {}),
    }
  }

  /** Hands contiguous Events to onEvent, one at a time, and advances the Cursor. */
  #drain(sub: Subscription): void {
    sub.draining = sub.draining.then(async () => {
      for (;;) {
        if (!sub.active) return
        const next = sub.cursor + 1
        const event = sub.buffer.get(next)
        if (event) {
          sub.buffer.delete(next)
          sub.handing = next
          try {
            await sub.onEvent(event)
          } catch (e) {
            // The application failed on this Event: keep the Cursor before it (redelivered later).
            sub.buffer.set(next, event)
            this.#options.onNotice?.({code: 'INTERNAL_ERROR', groupId: sub.groupId, detail: (e as Error).message})
            return
          } finally {
            sub.handing = null
          }
        } else if (sub.skipThrough < next && !(mutated('cursor-over-gaps') && sub.buffer.size > 0)) {
          return // a gap: wait for the missing sequence
        }
        sub.cursor = next
        if (this.#options.autoAck ?? true) this.#scheduleAck(sub)
      }
    })
  }

  #scheduleAck(sub: Subscription): void {
    if (sub.cursor - sub.acked >= ACK_BATCH) return void this.#flushAcks()
    this.#ackTimer ??= setTimeout(() => void this.#flushAcks(), ACK_DELAY_MS)
  }

  async #flushAcks(): Promise<void> {
    if (this.#ackTimer) clearTimeout(this.#ackTimer)
    this.#ackTimer = null
    const acks: JsonObject[] = []
    for (const sub of this.#subs.values()) {
      if (sub.cursor <= sub.acked) continue
      sub.acked = sub.cursor
      await this.#cursors.save(sub.groupId, sub.cursor)
      acks.push({groupId: sub.groupId, sequence: sub.cursor})
    }
    if (acks.length > 0) this.#raw(frame('ACK', {acknowledgements: acks, sentAt: new Date().toISOString()}))
  }
}

/** Forgets unprocessed buffered Events (they will be replayed), IDs included. */
function dropBuffered(sub: Subscription): void {
  for (const e of sub.buffer.values()) sub.seen.delete(e.eventId)
  sub.buffer.clear()
}

/** Whether a submission got no authoritative answer (the connection was lost): resend the same bytes. */
export const isIndeterminate = (error: ProtocolError): boolean =>
  (error.details as {indeterminate?: unknown} | undefined)?.indeterminate === true

function indeterminate(): ProtocolError {
  // No authoritative answer arrived: retry the same bytes (same Action ID) or look the receipt up.
  return {...protocolError('INTERNAL_ERROR'), details: {indeterminate: true}}
}
