// ACCEPTANCE H7 and H12 (spec §15.1 atomic acceptance, §15.3 compare-and-set) where they concern
// the store: on a real SQLite file AND a real throwaway PostgreSQL cluster. A real database
// trigger fails the second row of a two-Event acceptance; two authorities sharing one store race
// on the same aggregate without expectedRevision.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {schemaCatalog} from '../../src/schema/catalog.js'
import type {Store} from '../../src/store/index.js'
import {
  approval,
  authorityKey,
  codeOf,
  contract,
  coord,
  createCommand,
  developer,
  groupCommand,
  newGroup,
  owner,
  receiptOf,
  registry,
  devStoreAt,
} from '../support/authority-helpers.js'
import {type RawDb, storeBackends} from '../support/store-backends.js'

const H1 = `sha256:${'7'.repeat(64)}`
const RENEW = 'ext.missionweaveprotocol.core.lease_renew'
const policy = {rootMissionOwners: [owner.principal!.id]}

/** A trigger that aborts inserting `kind` for Group `g`, in each backend's dialect. */
const failingTrigger = (name: 'sqlite' | 'postgres', g: string, kind: string) =>
  name === 'sqlite'
    ? `CREATE TRIGGER acceptance_h7 BEFORE INSERT ON group_events WHEN NEW.kind = '${kind}' AND NEW.group_id = '${g}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END;`
    : `CREATE FUNCTION acceptance_h7() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$;
       CREATE TRIGGER acceptance_h7 BEFORE INSERT ON group_events FOR EACH ROW WHEN (NEW.kind = '${kind}' AND NEW.group_id = '${g}') EXECUTE FUNCTION acceptance_h7();`
const dropTrigger = (name: 'sqlite' | 'postgres') =>
  name === 'sqlite'
    ? 'DROP TRIGGER acceptance_h7;'
    : 'DROP TRIGGER acceptance_h7 ON group_events; DROP FUNCTION acceptance_h7();'

