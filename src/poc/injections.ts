// The failure suite's faults (§22), each injected from outside the process under test at a point
// the observer sees in the Events — never by asking the process to misbehave:
//
//   worker-restart          kill -9 of the shared Worker while it runs Mission B's implementation,
//                           its local database deleted, the process started again: its queues are
//                           rebuilt by replay and the WorkItem goes on under a new Session.
//   lease-expiry            SIGSTOP of Mission A's reviewer while it reviews, until its Execution
//                           Lease lapsed and another Worker took the WorkItem at a higher Ownership
//                           Epoch; then SIGCONT: whatever the old owner sends is fenced.
//   coordinator-replacement kill -9 of Mission A's Coordinator while its first WorkItem runs; once its
//                           Coordinator lease expired, the MissionOwner appoints the standby
//                           Coordinator at the next epoch, which reconciles by replay and finishes.
//
// Each injection records when and what it did, and the numbers the checks compare against.

import {existsSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import type {WorkItemView} from '../authority/model/state.js'
import type {PocProcess} from './cluster.js'
import type {TcpProxy} from './faults/tcp-proxy.js'
import type {WsFaultProxy} from './faults/ws-fault-proxy.js'
import type {Observer} from './observe.js'
import {pocStage} from './work/stage.js'

export type FaultId =
  'worker-restart' | 'lease-expiry' | 'coordinator-replacement' | 'high-priority-arrival' | 'disconnection' | 'delivery'

export interface FaultRecord {
  id: FaultId
  at: string
  label: string
  /** The WorkItem (or Mission) the fault hit. */
  target?: string
  measured: Record<string, number | string | boolean>
  /** Set when the fault could not be injected (its trigger never came): its checks fail. */
  error?: string
}

export interface InjectionContext {
  observer: Observer
  missions: {a: string; b: string}
  agentId(name: string): string
  proc(name: string): PocProcess
  /** Starts the Agent `name` again with the arguments it had; the new process. */
  restart(name: string): PocProcess
  /** The Agent's local state: its database and the blobs and slot folders beside it. */
  agentFiles(name: string): string[]
  /** The human appoints `agent` Coordinator of `groupId` (mission.assign_coordinator). */
  assignCoordinator(groupId: string, agentName: string): Promise<void>
  /**
   * The high-priority arrival: raises the new Mission's Group to a higher priority class in the
   * shared Worker's scheduling policy (the Organization's, §11.1), creates the Mission, and has
   * the human approve it once submitted; resolves with its Group ID.
   */
  urgentMission(): Promise<string>
  /** The TCP proxy between the disconnected Worker and the authority. */
  link(): TcpProxy
  /** A Command of the replaced Coordinator's identity under its old epoch; the answer's code. */
  staleCommand(groupId: string, agentName: string): Promise<string>
  timeoutMs: number
}

const stageItem = (obs: Observer, g: string, stage: string, state: string, owner?: string) =>
  Object.values(obs.state(g)?.workItems ?? {}).find(
    (w: WorkItemView) =>
      pocStage(w.contract.constraints)?.stage === stage &&
      w.state === state &&
      (owner === undefined || w.owner?.agentId === owner),
  )

const now = () => new Date().toISOString()

/** Waits until the Agent `agentId` runs the WorkItem of `stage` in Group `g`; that WorkItem. */
async function running(
  c: InjectionContext,
  g: string,
  stage: string,
  agentId: string,
  what: string,
): Promise<WorkItemView> {
  await c.observer.until(() => stageItem(c.observer, g, stage, 'active', agentId) !== undefined, what, c.timeoutMs)
  return stageItem(c.observer, g, stage, 'active', agentId)!
}

async function guarded(
  id: FaultId,
  label: string,
  run: () => Promise<Omit<FaultRecord, 'id' | 'label'>>,
): Promise<FaultRecord> {
  try {
    return {id, label, ...(await run())}
  } catch (e) {
    return {id, label, at: now(), measured: {}, error: (e as Error).message}
  }
}

export function workerRestart(c: InjectionContext, worker: string): Promise<FaultRecord> {
  return guarded('worker-restart', `kill -9 ${worker}, delete its database, restart`, async () => {
    const item = await running(
      c,
      c.missions.b,
      'implement',
      c.agentId(worker),
      `${worker} running Mission B's implementation`,
    )
    const old = c.proc(worker)
    const at = now()
    old.child.kill('SIGKILL')
    await old.exited
    const files = c.agentFiles(worker).filter((f) => existsSync(f))
    for (const f of files) rmSync(f, {recursive: true, force: true})
    const fresh = c.restart(worker)
    return {
      at,
      target: item.workItemId,
      measured: {
        killedPid: old.child.pid ?? 0,
        signal: old.child.signalCode ?? 'none',
        deletedPaths: files.length,
        restartedPid: fresh.child.pid ?? 0,
        ownershipEpochAtKill: item.ownershipEpoch,
      },
    }
  })
}

export function leaseExpiry(c: InjectionContext, worker: string): Promise<FaultRecord> {
  return guarded('lease-expiry', `SIGSTOP ${worker} past its Execution Lease, then SIGCONT`, async () => {
    const id = c.agentId(worker)
    const item = await running(c, c.missions.a, 'review', id, `${worker} running Mission A's review`)
    const p = c.proc(worker)
    const at = now()
    p.child.kill('SIGSTOP')
    try {
      // Stopped until another Worker holds the WorkItem under a higher Ownership Epoch.
      await c.observer.until(
        () => {
          const w = c.observer.state(c.missions.a)?.workItems[item.workItemId]
          return w !== undefined && w.ownershipEpoch > item.ownershipEpoch && w.owner !== null && w.owner.agentId !== id
        },
        'the review reassigned to another Worker',
        c.timeoutMs,
      )
    } finally {
      p.child.kill('SIGCONT')
    }
    const after = c.observer.state(c.missions.a)!.workItems[item.workItemId]!
    return {
      at,
      target: item.workItemId,
      measured: {
        stoppedPid: p.child.pid ?? 0,
        ownershipEpochBefore: item.ownershipEpoch,
        ownershipEpochAfter: after.ownershipEpoch,
        resumedAt: now(),
      },
    }
  })
}

export function coordinatorReplacement(
  c: InjectionContext,
  coordinator: string,
  standby: string,
): Promise<FaultRecord> {
  return guarded(
    'coordinator-replacement',
    `kill -9 ${coordinator}; after its lease expired, ${standby} appointed`,
    async () => {
      const g = c.missions.a
      await c.observer.until(
        () => stageItem(c.observer, g, 'requirements', 'active') !== undefined,
        "Mission A's first WorkItem running",
        c.timeoutMs,
      )
      const p = c.proc(coordinator)
      const at = now()
      p.child.kill('SIGKILL')
      await p.exited
      // The MissionOwner replaces a Coordinator that stopped renewing, not one that is merely slow.
      await c.observer.until(
        () => {
          const lease = c.observer.state(g)?.mission.coordinator?.leaseExpiresAt
          return lease !== null && lease !== undefined && Date.parse(lease) < Date.now()
        },
        "the dead Coordinator's lease expiring",
        c.timeoutMs,
      )
      const expired = c.observer.state(g)!.mission.coordinator!
      await c.assignCoordinator(g, standby)
      await c.observer.until(
        () => c.observer.state(g)?.mission.coordinator?.agentId === c.agentId(standby),
        'the replacement in the log',
        c.timeoutMs,
      )
      const stale = await c.staleCommand(g, coordinator)
      return {
        at,
        target: g,
        measured: {
          killedPid: p.child.pid ?? 0,
          signal: p.child.signalCode ?? 'none',
          leaseExpiredAt: expired.leaseExpiresAt ?? '',
          epochBefore: expired.coordinatorEpoch,
          assignedAt: now(),
          staleCommand: stale,
        },
      }
    },
  )
}

export function highPriorityArrival(c: InjectionContext, worker: string): Promise<FaultRecord> {
  return guarded(
    'high-priority-arrival',
    `an urgent Mission arrives while both of ${worker}'s slots are busy`,
    async () => {
      const id = c.agentId(worker)
      const busy = () =>
        Object.values(c.observer.state(c.missions.b)?.workItems ?? {}).filter(
          (w) => w.state === 'active' && w.owner?.agentId === id,
        ).length
      await c.observer.until(() => busy() >= 2, `both slots of ${worker} busy`, c.timeoutMs)
      const at = now()
      const busySlotsAtArrival = busy()
      const g = await c.urgentMission()
      return {at, target: g, measured: {busySlotsAtArrival}}
    },
  )
}

/** How long the disconnected Worker stays cut off: well inside its lease grace (§11.5). */
const CUT_MS = 2_000

export function disconnection(c: InjectionContext, worker: string): Promise<FaultRecord> {
  return guarded('disconnection', `cut ${worker} off the authority for ${CUT_MS / 1000} s mid-run`, async () => {
    const id = c.agentId(worker)
    // The child Mission's documentation runs long enough to be cut in the middle.
    const docsRun = () => {
      for (const g of c.observer.groups.values())
        if (g.state?.mission.parent !== undefined)
          for (const w of Object.values(g.state.workItems))
            if (w.state === 'active' && w.owner?.agentId === id && pocStage(w.contract.constraints)?.stage === 'docs')
              return w
      return undefined
    }
    await c.observer.until(
      () => docsRun() !== undefined,
      `${worker} running the child Mission's documentation`,
      c.timeoutMs,
    )
    const item = docsRun()!
    const proxy = c.link()
    const at = now()
    proxy.cut()
    await new Promise((r) => setTimeout(r, CUT_MS))
    proxy.restore()
    return {
      at,
      target: item.workItemId,
      measured: {cutMs: CUT_MS, dropped: proxy.stats.dropped, refusedWhileCut: proxy.stats.refused},
    }
  })
}

/** The delivery proxy's counts over the whole run (it faults from the first Event on). */
export function deliveryRecord(p: WsFaultProxy): FaultRecord {
  const s = p.stats
  return {
    id: 'delivery',
    label: "every Event to the shared Worker and to Mission B's Coordinator duplicated and reordered",
    at: now(),
    measured: {
      eventsIn: s.deliveryIn,
      eventsOut: s.deliveryOut,
      duplicated: s.duplicated,
      lateDuplicates: s.lateDuplicates,
      reordered: s.reordered,
    },
  }
}

/**
 * An Agent's local database under the Organization directory (config/dev-org.ts layout). The
 * content-addressed blobs beside it are shared by the Organization's Agents and stay: a resumed
 * run fetches its checkpoint from the authority's Artifact store when the disk lacks it.
 */
export function agentStateFiles(orgDir: string, name: string): string[] {
  const db = join(orgDir, 'agents', `${name}.db`)
  return [db, `${db}-wal`, `${db}-shm`]
}
