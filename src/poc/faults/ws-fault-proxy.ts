// A real fault-injecting WebSocket proxy on loopback between a client (an `mwp agent run` process,
// a WireClient) and the authority process, for §16 delivery faults injected from outside the
// process under test. It lives in src/ because `mwp poc run` puts it between its Agent processes and
// the authority at run time (a process cannot fault its own delivery stream believably); the wire
// and Agent tests use the same proxy. Unlike tcp-proxy.ts it terminates TLS 1.3 itself, with its own
// development CA and server certificate (wire/dev-tls.ts; give clients `caFile`), and opens its own
// wss connection upstream trusting the authority's CA. It sees every frame:
//
//   client → authority   passed unchanged, in order; the client's ACK frames (its Cursors) are
//                        recorded in `acks`.
//   authority → client   delivery EVENT frames (frameId urn:mwp:delivery:…, the §16 at-least-once
//                        stream) are each sent 2–3 times and reordered: held in a window of up to
//                        `window` frames (or `holdMs`), then released shuffled by a seeded PRNG;
//                        every extra copy goes out in the same release or in the next one (a late
//                        duplicate, arriving after Events behind it). `withhold(groupId, sequence)`
//                        parks every copy of that one Group sequence until `release()`.
//
// The two faults switch on and off while the proxy runs (`setFaults`, both on by default):
//   duplicate off   each delivery frame, and each command answer frame, is sent once;
//   reorder off     delivery frames are not held: each goes out as it arrives, its copies adjacent.
// With both off the delivery stream passes unchanged (a withheld sequence still waits for release).
// Switching a fault off first releases what is held, under the new switches, so no frame taken in
// after the switch overtakes one taken in before it.
//
// What may overtake what — the proxy must fault the delivery stream, never make the server say
// something it did not mean:
//   - A server ACK ("delivered through N", frames.ts) or an ERROR naming a Group (BACKPRESSURE,
//     GROUP_NOT_FOUND, CURSOR_TOO_OLD …) speaks about the delivery stream sent before it: the held
//     window is released before it is forwarded. Were a server ACK to overtake a held Event at or
//     below N, the client would rightly pass that sequence as filtered. A server ACK covering the
//     withheld sequence is itself parked until release (and sent right after the withheld frame).
//     Every other frame keeps its order; only parked ACKs wait (sequence is per Group, §17.2).
//   - A command answer (receipt EVENT frames urn:mwp:receipt:i-of-n:…, or an ERROR with
//     relatedFrameId) is not §16 delivery: its frames are duplicated 2–3 times in place (adjacent,
//     the i-of-n order kept, which the client needs to assemble the answer) and are never held,
//     so an answer may overtake the delivery of the very Events it reports. The server promises
//     no order between the two either (the command path writes the answer, the Group pump the
//     delivery), so the client must already cope.
//   - HELLO and PING frames pass at once; so does a frame the proxy cannot read (not JSON, or a
//     delivery frame whose Event lacks its groupId, sequence or eventId): it is not faulted.
// The HTTPS routes on the same listener (Artifacts, tokens) are forwarded unchanged.

import {type ClientRequest, type IncomingMessage, type ServerResponse} from 'node:http'
import {type Server, createServer, request as httpsRequest} from 'node:https'
import WebSocket, {type RawData, WebSocketServer} from 'ws'
import {DELIVERY_FRAME_PREFIX, RECEIPT_FRAME_PREFIX} from '../../wire/frames.js'
import {writeDevTls} from '../../wire/dev-tls.js'
import {listenOn, loopbackTarget} from './loopback.js'
import {mulberry32} from './prng.js'

/** The faults the proxy injects into the authority → client stream (withholding aside). */
export interface DeliveryFaults {
  /** Extra copies of each delivery EVENT frame (some late) and of each command answer frame. */
  duplicate: boolean
  /** Delivery EVENT frames held in a window and released shuffled. */
  reorder: boolean
}

export interface WsFaultOptions {
  /** The authority's PEM CA (its --dev-tls CA file's contents). */
  targetCa: string | Buffer
  /** Where the proxy writes its own CA, certificate and key. */
  tlsDir: string
  seed: number
  /**
   * Copies of each frame while duplicating, in [min, max] (default [2, 3], either equally likely).
   * Each copy beyond min needs a fresh draw above the count so far, so a wider range leans to its
   * low end; the draws stay as they are because seeded runs replay them.
   */
  copies?: [number, number]
  /** Delivery frames held before they are released shuffled (default 4). */
  window?: number
  /** Longest a held frame waits for its window to fill (ms, default 40). */
  holdMs?: number
  /** The faults at the start (default both on). */
  faults?: Partial<DeliveryFaults>
}

