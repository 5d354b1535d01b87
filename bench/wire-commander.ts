// Worker thread of bench/wire.ts: the Command load generator. One raw authenticated connection
// (bench/raw-socket.ts) sends the prepared signed Commands at a fixed rate, on its own thread, as
// a client process would; in rounds (a warm-up, then the measured window), each a range of the
// list the parent names. An accepted Command is answered with its EVENT frames (frameId
// urn:mwp:receipt:…), a refused one with an ERROR frame; both are recognized as bytes, so the
// generator takes little CPU from the server it measures. Reports, when every Command of the round
// is answered, how many Commands were refused so far; and, when the parent collects them after the
// measured window, each Command's send time (performance.timeOrigin-based, comparable across
// threads) by Action ID.

import {performance} from 'node:perf_hooks'
import {parentPort, workerData} from 'node:worker_threads'
import {frameId, rawSession} from './raw-socket.js'
import {threadId} from './threads.js'

export interface CommanderJob {
  url: string
  ca: string
  rate: number
  /** The signed Commands, as JSON text, in sending order; each is answered by exactly one Event. */
  commands: string[]
}

const job = workerData as CommanderJob
const now = () => performance.timeOrigin + performance.now()
const ANSWER_MARK = Buffer.from('"frameId":"urn:mwp:receipt:')
const ERROR_MARK = Buffer.from('"frameType":"ERROR"')

const ws = await rawSession(job.url, job.ca)
const commands = job.commands.map((text) => ({
  frame: (id: string) => `{"protocolVersion":"0.1","frameId":"${id}","frameType":"COMMAND","command":${text}}`,
  actionId: JSON.parse(text).actionId as string,
}))
const sentAt: [string, number][] = []
let answered = 0
let refused = 0
/** The end of the current round's range. */
let until = 0
ws.on('message', (d: Buffer) => {
  if (d.indexOf(ERROR_MARK) >= 0) {
    refused++
    answered++
  } else if (d.indexOf(ANSWER_MARK) >= 0) answered++
  // The thread stays until bench/wire.ts terminates it, after it read every thread's CPU time.
  if (answered === until) parentPort!.postMessage({done: true, refused})
})

parentPort!.on('message', (m: {from: number; to: number} | {collect: true}) => {
  if ('collect' in m) return parentPort!.postMessage({sentAt})
  const round = m
  const start = now()
  let sent = round.from
  until = round.to
  const tick = setInterval(() => {
    const due = Math.min(round.to, round.from + Math.floor(((now() - start) / 1000) * job.rate))
    while (sent < due) {
      const c = commands[sent++]!
      sentAt.push([c.actionId, now()])
      ws.send(c.frame(frameId()))
    }
    if (sent >= round.to) clearInterval(tick)
  }, 2)
})
parentPort!.postMessage({ready: true, tid: threadId()})
