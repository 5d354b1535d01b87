// work.submit carries Evidence (spec §10.2 "Artifacts and Evidence required", §13.2 "WorkItem
// submission MUST include Evidence mapped to acceptance criteria") through the full ingress on
// SQLite: each Evidence document is verified with the six stages from the bytes received, and the
// set must be the owner's, about this WorkItem and its submitted Artifacts, and cover every
// acceptance criterion of the Work Contract. A refusal appends nothing; a semantic refusal tells
// the member why, a verification failure says only its code.

import {describe, expect, it} from 'vitest'
import {type ProtocolError, detailsOf, protocolError} from '../../src/errors.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import type {JsonObject} from '../../src/json/parse.js'
import {sign} from '../../src/signing/sign.js'
import {
  contract,
  developer,
  groupCommand,
  missionIdOf,
  receiptOf,
  reviewer,
  sqliteSuite,
} from '../support/authority-helpers.js'
import {evidenceDoc} from '../support/evidence.js'
import {newestEvent} from '../support/events.js'
import {missionGroup} from '../support/groups.js'
import {workDriver} from '../support/work-driver.js'

const H1 = `sha256:${'c'.repeat(64)}`
const H2 = `sha256:${'d'.repeat(64)}`
/** The Work Contract's input Artifact: Evidence may reference it beside the submitted ones. */
const INPUT = `sha256:${'e'.repeat(64)}`

const suite = sqliteSuite()
const {run} = suite
const state = async (g: string) => (await suite.authority.current(g))!

/** A contract with two acceptance criteria, so one Evidence can leave one uncovered, and an input Artifact. */
const twoCriteria = contract({
  inputArtifacts: [INPUT],
  acceptanceCriteria: [
    {criterionId: 'notes', description: 'Every change is listed', evidenceRequired: ['deterministic_test']},
    {criterionId: 'links', description: 'Every change links its issue', evidenceRequired: ['human_review']},
  ],
})
const work = workDriver(() => suite.authority, {
  contract: twoCriteria,
  offerExpiresAt: () => new Date(Date.now() + 600_000).toISOString(),
})

/** An active WorkItem owned by the developer in a new Group. */
async function active(): Promise<{g: string; w: string; leaseId: string}> {
  const g = await missionGroup(run, 'evidence')
  const w = await work.drive(g, 'active')
  return {g, w, leaseId: (await state(g)).workItems[w]!.lease!.leaseId}
}

/** Evidence by `signer` for WorkItem `w` of `g` (default both criteria, the submitted H1). */
const evidence = (
  g: string,
  w: string,
  extra: Record<string, unknown> = {},
  signer: SigningKey = developer,
): JsonObject =>
  evidenceDoc(signer, {groupId: g, workItemId: w, criterionIds: ['notes', 'links'], artifactHashes: [H1], extra})

/** The work.submit Command bytes as the developer signs them, with `evidence` verbatim. */
const submitBytes = (g: string, w: string, leaseId: string, docs: unknown[], artifactHashes = [H1]) =>
  groupCommand(developer, 'work.submit', g, {workItemId: w, ownershipEpoch: 1, leaseId, artifactHashes, evidence: docs})

/** Submits and expects a refusal with `code`; nothing is appended and the WorkItem stays active. */
async function refused(g: string, w: string, bytes: Buffer, code: string): Promise<ProtocolError> {
  const before = await suite.store.head(g)
  const r = await run(bytes)
  if (!('error' in r)) throw new Error('accepted')
  expect(r.error.code).toBe(code)
  expect(await suite.store.head(g)).toEqual(before)
  expect((await state(g)).workItems[w]!.state).toBe('active')
  return r.error
}

