// The WebSocket gateway in front of one Group Authority (spec §6.3, §16, §17).
//
//   const server = await startServer({authority, host: '127.0.0.1', port: 0, tls: {cert, key}})
//   server.url   // wss://127.0.0.1:PORT
//   await server.close()
//
// TLS 1.3 only (`minVersion` and `maxVersion` pinned); plain ws only with 'insecure-loopback',
// which refuses any non-loopback bind. Each connection (connection.ts) runs HELLO, then
// multiplexes SUBSCRIBE / COMMAND / ACK / PING for its principal. Group deliveries are pumped from
// the store (group-pump.ts), woken when this process appends to the Group (Authority.onAppended
// hands over the Events), when the store pushes an append made by another process sharing it
// (PostgreSQL LISTEN/NOTIFY, store/pg-notify.ts), and by a poll: the only path on a store that
// cannot push, a slow safety net on one that can. Directory subscriptions (directory.ts) are
// refreshed the same ways: at an append of this process that carries a Membership document of
// their principal, at a pushed membership change (Store.watchMembers), and at each connection's
// liveness tick.
//
// The same listener answers HTTPS routes (http-routes.ts): the Artifact store's PUT and GET
// (artifact-routes.ts), authenticated by the session tokens HELLO issued (session-tokens.ts), and
// the Authorization Service's token and key routes (token-routes.ts), and whatever a service adds
// with ServerOptions.addRoutes. Other requests get 426.

import {createServer as createHttpServer, type Server as HttpServer} from 'node:http'
import {createServer as createHttpsServer} from 'node:https'
import type {AddressInfo} from 'node:net'
import {WebSocketServer} from 'ws'
import type {Authority} from '../authority/authority.js'
import type {StoredEvent} from '../store/group-log.js'
import {Connection} from './connection.js'
import type {Directory} from './directory.js'
import {DEFAULT_PAGE_BYTES, GroupFeed} from './group-feed.js'
import type {GroupPump} from './group-pump.js'
import {SessionFence} from './session-fence.js'
import {ArtifactBlobs, DEFAULT_ARTIFACT_MAX_BYTES, artifactDirFor} from '../store/artifact-blobs.js'
import {addArtifactRoutes} from './artifact-routes.js'
import {AuthorizationService} from '../authz/issuer.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {addTokenRoutes} from './token-routes.js'
import {addMetricsRoutes} from './metrics-routes.js'
import {addPresenceRoutes} from './presence-routes.js'
import {HttpRoutes} from './http-routes.js'
import {SessionTokens} from './session-tokens.js'

export type TlsSetting = {cert: string | Buffer; key: string | Buffer} | 'insecure-loopback'

export interface ServerOptions {
  authority: Authority
  host: string
  /** 0 picks a free port. */
  port: number
  tls: TlsSetting
  /** Structured log sink: one object per line (default: JSON lines on stderr). */
  log?: (entry: Record<string, unknown>) => void
  /** Per connection and Group: delivered Events the client has not ACKed before the Group pauses. */
  sendWindow?: number
  /** Events read from the store per page, at most. */
  pageSize?: number
  /**
   * Stored Event bytes per page read from the store and per write of a pump, at most (one larger
   * Event alone); with the socket's high water mark (group-pump.ts) it bounds what a slow or
   * paused subscriber holds. Default DEFAULT_PAGE_BYTES.
   */
  pageBytes?: number
  /**
   * A busy Group's subscribers are written at most once per this many ms (default
   * DEFAULT_DELIVERY_BATCH_MS; 0: at every append): the Events appended meanwhile share one socket
   * write (group-feed.ts).
   */
  deliveryBatchMs?: number
  /**
   * How often subscribed Groups are checked for Events appended by other processes (ms, default
   * 500); PUSHED_POLL_FACTOR times slower when the store pushes appends (Store.watchAppends).
   */
  pollMs?: number
  /**
   * §16 online log: replay from before this sequence is answered with CURSOR_TOO_OLD and a signed
   * snapshot reference through it (default: the whole log is online).
   */
  onlineLogFloor?: (groupId: string) => number | Promise<number>
  /** Session token lifetime; the connection is closed when it expires (default 1 h). */
  sessionTtlSeconds?: number
  /** Server PING interval; a peer silent for 3 intervals is dropped (default 15 s). */
  pingIntervalMs?: number
  /**
   * Directory of the Artifact store's content (store/artifact-blobs.ts). Default: beside a SQLite
   * store, `<store file>.artifacts`; a PostgreSQL store has no default, and without this option
   * its server answers the Artifact routes with 426 like any other HTTP request.
   */
  artifactDir?: string
  /** Largest Artifact accepted, in bytes (default DEFAULT_ARTIFACT_MAX_BYTES, 64 MiB). */
  artifactMaxBytes?: number
  /**
   * The Authorization Service's signing key (§12), a service Principal's. Default: the authority
   * key. Sharing it is safe: a token's signature covers its own domain (authz/token.ts), so it can
   * never verify as a Signed Document's, and a tool service already trusts that key. A deployment
   * that wants to rotate token keys apart from the authority's gives its own.
   */
  authorizationKey?: SigningKey
  /** Adds a service's HTTPS routes (e.g. the Authorization Service) to the binding's listener. */
  addRoutes?: (routes: HttpRoutes, context: ServerContext) => void
}

