// §12 end to end (ACCEPTANCE G1, G3): a real `mwp authority serve` and a real `mwp agent run
// --exec` process. The runtime asks the authority deployment's Authorization Service for the
// token of the lease work.start gave it and hands it to the exec handler in its WorkSpec; the
// token verifies against the key the server serves, is bound to that lease, and — a canary check —
// appears nowhere else: not in the Group's Events, not in the Agent's log, not in any file the
// deployment or the Agent wrote (the local store, the slot's working directory).

import {existsSync, readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {WorkSpec} from '../../src/agent/handler.js'
import {verifyToken} from '../../src/authz/verifier.js'
import {decodeBase64url} from '../../src/json/base64url.js'
import {fetchAuthzKey} from '../../src/wire/token-client.js'
import {type AgentOrg, agentOrg, readText, until} from '../support/agent-org.js'

const REPO = 'urn:mwp:dev:tool:repo'
const EXECUTION_SECONDS = 4

/** Saves its WorkSpec line ($1), then for 6 s every later stdin line ($2: the renewed tokens), then submits. */
const RENEWING_SH = `read -r work
printf '%s\\n' "$work" > "$1"
end=$((SECONDS + 6))
# A read that times out mid-line keeps the part it read (bash): join it to the rest, so a token
# that arrives across the timeout is not saved as two broken lines (a flaky failure in CI).
held=
while [ $SECONDS -lt $end ]; do
  if read -r -t 1 part; then printf '%s\\n' "$held$part" >> "$2"; held=; else held="$held$part"; fi
done
criteria=$(node -pe 'JSON.stringify(JSON.parse(process.argv[1]).work.contract.acceptanceCriteria.map(c => c.criterionId))' "$work")
echo '{"type":"artifact","content":"done","mediaType":"text/plain"}'
echo "{\\"type\\":\\"evidence\\",\\"criteria\\":$criteria,\\"method\\":\\"ran\\",\\"result\\":\\"passed\\"}"
echo '{"type":"submit"}'
`

/** A token's claims (its body, unverified; the tests verify separately). */
const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(decodeBase64url(token.split('.')[0]!)!).toString('utf8')) as {
    leaseId: string
    expiresAt: string
    issuedAt: string
  }

/** Saves the WorkSpec line it is given (to the file named by $1, outside its working directory), then submits. */
const WORK_SH = `read -r work
printf '%s\\n' "$work" > "$1"
criteria=$(node -pe 'JSON.stringify(JSON.parse(process.argv[1]).work.contract.acceptanceCriteria.map(c => c.criterionId))' "$work")
echo '{"type":"artifact","content":"done","mediaType":"text/plain"}'
echo "{\\"type\\":\\"evidence\\",\\"criteria\\":$criteria,\\"method\\":\\"ran\\",\\"result\\":\\"passed\\"}"
echo '{"type":"submit"}'
`

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

let o: AgentOrg
const worker = () => `${o.org.organization}:agent:worker-1`

/** A Mission whose Coordinator authorizes a WorkItem (the dev contract plus `extra`) and offers it to worker-1 just in time. */
async function offerWork(extra: Record<string, unknown>) {
  const {groupId, missionId} = await o.mission('Use the repository')
  const workItemId = await o.offerWork(groupId, missionId, worker(), extra)
  return {groupId, missionId, workItemId}
}

beforeAll(async () => {
  // Short Execution Leases, so a handler lives through renewals (the first test finishes before one).
  o = await agentOrg('agent-token', {policy: {leases: {executionSeconds: EXECUTION_SECONDS}}})
}, 120_000)
afterAll(() => o?.close())