describe('work.submit with Evidence (§10.2, §13.2)', () => {
  it('[+cmd:work.submit] [+evt:work.submitted] [+row:t10.2:active->submitted:work.submit] Evidence covering every acceptance criterion is accepted; the Event carries the documents, the WorkItem their IDs, hashes and criteria', async () => {
    const {g, w, leaseId} = await active()
    const tests = evidence(g, w, {criterionIds: ['notes'], artifactHashes: [H1, INPUT]})
    const review = evidence(g, w, {
      criterionIds: ['links'],
      type: 'reviewer_assessment',
      subject: {type: 'artifact', id: H1},
      result: 'inconclusive',
    })
    receiptOf(await run(submitBytes(g, w, leaseId, [tests, review])))

    const event = await newestEvent(suite.store, g)
    expect(event.kind).toBe('work.submitted')
    const carried = (event.payload as {evidence: {signingHash: string; document: unknown}[]}).evidence
    const hashOf = (doc: JsonObject) => sign('evidence', doc, developer).signingHash
    expect(carried).toEqual([
      {signingHash: hashOf(tests), document: tests},
      {signingHash: hashOf(review), document: review},
    ])
    const submission = (await state(g)).workItems[w]!.submission!
    expect(submission.artifactHashes).toEqual([H1])
    expect(submission.evidence).toEqual([
      expect.objectContaining({
        evidenceId: tests.evidenceId,
        signingHash: hashOf(tests),
        type: 'deterministic_test',
        criterionIds: ['notes'],
        result: 'passed',
        artifactHashes: [H1, INPUT],
        generatedBy: developer.principal,
      }),
      expect.objectContaining({
        evidenceId: review.evidenceId,
        type: 'reviewer_assessment',
        subject: {type: 'artifact', id: H1},
        criterionIds: ['links'],
        result: 'inconclusive',
      }),
    ])
    // The state keeps the mapping, not the method text or the signature (those are in the log).
    expect(JSON.stringify(submission)).not.toContain(tests.method as string)
  })

  it('[-cmd:work.submit] [-evt:work.submitted] [-row:t10.2:active->submitted:work.submit] Evidence that leaves an acceptance criterion uncovered is INVALID_COMMAND naming it; a submission without Evidence fails its schema', async () => {
    const {g, w, leaseId} = await active()
    const error = await refused(
      g,
      w,
      submitBytes(g, w, leaseId, [evidence(g, w, {criterionIds: ['notes']})]),
      'INVALID_COMMAND',
    )
    expect(detailsOf(error)?.detail).toContain('links')
    expect(detailsOf(error)?.detail).not.toContain('notes,')
    // No Evidence at all: the payload schema requires a non-empty list.
    await refused(g, w, submitBytes(g, w, leaseId, []), 'SCHEMA_VALIDATION_FAILED')
    const absent = {workItemId: w, ownershipEpoch: 1, leaseId, artifactHashes: [H1], evidence: null}
    await refused(g, w, groupCommand(developer, 'work.submit', g, absent), 'SCHEMA_VALIDATION_FAILED')
    // Corrected, the same WorkItem is submitted.
    receiptOf(await run(submitBytes(g, w, leaseId, [evidence(g, w)])))
    expect((await state(g)).workItems[w]!.state).toBe('submitted')
  })

  it('[-cmd:work.submit] forged Evidence bytes are AUTH_INVALID_SIGNATURE with the fixed message only, the diagnostic in the audit log; a schema-invalid document SCHEMA_VALIDATION_FAILED', async () => {
    const {g, w, leaseId} = await active()
    // Signed as "failed", presented as "passed": the signature no longer covers the content.
    const forged = {...evidence(g, w, {result: 'failed'}), result: 'passed'}
    const error = await refused(g, w, submitBytes(g, w, leaseId, [forged]), 'AUTH_INVALID_SIGNATURE')
    expect(error).toEqual({
      ...protocolError('AUTH_INVALID_SIGNATURE', error.occurredAt),
      relatedActionId: expect.any(String),
    })
    expect(JSON.stringify(error)).not.toMatch(/stage|signature-mismatch|reason|key-resolution/)
    // The stage and reason are kept in the protected audit log, naming the document's place.
    const audited = async () => (await suite.store.listAudit()).filter((a) => a.documentKind === 'evidence')
    expect((await audited()).at(-1)).toMatchObject({
      stage: 'signature',
      reason: expect.any(String),
      subject: expect.stringMatching(/^work\.submit urn:uuid:.* payload\.evidence\[0\]$/),
    })
    // A valid document before a forged one does not help: the first failure refuses the Command.
    await refused(g, w, submitBytes(g, w, leaseId, [evidence(g, w), forged]), 'AUTH_INVALID_SIGNATURE')
    expect((await audited()).at(-1)!.subject).toMatch(/payload\.evidence\[1\]$/)
    // Signed, then stripped of a required member: stage 2.
    const {method: _method, ...incomplete} = evidence(g, w)
    await refused(g, w, submitBytes(g, w, leaseId, [incomplete]), 'SCHEMA_VALIDATION_FAILED')
    expect((await audited()).at(-1)).toMatchObject({stage: 'schema'})
  })

  it('[-cmd:work.submit] Evidence for another WorkItem, about an Artifact not submitted, referencing one that is neither submitted nor an input, naming an unknown criterion or another Mission is INVALID_COMMAND, each saying why', async () => {
    const {g, w, leaseId} = await active()
    const other = 'urn:mwp:test:work-item:other'
    const cases: [Record<string, unknown>, string][] = [
      [{workItemId: other, subject: {type: 'work_item', id: other}}, `for WorkItem ${other}`],
      [{subject: {type: 'work_item', id: other}}, `about work_item ${other}`],
      [{subject: {type: 'artifact', id: H2}}, `about artifact ${H2}`],
      [{subject: {type: 'mission', id: missionIdOf(g)}}, 'about mission'],
      [{artifactHashes: [H1, H2]}, `references Artifact ${H2}`],
      [{criterionIds: ['notes', 'links', 'speed']}, 'criterion speed'],
      [{missionId: 'urn:mwp:test:mission:elsewhere'}, 'another Mission or Group'],
    ]
    for (const [extra, why] of cases) {
      const doc = evidence(g, w, extra)
      const error = await refused(g, w, submitBytes(g, w, leaseId, [doc]), 'INVALID_COMMAND')
      expect(detailsOf(error)?.detail).toContain(why)
    }
    const doc = evidence(g, w)
    const twice = await refused(g, w, submitBytes(g, w, leaseId, [doc, doc]), 'INVALID_COMMAND')
    expect(detailsOf(twice)?.detail).toContain('submitted twice')
  })

  it("[-cmd:work.submit] Evidence produced by another Principal than the submitting owner is AUTH_FORBIDDEN, even when the reviewer's signature is valid", async () => {
    const {g, w, leaseId} = await active()
    const byReviewer = evidence(g, w, {}, reviewer)
    const error = await refused(g, w, submitBytes(g, w, leaseId, [byReviewer]), 'AUTH_FORBIDDEN')
    expect(detailsOf(error)?.detail).toContain(reviewer.principal!.id)
    // The owner's own Evidence beside it does not make the reviewer's acceptable.
    await refused(g, w, submitBytes(g, w, leaseId, [evidence(g, w), byReviewer]), 'AUTH_FORBIDDEN')
  })
})
