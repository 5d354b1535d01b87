// One authenticated WebSocket connection (spec §6.3, §17; ACCEPTANCE B1-B8, J1-J7).
//
// HELLO first: client_init → server_challenge → client_response → server_accept. Any other first
// frame is AUTH_REQUIRED and closes the connection. The challenge signature is checked against the
// Registry binding of the presented key ID, which must belong to the claimed principal and be
// valid now. An accepted Agent gets the next Session Epoch from the Organization log, which fences
// every older session of that Agent, including sockets that stay open.
//
// After HELLO the connection speaks for its principal only: a COMMAND whose actor is someone else
// is AUTH_FORBIDDEN. Every Command is verified individually by ingress (B8), which also checks its
// Session Epoch — after the receipt lookup, so the unchanged retry of a Command accepted under an
// older session gets its original receipt on this one (§15.1), while a new Command carrying an
// older epoch is AUTH_STALE_SESSION. Errors never close the connection, except a frame before
// HELLO and an expired session.
//
// A superseded Agent session (§6.3: a newer epoch was issued) is fenced: its subscriptions stop at
// once and every later frame is refused with AUTH_STALE_SESSION (session-fence.ts). Within this
// process the newer HELLO fences it immediately; a newer session opened by another process
// sharing the store is noticed at the next frame (the epoch is read from the store) or liveness
// tick (pingIntervalMs), whichever comes first.

import {mayRead} from '../authority/decide/common.js'
import {randomBytes} from 'node:crypto'
import type {Socket} from 'node:net'
import type WebSocket from 'ws'
import {submit} from '../authority/ingress/command.js'
import type {ErrorCode, ProtocolError} from '../errors.js'
import {encodeBase64url} from '../json/base64url.js'
import type {JsonObject, SourceOf} from '../json/parse.js'
import {parseTimestamp} from '../json/timestamp.js'
import {keyStatus} from '../signing/registry-edit.js'
import type {Principal} from '../signing/profiles.js'
import {RegistryFault, type ResolvedBinding} from '../signing/registry.js'
import type {AttentionFilter} from './client.js'
import {
  type Frame,
  PROTOCOL_VERSION,
  errorFrame,
  errorOf,
  eventFrame,
  frame,
  parseFrame,
  receiptFrameId,
} from './frames.js'
import {Directory} from './directory.js'
import {GroupPump} from './group-pump.js'
import {verifyHelloSignature} from './hello.js'
import {audited, opaque, refusal} from '../authority/ingress/answers.js'
import {isOrganizationKind, submitOrganizationCommand} from '../authority/ingress/organization.js'
import type {ServerContext} from './server.js'
import {SessionError, currentSessionEpoch, openSession} from '../authority/ingress/sessions.js'
import {snapshotFor} from './snapshot-reference.js'
import {ownsFromAbove} from '../authority/model/mission-tree-view.js'

type Phase =
  | {name: 'init'}
  | {
      name: 'challenged'
      principalId: string
      keyId: string
      clientNonce: string
      serverNonce: string
      challenge: string
    }
  | {name: 'ready'}
  | {name: 'closed'}

export class Connection {
  #phase: Phase = {name: 'init'}
  principal: Principal | null = null
  sessionEpoch: number | undefined
  readonly #pumps = new Map<string, GroupPump>()
  #lastSeen = Date.now()
  #chain: Promise<void> = Promise.resolve()
  readonly #timers: NodeJS.Timeout[] = []
  /** The last Presence Record (ephemeral, §6.2: never a lease renewal or acceptance). */
  presence: JsonObject | null = null
  /** A newer Session Epoch of this Agent exists (§6.3): nothing more is served here. */
  #fenced = false
  /** The directory subscription (directory.ts), once the principal asked for it. */
  #directory: Directory | null = null
  /** The session token issued in server_accept (session-tokens.ts): revoked when closed or fenced. */
  #token: string | undefined

