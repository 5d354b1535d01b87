// Pipelined appends of one Group (src/authority/ingress/append-pipeline.ts, ingress/command.ts step 9) on a real
// SQLite file and a real throwaway PostgreSQL: many Commands of one Group in flight at once are
// decided one on top of the other and committed together, each answered only after its COMMIT;
// a failing append takes down only itself (the Commands decided on it are decided again), and
// another authority appending to the same store in between never lets a Command commit on
// Events that were not appended. The live state always equals a replay of the stored log.

import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Authority, openAuthority} from '../../src/authority/authority.js'
import {submit, type SubmitResult} from '../../src/authority/ingress/command.js'
import {canonicalHash} from '../../src/json/jcs.js'
import {openStore, type Store} from '../../src/store/index.js'
import {
  admissionKey,
  authorityKey,
  codeOf,
  coord,
  contract,
  createCommand,
  developer,
  devStoreAt,
  groupCommand,
  newGroup,
  owner,
  receiptOf,
  registry,
  reviewer,
  uuid,
} from '../support/authority-helpers.js'
import {addWorkers} from '../support/groups.js'
import {treeSteps} from '../support/mission-tree-helpers.js'
import {type RawDb, storeBackends} from '../support/store-backends.js'

const policy = {rootMissionOwners: [owner.principal!.id]}
const postText = (g: string, text: string) => groupCommand(owner, 'message.post', g, {text}, {membershipEpoch: 1})

/** A trigger that aborts inserting an Event whose bytes contain `marker`, in each backend's dialect. */
const poison = (name: 'sqlite' | 'postgres', marker: string) =>
  name === 'sqlite'
    ? `CREATE TRIGGER pipeline_poison BEFORE INSERT ON group_events WHEN instr(CAST(NEW.bytes AS TEXT), '${marker}') > 0 BEGIN SELECT RAISE(ABORT, 'injected failure'); END;`
    : `CREATE FUNCTION pipeline_poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$;
       CREATE TRIGGER pipeline_poison BEFORE INSERT ON group_events FOR EACH ROW WHEN (position('${marker}' in convert_from(NEW.bytes, 'UTF8')) > 0) EXECUTE FUNCTION pipeline_poison();`
const unpoison = (name: 'sqlite' | 'postgres') =>
  name === 'sqlite'
    ? 'DROP TRIGGER pipeline_poison;'
    : 'DROP TRIGGER pipeline_poison ON group_events; DROP FUNCTION pipeline_poison();'

/** Submits `bytes` until the answer is not the retryable INTERNAL_ERROR (same bytes: the receipt answers). */
async function settle(authority: Authority, bytes: Buffer): Promise<SubmitResult> {
  for (let i = 0; ; i++) {
    const r = await submit(authority, bytes)
    if (codeOf(r) !== 'INTERNAL_ERROR' || i === 5) return r
  }
}

