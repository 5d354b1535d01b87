// Drives WorkItems along the main path of the §10.2 table — work.authorize → work.offer →
// work.accept_offer → (approval.grant_execution) → work.start → work.block or work.submit →
// work.accept_result — signing each step's Command (work.submit with the Worker's Evidence) and submitting it through the full ingress.
// Every step must be accepted: a rejection fails the test at the step that broke.

import type {Authority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import type {WorkItemView, WorkState} from '../../src/authority/model/state.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {evidenceDoc} from './evidence.js'
import {contract, coord, coordinator, developer, groupCommand, owner, receiptOf, uuid} from './authority-helpers.js'

/** The states the driver reaches: the main path, and `blocked` off `active`. */
export type WorkTarget = Extract<
  WorkState,
  'open' | 'offered' | 'queued' | 'active' | 'blocked' | 'submitted' | 'verified'
>

/** Who signs the steps and what they carry; a driver's defaults, overridable per WorkItem. */
export interface WorkSteps {
  /** The Work Contract work.authorize carries (default contract()). */
  contract: Record<string, unknown>
  /** The Group's Coordinator: authorizes, offers and accepts the result (default coordinator). */
  coordinator: SigningKey
  /** Accepts the offer and works the item (default developer). */
  worker: SigningKey
  /** The offer's candidates (default the worker alone). */
  candidates?: SigningKey[]
  /** The Context Package a just-in-time offer cites (§8; needed when a candidate is not a member). */
  contextPackageId?: string
  /** The offer's expiresAt (default a minute from now). */
  offerExpiresAt: () => string
  /** What work.submit hands in (default one hash). */
  artifactHashes: string[]
}

const DEFAULTS: WorkSteps = {
  contract: contract(),
  coordinator,
  worker: developer,
  offerExpiresAt: () => new Date(Date.now() + 60_000).toISOString(),
  artifactHashes: [`sha256:${'c'.repeat(64)}`],
}

/** A driver over the Authority `authority()` returns (read when a step runs, so suites may open it later). */
export function workDriver(authority: () => Authority, defaults: Partial<WorkSteps> = {}) {
  const run = async (bytes: Buffer) => receiptOf(await submit(authority(), bytes))
  const item = async (g: string, w: string): Promise<WorkItemView> => (await authority().current(g))!.workItems[w]!

  /** Drives WorkItem `w` of `g`, now in `from`, on to `target`. */
  async function advance(
    g: string,
    w: string,
    from: WorkTarget,
    target: WorkTarget,
    options: Partial<WorkSteps> = {},
  ): Promise<void> {
    const s = {...DEFAULTS, ...defaults, ...options}
    let at = from
    if (at === 'open' && at !== target) {
      const candidates = (s.candidates ?? [s.worker]).map((c) => c.principal!.id)
      const jit = s.contextPackageId !== undefined ? {contextPackageId: s.contextPackageId} : {}
      await run(
        coord('work.offer', g, {workItemId: w, candidates, expiresAt: s.offerExpiresAt(), ...jit}, 1, s.coordinator),
      )
      at = 'offered'
    }
    if (at === 'offered' && at !== target) {
      await run(
        groupCommand(s.worker, 'work.accept_offer', g, {workItemId: w, offerId: (await item(g, w)).offer!.offerId}),
      )
      at = 'queued'
    }
    if (at === 'queued' && at !== target) {
      const queued = await item(g, w)
      const ownershipEpoch = queued.ownershipEpoch
      if (queued.contract.executionApproval !== 'not_required' && queued.executionApproval === null) {
        await run(groupCommand(owner, 'approval.grant_execution', g, {workItemId: w, ownershipEpoch}))
      }
      await run(groupCommand(s.worker, 'work.start', g, {workItemId: w, ownershipEpoch}))
      at = 'active'
    }
    if (at === 'active' && target === 'blocked') {
      const {ownershipEpoch, lease} = await item(g, w)
      await run(
        groupCommand(s.worker, 'work.block', g, {
          workItemId: w,
          ownershipEpoch,
          leaseId: lease!.leaseId,
          requiredResolution: 'Need the changelog export.',
        }),
      )
      return
    }
    if (at === 'active' && at !== target) {
      const state = (await authority().current(g))!
      const {ownershipEpoch, lease, contract} = state.workItems[w]!
      // §13.2: one Evidence by the Worker covering every acceptance criterion of the WorkItem's contract.
      const evidence = [
        evidenceDoc(s.worker, {
          missionId: state.missionId,
          groupId: g,
          workItemId: w,
          criterionIds: contract.acceptanceCriteria.map((c) => c.criterionId),
          artifactHashes: s.artifactHashes,
        }),
      ]
      await run(
        groupCommand(s.worker, 'work.submit', g, {
          workItemId: w,
          ownershipEpoch,
          leaseId: lease!.leaseId,
          artifactHashes: s.artifactHashes,
          evidence,
        }),
      )
      at = 'submitted'
    }
    if (at === 'submitted' && at !== target) {
      await run(coord('work.accept_result', g, {workItemId: w}, 1, s.coordinator))
      at = 'verified'
    }
    if (at !== target) throw new Error(`the driver cannot take a WorkItem from ${from} to ${target}`)
  }

  /** Authorizes WorkItem `workItemId` (default a new ID) in `g` and drives it to `target`; returns its ID. */
  async function drive(
    g: string,
    target: WorkTarget,
    options: Partial<WorkSteps> & {workItemId?: string} = {},
  ): Promise<string> {
    const {workItemId = uuid(7), ...steps} = options
    const s = {...DEFAULTS, ...defaults, ...steps}
    await run(coord('work.authorize', g, {workItemId, contract: s.contract}, 1, s.coordinator))
    await advance(g, workItemId, 'open', target, steps)
    return workItemId
  }

  return {drive, advance, item}
}