  constructor(
    private readonly context: ServerContext,
    private readonly ws: WebSocket,
    private readonly peer: string,
    /** The TLS (or loopback TCP) socket under `ws`: corked while a tick's frames are sent (#cork). */
    private readonly socket: Socket,
  ) {
    ws.on('message', (data, isBinary) => {
      this.#lastSeen = Date.now()
      const failed = (e: Error) => {
        context.log({level: 'error', event: 'frame-failed', peer, reason: e.message})
        this.#send(errorFrame(errorOf('INTERNAL_ERROR')))
      }
      // Frames are handled in arrival order; COMMANDs run concurrently (their answers correlate
      // by frame ID and Action ID), so one slow Group never holds up another.
      this.#chain = this.#chain.then(() => this.#onMessage(data, isBinary)).catch(failed)
    })
    ws.on('close', () => this.#closed())
    ws.on('error', (e) => context.log({level: 'info', event: 'socket-error', peer, reason: e.message}))
    const interval = context.options.pingIntervalMs
    const ping = setInterval(() => {
      if (Date.now() - this.#lastSeen > 3 * interval) {
        context.log({level: 'info', event: 'peer-silent', peer})
        ws.terminate()
        return
      }
      this.#send(frame('PING', {nonce: encodeBase64url(randomBytes(16)), sentAt: new Date().toISOString()}))
      // A session opened by another process sharing the store: fenced within one interval.
      void this.#superseded().catch(() => undefined)
      // The directory's fallback: index rows a push did not announce (another SQLite process).
      void this.#directory?.refresh()
    }, interval)
    ping.unref()
    this.#timers.push(ping)
    context.log({level: 'info', event: 'connected', peer})
  }

  /** Graceful shutdown: stop the pumps, say goodbye. */
  async shutdown(): Promise<void> {
    this.#closed()
    await new Promise<void>((resolve) => {
      if (this.ws.readyState === this.ws.CLOSED) return resolve()
      // A peer that never answers the close is cut off after 2 s. The timer keeps the process
      // alive until then: an unref'd one let a shutdown waiting only on a silent peer end the
      // process with its close() still pending.
      const cutOff = setTimeout(() => {
        this.ws.terminate()
        resolve()
      }, 2000)
      this.ws.once('close', () => {
        clearTimeout(cutOff)
        resolve()
      })
      this.ws.close(1001, 'server shutting down')
    })
  }

  #closed(): void {
    if (this.#phase.name === 'closed') return
    this.#phase = {name: 'closed'}
    for (const t of this.#timers) clearInterval(t)
    for (const p of this.#pumps.values()) {
      p.stop()
      this.context.unregister(p)
    }
    this.#pumps.clear()
    this.#stopDirectory()
    this.context.tokens.revoke(this.#token)
    if (this.principal?.type === 'agent') this.context.sessions.closed(this.principal.id, this)
    this.context.log({level: 'info', event: 'disconnected', peer: this.peer, principal: this.principal?.id})
  }

  /**
   * §6.3: a newer Session Epoch was issued to this Agent. Every subscription stops now (no Event is
   * delivered after this call), the peer is told once, and every later frame is refused
   * (#ready). The socket stays open, so the peer learns why each frame was refused.
   */
  fence(): void {
    if (this.#fenced || this.#phase.name === 'closed') return
    this.#fenced = true
    for (const p of this.#pumps.values()) {
      p.stop()
      this.context.unregister(p)
    }
    this.#pumps.clear()
    this.#stopDirectory()
    this.context.tokens.revoke(this.#token)
    if (this.principal) this.context.sessions.closed(this.principal.id, this)
    this.#error('AUTH_STALE_SESSION')
    this.context.log({
      level: 'info',
      event: 'session-fenced',
      peer: this.peer,
      principal: this.principal?.id,
      sessionEpoch: this.sessionEpoch,
    })
  }

  /** Whether this session still speaks for its principal (its token's check): authenticated, open, not superseded. */
  async live(): Promise<boolean> {
    if (this.#phase.name !== 'ready' || this.ws.readyState !== this.ws.OPEN) return false
    return !(await this.#superseded())
  }

  /** Whether this Agent session is superseded: fenced here, or a newer epoch is in the store (another process). */
  async #superseded(): Promise<boolean> {
    if (this.#fenced) return true
    if (this.principal?.type !== 'agent' || this.sessionEpoch === undefined) return false
    const current = await currentSessionEpoch(this.context.authority, this.principal.id)
    if (current > this.sessionEpoch) this.fence()
    return this.#fenced
  }

  #send(text: string): boolean {
    if (this.ws.readyState !== this.ws.OPEN) return false
    this.ws.send(text)
    return true
  }

  /**
   * Writes a message framed once for all subscribers (ws-framing.ts) straight to the socket. The
   * ws library writes its own frames to the same socket synchronously (no compression, no
   * queue), so the order of messages on the connection is the order of the calls.
   */
  #sendFramed(bytes: Buffer): boolean {
    if (this.ws.readyState !== this.ws.OPEN) return false
    this.socket.write(bytes)
    return true
  }

  #corked = false
  readonly #uncork = () => {
    this.#corked = false
    this.socket.uncork()
  }

  /**
   * Frames sent from now to the end of this tick are written together (one writev, one batch of
   * TLS records, not one per frame): however many pumps of this connection send, the socket is
   * corked once and uncorked once, on the next tick (ws corks the same way).
   */
  #cork(): void {
    if (this.#corked) return
    this.#corked = true
    this.socket.cork()
    process.nextTick(this.#uncork)
  }

  #error(code: ErrorCode, extra: Record<string, unknown> = {}): void {
    this.#send(errorFrame(errorOf(code, extra)))
  }

  async #onMessage(data: WebSocket.RawData, isBinary: boolean): Promise<void> {
    // §17.1: binary messages never carry protocol objects (J2).
    if (isBinary) return this.#error('PROTOCOL_VIOLATION')
    const text = data.toString()
    const parsed = parseFrame(text)
    if (!parsed.ok) {
      if (this.#phase.name === 'init' && offersOnlyOtherVersions(text))
        return this.#refuseHello('UNSUPPORTED_VERSION', {frameId: parsed.frameId} as Frame)
      return this.#error(parsed.code, {relatedFrameId: parsed.frameId})
    }
    const f = parsed.frame
    switch (this.#phase.name) {
      case 'init':
        return this.#clientInit(f)
      case 'challenged':
        return this.#clientResponse(f)
      case 'ready':
        return this.#ready(f, parsed.source)
      case 'closed':
        return
    }
  }

  #refuseHello(code: ErrorCode, f: Frame): void {
    this.#error(code, {relatedFrameId: f.frameId, fatal: true})
    this.context.log({level: 'info', event: 'hello-refused', peer: this.peer, code})
    this.ws.close(1008, code)
  }

  #clientInit(f: Frame): void {
    if (f.frameType !== 'HELLO' || f.phase !== 'client_init') return this.#refuseHello('AUTH_REQUIRED', f)
    if (!(f.supportedVersions as string[]).includes(PROTOCOL_VERSION))
      return this.#refuseHello('UNSUPPORTED_VERSION', f)
    // The challenge goes out whatever the key ID names: whether a key exists is not disclosed here.
    const serverNonce = encodeBase64url(randomBytes(32))
    const challenge = encodeBase64url(randomBytes(32))
    this.#phase = {
      name: 'challenged',
      principalId: f.agentId as string,
      keyId: f.keyId as string,
      clientNonce: f.clientNonce as string,
      serverNonce,
      challenge,
    }
    this.#send(
      frame('HELLO', {
        phase: 'server_challenge',
        selectedVersion: PROTOCOL_VERSION,
        clientNonce: f.clientNonce as string,
        serverNonce,
        challenge,
      }),
    )
  }