export interface RunningServer {
  url: string
  port: number
  /**
   * The Authority this server fronts: the one given in ServerOptions (same store, caches and
   * queues) with Agent sessions required (Authority.requiringAgentSessions); that one is left as it was.
   */
  authority: Authority
  /** Graceful: stops accepting, closes every connection, then the listener. */
  close(): Promise<void>
}

export interface ServerContext {
  readonly authority: Authority
  readonly options: Required<
    Pick<
      ServerOptions,
      'sendWindow' | 'pageSize' | 'pageBytes' | 'deliveryBatchMs' | 'sessionTtlSeconds' | 'pingIntervalMs'
    >
  > &
    ServerOptions
  log(entry: Record<string, unknown>): void
  /** The Group's shared feed (created on first use, dropped with its last pump). */
  feed(groupId: string): GroupFeed
  /** The signed bytes of `count` Events after `position` when the Group's feed still holds them all, else null. */
  recent(groupId: string, position: number, count: number): Uint8Array[] | null
  register(pump: GroupPump): void
  unregister(pump: GroupPump): void
  /** The live Agent sessions on this server, by Agent: a newer epoch fences the older (session-fence.ts). */
  readonly sessions: SessionFence
  /** A directory subscription is refreshed when its principal's Memberships may have changed. */
  watchDirectory(directory: Directory): void
  unwatchDirectory(directory: Directory): void
  /** The session tokens issued in HELLO, for the HTTPS routes (session-tokens.ts). */
  readonly tokens: SessionTokens
}

/** The principals whose Membership rows an append wrote (the rows the append pipeline derived, StoredEvent.members). */
function membersIn(events: readonly StoredEvent[]): Set<string> {
  const ids = new Set<string>()
  for (const e of events) for (const m of e.members ?? []) ids.add(m.principalId)
  return ids
}

/**
 * ServerOptions.deliveryBatchMs when not given. Measured in bench/wire.ts (1 Group × 100
 * subscribers at 500 Commands/s, 2-core machine): against 5 ms, 10 ms took 0.05-0.1 cores off the
 * server thread and as much off the subscribers', and the p99 fell (median of four runs 38 → 29 ms);
 * the window itself adds at most 10 ms to a busy Group's delivery.
 */
export const DEFAULT_DELIVERY_BATCH_MS = 10