for (const backend of storeBackends('authority-pipeline')) {
  describe.runIf(backend.enabled)(`pipelined appends on ${backend.name}`, () => {
    let url: string
    let store: Store
    let raw: RawDb
    let authority: Authority
    const extra: Store[] = []

    beforeAll(async () => {
      await backend.start()
      url = await backend.fresh()
      store = await devStoreAt(url)
      raw = backend.raw(url)
      authority = openAuthority({store, registry, authorityKey, policy})
    }, 120_000)
    afterAll(async () => {
      await raw?.close()
      for (const s of extra) await s.close()
      await store?.close()
      await backend.stop()
    }, 60_000)

    /** The stored log folded by a fresh authority equals what `live` decided on. */
    async function expectReplayEqual(live: Authority, g: string) {
      const other = await openStore(url, {admissionKey})
      extra.push(other)
      const replayed = await openAuthority({store: other, registry, authorityKey, policy}).current(g)
      expect(canonicalHash((await live.current(g)) as never)).toBe(canonicalHash(replayed as never))
    }

    /** Every Command's receipt names exactly its own Events, and the log has no gap. */
    async function expectLogMatches(g: string, results: SubmitResult[], bytes: Buffer[]) {
      const page = await store.read(g, 0, 1000)
      expect(page.events.map((e) => e.sequence)).toEqual(page.events.map((_, i) => i + 1))
      const byId = new Map(page.events.map((e) => [e.eventId, JSON.parse(Buffer.from(e.bytes).toString('utf8'))]))
      results.forEach((r, i) => {
        const receipt = receiptOf(r)
        const actionId = JSON.parse(bytes[i]!.toString('utf8')).actionId
        expect(receipt.actionId).toBe(actionId)
        for (const id of receipt.eventIds) expect(byId.get(id)?.cause.id).toBe(actionId)
      })
    }

    it('[+cmd:message.post] [+evt:message.posted] 40 Commands of one Group in flight at once: all accepted, each answered with its own Events, replay equals live', async () => {
      const g = newGroup('pipeline')
      receiptOf(await submit(authority, createCommand(g)))
      const head = (await store.head(g))!.sequence
      const bytes = Array.from({length: 40}, (_, i) => postText(g, `in flight ${i}`))
      const results = await Promise.all(bytes.map((b) => submit(authority, b)))
      expect(results.map(codeOf)).toEqual(bytes.map(() => 'ok'))
      // One Event each, at distinct sequences: together exactly the 40 after the head.
      expect(results.map((r) => receiptOf(r).firstSequence).sort((a, b) => a - b)).toEqual(
        bytes.map((_, i) => head + 1 + i),
      )
      await expectLogMatches(g, results, bytes)
      await expectReplayEqual(authority, g)
      // Retries of the same bytes get the original receipts, and nothing new is stored.
      const again = await Promise.all(bytes.slice(0, 5).map((b) => submit(authority, b)))
      expect(again.map((r) => receiptOf(r))).toEqual(results.slice(0, 5).map((r) => receiptOf(r)))
      expect((await store.head(g))!.sequence).toBe(head + 40)
    })

    it('[-cmd:message.post] [-evt:message.posted] an append the store refuses fails alone: the Commands decided on it are decided again and none commits on its Events', async () => {
      const g = newGroup('pipeline-poison')
      receiptOf(await submit(authority, createCommand(g)))
      await raw.exec(poison(backend.name, 'POISON-PILL'))
      try {
        const bytes = [
          postText(g, 'before'),
          postText(g, 'POISON-PILL'),
          postText(g, 'after 1'),
          postText(g, 'after 2'),
          postText(g, 'after 3'),
        ]
        const first = await Promise.all(bytes.map((b) => submit(authority, b)))
        expect(codeOf(first[1]!)).toBe('INTERNAL_ERROR')
        // The others are accepted; on PostgreSQL an innocent Command sharing the failed batch's
        // transaction gets the retryable INTERNAL_ERROR, and its retry is accepted.
        const others = [0, 2, 3, 4]
        for (const i of others) expect(['ok', 'INTERNAL_ERROR']).toContain(codeOf(first[i]!))
        const settled = await Promise.all(others.map((i) => settle(authority, bytes[i]!)))
        expect(settled.map(codeOf)).toEqual(others.map(() => 'ok'))
        await expectLogMatches(
          g,
          settled,
          others.map((i) => bytes[i]!),
        )
        const texts = (await store.read(g, 0, 100)).events.map(
          (e) => JSON.parse(Buffer.from(e.bytes).toString('utf8')).payload?.message?.content?.[0]?.text,
        )
        expect(texts).not.toContain('POISON-PILL')
        await expectReplayEqual(authority, g)
      } finally {
        await raw.exec(unpoison(backend.name))
      }
    })

    it('[-cmd:work.accept_offer] [+cmd:work.accept_offer] a refusal decided on an in-flight append waits for it: when that append fails, the Command is decided again and accepted', async () => {
      const g = newGroup('pipeline-refusal')
      receiptOf(await submit(authority, createCommand(g)))
      await addWorkers((bytes) => submit(authority, bytes), g)
      const w = uuid(7)
      receiptOf(await submit(authority, coord('work.authorize', g, {workItemId: w, contract: contract()})))
      const expiresAt = new Date(Date.now() + 60_000).toISOString()
      receiptOf(
        await submit(
          authority,
          coord('work.offer', g, {
            workItemId: w,
            candidates: [developer.principal!.id, reviewer.principal!.id],
            expiresAt,
          }),
        ),
      )
      const offerId = (await authority.current(g))!.workItems[w]!.offer!.offerId
      const accept = (signer: typeof developer) =>
        groupCommand(signer, 'work.accept_offer', g, {workItemId: w, offerId})
      // The developer's acceptance fails in the store; the reviewer's, decided on it, would be
      // WORK_ALREADY_OWNED — but that append never happened, so the reviewer wins.
      await raw.exec(poison(backend.name, `"owner":{"agentId":"${developer.principal!.id}"`))
      try {
        const [mine, theirs] = await Promise.all([
          submit(authority, accept(developer)),
          submit(authority, accept(reviewer)),
        ])
        expect(['INTERNAL_ERROR', 'WORK_ALREADY_OWNED']).toContain(codeOf(mine))
        expect(codeOf(theirs)).toBe('ok')
        expect((await authority.current(g))!.workItems[w]!.owner!.agentId).toBe(reviewer.principal!.id)
        expect((await store.read(g, 0, 100)).events.filter((e) => e.kind === 'work.offer.accepted')).toHaveLength(1)
        await expectReplayEqual(authority, g)
      } finally {
        await raw.exec(unpoison(backend.name))
      }
    })

    it('[+cmd:mission.create_child] a multi-Group Command among in-flight appends waits for them and decides on stored state; every Command lands', async () => {
      const tree = treeSteps(() => ({authority, store}))
      const g = await tree.rootGroup()
      const w = await tree.workItem(g, 'open')
      const cg = newGroup('pipeline-child')
      const before = Array.from({length: 10}, (_, i) => postText(g, `before child ${i}`))
      const after = Array.from({length: 10}, (_, i) => postText(g, `after child ${i}`))
      const results = await Promise.all([
        ...before.map((b) => submit(authority, b)),
        submit(authority, tree.createChild(g, w, cg)),
        ...after.map((b) => submit(authority, b)),
      ])
      expect(results.map(codeOf)).toEqual(results.map(() => 'ok'))
      expect((await authority.current(cg))!.mission.parent?.groupId).toBe(g)
      expect((await authority.current(g))!.workItems[w]!.state).toBe('blocked')
      await expectLogMatches(g, [...results.slice(0, 10), ...results.slice(11)], [...before, ...after])
      await expectReplayEqual(authority, g)
      await expectReplayEqual(authority, cg)
    })

    it('[+cmd:message.post] another authority appending to the same store in between: every Command commits on the Events it was decided on', async () => {
      const g = newGroup('pipeline-race')
      receiptOf(await submit(authority, createCommand(g)))
      const head = (await store.head(g))!.sequence
      const second = await openStore(url, {admissionKey})
      extra.push(second)
      const rival = openAuthority({store: second, registry, authorityKey, policy})
      const mine = Array.from({length: 20}, (_, i) => postText(g, `mine ${i}`))
      const theirs = Array.from({length: 10}, (_, i) => postText(g, `theirs ${i}`))
      const results = await Promise.all([
        ...mine.map((b) => settle(authority, b)),
        ...theirs.map((b) => settle(rival, b)),
      ])
      expect(results.map(codeOf)).toEqual(results.map(() => 'ok'))
      await expectLogMatches(g, results, [...mine, ...theirs])
      expect((await store.head(g))!.sequence).toBe(head + 30)
      await expectReplayEqual(authority, g)
      await expectReplayEqual(rival, g)
    })
  })
}