  async #clientResponse(f: Frame): Promise<void> {
    const p = this.#phase
    if (p.name !== 'challenged') return
    if (f.frameType !== 'HELLO' || f.phase !== 'client_response') return this.#refuseHello('AUTH_REQUIRED', f)
    // B2/B3: the response must repeat this exchange's values; one challenge, one answer.
    this.#phase = {name: 'init'}
    if (
      f.agentId !== p.principalId ||
      f.keyId !== p.keyId ||
      f.clientNonce !== p.clientNonce ||
      f.serverNonce !== p.serverNonce
    ) {
      return this.#refuseHello('AUTH_INVALID_SIGNATURE', f)
    }
    const binding = this.#currentBinding(p.keyId, p.principalId)
    const transcript = {
      principalId: p.principalId,
      keyId: p.keyId,
      clientNonce: p.clientNonce,
      serverNonce: p.serverNonce,
      challenge: p.challenge,
      selectedVersion: PROTOCOL_VERSION,
    }
    if (binding === null || !verifyHelloSignature(binding.key, transcript, f.challengeSignature as string).ok) {
      return this.#refuseHello('AUTH_INVALID_SIGNATURE', f)
    }
    this.principal = binding.principal
    if (binding.principal.type === 'agent') {
      try {
        this.sessionEpoch = await openSession(this.context.authority, binding.principal.id)
      } catch (e) {
        return this.#refuseHello(e instanceof SessionError ? e.code : 'INTERNAL_ERROR', f)
      }
      // The socket closed while the epoch was issued: no session (and no token) for it.
      if ((this.#phase as Phase).name === 'closed') return
      // The new epoch fences this Agent's older sessions on this server before it is announced.
      this.context.sessions.issued(binding.principal.id, this)
    }
    this.#phase = {name: 'ready'}
    const ttl = this.context.options.sessionTtlSeconds
    // By the Authority's clock, which also judges the token's expiry on the HTTPS routes.
    const expiresAt = new Date(Date.parse(this.context.authority.clock()) + ttl * 1000)
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z')
    const expiry = setTimeout(() => {
      // The short-lived token expired: the client authenticates again (and gets a new epoch).
      this.#error('AUTH_REQUIRED', {fatal: true})
      this.ws.close(4001, 'session expired')
    }, ttl * 1000)
    expiry.unref()
    this.#timers.push(expiry)
    this.#token = encodeBase64url(randomBytes(32))
    this.context.tokens.issue(this.#token, this, expiresAt)
    this.#send(
      frame('HELLO', {
        phase: 'server_accept',
        selectedVersion: PROTOCOL_VERSION,
        sessionToken: this.#token,
        // Humans and services have no Agent Session Epoch (§6.3); the frame requires a number, and
        // 1 carries no fencing meaning for them — their Commands never carry one.
        sessionEpoch: this.sessionEpoch ?? 1,
        expiresAt,
      }),
    )
    this.context.log({
      level: 'info',
      event: 'session-accepted',
      peer: this.peer,
      principal: binding.principal.id,
      type: binding.principal.type,
      sessionEpoch: this.sessionEpoch,
    })
  }

  /** B4: the key must be registered to the claimed principal and valid at this instant. */
  #currentBinding(keyId: string, principalId: string): ResolvedBinding | null {
    const registry = this.context.authority.registry.resolve()
    if (registry instanceof RegistryFault) return null
    const b = registry.bindings.get(keyId)
    if (!b || b.principal.id !== principalId) return null
    return keyStatus(b, parseTimestamp(this.context.authority.clock())!) === 'valid' ? b : null
  }