export interface AckSeen {
  at: number
  connection: number
  groupId: string
  sequence: number
}

export interface DeliverySent {
  at: number
  connection: number
  groupId: string
  sequence: number
  /** 1 for the first copy of this Event on this connection, 2 and 3 for its duplicates. */
  copy: number
}

export interface FaultStats {
  connections: number
  /** Delivery EVENT frames received from the authority (each frame seen). */
  deliveryIn: number
  /** Delivery EVENT frames sent to clients, copies included. */
  deliveryOut: number
  /** Copies sent beyond the first, per connection and Event (the extra copies). */
  duplicated: number
  /** Of those, copies sent after a higher sequence of their Group on the same connection. */
  lateDuplicates: number
  /** First copies sent after a higher sequence of their Group on the same connection (released out of order). */
  reordered: number
  receiptIn: number
  receiptOut: number
  /** Frames of the withheld sequence parked (every arrival counts). */
  withheld: number
  /** Server ACK frames parked behind the withheld sequence. */
  parkedAcks: number
  /** Non-EVENT frames before which a window was released. */
  barriers: number
  httpRequests: number
}

export interface WsFaultProxy {
  /** wss://127.0.0.1:PORT — the client-side URL. */
  url: string
  /** The proxy's own CA (PEM file): clients trust it instead of the authority's. */
  caFile: string
  readonly stats: Readonly<FaultStats>
  /** Every ACK frame clients sent upstream, one entry per acknowledgement. */
  readonly acks: readonly AckSeen[]
  /** Every delivery EVENT frame sent to a client. */
  readonly sent: readonly DeliverySent[]
  /** The faults in force now. */
  readonly faults: Readonly<DeliveryFaults>
  /** Switches faults on or off (the ones named); switching one off first releases what is held. */
  setFaults(faults: Partial<DeliveryFaults>): void
  /** Parks every copy of the Group's `sequence` (on every connection, replays included) until release(). */
  withhold(groupId: string, sequence: number): void
  /** Sends what was withheld (through the faults), then the server ACKs parked behind it. */
  release(): void
  /** Stops listening and ends every connection, upstream ones and forwarded HTTPS requests included. */
  close(): Promise<void>
}

interface Sequenced {
  groupId: string
  sequence: number
}

interface Held extends Sequenced {
  text: string
  eventId: string
}

type Frame = Record<string, unknown>

const isRecord = (v: unknown): v is Frame => typeof v === 'object' && v !== null && !Array.isArray(v)
const isSequenced = (v: unknown): v is Sequenced =>
  isRecord(v) && typeof v.groupId === 'string' && typeof v.sequence === 'number'

const isDelivered = (v: unknown): v is Sequenced & {eventId: string} =>
  isSequenced(v) && isRecord(v) && typeof v.eventId === 'string'

/** The frame as a JSON object, or null for text that is not one. */
function frameOf(text: string): Frame | null {
  try {
    const f: unknown = JSON.parse(text)
    return isRecord(f) ? f : null
  } catch {
    return null
  }
}

/** An ACK frame's well-formed acknowledgements. */
const acknowledgementsOf = (f: Frame): Sequenced[] =>
  Array.isArray(f.acknowledgements) ? f.acknowledgements.filter(isSequenced) : []

/** `next` over `base`; a switch left out (or undefined) keeps its state. */
const withFaults = (base: DeliveryFaults, next: Partial<DeliveryFaults> = {}): DeliveryFaults => ({
  duplicate: next.duplicate ?? base.duplicate,
  reorder: next.reorder ?? base.reorder,
})

const closeCode = (code: number) =>
  (code >= 3000 && code <= 4999) || [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011].includes(code) ? code : 1000

