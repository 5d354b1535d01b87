// Group archival (spec §7.4, §15.2): ext.missionweaveprotocol.core.group_archive from an
// Organization service permitted by policy carries a signed final snapshot; the authority checks
// its signature, signer, Event IDs, policy-log linkage and state hash, appends
// group.snapshot.created and group.archived in one append, and the archived Group accepts nothing
// new (tombstone). Runs on SQLite and on a real throwaway PostgreSQL cluster.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {buildGroupSnapshot, eventIdsThrough, latestSnapshot} from '../../src/authority/ingress/snapshot.js'
import {groupStateHash} from '../../src/authority/model/state-hash.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {sign} from '../../src/signing/sign.js'
import {verify} from '../../src/signing/verify.js'
import type {Store} from '../../src/store/index.js'
import {
  authorityKey,
  authorityOn,
  codeOf,
  contract,
  coord,
  createCommand,
  developer,
  groupCommand,
  newGroup,
  orgService,
  owner,
  post,
  receiptOf,
  uuid,
  devStoreAt,
} from '../support/authority-helpers.js'
import {missionGroup} from '../support/groups.js'
import {storeBackends} from '../support/store-backends.js'

const ARCHIVE = 'ext.missionweaveprotocol.core.group_archive'

for (const backend of storeBackends('authority-archive')) {
  describe.runIf(backend.enabled)(`Group archival on ${backend.name}`, () => {
    let store: Store
    let authority: Authority

    beforeAll(async () => {
      await backend.start()
      const url = await backend.fresh()
      store = await devStoreAt(url)
      authority = authorityOn(store, {archivers: [orgService.principal!.id]})
    }, 120_000)
    afterAll(async () => {
      await store?.close()
      await backend.stop()
    })

    const run = (bytes: Buffer) => submit(authority, bytes)
    const code = async (bytes: Buffer) => codeOf(await run(bytes))
    const head = async (g: string) => (await store.head(g))!.sequence
    async function events(g: string) {
      const page = await store.read(g, 0, 1000)
      return page.events.map((e) => ({
        bytes: e.bytes,
        doc: JSON.parse(Buffer.from(e.bytes).toString('utf8')) as {
          kind: string
          sequence: number
          occurredAt: string
          payload: Record<string, unknown>
        },
      }))
    }
    const policyLog = () => [
      {
        entryId: uuid(11),
        decision: 'Archive finished Missions after review',
        actor: orgService.principal!,
        occurredAt: new Date().toISOString(),
        details: {policy: 'retention-v1'},
      },
    ]
    const snapshotOf = (g: string, key: SigningKey = orgService) =>
      buildGroupSnapshot(authority, g, key, {snapshotId: uuid(12), policyLog: policyLog()})
    const archive = (
      g: string,
      snapshot: unknown,
      signer: SigningKey = orgService,
      fields: Record<string, unknown> = {},
    ) => groupCommand(signer, ARCHIVE, g, {snapshot}, fields)

    /** A Group with a WorkItem and a Message whose Mission was cancelled by its owner. */
    async function finished(): Promise<string> {
      const g = await missionGroup(run, 'archive', {members: [developer]})
      receiptOf(await run(coord('work.authorize', g, {workItemId: uuid(7), contract: contract()})))
      receiptOf(await run(post(owner, g)))
      receiptOf(await run(groupCommand(owner, 'mission.cancel', g, {reason: 'Superseded by the 0.2 plan.'})))
      return g
    }

    describe('ext.missionweaveprotocol.core.group_archive (§7.4)', () => {
      it('[+cmd:ext.missionweaveprotocol.core.group_archive] [+evt:group.snapshot.created] [+evt:group.archived] a permitted service archives a finished Group: signed snapshot and tombstone in one append; nothing new is accepted afterwards', async () => {
        const g = await finished()
        const before = (await authority.current(g))!
        expect(await latestSnapshot(authority, g)).toBeNull()
        const snapshot = await snapshotOf(g)
        const r = receiptOf(await run(archive(g, snapshot)))
        // One atomic append of exactly the two archival Events.
        expect(r.eventIds).toHaveLength(2)
        expect([r.firstSequence, r.lastSequence]).toEqual([before.sequence + 1, before.sequence + 2])
        const [created, archived] = (await events(g)).slice(-2)
        expect(created!.doc.kind).toBe('group.snapshot.created')
        expect(archived!.doc.kind).toBe('group.archived')
        for (const e of [created!, archived!])
          expect(verify('event', e.bytes, (authority as Authority).registry).ok).toBe(true)
        // The carried snapshot is the signed document itself, bound to the head and the state.
        const carried = created!.doc.payload.snapshot as Record<string, unknown>
        expect(carried).toEqual(snapshot)
        const checked = verify('group-snapshot', Buffer.from(JSON.stringify(carried), 'utf8'), authority.registry)
        if (!checked.ok) throw new Error('snapshot does not verify')
        expect(checked.principal).toEqual(orgService.principal)
        expect(created!.doc.payload.snapshotHash).toBe(checked.signingHash)
        expect(carried).toMatchObject({
          groupId: g,
          throughSequence: before.sequence,
          stateHash: groupStateHash(before),
          eventIds: await eventIdsThrough(authority, g, before.sequence),
        })
        expect(canonicalHash(created!.doc.payload.state)).toBe(carried.stateHash)
        expect(archived!.doc.payload).toEqual({
          snapshotId: carried.snapshotId,
          snapshotHash: checked.signingHash,
          throughSequence: before.sequence,
          archivedAt: archived!.doc.occurredAt,
        })

        // The library reference the WebSocket server uses for CURSOR_TOO_OLD.
        const ref = (await latestSnapshot(authority, g))!
        expect(ref).toMatchObject({
          groupId: g,
          snapshotId: carried.snapshotId,
          snapshotHash: checked.signingHash,
          throughSequence: before.sequence,
          stateHash: carried.stateHash,
          snapshotEventSequence: created!.doc.sequence,
          archivedAt: archived!.doc.occurredAt,
        })
        expect(ref.snapshot).toEqual(snapshot)
        expect(canonicalHash(ref.state)).toBe(canonicalHash(before))

        // Tombstone: every later Command is refused; the history stays complete and readable.
        const h = await head(g)
        expect(await code(post(owner, g))).toBe('INVALID_STATE_TRANSITION')
        expect(await code(archive(g, await snapshotOf(g)))).toBe('INVALID_STATE_TRANSITION')
        expect(
          await code(groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'reviewer'})),
        ).toBe('INVALID_STATE_TRANSITION')
        expect(await head(g)).toBe(h)
        expect((await events(g)).map((e) => e.doc.sequence)).toEqual(Array.from({length: h}, (_, i) => i + 1))

        // Replay: a fresh authority folds to the same archived state.
        const fresh = authorityOn(store, {archivers: [orgService.principal!.id]})
        expect(canonicalHash((await fresh.current(g))!)).toBe(canonicalHash((await authority.current(g))!))
        expect((await latestSnapshot(fresh, g))!.snapshotHash).toBe(checked.signingHash)
      })

      it('[-cmd:ext.missionweaveprotocol.core.group_archive] [-evt:group.snapshot.created] [-evt:group.archived] archival is refused for unpermitted actors, unfinished Missions, stale, forged, foreign or mis-hashed snapshots, and appends nothing', async () => {
        // An active Mission is not archived.
        const active = newGroup('archive')
        receiptOf(await run(createCommand(active)))
        expect(await code(archive(active, await snapshotOf(active)))).toBe('INVALID_STATE_TRANSITION')

        // Stale: built before the Mission ended, so it no longer covers the head.
        const g = newGroup('archive')
        receiptOf(await run(createCommand(g)))
        const stale = await snapshotOf(g)
        receiptOf(await run(groupCommand(owner, 'mission.cancel', g, {reason: 'Dropped.'})))
        const h = await head(g)
        expect(await code(archive(g, stale))).toBe('REVISION_CONFLICT')

        const good = await snapshotOf(g)
        // Policy: only listed archiver services; humans and Agents never.
        const unpermitted = authorityOn(store, {})
        expect(codeOf(await submit(unpermitted, archive(g, good)))).toBe('AUTH_FORBIDDEN')
        expect(await code(groupCommand(owner, ARCHIVE, g, {snapshot: good}))).toBe('AUTH_FORBIDDEN')
        // The snapshot must be signed by the archiving service itself.
        expect(await code(archive(g, await snapshotOf(g, authorityKey)))).toBe('AUTH_FORBIDDEN')
        // A broken signature, a wrong state hash, wrong Event IDs, another Group.
        const {signature: _s, ...unsigned} = good as Record<string, unknown>
        expect(await code(archive(g, {...good, stateHash: `sha256:${'0'.repeat(64)}`}))).toBe('INVALID_COMMAND')
        const resign = (changes: Record<string, unknown>) =>
          sign('group-snapshot', {...unsigned, snapshotId: uuid(12), ...changes}, orgService).document
        expect(await code(archive(g, resign({stateHash: `sha256:${'0'.repeat(64)}`})))).toBe('INVALID_COMMAND')
        expect(
          await code(archive(g, resign({eventIds: [...(unsigned.eventIds as string[]).slice(0, -1), uuid(13)]}))),
        ).toBe('INVALID_COMMAND')
        expect(await code(archive(g, resign({groupId: active})))).toBe('INVALID_COMMAND')
        expect(await code(archive(g, {...good, policyLog: []}))).toBe('INVALID_COMMAND') // §15.2: policy-log linkage required (the signer cannot even sign this)
        expect(await code(archive(g, good, orgService, {expectedRevision: 1}))).toBe('REVISION_CONFLICT')
        expect(await code(groupCommand(orgService, ARCHIVE, g, {}))).toBe('SCHEMA_VALIDATION_FAILED')
        expect(await head(g)).toBe(h)
        const kinds = (await events(g)).map((e) => e.doc.kind).concat((await events(active)).map((e) => e.doc.kind))
        expect(kinds).not.toContain('group.snapshot.created')
        expect(kinds).not.toContain('group.archived')
        expect((await authority.current(g))!.archive).toBeUndefined()
        // The valid snapshot is still accepted afterwards: nothing above changed the Group.
        receiptOf(await run(archive(g, good)))
      })
    })

    describe('policy-log linkage (§15.2)', () => {
      it('[+cmd:ext.missionweaveprotocol.core.group_archive] [-cmd:ext.missionweaveprotocol.core.group_archive] the snapshot must carry every Policy Log row of the Group; one that leaves a Cooperation Override out is refused', async () => {
        // Cooperation Overrides need a configured §20 limit to override.
        const limited = authorityOn(store, {
          archivers: [orgService.principal!.id],
          limits: {messageRate: {soft: 50, hard: 100, windowMinutes: 10}},
        })
        const g = newGroup('archive')
        receiptOf(await run(createCommand(g)))
        receiptOf(await run(groupCommand(owner, 'membership.change', g, {member: developer.principal, role: 'worker'})))
        receiptOf(
          await submit(
            limited,
            groupCommand(owner, 'policy.grant_cooperation_override', g, {
              grantId: uuid(40),
              policy: 'message-rate',
              beneficiary: developer.principal,
              targetKind: 'message.post',
              targetActionId: uuid(41),
              reason: 'Incident bridge: the developer must keep posting status.',
              expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
            }),
          ),
        )
        receiptOf(await run(groupCommand(owner, 'mission.cancel', g, {reason: 'Dropped.'})))
        const rows = await store.policyLog(g)
        expect(rows).toHaveLength(1)
        const snapshot = await snapshotOf(g)
        const entries = snapshot.policyLog as {entryId: string; details: Record<string, unknown>}[]
        expect(entries[0]).toMatchObject({
          entryId: rows[0]!.eventId,
          details: {grantId: rows[0]!.grantId, action: 'issued', sequence: rows[0]!.sequence},
        })
        const {signature: _s, ...unsigned} = snapshot as Record<string, unknown>
        const withoutLinkage = sign('group-snapshot', {...unsigned, policyLog: entries.slice(1)}, orgService).document
        const h = await head(g)
        expect(await code(archive(g, withoutLinkage))).toBe('INVALID_COMMAND')
        expect(await head(g)).toBe(h)
        receiptOf(await run(archive(g, snapshot)))
        expect((await authority.current(g))!.archive).toMatchObject({throughSequence: h})
      })
    })
  })
}