describe('mwp agent run: the capability token of the lease (§12)', () => {
  it('reaches the exec handler in work.capabilityToken, verifies against the served key, bound to the lease, and is written nowhere else', async () => {
    const received = join(o.dir, 'received-work.json')
    writeFileSync(join(o.dir, 'work.sh'), WORK_SH)
    const agent = o.agent('worker-1', ['--exec', `bash ${join(o.dir, 'work.sh')} ${received}`])
    const {groupId, missionId, workItemId} = await offerWork({
      allowedResources: [{resource: REPO, operations: ['read', 'write']}],
    })
    const events = await until(
      () => o.events(groupId),
      (es) => es.some((e) => e.kind === 'work.submitted'),
      `work.submitted (agent stderr: ${agent.out().stderr.slice(-2000)})`,
    )
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)

    const work = (JSON.parse(readText(received)) as {work: WorkSpec}).work
    const token = work.capabilityToken!
    expect(typeof token).toBe('string')
    const started = events.find((e) => e.kind === 'work.started')!
    const lease = (started.payload as {lease: {leaseId: string; sessionEpoch: number; expiresAt: string}}).lease
    expect(work.leaseId).toBe(lease.leaseId)

    const served = await fetchAuthzKey({url: o.url, ca: readText(o.ca)})
    const [body, signature] = token.split('.') as [string, string]
    const claims = JSON.parse(Buffer.from(decodeBase64url(body)!).toString('utf8')) as {issuedAt: string}
    // Verified at its own issue instant: the check is about the signature and binding, not the clock.
    const verdict = await verifyToken(token, {
      publicKey: served.publicKey,
      now: claims.issuedAt,
      operation: 'write',
      resource: REPO,
    })
    expect(verdict).toMatchObject({
      ok: true,
      claims: {
        agentId: worker(),
        sessionEpoch: lease.sessionEpoch,
        groupId,
        missionId,
        workItemId,
        ownershipEpoch: work.ownershipEpoch,
        leaseId: lease.leaseId,
        grants: [{resource: REPO, operations: ['read', 'write']}],
      },
    })
    expect(verdict.ok && verdict.claims.expiresAt <= lease.expiresAt).toBe(true)

    // G3 canary: the token (and its signature alone) is nowhere but where the handler saved it.
    const secrets = [token, signature]
    const eventText = JSON.stringify(events)
    const logs = agent.out().stderr + agent.out().stdout + o.server.out().stderr + o.server.out().stdout
    for (const secret of secrets) {
      expect(eventText.includes(secret)).toBe(false)
      expect(logs.includes(secret)).toBe(false)
    }
    const written = filesUnder(o.dir).filter((f) => f !== received)
    expect(written.length).toBeGreaterThan(5)
    const holding = written.filter((f) => {
      const bytes = readFileSync(f)
      return secrets.some((s) => bytes.includes(s))
    })
    expect(holding).toEqual([])
    // The Agent's log does say it ran the lease (so the canary looked at a real log).
    expect(agent.out().stderr).toContain(lease.leaseId)
  })

  it("each renewal hands the running handler the renewed lease's token: same lease, later expiry, verifying against the served key", async () => {
    const received = join(o.dir, 'renewing-work.json')
    const tokens = join(o.dir, 'renewed-tokens.ndjson')
    writeFileSync(join(o.dir, 'renewing.sh'), RENEWING_SH)
    const agent = o.agent('worker-1', ['--exec', `bash ${join(o.dir, 'renewing.sh')} ${received} ${tokens}`])
    const {groupId} = await offerWork({allowedResources: [{resource: REPO, operations: ['read']}]})
    await until(
      () => o.events(groupId),
      (es) => es.some((e) => e.kind === 'work.submitted'),
      `work.submitted (agent stderr: ${agent.out().stderr.slice(-2000)})`,
    )
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    const first = (JSON.parse(readText(received)) as {work: WorkSpec}).work.capabilityToken!
    const renewed = readText(tokens)
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as {token: string}).token)
    expect(renewed.length).toBeGreaterThan(0)
    const served = await fetchAuthzKey({url: o.url, ca: readText(o.ca)})
    let previous = claimsOf(first)
    for (const token of renewed) {
      const claims = claimsOf(token)
      expect(claims.leaseId).toBe(previous.leaseId)
      expect(claims.expiresAt > previous.expiresAt).toBe(true)
      const verdict = await verifyToken(token, {
        publicKey: served.publicKey,
        now: claims.issuedAt,
        operation: 'read',
        resource: REPO,
      })
      expect(verdict.ok).toBe(true)
      previous = claims
    }
    // The first token is past its expiry by the end; the last one is not yet.
    expect(Date.parse(claimsOf(first).expiresAt)).toBeLessThan(Date.now())
    expect(agent.out().stderr).not.toContain(renewed[0]!)
  }, 60_000)

  it('a refused token (an exhausted budget: BUDGET_EXCEEDED) means the handler never runs: the WorkItem is blocked with the reason', async () => {
    const received = join(o.dir, 'refused-work.json')
    writeFileSync(join(o.dir, 'work.sh'), WORK_SH)
    const agent = o.agent('worker-1', ['--exec', `bash ${join(o.dir, 'work.sh')} ${received}`])
    const {groupId} = await offerWork({
      allowedResources: [{resource: REPO, operations: ['read']}],
      budget: {currency: 'EUR', financialLimit: 10, toolCallLimit: 0},
    })
    const events = await until(
      () => o.events(groupId),
      (es) => es.some((e) => e.kind === 'work.blocked'),
      `work.blocked (agent stderr: ${agent.out().stderr.slice(-2000)})`,
    )
    agent.child.kill('SIGTERM')
    expect(await agent.exited).toBe(0)
    const kinds = events.map((e) => e.kind)
    expect(kinds).toContain('work.started')
    expect(kinds).not.toContain('work.submitted')
    const blocked = events.find((e) => e.kind === 'work.blocked')!
    expect(JSON.stringify(blocked.payload)).toContain('BUDGET_EXCEEDED')
    expect(existsSync(received)).toBe(false)
    expect(agent.out().stderr).toContain('token-refused')
  })
})