export async function wsFaultProxy(targetUrl: string, options: WsFaultOptions): Promise<WsFaultProxy> {
  const target = loopbackTarget(targetUrl)
  const tls = writeDevTls(options.tlsDir)
  const [minCopies, maxCopies] = options.copies ?? [2, 3]
  const windowSize = options.window ?? 4
  const holdMs = options.holdMs ?? 40
  let faults = withFaults({duplicate: true, reorder: true}, options.faults)
  const stats: FaultStats = {
    connections: 0,
    deliveryIn: 0,
    deliveryOut: 0,
    duplicated: 0,
    lateDuplicates: 0,
    reordered: 0,
    receiptIn: 0,
    receiptOut: 0,
    withheld: 0,
    parkedAcks: 0,
    barriers: 0,
    httpRequests: 0,
  }
  const acks: AckSeen[] = []
  const sent: DeliverySent[] = []
  let withholding: Sequenced | null = null
  const lanes = new Set<Lane>()

  /** The authority → client direction of one connection. */
  class Lane {
    readonly #random: () => number
    #held: Held[] = []
    /** Extra copies for the next release. */
    #deferred: Held[] = []
    #parked: Held[] = []
    #parkedAcks: string[] = []
    #timer: NodeJS.Timeout | null = null
    readonly #maxSent = new Map<string, number>()
    readonly #copiesSent = new Map<string, number>()

    constructor(
      readonly id: number,
      private readonly down: WebSocket,
    ) {
      this.#random = mulberry32(options.seed * 7919 + id)
    }

    #copies(): number {
      return minCopies + Math.floor(this.#random() * (maxCopies - minCopies + 1))
    }

    #send(text: string): void {
      if (this.down.readyState === WebSocket.OPEN) this.down.send(text)
    }

    #sendDelivery(h: Held): void {
      if (this.down.readyState !== WebSocket.OPEN) return
      const copy = (this.#copiesSent.get(h.eventId) ?? 0) + 1
      this.#copiesSent.set(h.eventId, copy)
      const max = this.#maxSent.get(h.groupId) ?? 0
      if (copy === 1 && h.sequence < max) stats.reordered++
      if (copy > 1) {
        stats.duplicated++
        if (h.sequence < max) stats.lateDuplicates++
      }
      this.#maxSent.set(h.groupId, Math.max(max, h.sequence))
      stats.deliveryOut++
      sent.push({at: Date.now(), connection: this.id, groupId: h.groupId, sequence: h.sequence, copy})
      this.down.send(h.text)
    }

    /**
     * Releases the window under the switches in force: while reordering, its first copies and some
     * duplicates shuffled, the other duplicates deferred to the next release; otherwise in arrival
     * order, each frame's copies adjacent. Deferred copies are dropped once duplicates are off.
     */
    flush(): void {
      if (this.#timer) clearTimeout(this.#timer)
      this.#timer = null
      const batch = faults.duplicate ? this.#deferred : []
      const later: Held[] = []
      for (const h of this.#held) {
        batch.push(h)
        if (!faults.duplicate) continue
        for (let i = 1; i < this.#copies(); i++) (!faults.reorder || this.#random() < 0.5 ? batch : later).push(h)
      }
      this.#held = []
      if (faults.reorder)
        for (let i = batch.length - 1; i > 0; i--) {
          const j = Math.floor(this.#random() * (i + 1))
          ;[batch[i], batch[j]] = [batch[j]!, batch[i]!]
        }
      for (const h of batch) this.#sendDelivery(h)
      this.#deferred = later
      if (later.length > 0) this.#arm()
    }

    #arm(): void {
      this.#timer ??= setTimeout(() => this.flush(), holdMs)
    }

    fromUpstream(data: RawData, isBinary: boolean): void {
      if (isBinary) return void this.down.send(data, {binary: true})
      const text = data.toString()
      const f = frameOf(text)
      if (f === null) return this.#send(text)
      const frameId = typeof f.frameId === 'string' ? f.frameId : ''
      const e = f.event
      if (f.frameType === 'EVENT' && frameId.startsWith(DELIVERY_FRAME_PREFIX)) {
        if (!isDelivered(e)) return this.#send(text)
        stats.deliveryIn++
        const h: Held = {text, groupId: e.groupId, sequence: e.sequence, eventId: e.eventId}
        if (withholding && withholding.groupId === h.groupId && withholding.sequence === h.sequence) {
          stats.withheld++
          this.#parked.push(h)
          return
        }
        this.#held.push(h)
        if (!faults.reorder || this.#held.length >= windowSize) this.flush()
        else this.#arm()
        return
      }
      if (f.frameType === 'EVENT' && frameId.startsWith(RECEIPT_FRAME_PREFIX)) {
        stats.receiptIn++
        const n = faults.duplicate ? this.#copies() : 1
        for (let i = 0; i < n; i++) {
          stats.receiptOut++
          this.#send(text)
        }
        return
      }
      if (f.frameType === 'ACK') {
        const w = withholding
        const covered =
          w !== null && acknowledgementsOf(f).some((a) => a.groupId === w.groupId && a.sequence >= w.sequence)
        if (covered || this.#parkedAcks.length > 0) {
          stats.parkedAcks++
          this.#parkedAcks.push(text)
          return
        }
        return this.#barrier(text)
      }
      if (f.frameType === 'ERROR' && isRecord(f.error) && typeof f.error.groupId === 'string')
        return this.#barrier(text)
      this.#send(text)
    }

    #barrier(text: string): void {
      if (this.#held.length > 0 || this.#deferred.length > 0) {
        stats.barriers++
        this.flush()
      }
      this.#send(text)
    }

    release(): void {
      this.#held.push(...this.#parked)
      this.#parked = []
      this.flush()
      const parkedAcks = this.#parkedAcks
      this.#parkedAcks = []
      for (const text of parkedAcks) this.#send(text)
    }

    stop(): void {
      if (this.#timer) clearTimeout(this.#timer)
      this.#timer = null
    }
  }

  const server: Server = createServer({cert: tls.cert, key: tls.key, minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3'})
  const wss = new WebSocketServer({server, perMessageDeflate: false, maxPayload: 64 * 1024 * 1024})
  const sockets = new Set<WebSocket>()
  const requests = new Set<ClientRequest>()

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    stats.httpRequests++
    const upstream = httpsRequest(
      {
        hostname: target.host,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: {...req.headers, host: target.url.host},
        ca: options.targetCa,
        minVersion: 'TLSv1.3',
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    requests.add(upstream)
    // A client gone (or the proxy closing) ends the forwarded request too: no upstream socket outlives it.
    res.once('close', () => {
      requests.delete(upstream)
      upstream.destroy()
    })
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
    req.pipe(upstream)
  })

  wss.on('connection', (down, req) => {
    const lane = new Lane(++stats.connections, down)
    lanes.add(lane)
    const up = new WebSocket(`${target.url.protocol}//${target.url.host}${req.url ?? '/'}`, {
      ca: options.targetCa,
      minVersion: 'TLSv1.3',
      perMessageDeflate: false,
      maxPayload: 64 * 1024 * 1024,
    })
    sockets.add(down).add(up)
    const early: [RawData, boolean][] = []
    down.on('message', (data, isBinary) => {
      const f = isBinary ? null : frameOf(data.toString())
      if (f !== null && f.frameType === 'ACK')
        for (const a of acknowledgementsOf(f))
          acks.push({at: Date.now(), connection: lane.id, groupId: a.groupId, sequence: a.sequence})
      // Forwarded as it is, whatever it holds: the authority answers it.
      if (up.readyState === WebSocket.OPEN) up.send(data, {binary: isBinary})
      else early.push([data, isBinary])
    })
    up.on('open', () => {
      for (const [data, isBinary] of early) up.send(data, {binary: isBinary})
      early.length = 0
    })
    up.on('message', (data, isBinary) => lane.fromUpstream(data, isBinary))
    const end = () => {
      lane.stop()
      lanes.delete(lane)
      sockets.delete(down)
      sockets.delete(up)
    }
    up.on('close', (code) => {
      // What the server sent before it closed still goes out (the withheld sequence excepted).
      lane.flush()
      end()
      if (down.readyState === WebSocket.OPEN || down.readyState === WebSocket.CONNECTING) down.close(closeCode(code))
    })
    down.on('close', (code) => {
      end()
      if (up.readyState === WebSocket.OPEN) up.close(closeCode(code))
      else up.terminate()
    })
    up.on('error', () => down.terminate())
    down.on('error', () => up.terminate())
  })

  const port = await listenOn(server, '127.0.0.1')
  return {
    url: `wss://127.0.0.1:${port}`,
    caFile: tls.caFile,
    stats,
    acks,
    sent,
    get faults() {
      return {...faults}
    },
    setFaults(next) {
      const before = faults
      faults = withFaults(faults, next)
      // A fault switched off must not leave frames behind it: they go out now, under the new switches.
      if ((before.duplicate && !faults.duplicate) || (before.reorder && !faults.reorder))
        for (const lane of lanes) lane.flush()
    },
    withhold(groupId, sequence) {
      withholding = {groupId, sequence}
    },
    release() {
      withholding = null
      for (const lane of lanes) lane.release()
    },
    async close() {
      for (const lane of lanes) lane.stop()
      for (const s of sockets) s.terminate()
      for (const r of requests) r.destroy()
      await new Promise<void>((resolve) => wss.close(() => resolve()))
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
