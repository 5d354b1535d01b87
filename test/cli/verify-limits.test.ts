// `mwp verify` on large inputs as a real process with a bounded heap (issue #15): NDJSON streams
// of a million lines, a 200 MB document, lines over the size limit, 512-level nesting. The heap
// bound is what makes these tests fail if anything buffers the whole input or its results.

import {spawnSync} from 'node:child_process'
import {closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {json} from '../support/cli.js'
import {PROJECT_ROOT} from '../support/upstream.js'
import {FIXTURE_REGISTRY, commandWithDepth, signIndependently} from '../signing/independent-signer.js'

const BIN = join(PROJECT_ROOT, 'bin/run.js')
const dir = mkdtempSync(join(tmpdir(), 'mwp-verify-limits-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

interface Run {
  status: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/**
 * Runs `mwp verify ARGS` with the old-space heap capped at `heapMb`; stdin from `stdinFile` or
 * `input`, stdout through a file (outputs here exceed any pipe buffer limit).
 */
function verifyCli(args: string[], options: {heapMb: number; stdinFile?: string; input?: Buffer}): Run {
  const outPath = join(dir, 'stdout')
  const out = openSync(outPath, 'w')
  const stdin = options.stdinFile !== undefined ? openSync(options.stdinFile, 'r') : 'pipe'
  try {
    const r = spawnSync(
      process.execPath,
      [`--max-old-space-size=${options.heapMb}`, BIN, 'verify', '--registry', FIXTURE_REGISTRY, ...args],
      {
        cwd: PROJECT_ROOT,
        stdio: [stdin, out, 'pipe'],
        input: options.input,
        env: {...process.env, NO_COLOR: '1'},
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
      },
    )
    return {status: r.status, signal: r.signal, stdout: readFileSync(outPath, 'utf8'), stderr: r.stderr}
  } finally {
    closeSync(out)
    if (typeof stdin === 'number') closeSync(stdin)
  }
}

/** Writes `lines` produced one at a time, in 1 MiB writes, so the generator holds no whole file. */
function writeLines(path: string, count: number, line: (i: number) => string): void {
  const fd = openSync(path, 'w')
  let pending = ''
  for (let i = 1; i <= count; i++) {
    pending += line(i) + '\n'
    if (pending.length >= 1 << 20) {
      writeSync(fd, pending)
      pending = ''
    }
  }
  writeSync(fd, pending)
  closeSync(fd)
}

const signedCommand = JSON.stringify(signIndependently(commandWithDepth(6)))
const tampered = signedCommand.replace('"critical":false', '"critical":true')

describe('mwp verify --ndjson streams in constant memory', () => {
  it(
    '1,000,000 lines rejected cheaply (stages 1 and 2), every result in order, 64 MB of heap',
    {timeout: 120_000},
    () => {
      // One million documents verified in full take minutes (~4,000/s); these fail fast at stage 1
      // (every 1000th line is not JSON) or stage 2 (`{}` is no document kind), which still parses,
      // schema-checks and reports each line. The valid-document stream is the next test.
      const path = join(dir, 'million.ndjson')
      const expected = (i: number) => (i % 1000 === 0 ? 'PROTOCOL_VIOLATION' : 'SCHEMA_VALIDATION_FAILED')
      writeLines(path, 1_000_000, (i) => (i % 1000 === 0 ? 'x' : '{}'))
      const r = verifyCli(['--ndjson', '-'], {heapMb: 64, stdinFile: path})
      rmSync(path)
      expect(r.status, r.stderr).toBe(1)
      const lines = r.stdout.split('\n')
      expect(lines.pop()).toBe('')
      expect(lines).toHaveLength(1_000_000)
      for (let i = 1; i <= 1_000_000; i++)
        if (lines[i - 1] !== `-:${i}: ${expected(i)}`) expect(lines[i - 1]).toBe(`-:${i}: ${expected(i)}`)
    },
  )

  it(
    '--json over 200,000 lines (the old reader died at ~130,000) is one JSON object with every result',
    {timeout: 120_000},
    () => {
      const path = join(dir, 'json.ndjson')
      writeLines(path, 200_000, (i) => (i % 3 === 0 ? '{"a":1,"a":2}' : '{}'))
      const r = verifyCli(['--ndjson', '--json', path], {heapMb: 64})
      rmSync(path)
      expect(r.status, r.stderr).toBe(1)
      const out = json(r)
      expect(out.status).toBe('rejected')
      expect(out.error.code).toBe('SCHEMA_VALIDATION_FAILED') // the first rejection's code
      expect(out.result).toMatchObject({total: 200_000, verified: 0, rejected: 200_000})
      expect(out.result.documents).toHaveLength(200_000)
      expect(out.result.documents[2]).toEqual({input: `${path}:3`, status: 'rejected', code: 'PROTOCOL_VIOLATION'})
      expect(out.result.documents[199_999]).toEqual({
        input: `${path}:200000`,
        status: 'rejected',
        code: 'SCHEMA_VALIDATION_FAILED',
      })
    },
  )

  it('valid documents: 2,000 signed lines with CRLF, blank lines and one tampered line', {timeout: 120_000}, () => {
    const path = join(dir, 'valid.ndjson')
    writeLines(path, 2_000, (i) =>
      i === 1000 ? tampered : i % 500 === 0 ? ' \t\r' : i % 2 === 0 ? signedCommand + '\r' : signedCommand,
    )
    const r = verifyCli(['--ndjson', '--json', path], {heapMb: 64})
    expect(r.status, r.stderr).toBe(1)
    const out = json(r)
    expect(out.result).toMatchObject({total: 1_997, verified: 1_996, rejected: 1})
    const rejected = out.result.documents.filter((d: {status: string}) => d.status === 'rejected')
    expect(rejected).toEqual([{input: `${path}:1000`, status: 'rejected', code: 'AUTH_INVALID_SIGNATURE'}])
    expect(out.result.documents.map((d: {input: string}) => d.input)).not.toContain(`${path}:500`) // blank
    expect(out.result.documents[1]).toMatchObject({input: `${path}:2`, status: 'verified', kind: 'command'})
  })

  it(
    'a line over the size limit is refused by its length; the lines around it still verify',
    {timeout: 120_000},
    () => {
      const path = join(dir, 'oversize.ndjson')
      const fd = openSync(path, 'w')
      writeSync(fd, signedCommand + '\n')
      writeSync(fd, '"' + 'x'.repeat(16 * 1024 * 1024) + '"\n') // 16 MiB + 2 bytes
      writeSync(fd, signedCommand + '\n')
      closeSync(fd)
      const r = verifyCli(['--ndjson', '--json', '--explain', path], {heapMb: 64})
      rmSync(path)
      expect(r.status, r.stderr).toBe(1)
      const docs = json(r).result.documents
      expect(docs.map((d: {status: string}) => d.status)).toEqual(['verified', 'rejected', 'verified'])
      expect(docs[1]).toMatchObject({code: 'PROTOCOL_VIOLATION', diagnostic: {stage: 'parse', reason: 'size-limit'}})
    },
  )

  it('an input that fails part way still ends the one JSON object, with the environment error (exit 3)', () => {
    const good = join(dir, 'good.ndjson')
    writeFileSync(good, signedCommand + '\n')
    const r = verifyCli(['--ndjson', '--json', good, join(dir, 'missing.ndjson')], {heapMb: 64})
    expect(r.status).toBe(3)
    const out = json(r)
    expect(out).toMatchObject({status: 'error', error: {code: 'ENVIRONMENT'}, result: {total: 1, verified: 1}})
    expect(out.error.message).toMatch(/missing\.ndjson: ENOENT/)
  })
})

describe('mwp verify --ndjson --store', () => {
  it('audits each rejected line as it streams, with the line as its subject', {timeout: 120_000}, () => {
    const store = `sqlite:${join(dir, 'audit.db')}`
    const init = spawnSync(
      process.execPath,
      [
        BIN,
        'store',
        'init',
        '--store',
        store,
        '--organization',
        'urn:mwp:dev:org:example',
        '--admission-key',
        join(PROJECT_ROOT, 'fixtures/keys/admission.key.json'),
      ],
      {encoding: 'utf8'},
    )
    expect(init.status, init.stderr).toBe(0)
    const path = join(dir, 'audited.ndjson')
    writeFileSync(path, [signedCommand, tampered, '{}', signedCommand].join('\n') + '\n')
    const r = verifyCli(['--ndjson', '--store', store, path], {heapMb: 64})
    expect(r.status, r.stderr).toBe(1)
    expect(r.stdout.split('\n').slice(1, 3)).toEqual([
      `${path}:2: AUTH_INVALID_SIGNATURE`,
      `${path}:3: SCHEMA_VALIDATION_FAILED`,
    ])
    const audit = spawnSync(process.execPath, [BIN, 'audit', 'list', '--store', store, '--json'], {encoding: 'utf8'})
    const entries = (JSON.parse(audit.stdout) as {result: {entries: {subject: string; stage: string}[]}}).result.entries
    expect(entries.map((e) => [e.subject, e.stage])).toEqual([
      [`${path}:2`, 'signature'],
      [`${path}:3`, 'schema'],
    ])
  })
})

describe('mwp verify on a 200 MB document', () => {
  it(
    'refuses it by its length (PROTOCOL_VIOLATION, exit 1, one JSON object) under a 128 MB heap; no crash',
    {timeout: 120_000},
    () => {
      // The document: a Command whose payload is an array of 10^8 numbers. Verifying it
      // whole ran out of heap at ~4.5 GB; the 16 MiB stage-1 limit answers it after reading 16 MiB.
      const path = join(dir, 'huge.json')
      const fd = openSync(path, 'w')
      const head = signedCommand.slice(0, -1) + ',"huge":['
      writeSync(fd, head)
      const block = '1,'.repeat(1 << 19) // 1 MiB
      for (let i = 0; i < 100; i++) writeSync(fd, block)
      writeSync(fd, '1]}')
      closeSync(fd)
      try {
        const file = verifyCli(['--json', '--explain', path], {heapMb: 128})
        expect(file.signal).toBeNull()
        expect(file.status, file.stderr).toBe(1)
        expect(json(file)).toMatchObject({
          status: 'rejected',
          error: {code: 'PROTOCOL_VIOLATION'},
          diagnostic: {stage: 'parse', reason: 'size-limit'},
        })
        const stdin = verifyCli(['--json', '-'], {heapMb: 128, stdinFile: path})
        expect(stdin.status, stdin.stderr).toBe(1)
        expect(json(stdin)).toEqual({status: 'rejected', error: expect.objectContaining({code: 'PROTOCOL_VIOLATION'})})
      } finally {
        rmSync(path)
      }
    },
  )

  it('a document piped on stdin over the limit is drained and refused; one at the limit is read whole', () => {
    const input = Buffer.alloc(16 * 1024 * 1024 + 1, 0x20)
    expect(verifyCli(['-'], {heapMb: 128, input})).toMatchObject({status: 1, stdout: 'PROTOCOL_VIOLATION\n'})
    const over = verifyCli(['--json', '--explain', '-'], {heapMb: 128, input})
    expect(json(over)).toMatchObject({diagnostic: {stage: 'parse', reason: 'size-limit'}})
    // Exactly the limit is parsed: all whitespace is a stage-1 syntax error, not a size error.
    const at = verifyCli(['--json', '--explain', '-'], {heapMb: 128, input: Buffer.alloc(16 * 1024 * 1024, 0x20)})
    expect(json(at)).toMatchObject({diagnostic: {stage: 'parse', reason: 'syntax'}})
  })
})

describe('mwp verify on deep nesting', () => {
  it('a 512-level Command signed independently verifies; 513 levels are PROTOCOL_VIOLATION', () => {
    const deep = join(dir, 'deep-512.json')
    writeFileSync(deep, JSON.stringify(signIndependently(commandWithDepth(512))))
    const ok = verifyCli([deep], {heapMb: 128})
    expect(ok.status, ok.stdout + ok.stderr).toBe(0)
    expect(ok.stdout).toMatch(/^verified command signed by agent urn:mwp:dev:agent:coordinator/)
    const deeper = join(dir, 'deep-513.json')
    writeFileSync(deeper, JSON.stringify(signIndependently(commandWithDepth(513))))
    const refused = verifyCli(['--json', '--explain', deeper], {heapMb: 128})
    expect(refused.status).toBe(1)
    expect(json(refused)).toMatchObject({error: {code: 'PROTOCOL_VIOLATION'}, diagnostic: {reason: 'depth-limit'}})
  })
})