/** With pushed appends the poll only catches what a push missed (a listener reconnecting). */
export const PUSHED_POLL_FACTOR = 10

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  if (options.tls === 'insecure-loopback' && !isLoopbackHost(options.host)) {
    throw new Error(`--insecure-loopback refuses to bind ${options.host}: plain ws is allowed on loopback only`)
  }
  // §6.3: behind the gateway every Agent Command must come from an issued session.
  const authority = options.authority.requiringAgentSessions()
  const log =
    options.log ??
    ((entry: Record<string, unknown>) => {
      process.stderr.write(JSON.stringify({at: new Date().toISOString(), ...entry}) + '\n')
    })
  const pumps = new Map<string, Set<GroupPump>>()
  const directories = new Map<string, Set<Directory>>()
  const refreshDirectories = (principalId: string) => {
    for (const d of directories.get(principalId) ?? []) void d.refresh()
  }
  const feeds = new Map<string, GroupFeed>()
  const refresh = (feed: GroupFeed) =>
    void feed
      .refresh()
      .catch((e: Error) => log({level: 'error', event: 'feed-failed', groupId: feed.groupId, reason: e.message}))
  const context: ServerContext = {
    authority,
    options: {
      sendWindow: 1024,
      pageSize: 256,
      pageBytes: DEFAULT_PAGE_BYTES,
      deliveryBatchMs: DEFAULT_DELIVERY_BATCH_MS,
      sessionTtlSeconds: 3600,
      pingIntervalMs: 15_000,
      ...options,
      authority,
    },
    log,
    sessions: new SessionFence(),
    tokens: new SessionTokens(authority.clock),
    feed(groupId) {
      let feed = feeds.get(groupId)
      if (!feed) {
        feed = new GroupFeed(
          authority,
          groupId,
          () => {
            for (const p of pumps.get(groupId) ?? []) p.wake()
          },
          context.options.deliveryBatchMs,
          context.options.pageSize,
          context.options.pageBytes,
        )
        feeds.set(groupId, feed)
      }
      return feed
    },
    recent(groupId, position, count) {
      const events = feeds.get(groupId)?.after(position, count)
      return events?.length === count ? events.map((e) => e.event) : null
    },
    register(pump) {
      let set = pumps.get(pump.groupId)
      if (!set) pumps.set(pump.groupId, (set = new Set()))
      set.add(pump)
    },
    watchDirectory(directory) {
      let set = directories.get(directory.principalId)
      if (!set) directories.set(directory.principalId, (set = new Set()))
      set.add(directory)
    },
    unwatchDirectory(directory) {
      const set = directories.get(directory.principalId)
      set?.delete(directory)
      if (set?.size === 0) directories.delete(directory.principalId)
    },
    unregister(pump) {
      const set = pumps.get(pump.groupId)
      set?.delete(pump)
      if (set?.size === 0) {
        pumps.delete(pump.groupId)
        feeds.delete(pump.groupId)
      }
    },
  }

  const secure = options.tls !== 'insecure-loopback'
  const http: HttpServer =
    options.tls === 'insecure-loopback'
      ? createHttpServer()
      : createHttpsServer({cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3'})
  const routes = new HttpRoutes(log)
  const connections = new Set<Connection>()
  addPresenceRoutes(routes, {
    tokens: context.tokens,
    records: () => [...connections].map((c) => c.presence),
    nowMs: () => Date.parse(authority.clock()),
  })
  addMetricsRoutes(routes, {
    tokens: context.tokens,
    pumps: () => pumps.entries(),
    feed: (groupId) => feeds.get(groupId),
    clock: authority.clock,
  })
  const artifactDir = options.artifactDir ?? artifactDirFor(authority.store.url)
  if (artifactDir !== undefined) {
    const blobs = new ArtifactBlobs(artifactDir, options.artifactMaxBytes ?? DEFAULT_ARTIFACT_MAX_BYTES)
    addArtifactRoutes(routes, {authority, tokens: context.tokens, blobs, log})
  } else {
    log({level: 'warn', event: 'artifacts-not-served', reason: 'no Artifact directory for this store (artifactDir)'})
  }
  if (options.authorizationKey !== undefined && options.authorizationKey.principal?.type !== 'service')
    throw new Error('the authorization key must belong to a service Principal (the token issuer)')
  const authorization = new AuthorizationService(authority, {key: options.authorizationKey ?? authority.key})
  addTokenRoutes(routes, {service: authorization, tokens: context.tokens, log})
  options.addRoutes?.(routes, context)
  http.on('request', (req, res) => {
    if (routes.handle(req, res)) return
    req.resume()
    res.writeHead(426, {'content-type': 'text/plain'}).end('MissionWeaveProtocol 0.1: WebSocket only\n')
  })
  http.on('tlsClientError', (e: Error) => log({level: 'info', event: 'tls-refused', reason: e.message}))
  const wss = new WebSocketServer({server: http, maxPayload: 1024 * 1024, perMessageDeflate: false})
  // ws re-emits the listener's errors on the WebSocketServer; unhandled there they would end the
  // process with a raw stack (EADDRINUSE) instead of rejecting the listen below.
  wss.on('error', (e: Error) => log({level: 'warn', event: 'listener-error', reason: e.message}))
  wss.on('connection', (ws, req) => {
    const c = new Connection(context, ws, `${req.socket.remoteAddress}:${req.socket.remotePort}`, req.socket)
    connections.add(c)
    ws.on('close', () => connections.delete(c))
  })

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port, options.host, () => {
      http.off('error', reject)
      resolve()
    })
  })
  const port = (http.address() as AddressInfo).port
  const host = options.host.includes(':') ? `[${options.host}]` : options.host
  const url = `${secure ? 'wss' : 'ws'}://${host}:${port}`
  log({level: 'info', event: 'listening', url, ...(artifactDir !== undefined ? {artifactDir} : {})})

  // Appends by other processes sharing the store: pushed when the store can (a notice for a
  // Group nobody here subscribes to is dropped; after a lost listener connection every
  // feed is re-read), and a poll of each subscribed Group's head. A store that cannot listen right
  // now leaves the full-rate poll in charge.
  const refreshAll = () => {
    for (const feed of feeds.values()) refresh(feed)
  }
  const resync = () => {
    log({level: 'info', event: 'appends-resync', groups: feeds.size})
    refreshAll()
  }
  // Appends of this process arrive with their Events; the feed reads the store only after a gap.
  const unhook = authority.onAppended((state, events) => {
    const feed = feeds.get(state.groupId)
    if (feed && !feed.appended(state, events)) refresh(feed)
    if (directories.size > 0) for (const id of membersIn(events)) refreshDirectories(id)
  })
  const unwatch = await authority.store
    .watchAppends?.((groupId) => {
      const feed = feeds.get(groupId)
      if (feed) refresh(feed)
    }, resync)
    .catch((e: Error) => {
      log({level: 'warn', event: 'listen-appends-failed', reason: e.message})
      return undefined
    })
  if (unwatch) log({level: 'info', event: 'listening-appends'})
  // Membership changes committed by other processes: the principals' directories read their new rows.
  const unwatchMembers = await authority.store
    .watchMembers?.(refreshDirectories, () => {
      for (const set of directories.values()) for (const d of set) void d.refresh()
    })
    .catch((e: Error) => {
      log({level: 'warn', event: 'listen-members-failed', reason: e.message})
      return undefined
    })
  // (setInterval turns a delay above 2^31 - 1 ms into 1 ms.)
  const poll = setInterval(
    refreshAll,
    Math.min((options.pollMs ?? 500) * (unwatch ? PUSHED_POLL_FACTOR : 1), 2 ** 31 - 1),
  )
  poll.unref()

  let closing: Promise<void> | undefined
  return {
    url,
    port,
    authority,
    close: () =>
      (closing ??= (async () => {
        clearInterval(poll)
        unhook()
        await unwatch?.().catch((e: Error) => log({level: 'warn', event: 'unlisten-appends-failed', reason: e.message}))
        await unwatchMembers?.().catch((e: Error) =>
          log({level: 'warn', event: 'unlisten-members-failed', reason: e.message}),
        )
        log({level: 'info', event: 'shutdown', connections: connections.size})
        await Promise.all([...connections].map((c) => c.shutdown()))
        await new Promise<void>((resolve) => wss.close(() => resolve()))
        await new Promise<void>((resolve) => http.close(() => resolve()))
        http.closeAllConnections?.()
      })()),
  }
}
