// mwp/wire: the WebSocket binding, a server (gateway) over an authority and a client.

// The server.
export {DEFAULT_DELIVERY_BATCH_MS, isLoopbackHost, startServer} from './server.js'
export type {RunningServer, ServerOptions, TlsSetting} from './server.js'
// The client and the Cursors it keeps.
export {FileCursorStore, MemoryCursorStore, WireClient, WireError} from './client.js'
export type {
  AttentionFilter,
  ConnectOptions,
  CursorStore,
  DeliveredEvent,
  GroupAnnouncement,
  ReconnectOptions,
  SnapshotReference,
  SubscribeOptions,
} from './client.js'
// Frames.
export {PROTOCOL_VERSION, errorFrame, errorOf, eventFrame, frame, newFrameId, parseFrame} from './frames.js'
export type {Frame, FrameType, ParsedFrame} from './frames.js'
// Development TLS (a throwaway CA and a loopback certificate) and the serving heap setting.
export {generateDevTls, writeDevTls} from './dev-tls.js'
export type {DevTls} from './dev-tls.js'
export {tuneHeapForServing} from './serving-heap.js'
// The Authorization Service's routes' client side: a Worker's token, a tool service's key (§12).
export {fetchAuthzKey, requestToken} from './token-client.js'
export type {IssuedToken, TokenAsk} from './token-client.js'
