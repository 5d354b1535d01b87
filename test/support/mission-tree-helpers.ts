// Shared steps for the Mission-tree suites (authority-children, authority-budget): Groups with
// WorkItems in a given state, child Missions, usage records, and reading verified Events back.

import {expect} from 'vitest'
import type {Authority} from '../../src/authority/authority.js'
import {submit} from '../../src/authority/ingress/command.js'
import {RESOURCE_USAGE_RECORD} from '../../src/authority/model/mission-tree.js'
import type {SigningKey} from '../../src/crypto/keyfile.js'
import {verify} from '../../src/signing/verify.js'
import type {Store} from '../../src/store/index.js'
import {
  contract,
  coord,
  coordinator,
  developer,
  groupCommand,
  missionIdOf,
  registry,
  reviewer,
} from './authority-helpers.js'
import {missionGroup} from './groups.js'
import {workDriver} from './work-driver.js'

export const H1 = `sha256:${'a'.repeat(64)}`

export function treeSteps(get: () => {authority: Authority; store: Store}) {
  const run = (bytes: Buffer) => submit(get().authority, bytes)
  const state = async (g: string) => (await get().authority.current(g))!
  const item = async (g: string, w: string) => (await state(g)).workItems[w]!
  const head = async (g: string) => (await get().store.head(g))?.sequence ?? 0

  /** Every Event of a Group, verified, as {kind, payload}. */
  async function events(g: string) {
    const page = await get().store.read(g, 0, 1000)
    return page.events.map((e) => {
      const v = verify('event', e.bytes, registry)
      if (!v.ok) throw new Error(`stored Event ${e.sequence} of ${g} does not verify`)
      return {kind: e.kind, payload: v.document.payload as Record<string, unknown>, actor: v.document.actor}
    })
  }
  const lastEvent = async (g: string) => (await events(g)).at(-1)!

  /** A root Group (owner human, Coordinator `coordinator`) with developer and reviewer as Workers. */
  const rootGroup = (budget?: Record<string, unknown>): Promise<string> =>
    missionGroup(run, 'tree', {mission: budget === undefined ? {} : {budget}})

  const work = workDriver(() => get().authority, {offerExpiresAt: () => new Date(Date.now() + 120_000).toISOString()})
  /**
   * A WorkItem in `g`, driven to `target` by `coordinatorKey` (the Group's Coordinator) with
   * `worker` as its owner from queued on.
   */
  const workItem = (
    g: string,
    target: 'open' | 'queued' | 'active',
    c: Record<string, unknown> = contract(),
    coordinatorKey: SigningKey = coordinator,
    worker: SigningKey = developer,
  ): Promise<string> => work.drive(g, target, {contract: c, coordinator: coordinatorKey, worker})

  /** The mission.create_child Command from `parentCoordinator` promoting `w` of `g` to Group `cg`. */
  const createChild = (
    g: string,
    w: string,
    cg: string,
    extra: Record<string, unknown> = {},
    parentCoordinator: SigningKey = coordinator,
    childCoordinator: SigningKey = reviewer,
    fields: Record<string, unknown> = {},
  ) =>
    coord(
      'mission.create_child',
      g,
      {
        workItemId: w,
        missionId: missionIdOf(cg),
        groupId: cg,
        objective: 'Draft the release notes as a child Mission',
        definitionOfDone: [
          {criterionId: 'notes', description: 'Draft ready', evidenceRequired: ['reviewer_assessment']},
        ],
        deadline: '2027-01-10T00:00:00Z',
        budget: {currency: 'EUR', financialLimit: 5},
        approvalPolicy: {finalHumanApproval: false, highRiskExecutionApproval: true},
        coordinatorAgentId: childCoordinator.principal!.id,
        ...extra,
      },
      1,
      parentCoordinator,
      fields,
    )

  /** A usage record by the WorkItem's owner against its current lease. */
  const usage = async (
    g: string,
    w: string,
    delta: Record<string, unknown>,
    signer: SigningKey = developer,
    over: Record<string, unknown> = {},
  ) =>
    groupCommand(signer, RESOURCE_USAGE_RECORD, g, {
      workItemId: w,
      ownershipEpoch: 1,
      leaseId: (await item(g, w)).lease?.leaseId ?? 'urn:uuid:none',
      delta,
      ...over,
    })

  /** Nothing appended to any of `groups` between `before` and now. */
  async function unchanged(groups: string[], before: number[]) {
    expect(await Promise.all(groups.map(head))).toEqual(before)
  }

  return {run, state, item, head, events, lastEvent, rootGroup, workItem, createChild, usage, unchanged}
}
