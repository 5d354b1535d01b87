// Execution slots (§11.1): each run is its own OS process with only its WorkSpec; reports reach the
// parent in order; `yield` is cooperative, `lease-lost` kills at once; the exec protocol's lines.

import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import type {WorkSpec} from '../../src/agent/handler.js'
import {type SlotReports, startSlot} from '../../src/agent/slots.js'
import {contentHash} from '../../src/crypto/hash.js'
import type {WorkContract} from '../../src/authority/model/payloads.generated.js'
import {contract as fullContract} from '../support/authority-helpers.js'

const workContract = (extra: Record<string, unknown> = {}) => fullContract(extra) as unknown as WorkContract

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name)
const root = mkdtempSync(join(tmpdir(), 'mwp-slots-'))
let dirs = 0
const workDir = () => {
  const d = join(root, String(++dirs))
  mkdirSync(d)
  return d
}

function spec(extra: Partial<WorkSpec> = {}): WorkSpec {
  return {
    groupId: 'urn:mwp:test:group:a',
    missionId: 'urn:mwp:test:mission:a',
    workItemId: 'urn:mwp:test:work:1',
    conversationId: 'urn:mwp:test:conv:1',
    ownershipEpoch: 1,
    leaseId: 'urn:mwp:test:lease:1',
    contract: workContract(),
    resume: null,
    attempt: 1,
    ...extra,
  }
}

/** Real reports: checkpoints and Artifacts hashed and kept; everything recorded in order. */
function recorder() {
  const seen: {kind: string; value: unknown}[] = []
  const blobs = new Map<string, Buffer>()
  const reports: SlotReports = {
    async checkpoint(state) {
      const bytes = Buffer.from(JSON.stringify(state))
      const hash = contentHash(bytes)
      blobs.set(hash, bytes)
      seen.push({kind: 'checkpoint', value: state})
      return hash
    },
    async artifact(content, meta) {
      const hash = contentHash(content)
      blobs.set(hash, content)
      seen.push({kind: 'artifact', value: {hash, meta, text: content.toString('utf8')}})
      return hash
    },
    progress: (p) => seen.push({kind: 'progress', value: p}),
    evidence: (ids, claim) => seen.push({kind: 'evidence', value: {ids, claim}}),
    usage: (d) => seen.push({kind: 'usage', value: d}),
    log: (l) => seen.push({kind: 'log', value: l}),
  }
  return {seen, blobs, reports}
}

afterAll(() => rmSync(root, {recursive: true, force: true}))