  async #ready(f: Frame, source: SourceOf): Promise<void> {
    if (f.frameType === 'PING' && typeof f.replyToNonce === 'string') return // the echo of our own PING
    if (await this.#superseded()) {
      const command = f.frameType === 'COMMAND' ? (f.command as JsonObject | undefined) : undefined
      const actionId = typeof command?.actionId === 'string' ? {relatedActionId: command.actionId} : {}
      return this.#error('AUTH_STALE_SESSION', {relatedFrameId: f.frameId, ...actionId})
    }
    switch (f.frameType) {
      case 'SUBSCRIBE':
        return this.#subscribe(f)
      case 'COMMAND':
        void this.#command(f, source(f.command as JsonObject)!).catch((e: Error) => {
          this.context.log({level: 'error', event: 'command-failed', peer: this.peer, reason: e.message})
          this.#error('INTERNAL_ERROR', {relatedFrameId: f.frameId})
        })
        return
      case 'ACK':
        return this.#ack(f)
      case 'PING':
        return this.#ping(f)
      default:
        // HELLO again, EVENT or ERROR from a client: a framing violation, nothing else changes.
        return this.#error('PROTOCOL_VIOLATION', {relatedFrameId: f.frameId})
    }
  }

  async #subscribe(f: Frame): Promise<void> {
    const principal = this.principal!
    const {authority} = this.context
    for (const g of f.groups as unknown as {groupId: string; afterSequence: number; attention?: AttentionFilter}[]) {
      // The principal's own ID names no Group: it asks for the directory (directory.ts). Any
      // other principal's ID is an unknown Group below, GROUP_NOT_FOUND like any other.
      if (g.groupId === principal.id) {
        if (this.#fenced || this.#phase.name === 'closed') return
        await this.#startDirectory(principal.id)
        continue
      }
      // §17.2: an unauthorized Group gets exactly the answer a missing one gets (J4).
      const state = await authority.current(g.groupId)
      const member = state?.members[principal.id]
      const reads = state !== null && mayRead(member, principal, authority.clock)
      // §14: the MissionOwner of a Mission above this one (the root human, a Parent Coordinator
      // further up) inspects it on demand with full visibility, without a Membership of its own.
      const inspects = state !== null && !reads && (await ownsFromAbove(authority, state, principal))
      if (!reads && !inspects) {
        this.#error('GROUP_NOT_FOUND', {groupId: g.groupId, relatedFrameId: f.frameId})
        continue
      }
      const visibilityStart = reads ? member!.visibilityStartSequence : 1
      const floor = (await this.context.options.onlineLogFloor?.(g.groupId)) ?? 0
      const from = Math.max(g.afterSequence, visibilityStart - 1)
      if (from < floor) {
        const snapshot = await snapshotFor(authority, g.groupId, floor)
        // The state itself goes only to members who may see the whole history (§8).
        const state = visibilityStart <= 1 ? {state: snapshot.state as unknown as JsonObject} : {}
        this.#error('CURSOR_TOO_OLD', {
          groupId: g.groupId,
          relatedFrameId: f.frameId,
          snapshotArtifactHash: snapshot.hash,
          details: {throughSequence: snapshot.throughSequence, snapshot: snapshot.document, ...state},
        })
        continue
      }
      // Fenced or closed while this SUBSCRIBE was checked: no pump may start any more.
      if (this.#fenced || this.#phase.name === 'closed') return
      const previous = this.#pumps.get(g.groupId)
      const feed = this.context.feed(g.groupId)
      const pump = new GroupPump(
        this.context,
        {
          send: (text) => this.#send(text),
          sendFramed: (bytes) => this.#sendFramed(bytes),
          cork: () => this.#cork(),
          bufferedAmount: () => this.ws.bufferedAmount,
          whenDrained: (resume) => {
            this.socket.once('drain', resume)
            return () => this.socket.off('drain', resume)
          },
          principalId: principal.id,
          principalType: principal.type,
          inspects,
        },
        feed,
        g.groupId,
        g.afterSequence,
        g.attention,
      )
      // Register before dropping the previous pump, so the Group's feed stays shared and alive.
      this.#pumps.set(g.groupId, pump)
      this.context.register(pump)
      if (previous) {
        previous.stop()
        this.context.unregister(previous)
      }
      await feed.refresh() // wakes the pump once the feed knows the head and the state
      pump.wake()
    }
  }

  /** Starts (or, asked again, restarts from the first live row) the directory subscription. */
  async #startDirectory(principalId: string): Promise<void> {
    this.#stopDirectory()
    const directory = new Directory(this.context.authority.store.members(), principalId, {
      send: (text) => this.#send(text),
      // A pump its ended Membership stopped no longer speaks for the Group: a new Membership (the
      // next just-in-time offer to a Worker whose last WorkItem there is done) is announced again.
      subscribed: (groupId) => this.#pumps.get(groupId)?.stopped === false,
      failed: (e) =>
        this.context.log({
          level: 'error',
          event: 'directory-failed',
          peer: this.peer,
          principal: principalId,
          reason: e.message,
        }),
    })
    this.#directory = directory
    this.context.watchDirectory(directory)
    await directory.refresh()
  }

  #stopDirectory(): void {
    if (this.#directory === null) return
    this.#directory.stop()
    this.context.unwatchDirectory(this.#directory)
    this.#directory = null
  }

  /** `received`: the Command exactly as it stood in the frame; ingress verifies those bytes (never a re-serialization). */
  async #command(f: Frame, received: string): Promise<void> {
    const command = f.command as JsonObject
    const actor = command.actor as JsonObject | undefined
    const related = {
      relatedFrameId: f.frameId,
      ...(typeof command.actionId === 'string' ? {relatedActionId: command.actionId} : {}),
    }
    const bytes = Buffer.from(received, 'utf8')
    const principal = this.principal!
    const rejected = (error: ProtocolError) => this.#rejected(command, {...error, ...related})
    const {authority} = this.context
    // Refused here, before ingress: audited as ingress audits its refusals, answered with the code alone.
    const fenced = async (code: ErrorCode, reason: string) => {
      const refused = {
        kind: String(command.kind),
        actionId: String(command.actionId),
        actor: principal,
        ...(typeof command.groupId === 'string' ? {groupId: command.groupId} : {}),
      }
      rejected((await audited(authority, refusal(authority, refused, opaque(code, 'session', reason)))).error)
    }
    if (actor?.id !== principal.id || actor?.type !== principal.type)
      return fenced('AUTH_FORBIDDEN', "the Command's actor is not the session's principal")
    // A lower epoch than this session's goes to ingress: the unchanged retry of a Command accepted
    // under an older session gets its receipt there, anything else is AUTH_STALE_SESSION (§15.1).
    // A higher one was never issued to an unfenced session.
    if (
      principal.type === 'agent' &&
      typeof command.sessionEpoch === 'number' &&
      command.sessionEpoch > (this.sessionEpoch ?? 0)
    ) {
      return fenced('AUTH_STALE_SESSION', `sessionEpoch ${command.sessionEpoch} is above this session's`)
    }
    if (isOrganizationKind(command.kind)) {
      const r = await submitOrganizationCommand(authority, bytes)
      if ('error' in r) return rejected(r.error)
      const stored = await Promise.all(r.receipt.eventIds.map((id) => authority.store.organizationLog().event(id)))
      stored.forEach((b, i) => b && this.#send(eventFrame(b, receiptFrameId(i + 1, stored.length))))
      return
    }
    const r = await submit(authority, bytes)
    if ('error' in r) return rejected(r.error)
    const {groupId, firstSequence, lastSequence} = r.receipt
    const count = lastSequence - firstSequence + 1
    // A live Group's feed holds the Events just appended; a retry's older Events come from the store.
    const cached = this.context.recent(groupId, firstSequence - 1, count)
    const events = cached ?? (await authority.store.read(groupId, firstSequence - 1, count)).events.map((e) => e.bytes)
    this.#cork()
    events.forEach((bytes, i) => this.#send(eventFrame(bytes, receiptFrameId(i + 1, count))))
  }

  /**
   * Answers a rejected Command and logs it for the operator: one line with the code, the
   * Command's kind and Group as it claimed them, the session's principal, and the `details` the
   * sender was told (a semantic refusal); a verification failure logs nothing beyond its code.
   */
  #rejected(command: JsonObject, error: ProtocolError): void {
    this.#send(errorFrame(error))
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined)
    this.context.log({
      level: 'info',
      event: 'command-rejected',
      code: error.code,
      kind: str(command.kind),
      actor: this.principal?.id,
      groupId: str(command.groupId),
      actionId: str(command.actionId),
      ...(error.details !== undefined ? {details: error.details} : {}),
      peer: this.peer,
    })
  }

  async #ack(f: Frame): Promise<void> {
    const cursors = this.context.authority.store.cursors()
    for (const a of f.acknowledgements as unknown as {groupId: string; sequence: number}[]) {
      const pump = this.#pumps.get(a.groupId)
      if (!pump) continue // not subscribed here (or not authorized): nothing to record, nothing said
      const sequence = Math.min(a.sequence, pump.position)
      await cursors.advance(this.principal!.id, a.groupId, sequence)
      pump.acknowledged(sequence)
    }
  }

  #ping(f: Frame): void {
    if (typeof f.replyToNonce === 'string') return // the echo of our own PING: liveness only
    if (f.presence) {
      const presence = f.presence as JsonObject
      // §6.2: Presence is about this session's own Agent; anything else is a violation.
      if (presence.agentId !== this.principal!.id || presence.sessionEpoch !== this.sessionEpoch) {
        return this.#error('PROTOCOL_VIOLATION', {relatedFrameId: f.frameId})
      }
      this.presence = presence
    }
    this.#send(
      frame('PING', {
        nonce: encodeBase64url(randomBytes(16)),
        replyToNonce: f.nonce as string,
        sentAt: new Date().toISOString(),
      }),
    )
  }
}

/** A client_init whose supportedVersions lists only versions this server does not speak (§21). */
function offersOnlyOtherVersions(text: string): boolean {
  try {
    const f = JSON.parse(text) as {frameType?: unknown; phase?: unknown; supportedVersions?: unknown}
    return (
      f.frameType === 'HELLO' &&
      f.phase === 'client_init' &&
      Array.isArray(f.supportedVersions) &&
      !f.supportedVersions.includes(PROTOCOL_VERSION)
    )
  } catch {
    return false
  }
}
