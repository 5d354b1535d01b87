// The child process of one module-handler slot (slots.ts forks it). It loads the user's handler
// module, runs `execute(work, ctx)` for the one WorkItem it was given, relays what the handler
// reports to the parent, and exits. It never sees the Agent's key or any other WorkItem.

import {pathToFileURL} from 'node:url'
import type {AgentHandler, Outcome, WorkContext, WorkSpec} from './handler.js'
import {attemptKey, idempotencyKey} from './idempotency.js'
import type {FromSlot, ToSlot} from './slot-protocol.js'

const send = (m: FromSlot) => process.send!(m)
const stored = new Map<number, (hash: string) => void>()
let nextId = 0
const abort = new AbortController()

/** A report the parent answers with the content hash it stored (slot-protocol.ts `stored`). */
type StoreRequest = Omit<Extract<FromSlot, {t: 'checkpoint'}>, 'id'> | Omit<Extract<FromSlot, {t: 'artifact'}>, 'id'>

function request(m: StoreRequest): Promise<string> {
  const id = ++nextId
  return new Promise((resolve) => {
    stored.set(id, resolve)
    send({...m, id})
  })
}

async function loadHandler(path: string): Promise<AgentHandler> {
  const m = (await import(pathToFileURL(path).href)) as {default?: AgentHandler; handler?: AgentHandler}
  const h = m.handler ?? m.default
  if (!h || typeof h.execute !== 'function') throw new Error(`${path} exports no handler with an execute() function`)
  return h
}

/** The WorkSpec the handler holds: a renewed lease's token replaces its capabilityToken. */
let current: WorkSpec | null = null

async function run(m: Extract<ToSlot, {t: 'run'}>): Promise<void> {
  const {spec} = m
  current = spec
  const ctx: WorkContext = {
    work: spec,
    workDir: m.workDir,
    signal: abort.signal,
    checkpoint: (state) => request({t: 'checkpoint', state}),
    progress: (progress) => send({t: 'progress', progress}),
    artifact: (content, meta) =>
      request({
        t: 'artifact',
        content: Buffer.from(typeof content === 'string' ? Buffer.from(content, 'utf8') : content).toString('base64'),
        meta,
      }),
    evidence: (criterionIds, claim) =>
      send({t: 'evidence', criterionIds: typeof criterionIds === 'string' ? [criterionIds] : criterionIds, claim}),
    usage: (delta) => send({t: 'usage', delta}),
    idempotencyKey: (operationId) => idempotencyKey(spec.missionId, spec.workItemId, spec.ownershipEpoch, operationId),
    attemptKey: (operationId) =>
      attemptKey(spec.missionId, spec.workItemId, spec.ownershipEpoch, operationId, spec.attempt),
  }
  process.chdir(m.workDir)
  const handler = await loadHandler(m.handler)
  const outcome: Outcome = (await handler.execute(spec, ctx)) ?? {type: 'submit'}
  send({t: 'done', outcome})
}

if (process.send) {
  process.on('message', (m: ToSlot) => {
    if (m.t === 'run')
      void run(m).then(
        () => process.disconnect(),
        (e: Error) => {
          send({t: 'error', message: e.stack ?? e.message})
          process.disconnect()
        },
      )
    else if (m.t === 'stop') abort.abort(m.reason)
    else if (m.t === 'token') {
      if (current !== null) current.capabilityToken = m.token
    } else stored.get(m.id)?.(m.hash)
  })
}
