// The wire bench's baseline: the machine's own primitive for fan-out. One event's EVENT frame
// (the exact bytes the gateway sends) written as fast as possible to 100 TLS 1.3 WebSockets on
// loopback by a bare `ws` server that does nothing else — no protocol, no store, no verification
// — and counted by the same kind of sink on a worker thread. The gateway's replay rate is
// compared with this; the live phase's fan-out CPU can be read against it.

import {createServer} from 'node:https'
import type {AddressInfo, Socket} from 'node:net'
import {performance} from 'node:perf_hooks'
import {Worker, isMainThread, parentPort, workerData} from 'node:worker_threads'
import WebSocket, {WebSocketServer} from 'ws'
import {generateDevTls} from '../src/wire/dev-tls.js'

const SECONDS = 2
const BATCH = 64

if (!isMainThread) {
  // The sink: count messages on every socket, report every 20 ms.
  const {url, ca, sockets} = workerData as {url: string; ca: string; sockets: number}
  let received = 0
  for (let i = 0; i < sockets; i++) {
    const ws = new WebSocket(url, {ca, minVersion: 'TLSv1.3', perMessageDeflate: false, skipUTF8Validation: true})
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
    ws.on('message', () => received++)
  }
  setInterval(() => parentPort!.postMessage(received), 20)
  parentPort!.postMessage('ready')
}

/** Frames per second delivered by a bare TLS WebSocket fan-out of `frame` to `sockets` subscribers. */
export async function baselineFanout(frame: Buffer, sockets: number): Promise<number> {
  const tls = generateDevTls()
  const http = createServer({cert: tls.cert, key: tls.key, minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3'})
  const wss = new WebSocketServer({server: http, perMessageDeflate: false})
  const open: Socket[] = []
  wss.on('connection', (_ws, req) => open.push(req.socket))
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const url = `wss://127.0.0.1:${(http.address() as AddressInfo).port}`
  let received = 0
  const worker = new Worker(new URL(import.meta.url), {workerData: {url, ca: tls.ca, sockets}})
  await new Promise<void>((resolve, reject) => {
    worker.on('error', reject)
    worker.on('message', (m: number | 'ready') => (m === 'ready' ? resolve() : (received = m)))
  })
  while (open.length < sockets) await new Promise((r) => setTimeout(r, 5))
  // Write in corked batches (as the gateway's replay does), pausing a socket while its buffer is full.
  const start = performance.now()
  let sent = 0
  while (performance.now() - start < SECONDS * 1000) {
    for (const s of open) {
      if (s.writableLength > 4 * 1024 * 1024) continue
      s.cork()
      for (let i = 0; i < BATCH; i++) s.write(frame)
      process.nextTick(() => s.uncork())
      sent += BATCH
    }
    await new Promise((r) => setImmediate(r))
  }
  while (received < sent) await new Promise((r) => setTimeout(r, 5))
  const rate = sent / ((performance.now() - start) / 1000)
  await worker.terminate()
  for (const s of open) s.destroy()
  await new Promise<void>((resolve) => http.close(() => resolve()))
  return rate
}
