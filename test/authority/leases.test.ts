// Execution Lease renewal and expiry, ownership expiry and reassignment with late results kept as
// non-authoritative Evidence (spec §11.3, §11.5, §4 invariant 5; ACCEPTANCE F10), through the full
// ingress on SQLite and on a real throwaway PostgreSQL cluster. The authority's trusted clock is moved forward to pass lease boundaries; the
// Commands themselves are signed now, so freshness is unaffected.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {
  EXECUTION_LEASE_SECONDS,
  LATE_RESULT_RECORDED,
  OWNERSHIP_LEASE_SECONDS,
  BLOCKED_LEASE_SECONDS,
} from '../../src/authority/model/work-leases.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import {verify} from '../../src/signing/verify.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityKey,
  codeOf,
  contract,
  coord,
  developer,
  groupCommand,
  owner,
  receiptOf,
  registry,
  reviewer,
  uuid,
  devStoreAt,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {storeBackends} from '../support/store-backends.js'
import {workDriver} from '../support/work-driver.js'

const H1 = `sha256:${'a'.repeat(64)}`
const H2 = `sha256:${'b'.repeat(64)}`
const RENEW = 'ext.missionweaveprotocol.core.lease_renew'

for (const backend of storeBackends('authority-leases')) {
  describe.runIf(backend.enabled)(`Execution Leases on ${backend.name}`, () => {
    let store: Store
    let authority: Authority
    /** Offset of the authority's trusted clock from real time. */
    let skewMs = 0

    beforeAll(async () => {
      await backend.start()
      const url = await backend.fresh()
      store = await devStoreAt(url)
      authority = openAuthority({
        store,
        registry,
        authorityKey,
        policy: {rootMissionOwners: [owner.principal!.id]},
        clock: () => new Date(Date.now() + skewMs).toISOString(),
      })
    }, 120_000)
    afterAll(async () => {
      await store?.close()
      await backend.stop()
    })

    const run = (bytes: Buffer) => submit(authority, bytes)
    const code = async (bytes: Buffer) => codeOf(await run(bytes))
    const head = async (g: string) => (await store.head(g))!.sequence
    const item = async (g: string, w: string) => (await authority.current(g))!.workItems[w]!
    const secondsLater = (s: number) => s * 1000
    async function events(g: string) {
      const page = await store.read(g, 0, 1000)
      return page.events.map(
        (e) =>
          JSON.parse(Buffer.from(e.bytes).toString('utf8')) as {
            kind: string
            sequence: number
            occurredAt: string
            payload: Record<string, unknown>
          },
      )
    }
    const lastEvent = async (g: string) => (await events(g)).at(-1)!
    const kindsIn = async (g: string) => (await events(g)).map((e) => e.kind)

    const offer = (g: string, w: string, candidates: SigningKey[]) =>
      coord('work.offer', g, {
        workItemId: w,
        candidates: candidates.map((c) => c.principal!.id),
        expiresAt: new Date(Date.now() + skewMs + 60_000).toISOString(),
      })
    const accept = async (g: string, w: string, signer: SigningKey) =>
      receiptOf(
        await run(
          groupCommand(signer, 'work.accept_offer', g, {workItemId: w, offerId: (await item(g, w)).offer!.offerId}),
        ),
      )
    const start = (g: string, w: string, epoch = 1, signer: SigningKey = developer) =>
      groupCommand(signer, 'work.start', g, {workItemId: w, ownershipEpoch: epoch})
    const submitWork = (
      g: string,
      w: string,
      leaseId: string,
      epoch = 1,
      signer: SigningKey = developer,
      hashes = [H1],
    ) => groupCommand(signer, 'work.submit', g, {workItemId: w, ownershipEpoch: epoch, leaseId, artifactHashes: hashes})
    const checkpoint = (g: string, w: string, leaseId: string, epoch = 1, signer: SigningKey = developer) =>
      groupCommand(signer, 'work.checkpoint', g, {
        workItemId: w,
        ownershipEpoch: epoch,
        leaseId,
        progress: 'Sections 1-3 drafted.',
        artifactHashes: [H2],
      })
    const renew = (
      g: string,
      w: string,
      leaseId: string,
      epoch = 1,
      signer: SigningKey = developer,
      extra: Record<string, unknown> = {},
    ) =>
      groupCommand(signer, RENEW, g, {
        workItemId: w,
        ownershipEpoch: epoch,
        leaseId,
        progress: {phase: 'drafting', completedMilestones: ['outline'], nextCheckpoint: 'sections 4-6'},
        ...extra,
      })

    const work = workDriver(() => authority, {
      candidates: [developer, reviewer],
      offerExpiresAt: () => new Date(Date.now() + skewMs + 60_000).toISOString(),
    })
    /** A Group with developer and reviewer as Workers and one WorkItem owned by developer, in `target`. */
    async function at(target: 'queued' | 'active'): Promise<{g: string; w: string}> {
      skewMs = 0
      const g = await missionGroup(run, 'lease')
      return {g, w: await work.drive(g, target)}
    }

    describe('Execution Lease expiry and renewal (§11.3)', () => {
      it('[+cmd:work.start] [+evt:work.started] work.start issues a lease with an expiry that matches lease.schema.json; acceptance sets the start-by deadline', async () => {
        const {g, w} = await at('queued')
        const accepted = (await events(g)).find((e) => e.kind === 'work.offer.accepted')!
        const owner1 = accepted.payload.owner as {startBy: string; grantedAt: string}
        expect(Date.parse(owner1.startBy) - Date.parse(owner1.grantedAt)).toBe(OWNERSHIP_LEASE_SECONDS * 1000)
        expect((await item(g, w)).owner!.leaseExpiresAt).toBe(owner1.startBy)
        receiptOf(await run(start(g, w)))
        const started = await lastEvent(g)
        const lease = started.payload.lease as Record<string, unknown>
        expect(schemaCatalog().validate('lease', lease).valid).toBe(true)
        expect(Date.parse(lease.expiresAt as string) - Date.parse(lease.issuedAt as string)).toBe(
          EXECUTION_LEASE_SECONDS * 1000,
        )
        expect((await item(g, w)).lease).toMatchObject({
          leaseId: lease.leaseId,
          state: 'active',
          expiresAt: lease.expiresAt,
          renewalCount: 0,
        })
      })

      it('[+cmd:ext.missionweaveprotocol.core.lease_renew] [+evt:work.progressed] the holder renews its lease with structured progress; the new boundary lets it submit after the old one', async () => {
        const {g, w} = await at('active')
        const before = await item(g, w)
        const leaseId = before.lease!.leaseId
        const firstExpiry = before.lease!.expiresAt!
        skewMs = secondsLater(EXECUTION_LEASE_SECONDS - 60)
        const rev = (await authority.current(g))!.revision
        const r = receiptOf(await run(renew(g, w, leaseId, 1, developer, {leaseSeconds: 900})))
        expect(r.aggregateRevision).toBe(rev + 1)
        const ev = await lastEvent(g)
        expect(ev.kind).toBe('work.progressed')
        expect(ev.payload).toMatchObject({
          workItemId: w,
          revision: before.revision + 1,
          leaseId,
          progress: {phase: 'drafting', completedMilestones: ['outline'], nextCheckpoint: 'sections 4-6'},
        })
        const renewed = ev.payload.lease as {expiresAt: string; renewalCount: number; lastRenewedAt: string}
        expect(renewed.renewalCount).toBe(1)
        expect(renewed.lastRenewedAt).toBe(ev.occurredAt)
        expect(Date.parse(renewed.expiresAt) - Date.parse(ev.occurredAt)).toBe(900_000)
        expect(await item(g, w)).toMatchObject({
          state: 'active',
          revision: before.revision + 1,
          lease: {
            leaseId,
            state: 'active',
            expiresAt: renewed.expiresAt,
            renewalCount: 1,
            lastRenewedAt: renewed.lastRenewedAt,
          },
        })
        // The same lease, now past its first boundary but inside the renewed one, still submits.
        skewMs = secondsLater(EXECUTION_LEASE_SECONDS + 120)
        expect(Date.parse(new Date(Date.now() + skewMs).toISOString())).toBeGreaterThan(Date.parse(firstExpiry))
        receiptOf(await run(submitWork(g, w, leaseId)))
        expect((await item(g, w)).state).toBe('submitted')
        // The renewed lease record still matches lease.schema.json once renewed (lastRenewedAt required).
        const full = {
          ...((await events(g)).find((e) => e.kind === 'work.started')!.payload.lease as Record<string, unknown>),
          ...renewed,
        }
        expect(schemaCatalog().validate('lease', full).valid).toBe(true)
      })

      it('[-cmd:ext.missionweaveprotocol.core.lease_renew] [-evt:work.progressed] renewing an expired, foreign, released or older lease is refused and appends nothing', async () => {
        const {g, w} = await at('active')
        const leaseId = (await item(g, w)).lease!.leaseId
        const h = await head(g)
        expect(await code(renew(g, w, uuid(9)))).toBe('WORK_LEASE_EXPIRED') // not the current Lease ID
        expect(await code(renew(g, w, leaseId, 1, reviewer))).toBe('AUTH_FORBIDDEN') // a foreign lease
        expect(await code(renew(g, w, leaseId, 2))).toBe('AUTH_FORBIDDEN') // an epoch never issued
        expect(
          await code(
            groupCommand(owner, RENEW, g, {workItemId: w, ownershipEpoch: 1, leaseId, progress: {phase: 'x'}}),
          ),
        ).toBe('AUTH_FORBIDDEN')
        expect(await code(renew(g, w, leaseId, 1, developer, {progress: {percent: 50}}))).toBe(
          'SCHEMA_VALIDATION_FAILED',
        ) // §11.4: structured, no percentages
        expect(await code(renew(g, w, leaseId, 1, developer, {leaseSeconds: 86_400}))).toBe('SCHEMA_VALIDATION_FAILED')
        expect(
          await code(
            groupCommand(
              developer,
              RENEW,
              g,
              {workItemId: w, ownershipEpoch: 1, leaseId, progress: {phase: 'x'}},
              {expectedRevision: 1},
            ),
          ),
        ).toBe('REVISION_CONFLICT')
        expect(await head(g)).toBe(h)
        // Expired: an unrenewed lease is not revived.
        skewMs = secondsLater(EXECUTION_LEASE_SECONDS + 1)
        expect(await code(renew(g, w, leaseId))).toBe('WORK_LEASE_EXPIRED')
        expect(await head(g)).toBe(h)
        // Released by a checkpoint: the old Lease ID renews nothing.
        const c = await at('active')
        const cLease = (await item(c.g, c.w)).lease!.leaseId
        receiptOf(await run(checkpoint(c.g, c.w, cLease)))
        const hc = await head(c.g)
        expect(await code(renew(c.g, c.w, cLease))).toBe('WORK_LEASE_EXPIRED')
        expect(await head(c.g)).toBe(hc)
        expect(await kindsIn(g)).not.toContain('work.progressed')
        expect(await kindsIn(c.g)).not.toContain('work.progressed')
      })

      it('[-cmd:work.submit] [-cmd:work.checkpoint] [-cmd:work.block] a submit, checkpoint or block after the lease expired is WORK_LEASE_EXPIRED', async () => {
        const {g, w} = await at('active')
        const leaseId = (await item(g, w)).lease!.leaseId
        skewMs = secondsLater(EXECUTION_LEASE_SECONDS)
        const h = await head(g)
        expect(await code(submitWork(g, w, leaseId))).toBe('WORK_LEASE_EXPIRED')
        expect(await code(checkpoint(g, w, leaseId))).toBe('WORK_LEASE_EXPIRED')
        expect(
          await code(
            groupCommand(developer, 'work.block', g, {
              workItemId: w,
              ownershipEpoch: 1,
              leaseId,
              requiredResolution: 'Need access.',
            }),
          ),
        ).toBe('WORK_LEASE_EXPIRED')
        expect(await head(g)).toBe(h)
        expect((await item(g, w)).state).toBe('active')
      })
    })

    describe('reassignment after expiry (§11.5, F10)', () => {
      it('[+cmd:work.offer] [+evt:work.offer.created] [+row:t10.2:no_live_owner->offered:work.offer] [-row:t10.2:no_live_owner->offered:work.offer] a live owner blocks re-offer; after lease expiry the offer fences it and the new owner resumes from the latest checkpoint under a higher Ownership Epoch', async () => {
        const {g, w} = await at('active')
        // A durable checkpoint, then a second lease under the same ownership.
        receiptOf(await run(checkpoint(g, w, (await item(g, w)).lease!.leaseId)))
        const saved = (await item(g, w)).checkpoint!
        receiptOf(await run(start(g, w)))
        const oldLease = (await item(g, w)).lease!.leaseId
        const h = await head(g)
        expect(await code(offer(g, w, [reviewer]))).toBe('INVALID_STATE_TRANSITION') // owner still live
        expect(await head(g)).toBe(h)

        skewMs = secondsLater(EXECUTION_LEASE_SECONDS + 5)
        receiptOf(await run(offer(g, w, [reviewer])))
        const offered = await lastEvent(g)
        expect(offered).toMatchObject({
          kind: 'work.offer.created',
          payload: {
            workItemId: w,
            fencedOwnership: {
              agentId: developer.principal!.id,
              ownershipEpoch: 1,
              leaseId: oldLease,
              reason: 'execution lease expired',
            },
          },
        })
        const fenced = await item(g, w)
        expect(fenced).toMatchObject({
          state: 'offered',
          owner: null,
          ownershipEpoch: 1,
          lease: {leaseId: oldLease, state: 'expired'},
        })
        expect(fenced.endedOwnerships).toEqual([
          {agentId: developer.principal!.id, ownershipEpoch: 1, leaseId: oldLease, reason: 'execution lease expired'},
        ])

        await accept(g, w, reviewer)
        expect(await item(g, w)).toMatchObject({
          state: 'queued',
          ownershipEpoch: 2,
          owner: {agentId: reviewer.principal!.id, ownershipEpoch: 2},
        })
        receiptOf(await run(start(g, w, 2, reviewer)))
        const started = await lastEvent(g)
        expect(started).toMatchObject({
          kind: 'work.started',
          payload: {lease: {holderAgentId: reviewer.principal!.id, ownershipEpoch: 2}, resumeFrom: saved},
        })
      })

      it("[-cmd:work.submit] [-evt:work.submitted] [-evt:work.result.accepted] the old owner's late result is answered WORK_STALE_OWNERSHIP, kept once as non-authoritative Evidence, and never completes the WorkItem", async () => {
        const {g, w} = await at('active')
        const oldLease = (await item(g, w)).lease!.leaseId
        skewMs = secondsLater(EXECUTION_LEASE_SECONDS + 5)
        receiptOf(await run(offer(g, w, [reviewer])))

        // Late result before anyone re-accepted: the ended ownership is fenced; the result is kept.
        const late = submitWork(g, w, oldLease, 1, developer, [H2])
        const rev = (await authority.current(g))!.revision
        expect(await code(late)).toBe('WORK_STALE_OWNERSHIP')
        const recorded = await lastEvent(g)
        expect(recorded.kind).toBe(LATE_RESULT_RECORDED)
        expect(recorded.payload).toMatchObject({
          workItemId: w,
          authoritative: false,
          agentId: developer.principal!.id,
          ownershipEpoch: 1,
          leaseId: oldLease,
          artifactHashes: [H2],
          rejectedWith: 'WORK_STALE_OWNERSHIP',
        })
        const s = (await authority.current(g))!
        expect(s.revision).toBe(rev) // non-authoritative: no structured revision
        expect(s.workItems[w]).toMatchObject({state: 'offered', submission: null, owner: null})
        expect(s.workItems[w]!.lateResults).toEqual([
          {
            agentId: developer.principal!.id,
            ownershipEpoch: 1,
            leaseId: oldLease,
            artifactHashes: [H2],
            recordedAt: recorded.occurredAt,
          },
        ])
        // The Event is signed by the authority like every other Event.
        const page = await store.read(g, recorded.sequence - 1, 1)
        expect(verify('event', page.events[0]!.bytes, registry).ok).toBe(true)

        // The retry of the same bytes gets the same error and appends nothing; a second late result
        // of the same ownership, or one naming another lease, is refused without a record.
        const h = await head(g)
        expect(await code(late)).toBe('WORK_STALE_OWNERSHIP')
        expect(await code(submitWork(g, w, oldLease, 1, developer, [H1]))).toBe('WORK_STALE_OWNERSHIP')
        expect(await head(g)).toBe(h)

        // Reassignment: the new owner's result is the only one that can complete the WorkItem.
        await accept(g, w, reviewer)
        receiptOf(await run(start(g, w, 2, reviewer)))
        expect(await code(submitWork(g, w, oldLease, 1, developer, [H2]))).toBe('WORK_STALE_OWNERSHIP')
        expect(await code(coord('work.accept_result', g, {workItemId: w}))).toBe('INVALID_STATE_TRANSITION')
        expect((await item(g, w)).state).toBe('active')
        receiptOf(await run(submitWork(g, w, (await item(g, w)).lease!.leaseId, 2, reviewer, [H1])))
        receiptOf(await run(coord('work.accept_result', g, {workItemId: w})))
        const done = await item(g, w)
        expect(done).toMatchObject({state: 'verified', submission: {artifactHashes: [H1]}})
        const submitted = (await events(g)).filter((e) => e.kind === 'work.submitted')
        expect(submitted.map((e) => e.payload.artifactHashes)).toEqual([[H1]])
        expect((await events(g)).filter((e) => e.kind === LATE_RESULT_RECORDED)).toHaveLength(1)
      })

      it('[+cmd:work.offer] a missed start deadline fences the queued owner: its work.start is WORK_LEASE_EXPIRED, the re-offer ends its ownership, its old epoch is stale', async () => {
        const {g, w} = await at('queued')
        skewMs = secondsLater(OWNERSHIP_LEASE_SECONDS)
        const h = await head(g)
        expect(await code(start(g, w))).toBe('WORK_LEASE_EXPIRED')
        expect(await head(g)).toBe(h)
        receiptOf(await run(offer(g, w, [reviewer])))
        expect((await lastEvent(g)).payload.fencedOwnership).toEqual({
          agentId: developer.principal!.id,
          ownershipEpoch: 1,
          leaseId: null,
          reason: 'start deadline missed',
        })
        expect(await code(start(g, w))).toBe('WORK_STALE_OWNERSHIP')
        await accept(g, w, reviewer)
        expect(await item(g, w)).toMatchObject({
          state: 'queued',
          ownershipEpoch: 2,
          owner: {agentId: reviewer.principal!.id},
        })
        expect(await code(start(g, w))).toBe('WORK_STALE_OWNERSHIP')
        receiptOf(await run(start(g, w, 2, reviewer)))
      })

      it('[+cmd:work.unblock] [+evt:work.unblocked] [+row:t10.2:blocked->queued_or_open:work.unblock] unblocking after the blocked lease expired fences the owner and opens the WorkItem for re-offer; before, it re-enters the queue under a fresh ownership lease', async () => {
        const {g, w} = await at('active')
        const block = (leaseId: string) =>
          groupCommand(developer, 'work.block', g, {
            workItemId: w,
            ownershipEpoch: 1,
            leaseId,
            requiredResolution: 'Need the changelog export.',
          })
        receiptOf(await run(block((await item(g, w)).lease!.leaseId)))
        expect((await item(g, w)).owner!.leaseExpiresAt).toBe((await lastEvent(g)).payload.blockedLeaseExpiresAt)
        receiptOf(await run(coord('work.unblock', g, {workItemId: w})))
        expect(await lastEvent(g)).toMatchObject({kind: 'work.unblocked', payload: {to: 'queued'}})
        expect(await item(g, w)).toMatchObject({
          state: 'queued',
          owner: {
            agentId: developer.principal!.id,
            leaseExpiresAt: (await lastEvent(g)).payload.ownershipLeaseExpiresAt,
          },
        })
        receiptOf(await run(start(g, w)))
        receiptOf(await run(block((await item(g, w)).lease!.leaseId)))
        skewMs = secondsLater(BLOCKED_LEASE_SECONDS + 1)
        receiptOf(await run(coord('work.unblock', g, {workItemId: w})))
        expect(await lastEvent(g)).toMatchObject({
          kind: 'work.unblocked',
          payload: {
            to: 'open',
            fencedOwnership: {agentId: developer.principal!.id, ownershipEpoch: 1, reason: 'blocked lease expired'},
          },
        })
        expect(await item(g, w)).toMatchObject({state: 'open', owner: null})
        expect(await code(start(g, w))).toBe('WORK_STALE_OWNERSHIP')
      })

      it('a fresh authority replays leases, fencing and late results to the live state', async () => {
        const {g, w} = await at('active')
        receiptOf(await run(renew(g, w, (await item(g, w)).lease!.leaseId)))
        const oldLease = (await item(g, w)).lease!.leaseId
        skewMs = secondsLater(2 * EXECUTION_LEASE_SECONDS)
        receiptOf(await run(offer(g, w, [reviewer])))
        expect(await code(submitWork(g, w, oldLease))).toBe('WORK_STALE_OWNERSHIP')
        const fresh = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}})
        expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash((await authority.current(g))!))
        expect((await fresh.current(g))!.workItems[w]!.lateResults).toHaveLength(1)
      })
    })

    describe('a terminal Mission ends its unfinished WorkItems (§10.2)', () => {
      it('[+row:t10.2:unfinished->failed_or_cancelled:parent_mission_terminal] [-row:t10.2:unfinished->failed_or_cancelled:parent_mission_terminal] cancellation cancels and failure fails every unfinished WorkItem, revoking its lease; finished WorkItems keep their state', async () => {
        const {g, w} = await at('active')
        const leaseId = (await item(g, w)).lease!.leaseId
        const open = uuid(7)
        receiptOf(await run(coord('work.authorize', g, {workItemId: open, contract: contract()})))
        const done = uuid(7)
        receiptOf(await run(coord('work.authorize', g, {workItemId: done, contract: contract()})))
        receiptOf(await run(offer(g, done, [reviewer])))
        await accept(g, done, reviewer)
        receiptOf(await run(start(g, done, 1, reviewer)))
        receiptOf(await run(submitWork(g, done, (await item(g, done)).lease!.leaseId, 1, reviewer)))
        receiptOf(await run(coord('work.accept_result', g, {workItemId: done})))
        const verifiedBefore = await item(g, done)

        receiptOf(await run(groupCommand(owner, 'mission.cancel', g, {reason: 'Superseded.'})))
        expect(await item(g, w)).toMatchObject({state: 'cancelled', lease: {leaseId, state: 'revoked'}})
        expect((await item(g, open)).state).toBe('cancelled')
        expect(await item(g, done)).toEqual(verifiedBefore) // negative: a finished WorkItem is untouched
        expect(await code(submitWork(g, w, leaseId))).toBe('INVALID_STATE_TRANSITION')

        const t = await at('active')
        const tLease = (await item(t.g, t.w)).lease!.leaseId
        receiptOf(await run(coord('mission.terminate', t.g, {reason: 'Budget withdrawn.'})))
        expect(await item(t.g, t.w)).toMatchObject({
          state: 'failed',
          owner: null,
          lease: {leaseId: tLease, state: 'revoked'},
          failure: {reason: 'Budget withdrawn.', evidenceHashes: []},
        })
        const fresh = openAuthority({store, registry, authorityKey, policy: {rootMissionOwners: [owner.principal!.id]}})
        for (const x of [g, t.g])
          expect(canonicalHash((await fresh.current(x))!)).toBe(canonicalHash((await authority.current(x))!))
      })
    })
  })
}
