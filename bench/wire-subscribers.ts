// Worker thread of bench/wire.ts: the subscriber sockets run here, on their own thread, so the
// server's event loop is measured without 100 TLS clients sharing it. Each subscriber is a raw
// authenticated socket (bench/raw-socket.ts) that counts EVENT frames and ACKs every 256; the
// first subscriber of each Group records arrival times (performance.timeOrigin-based, so
// comparable across threads) for Command→Event latency, kept here until the parent collects them
// after the measured window (so the server's thread does not receive and store them during it).

import {performance} from 'node:perf_hooks'
import type {Socket} from 'node:net'
import {parentPort, workerData} from 'node:worker_threads'
import type WebSocket from 'ws'
import {frameId, rawSession} from './raw-socket.js'
import {threadId} from './threads.js'

export interface SubscriberJob {
  url: string
  ca: string
  groups: string[]
  perGroup: number
  after: Record<string, number>
}

const job = workerData as SubscriberJob
const now = () => performance.timeOrigin + performance.now()

let received = 0
const EVENT_MARK = Buffer.from('"frameType":"EVENT"')
const CAUSE_MARK = Buffer.from('"cause":{"type":"command","id":"')
const QUOTE = 0x22
const arrivals: [string, number][] = []
/** Arrivals are recorded until collected: the replay phase that follows redelivers the same Events. */
let sampling = true

/**
 * Calls `onText(chunk, start, end)` for every text message the server sends on `ws` from now on,
 * in place of ws's own receiver: the frames (server to client, so unmasked) are cut straight
 * from the socket's chunks, with no Buffer, event or string per message. A frame split across
 * chunks is joined first. Sending stays with ws.
 */
function sink(ws: WebSocket, onText: (chunk: Buffer, start: number, end: number) => void): void {
  const socket = (ws as unknown as {_socket: Socket})._socket
  socket.removeAllListeners('data')
  let rest: Buffer | null = null
  socket.on('data', (data: Buffer) => {
    const chunk = rest ? Buffer.concat([rest, data]) : data
    rest = null
    let at = 0
    while (chunk.length - at >= 2) {
      const opcode = chunk[at]! & 0x0f
      let length = chunk[at + 1]! & 0x7f
      let header = 2
      if (length === 126) {
        if (chunk.length - at < 4) break
        length = chunk.readUInt16BE(at + 2)
        header = 4
      } else if (length === 127) {
        if (chunk.length - at < 10) break
        length = Number(chunk.readBigUInt64BE(at + 2))
        header = 10
      }
      if (chunk.length - at < header + length) break
      if (opcode === 1) onText(chunk, at + header, at + header + length)
      at += header + length
    }
    if (at < chunk.length) rest = chunk.subarray(at)
  })
}

async function subscriber(sampler: boolean) {
  const ws = await rawSession(job.url, job.ca)
  // A counting sink, cheap enough that 100 of them on one thread keep up with the server: frames
  // are searched as bytes, never decoded whole (this socket subscribes to one Group).
  let unacked = 0
  sink(ws, (d, start, end) => {
    // frameType follows protocolVersion and a frameId of at most 512 characters.
    const mark = d.indexOf(EVENT_MARK, start)
    if (mark < 0 || mark >= Math.min(end, start + 600)) return
    received++
    if (sampler && sampling) {
      const at = d.indexOf(CAUSE_MARK, mark)
      if (at >= 0 && at < end) {
        const from = at + CAUSE_MARK.length
        arrivals.push([d.toString('utf8', from, d.indexOf(QUOTE, from)), now()])
      }
    }
    if (++unacked >= 256) {
      const text = d.toString('utf8', start, end)
      const groupId = /"groupId":"([^"]+)"/.exec(text)![1]!
      const sequence = Number(/"sequence":(\d+)/.exec(text)![1])
      ws.send(
        JSON.stringify({
          protocolVersion: '0.1',
          frameId: frameId(),
          frameType: 'ACK',
          acknowledgements: [{groupId, sequence}],
          sentAt: new Date().toISOString(),
        }),
      )
      unacked = 0
    }
  })
  return (groupId: string, after: number) =>
    ws.send(
      JSON.stringify({
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'SUBSCRIBE',
        subscriptionId: frameId(),
        groups: [{groupId, afterSequence: after}],
      }),
    )
}

const subscribe: {groupId: string; send: (g: string, after: number) => void}[] = []
for (let s = 0; s < job.groups.length * job.perGroup; s++) {
  const groupId = job.groups[s % job.groups.length]!
  subscribe.push({groupId, send: await subscriber(s < job.groups.length)})
}
for (const s of subscribe) s.send(s.groupId, job.after[s.groupId] ?? 0)

setInterval(() => {
  parentPort!.postMessage({received})
}, 20)
parentPort!.on('message', (m: {replay?: boolean; collect?: boolean}) => {
  if (m.replay) for (const s of subscribe) s.send(s.groupId, 0)
  if (m.collect) {
    sampling = false
    parentPort!.postMessage({arrivals})
  }
})
parentPort!.postMessage({ready: true, tid: threadId()})