for (const backend of storeBackends('acceptance-authority-h-stores')) {
  describe.runIf(backend.enabled)(`H7/H12 on ${backend.name}`, () => {
    let url: string
    let store: Store
    let raw: RawDb
    let authority: Authority

    beforeAll(async () => {
      await backend.start()
      url = await backend.fresh()
      store = await devStoreAt(url)
      raw = backend.raw(url)
      authority = openAuthority({store, registry, authorityKey, policy})
    }, 120_000)
    afterAll(async () => {
      await raw?.close()
      await store?.close()
      await backend.stop()
    })

    it('H7 a database failure on the second Event of mission.create leaves no Event, receipt or Group; the unchanged retry then commits both', async () => {
      const g = newGroup('acc-h7')
      const bytes = createCommand(g)
      const {actionId} = JSON.parse(bytes.toString('utf8')) as {actionId: string}
      await raw.exec(failingTrigger(backend.name, g, 'mission.coordinator.assigned'))
      try {
        const r = await submit(authority, bytes)
        expect(codeOf(r)).toBe('INTERNAL_ERROR')
        if (!('error' in r)) throw new Error('accepted')
        expect(r.error.retryable).toBe(true) // L1: nothing was accepted, the unchanged retry is safe
        expect(schemaCatalog().validate('error', r.error)).toEqual({valid: true})
        expect(await store.head(g)).toBeNull()
        expect(await store.receipt(owner.principal!.id, actionId)).toBeNull()
        expect((await store.read(g, 0, 10)).events).toEqual([])
        expect(await openAuthority({store, registry, authorityKey, policy}).current(g)).toBeNull()
      } finally {
        await raw.exec(dropTrigger(backend.name))
      }
      const receipt = receiptOf(await submit(authority, bytes))
      expect([receipt.firstSequence, receipt.lastSequence]).toEqual([1, 2])
      expect((await store.read(g, 0, 10)).events.map((e) => e.kind)).toEqual([
        'mission.created',
        'mission.coordinator.assigned',
      ])
    })

    it('H12 [+cmd:mission.approve] [-cmd:mission.approve] two authorities approve one submission at once without expectedRevision: one Approval wins, the other is INVALID_STATE_TRANSITION', async () => {
      const g = newGroup('acc-h12')
      receiptOf(await submit(authority, createCommand(g)))
      receiptOf(await submit(authority, coord('mission.submit_for_approval', g, {artifactHashes: [H1]})))
      const revision = (await authority.current(g))!.mission.submission!.missionRevision
      const second = openAuthority({store, registry, authorityKey, policy})
      const results = await Promise.all([
        submit(authority, groupCommand(owner, 'mission.approve', g, {approval: approval(g, revision, [H1])})),
        submit(second, groupCommand(owner, 'mission.approve', g, {approval: approval(g, revision, [H1])})),
      ])
      expect(results.map(codeOf).sort()).toEqual(['INVALID_STATE_TRANSITION', 'ok'])
      expect((await store.read(g, 0, 100)).events.filter((e) => e.kind === 'mission.approved')).toHaveLength(1)
    })

    it('H12 [+cmd:membership.change] two authorities change one Membership at once: two distinct, consecutive epochs', async () => {
      const g = newGroup('acc-h12m')
      receiptOf(await submit(authority, createCommand(g)))
      receiptOf(
        await submit(
          authority,
          groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'}),
        ),
      )
      const second = openAuthority({store, registry, authorityKey, policy})
      const results = await Promise.all([
        submit(authority, groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'reviewer'})),
        submit(second, groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'observer'})),
      ])
      for (const r of results) receiptOf(r)
      const fresh = openAuthority({store, registry, authorityKey, policy})
      expect((await fresh.current(g))!.members[developer.principal!.id]!.membershipEpoch).toBe(3)
      expect((await store.read(g, 0, 100)).events.filter((e) => e.kind === 'membership.changed')).toHaveLength(3)
    })

    it('H12 [+cmd:ext.missionweaveprotocol.core.lease_renew] two authorities renew one Execution Lease at once: both renewals are serialized, none is lost', async () => {
      const g = newGroup('acc-h12l')
      receiptOf(await submit(authority, createCommand(g)))
      receiptOf(
        await submit(
          authority,
          groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'}),
        ),
      )
      const w = 'urn:mwp:test:work:h12'
      receiptOf(await submit(authority, coord('work.authorize', g, {workItemId: w, contract: contract()})))
      receiptOf(
        await submit(
          authority,
          coord('work.offer', g, {
            workItemId: w,
            candidates: [developer.principal!.id],
            expiresAt: new Date(Date.now() + 60_000).toISOString(),
          }),
        ),
      )
      receiptOf(
        await submit(
          authority,
          groupCommand(developer, 'work.accept_offer', g, {
            workItemId: w,
            offerId: (await authority.current(g))!.workItems[w]!.offer!.offerId,
          }),
        ),
      )
      receiptOf(await submit(authority, groupCommand(developer, 'work.start', g, {workItemId: w, ownershipEpoch: 1})))
      const leaseId = (await authority.current(g))!.workItems[w]!.lease!.leaseId
      const renew = (phase: string) =>
        groupCommand(developer, RENEW, g, {
          workItemId: w,
          ownershipEpoch: 1,
          leaseId,
          progress: {phase, completedMilestones: [], nextCheckpoint: 'review'},
        })
      const second = openAuthority({store, registry, authorityKey, policy})
      const results = await Promise.all([submit(authority, renew('drafting')), submit(second, renew('editing'))])
      for (const r of results) receiptOf(r)
      const fresh = openAuthority({store, registry, authorityKey, policy})
      expect((await fresh.current(g))!.workItems[w]!.lease).toMatchObject({leaseId, state: 'active', renewalCount: 2})
    })
  })
}
