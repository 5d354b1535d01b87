// `mwp artifact put | get | verify` with the real CLI against `mwp authority serve --dev-tls` over
// a development Organization (real processes, TLS 1.3, SQLite): the hash printed by put is the
// content's, get writes only verified bytes (file or stdout), a principal outside the Group gets
// GROUP_NOT_FOUND, content damaged on disk is refused, and verify checks a file locally.
// Build first: npx tsc -p tsconfig.json && node dist/scripts/oclif-manifest.js

import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type DevOrganization, createDevOrganization} from '../../src/config/dev-org.js'
import {contentHash} from '../../src/crypto/hash.js'
import {serveProcess} from '../support/authority-process.js'
import {mwp} from '../support/cli.js'

let dir: string
let org: DevOrganization
let server: ReturnType<typeof serveProcess>
let env: NodeJS.ProcessEnv
let group: string

const key = (name: string) => join(org.dir, org.identities.find((i) => i.name === name)!.keyFile)

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mwp-artifact-cli-'))
  org = await createDevOrganization(join(dir, 'org'), {port: 0})
  server = serveProcess(org.config, ['--dev-tls', '--port', '0'])
  const {url, ca} = await server.listening
  env = {MWP_URL: url, MWP_CA: ca!, MWP_CONFIG: org.config}
  const created = mwp(['mission', 'create', '--objective', 'Ship 0.1', '--coordinator', 'coordinator', '--json'], {env})
  expect(created.status, created.stderr).toBe(0)
  group = JSON.parse(created.stdout).result.groupId as string
}, 60_000)
afterAll(async () => {
  server?.child.kill('SIGTERM')
  await server?.exited
  rmSync(dir, {recursive: true, force: true})
})

const content = 'release notes 0.1\n'
const hash = contentHash(content)

describe('mwp artifact', () => {
  it('put prints the content hash; get writes the verified bytes to a file or stdout', () => {
    const file = join(dir, 'notes.txt')
    writeFileSync(file, content)
    const put = mwp(['artifact', 'put', file, '--group', group], {env})
    expect(put.status, put.stderr).toBe(0)
    expect(put.stdout).toBe(`${hash}\n`)
    const putJson = mwp(['artifact', 'put', '-', '--group', group, '--json'], {env, input: content})
    expect(JSON.parse(putJson.stdout)).toEqual({
      status: 'ok',
      result: {contentHash: hash, sizeBytes: content.length, groupId: group},
    })

    const out = join(dir, 'fetched.txt')
    const get = mwp(['artifact', 'get', hash, '--group', group, '--out', out, '--json'], {env})
    expect(get.status, get.stderr).toBe(0)
    expect(JSON.parse(get.stdout).result).toMatchObject({contentHash: hash, sizeBytes: content.length})
    expect(readFileSync(out, 'utf8')).toBe(content)
    const toStdout = mwp(['artifact', 'get', hash, '--group', group, '--out', '-'], {env})
    expect(toStdout.status, toStdout.stderr).toBe(0)
    expect(toStdout.stdout).toBe(content)
  })

  it('a principal outside the Group gets GROUP_NOT_FOUND (exit 1), as for a missing Artifact; nothing is written', () => {
    const out = join(dir, 'stranger.txt')
    const stranger = mwp(
      ['artifact', 'get', hash, '--group', group, '--out', out, '--json', '--key', key('worker-2')],
      {
        env,
      },
    )
    expect(stranger.status).toBe(1)
    expect(JSON.parse(stranger.stdout)).toMatchObject({status: 'rejected', error: {code: 'GROUP_NOT_FOUND'}})
    expect(existsSync(out)).toBe(false)
    const missing = mwp(['artifact', 'get', contentHash('never'), '--group', group, '--out', out, '--json'], {env})
    expect(missing.status).toBe(1)
    expect(JSON.parse(missing.stdout)).toMatchObject({status: 'rejected', error: {code: 'GROUP_NOT_FOUND'}})
    // A Worker who is not a member cannot put either.
    const put = mwp(['artifact', 'put', '-', '--group', group, '--json', '--key', key('worker-2')], {env, input: 'x'})
    expect(put.status).toBe(1)
    expect(JSON.parse(put.stdout)).toMatchObject({error: {code: 'GROUP_NOT_FOUND'}})
  })

  it('content damaged on the server’s disk is refused, and --out is not written', () => {
    const damaged = 'content to damage\n'
    const h = contentHash(damaged)
    expect(mwp(['artifact', 'put', '-', '--group', group], {env, input: damaged}).status).toBe(0)
    const listening = server
      .out()
      .stderr.split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as {event: string; artifactDir?: string})
      .find((l) => l.event === 'listening')!
    writeFileSync(join(listening.artifactDir!, h.slice('sha256:'.length)), 'content to d4mage\n')
    const out = join(dir, 'damaged.txt')
    const get = mwp(['artifact', 'get', h, '--group', group, '--out', out, '--json'], {env})
    expect(get.status).toBe(1)
    expect(JSON.parse(get.stdout)).toMatchObject({status: 'rejected', error: {code: 'INTERNAL_ERROR'}})
    expect(existsSync(out)).toBe(false)
  })

  it('verify checks a file against a hash locally: 0 on a match, 1 on a mismatch, 2 for a malformed hash', () => {
    const file = join(dir, 'local.txt')
    writeFileSync(file, content)
    const ok = mwp(['artifact', 'verify', file, '--hash', hash])
    expect([ok.status, ok.stdout]).toEqual([0, `ok ${hash}\n`])
    const bad = mwp(['artifact', 'verify', file, '--hash', contentHash('other'), '--json'])
    expect(bad.status).toBe(1)
    expect(JSON.parse(bad.stdout)).toMatchObject({
      status: 'rejected',
      error: {code: 'SCHEMA_VALIDATION_FAILED'},
      contentHash: hash,
    })
    expect(mwp(['artifact', 'verify', file, '--hash', 'md5:abc']).status).toBe(2)
  })

  it('refuses --store (the Artifact store is served over HTTPS) and --json with --out - (usage, exit 2)', () => {
    const local = mwp(['artifact', 'put', '-', '--group', group, '--store', 'sqlite:x.db'], {env, input: 'x'})
    expect(local.status).toBe(2)
    expect(mwp(['artifact', 'get', hash, '--group', group, '--out', '-', '--json'], {env}).status).toBe(2)
  })
})
