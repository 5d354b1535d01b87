// Issue #15 acceptance: `mwp authority serve` (the built CLI, a real child process) on a real
// PostgreSQL cluster whose postmaster is SIGKILLed and restarted on the same data directory and
// port MWP_SOAK_RESTARTS times (default 20), while clients over TLS 1.3 WebSockets keep posting
// messages and retry every retryable error with the same Action ID and unchanged bytes.
// Afterwards: the server never exited, every Command got a receipt, every receipt's Events are
// in the log and the log holds no other Event (no duplicates: one message.posted per Action ID),
// every error was retryable (a store outage is never a verification or admission failure), and
// outages were really hit (Commands were answered retryable errors while the store was down).
// Nothing here depends on timing: each step waits for a count to move, bounded by the timeout.

import {type ChildProcess, spawn} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import {mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {CommandReceipt} from '../../src/authority/ingress/command.js'
import {createDevOrganization, type DevOrganization} from '../../src/config/dev-org.js'
import {readKeyFile, type SigningKey} from '../../src/crypto/keyfile.js'
import {formatUtcNow} from '../../src/json/timestamp.js'
import {RegistryEvidence} from '../../src/signing/registry.js'
import {sign} from '../../src/signing/sign.js'
import {openStore} from '../../src/store/index.js'
import {WireClient} from '../../src/wire/client.js'
import {mwp} from '../support/cli.js'
import {type PostgresInstance, shouldRunPostgres, startPostgres} from '../support/postgres-harness.js'
import {PROJECT_ROOT} from '../support/upstream.js'

const RESTARTS = Number(process.env.MWP_SOAK_RESTARTS ?? 20)
const CLIENTS = 3
/** Receipts to wait for between restarts: the store answers again after each one. */
const RECEIPTS_BETWEEN = 2

/** Resolves once `check` holds, re-checking on every tick of `poll` (bounded by the test timeout). */
async function until(check: () => boolean, what: string, limitMs = 60_000): Promise<void> {
  const start = Date.now()
  while (!check()) {
    if (Date.now() - start > limitMs) throw new Error(`gave up waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

function command(key: SigningKey, fields: Record<string, unknown>): Buffer {
  const unsigned = {
    protocolVersion: '0.1',
    actionId: `urn:uuid:${randomUUID()}`,
    actor: key.principal,
    correlationId: `urn:uuid:${randomUUID()}`,
    issuedAt: formatUtcNow(),
    payload: {},
    ...fields,
  }
  return Buffer.from(JSON.stringify(sign('command', unsigned, key).document), 'utf8')
}

describe.runIf(shouldRunPostgres('restart-soak'))('PostgreSQL restarts under load (issue #15)', () => {
  let pg: PostgresInstance
  let dir: string
  let org: DevOrganization
  let server: ChildProcess | undefined
  beforeAll(async () => {
    pg = await startPostgres()
    dir = mkdtempSync(join(tmpdir(), 'mwp-soak-'))
    org = await createDevOrganization(join(dir, 'org'), {port: 0})
  }, 120_000)
  afterAll(async () => {
    if (server && server.exitCode === null) server.kill('SIGKILL')
    rmSync(dir, {recursive: true, force: true})
    await pg?.stop()
  })

  it(`survives ${RESTARTS} postmaster kills: no exit, no lost or duplicated Command, retryable errors only`, async () => {
    if (!pg.killPostmaster || !pg.restart)
      throw new Error('the soak needs a private cluster (not MWP_TEST_POSTGRES_URL)')
    const init = mwp([
      'store',
      'init',
      '--store',
      pg.url,
      '--organization',
      org.organization,
      '--admission-key',
      join(org.dir, 'keys/admission.key.json'),
    ])
    expect(init.status, init.stderr).toBe(0)

    const child = spawn(
      process.execPath,
      [
        join(PROJECT_ROOT, 'bin/run.js'),
        'authority',
        'serve',
        '--config',
        org.config,
        '--store',
        pg.url,
        '--dev-tls',
        '--port',
        '0',
      ],
      {
        env: {
          ...process.env,
          NO_COLOR: '1',
          // Should the server not stop, SIGUSR2 makes Node write a diagnostic report (its live handles).
          NODE_OPTIONS: `--report-on-signal --report-signal=SIGUSR2 --report-directory=${dir}`,
        },
      },
    )
    server = child
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (d) => (stdout += d))
    child.stderr!.on('data', (d) => (stderr += d))
    let exited: number | string | null = null
    child.on('exit', (code, signal) => (exited = code ?? signal))
    await until(() => /CA file: \S+/.test(stdout) || exited !== null, 'the server to listen')
    expect(exited, stderr).toBe(null)
    const url = /listening on (\S+)/.exec(stdout)![1]!
    const ca = readFileSync(/CA file: (\S+)/.exec(stdout)![1]!)

    const identity = org.identities.find((i) => i.principal.type === 'human')!
    const owner = readKeyFile(join(org.dir, identity.keyFile))
    const coordinator = org.identities.find((i) => i.principal.type === 'agent')!
    const registry = RegistryEvidence.fromBytes(readFileSync(org.registry))
    const clients = await Promise.all(
      Array.from({length: CLIENTS}, () => WireClient.connect({url, key: owner, registry, ca, reconnect: false})),
    )

    const groupId = `urn:mwp:test:group:soak-${randomUUID()}`
    const created = await clients[0]!.submit(
      command(owner, {
        kind: 'mission.create',
        groupId,
        payload: {
          missionId: groupId.replace(':group:', ':mission:'),
          groupId,
          objective: 'Survive the database',
          definitionOfDone: [{criterionId: 'up', description: 'Still serving', evidenceRequired: ['human_review']}],
          deadline: '2099-01-31T00:00:00Z',
          budget: {currency: 'EUR', financialLimit: 100, modelTokenLimit: 1_000_000},
          approvalPolicy: {finalHumanApproval: true, highRiskExecutionApproval: true},
          coordinatorAgentId: coordinator.principal.id,
        },
      }),
    )
    expect('receipt' in created ? 'ok' : created.error.code).toBe('ok')

    const receipts = new Map<string, CommandReceipt>()
    const errors: {code: string; retryable: boolean}[] = []
    let stopping = false
    // Each client posts, and retries a retryable error with the same bytes until it has a receipt.
    const load = clients.map(async (client) => {
      while (!stopping) {
        const bytes = command(owner, {
          kind: 'message.post',
          groupId,
          membershipEpoch: 1,
          payload: {text: 'still here'},
        })
        const actionId = (JSON.parse(bytes.toString('utf8')) as {actionId: string}).actionId
        for (;;) {
          const r = await client.submit(bytes)
          if ('receipt' in r) {
            receipts.set(actionId, r.receipt)
            break
          }
          errors.push({code: r.error.code, retryable: r.error.retryable})
          if (!r.error.retryable) return
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
      }
    })

    let duringOutage = 0
    for (let k = 0; k < RESTARTS; k++) {
      const before = receipts.size
      await until(() => receipts.size >= before + RECEIPTS_BETWEEN || exited !== null, 'receipts after a restart')
      await pg.killPostmaster()
      const erred = errors.length
      await until(() => errors.length > erred || exited !== null, 'an answer while the store is down')
      duringOutage += errors.length - erred
      await pg.restart()
      expect(exited, `server exited after restart ${k + 1}: ${stderr.slice(-2000)}`).toBe(null)
    }
    const settled = receipts.size
    await until(() => receipts.size >= settled + RECEIPTS_BETWEEN || exited !== null, 'receipts after the last restart')
    stopping = true
    await Promise.all(load)

    expect(exited, stderr.slice(-2000)).toBe(null)
    expect(duringOutage).toBeGreaterThanOrEqual(RESTARTS)
    expect(errors.filter((e) => !e.retryable)).toEqual([])
    expect(new Set(errors.map((e) => e.code))).toEqual(new Set(['INTERNAL_ERROR']))

    // Every acknowledged Command's Events are in the log, and the log holds nothing else.
    const store = await openStore(pg.url)
    try {
      const logged: string[] = []
      for (let after = 0; ;) {
        const page = await store.read(groupId, after, 500)
        logged.push(...page.events.map((e) => e.eventId))
        if (page.events.length === 0 || page.events.at(-1)!.sequence >= page.head) break
        after = page.events.at(-1)!.sequence
      }
      const created_ = 'receipt' in created ? created.receipt.eventIds : []
      const acknowledged = [...receipts.values()].flatMap((r) => r.eventIds)
      expect(acknowledged.length).toBe(receipts.size) // one message.posted per Action ID
      expect(new Set(acknowledged).size).toBe(acknowledged.length)
      expect(logged.slice(created_.length).sort()).toEqual([...acknowledged].sort())
      for (const [actionId, receipt] of receipts) {
        const stored = await store.receipt(owner.principal!.id, actionId)
        expect(stored?.firstSequence).toBe(receipt.firstSequence)
      }
    } finally {
      await store.close()
    }

    await Promise.all(clients.map((c) => c.close()))
    child.kill('SIGTERM')
    await until(() => exited !== null, 'the server to stop', 30_000).catch(async (e: Error) => {
      child.kill('SIGUSR2')
      await new Promise((r) => setTimeout(r, 2000))
      const report = readdirSync(dir).find((f) => f.startsWith('report.') && f.endsWith('.json'))
      const handles = report
        ? (JSON.parse(readFileSync(join(dir, report), 'utf8')) as {libuv: {type: string; is_active: boolean}[]}).libuv
            .filter((h) => h.is_active)
            .map((h) => JSON.stringify(h))
        : ['no report written']
      throw new Error(`${e.message}; live handles: ${handles.join(' ')}; stderr: ${stderr.slice(-2000)}`)
    })
    expect(exited).toBe(0)
  }, 300_000)
})
