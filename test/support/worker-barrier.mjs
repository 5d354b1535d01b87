// The start line the process-race workers share (spawned by startBarrierWorker in store-backends.ts):
// a worker signals it is ready by creating READY_FILE, then waits for BARRIER_FILE, which the test
// creates once every worker is ready, so all of them act at the same moment.

import {existsSync, writeFileSync} from 'node:fs'

/** Creates `readyFile`, then resolves once `barrierFile` exists; exits 2 if it does not within 30 s. */
export async function readyThenWait(readyFile, barrierFile) {
  writeFileSync(readyFile, '')
  const deadline = Date.now() + 30_000
  while (!existsSync(barrierFile)) {
    if (Date.now() > deadline) {
      console.error('barrier never opened')
      process.exit(2)
    }
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}