describe('module handler slots', () => {
  it('relays every report in order, in a process that holds none of the parent environment', async () => {
    process.env.MWP_CANARY = 'canary-secret-of-the-parent'
    const r = recorder()
    const run = startSlot({module: fixture('report-handler.mjs')}, spec(), workDir(), r.reports)
    expect(run.pid).not.toBe(process.pid)
    expect(await run.done).toEqual({type: 'submit'})
    delete process.env.MWP_CANARY
    expect(r.seen.map((s) => s.kind)).toEqual(['progress', 'checkpoint', 'artifact', 'evidence', 'usage', 'progress'])
    const last = r.seen.at(-1)!.value as {milestones: string[]}
    expect(last.milestones[0]).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(last.milestones[1]).toMatch(/^idem:[0-9a-f]{64}$/)
    expect(last.milestones[2]).toBe('undefined') // the parent's environment did not reach the slot
    expect(JSON.stringify(r.seen)).not.toContain('canary-secret-of-the-parent')
  })

  it("a renewed lease's token replaces work.capabilityToken in the running handler (§12)", async () => {
    const dir = workDir()
    const handler = join(dir, 'token-handler.mjs')
    writeFileSync(
      handler,
      `export default {
        async execute(work, ctx) {
          const first = work.capabilityToken
          ctx.progress({phase: 'waiting'})
          while (work.capabilityToken === first) await new Promise((r) => setTimeout(r, 10))
          ctx.progress({phase: 'renewed', milestones: [first, work.capabilityToken]})
        },
      }`,
    )
    const r = recorder()
    const run = startSlot({module: handler}, spec({capabilityToken: 'token-of-the-first-lease-period'}), dir, r.reports)
    // Handed over once the handler has read its first token (the IPC channel keeps the order).
    while (r.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    run.token('token-of-the-renewed-lease')
    expect(await run.done).toEqual({type: 'submit'})
    expect(r.seen.at(-1)!.value).toEqual({
      phase: 'renewed',
      milestones: ['token-of-the-first-lease-period', 'token-of-the-renewed-lease'],
    })
  })

  it('yields cooperatively at a checkpoint, and a resumed run continues from it', async () => {
    const r = recorder()
    const run = startSlot({module: fixture('loop-handler.mjs')}, spec(), workDir(), r.reports)
    while (r.seen.filter((s) => s.kind === 'checkpoint').length < 3) await new Promise((res) => setTimeout(res, 5))
    run.stop('yield')
    expect(await run.done).toEqual({type: 'yield'})
    const checkpoints = r.seen.filter((s) => s.kind === 'checkpoint').map((s) => (s.value as {step: number}).step)
    const last = checkpoints.at(-1)!
    expect(checkpoints).toEqual(Array.from({length: last}, (_, i) => i + 1)) // every step checkpointed, in order

    const again = recorder()
    const contract = workContract({extensions: {steps: last + 2}})
    const resumed = startSlot(
      {module: fixture('loop-handler.mjs')},
      spec({contract, resume: {state: {step: last}, checkpointHash: 'sha256:' + '0'.repeat(64)}}),
      workDir(),
      again.reports,
    )
    expect(await resumed.done).toEqual({type: 'submit'})
    const steps = again.seen.filter((s) => s.kind === 'checkpoint').map((s) => (s.value as {step: number}).step)
    expect(steps).toEqual([last + 1, last + 2])
  })

  it('a lost lease kills the process at once; nothing it reports afterwards is taken', async () => {
    const r = recorder()
    const run = startSlot({module: fixture('loop-handler.mjs')}, spec(), workDir(), r.reports)
    while (r.seen.length < 2) await new Promise((res) => setTimeout(res, 5))
    run.stop('lease-lost')
    expect(await run.done).toEqual({type: 'stopped', reason: 'lease-lost'})
    const count = r.seen.length
    await new Promise((res) => setTimeout(res, 50))
    expect(r.seen.length).toBe(count)
    expect(() => process.kill(run.pid!, 0)).toThrow() // the process is gone
  })

  it('a handler that throws is a crash with its message', async () => {
    const dir = workDir()
    const module = join(dir, 'throws.mjs')
    writeFileSync(module, 'export default {execute() { throw new Error("handler broke") }}\n')
    const run = startSlot({module}, spec(), dir, recorder().reports)
    const result = await run.done
    expect(result.type).toBe('crashed')
    expect((result as {reason: string}).reason).toContain('handler broke')
  })
})

describe('exec handler slots', () => {
  it('reads the WorkSpec on stdin and turns NDJSON lines into reports and an outcome', async () => {
    const dir = workDir()
    const script = [
      'read -r work',
      'echo "$work" > work.json',
      'echo "# draft" > notes.md',
      `echo '{"type":"progress","phase":"writing"}'`,
      `echo '{"type":"checkpoint","state":{"step":1}}'`,
      `echo '{"type":"artifact","path":"notes.md","mediaType":"text/markdown"}'`,
      `echo '{"type":"evidence","criterion":"notes","method":"grep","result":"passed"}'`,
      'echo "to the log" >&2',
      `echo '{"type":"submit"}'`,
    ].join('\n')
    const r = recorder()
    const run = startSlot({exec: script}, spec(), dir, r.reports)
    expect(await run.done).toEqual({type: 'submit'})
    const kinds = r.seen.map((s) => s.kind).filter((k) => k !== 'log')
    expect(kinds).toEqual(['progress', 'checkpoint', 'artifact', 'evidence'])
    expect(r.seen.some((s) => s.kind === 'log' && s.value === 'to the log')).toBe(true)
    expect((r.seen.find((s) => s.kind === 'artifact')!.value as {text: string}).text).toBe('# draft\n')
    expect(JSON.parse(readFileSync(join(dir, 'work.json'), 'utf8')).work.workItemId).toBe('urn:mwp:test:work:1')
  })

  it('a `yield` line on stdin asks for a checkpoint and a yield', async () => {
    const script = [
      'read -r work',
      'i=0',
      'while true; do',
      '  i=$((i+1)); echo "{\\"type\\":\\"checkpoint\\",\\"state\\":{\\"step\\":$i}}"',
      '  if read -r -t 0.05 line && [ "$line" = yield ]; then echo \'{"type":"yield"}\'; exit 0; fi',
      'done',
    ].join('\n')
    const dir = workDir()
    writeFileSync(join(dir, 'loop.sh'), script + '\n') // bash: `read -t` is not POSIX sh
    const r = recorder()
    const run = startSlot({exec: 'bash loop.sh'}, spec(), dir, r.reports)
    while (r.seen.length < 2) await new Promise((res) => setTimeout(res, 5))
    run.stop('yield')
    expect(await run.done).toEqual({type: 'yield'})
    expect(r.seen.every((s) => s.kind === 'checkpoint')).toBe(true)
  })

  it.each([
    ['not JSON', 'echo hello', /line 1: not JSON/],
    ['an unknown line', `echo '{"type":"deploy"}'`, /unknown line type "deploy"/],
    [
      'a path outside the working directory',
      `echo '{"type":"artifact","path":"../../etc/passwd","mediaType":"text/plain"}'; echo '{"type":"submit"}'`,
      /outside the working directory/,
    ],
    ['no outcome', 'exit 0', /without an outcome line/],
  ])('%s ends the run as a crash', async (_name, script, reason) => {
    const r = recorder()
    const result = await startSlot({exec: `read -r work; ${script}`}, spec(), workDir(), r.reports).done
    expect(result.type).toBe('crashed')
    expect((result as {reason: string}).reason).toMatch(reason)
  })
})
