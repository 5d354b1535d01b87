// The proof of concept's observer: the human MissionOwner's own wss session following every Group
// of the run — the root Missions it owns and the child Missions it may inspect from above (§14) —
// and folding each verified Event, as it arrives, into the Group's state (the authority's apply())
// and the few facts the checks and the trace need. Nothing keeps the Events themselves: each is
// folded and dropped, so the observer's memory is the states and the facts, never the logs.

import {apply} from '../authority/apply/index.js'
import type {AppliedEvent} from '../authority/model/events.js'
import type {GroupState} from '../authority/model/state.js'
import type {EventDoc, Subscription, Transport} from '../operator/transport.js'
import {FILE_NAME_EXTENSION} from '../agent/artifact-manifest.js'
import {handoverOf} from '../agent/coordinator/mission-view.js'
import {reworkOf} from '../agent/coordinator/context.js'
import {isRecord} from './work/stage.js'
import type {JsonObject} from '../json/parse.js'
import type {RegistryEvidence} from '../signing/registry.js'
import {Rejection, verify} from '../signing/verify.js'

export interface ObservedRun {
  agentId: string
  groupId: string
  workItemId: string
  leaseId: string
  /** The Session Epoch the lease is bound to (§6.3 fencing): a restarted Agent's is higher. */
  sessionEpoch: number
  /** Started from a checkpoint (work.started resumeFrom, §11.3 step 5). */
  resumed: boolean
  startedAt: string
  endedAt?: string
  outcome?: 'submitted' | 'yielded' | 'failed' | 'blocked' | 'lost'
}

export interface GroupFacts {
  groupId: string
  state: GroupState | null
  /** Events folded, and the highest sequence seen: equal with no gap and no duplicate. */
  count: number
  lastSequence: number
  outOfOrder: number
  kinds: Map<string, number>
  runs: ObservedRun[]
  rejections: {workItemId: string; actorId: string; reason: string; evidenceHashes: string[]; at: string}[]
  offers: {
    workItemId: string
    candidates: string[]
    basisFor: string[]
    ownershipEpochBefore: number
    at: string
    /** The WorkItem's last result had been rejected by review (work.fail Failure Evidence). */
    afterRejection: boolean
    /** The review findings the offer's Context Package carries for the rework (context.ts reworkOf). */
    reworkFindings: string[]
    /** Per candidate, the Presence its selection basis recorded ('no fresh record', or the reported state). */
    presence: string[]
  }[]
  submissions: {at: string; missionRevision: number; artifactHashes: string[]}[]
  approvals: {
    at: string
    sequence: number
    approverId: string
    artifactHashes: string[]
    missionRevision: number
    document: Record<string, unknown>
  }[]
  changeRequests: {at: string; reason: string}[]
  lateResults: {workItemId: string; agentId: string; at: string}[]
  /** Per WorkItem, the sequence of its authorization and of its verification. */
  authorizedAt: Map<string, number>
  verifiedAt: Map<string, number>
  /** §7.2 handovers: each Coordinator handover notice and whether its Context Package verified. */
  handovers: {
    at: string
    sequence: number
    actorId: string
    coordinatorEpoch: number
    verified?: boolean
    scope?: string
  }[]
  /** Per actor, the sequence of its first assignment (work.authorized, work.offer.created, mission.child.created). */
  firstAssignment: Map<string, number>
  /** Artifact content hash → file name, from the signed manifests. */
  names: Map<string, string>
  /** Per WorkItem, when an offer of it was last accepted (work.offer.accepted). */
  acceptedAt: Map<string, string>
}

const newFacts = (groupId: string): GroupFacts => ({
  groupId,
  state: null,
  count: 0,
  lastSequence: 0,
  outOfOrder: 0,
  kinds: new Map(),
  runs: [],
  rejections: [],
  offers: [],
  submissions: [],
  approvals: [],
  changeRequests: [],
  lateResults: [],
  authorizedAt: new Map(),
  verifiedAt: new Map(),
  handovers: [],
  firstAssignment: new Map(),
  names: new Map(),
  acceptedAt: new Map(),
})

const END: Record<string, ObservedRun['outcome']> = {
  'work.submitted': 'submitted',
  'work.checkpointed': 'yielded',
  'work.failed': 'failed',
  'work.blocked': 'blocked',
}

export class Observer {
  readonly groups = new Map<string, GroupFacts>()
  readonly #subs: Subscription[] = []
  readonly #waiters = new Set<() => void>()
  readonly #ended = new Map<string, string>()
  #lastEventAt = Date.now()

  /**
   * `stallMs`: every wait gives up once no Group has had a new Event for this long. `registry`:
   * verifies the Context Packages Coordinators hand over.
   */
  constructor(
    private readonly transport: Transport,
    private readonly stallMs = Infinity,
    private readonly registry?: RegistryEvidence,
  ) {}

  /** Follows a Group from its first Event (once). */
  async watch(groupId: string): Promise<void> {
    if (this.groups.has(groupId)) return
    this.groups.set(groupId, newFacts(groupId))
    this.#subs.push(
      await this.transport.follow(
        groupId,
        0,
        (e) => this.#fold(e),
        (code) => this.#ended.set(groupId, code),
      ),
    )
  }

  /** Resolves once `ready()` holds (checked after every Event and every second), or rejects after `timeoutMs`. */
  until(ready: () => boolean, what: string, timeoutMs: number): Promise<void> {
    if (ready()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!ready()) return
        cleanup()
        resolve()
      }
      const tick = setInterval(() => {
        if (Date.now() - this.#lastEventAt > this.stallMs) {
          cleanup()
          reject(new Error(`no progress for ${this.stallMs / 1000} s while waiting for ${what}`))
        } else check()
      }, 1000)
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`gave up waiting for ${what} after ${timeoutMs / 1000} s`))
      }, timeoutMs)
      const cleanup = () => {
        clearInterval(tick)
        clearTimeout(timer)
        this.#waiters.delete(check)
      }
      this.#waiters.add(check)
    })
  }

  state(groupId: string): GroupState | null {
    return this.groups.get(groupId)?.state ?? null
  }

  async close(): Promise<void> {
    for (const s of this.#subs) await s.close()
  }

  #fold(e: EventDoc): void {
    const f = this.groups.get(e.groupId)
    if (f === undefined) return
    this.#lastEventAt = Date.now()
    if (e.sequence !== f.lastSequence + 1) f.outOfOrder++
    f.count++
    f.lastSequence = Math.max(f.lastSequence, e.sequence)
    f.kinds.set(e.kind, (f.kinds.get(e.kind) ?? 0) + 1)
    const before = f.state
    f.state = apply(f.state, e as unknown as AppliedEvent)
    this.#facts(f, e, before)
    for (const w of [...this.#waiters]) w()
  }

  /** Fetches a handed-over Context Package and checks it: six-stage verified, its generator, its Mission scope. */
  async #verifyPackage(
    groupId: string,
    hash: string,
    actorId: string,
    record: GroupFacts['handovers'][number],
  ): Promise<void> {
    try {
      const bytes = await this.transport.artifacts!.get(groupId, hash)
      const r = this.registry ? verify('context-package', bytes, this.registry) : null
      if (r === null || r instanceof Rejection) {
        record.verified = false
        return
      }
      const d = r.document as {generatedBy?: {id?: string}; groupId?: string; workItemId?: string}
      record.verified = d.generatedBy?.id === actorId
      record.scope = d.groupId === groupId && d.workItemId === undefined ? 'mission' : 'other'
    } catch {
      record.verified = false
    }
  }

  #facts(f: GroupFacts, e: EventDoc, before: GroupState | null): void {
    const p = e.payload
    const at = e.occurredAt
    const workItemId = typeof p.workItemId === 'string' ? p.workItemId : ''
    const openRun = () => lastOf(f.runs, (r) => r.workItemId === workItemId && r.endedAt === undefined)
    const after = f.state?.workItems[workItemId]
    if (after !== undefined && !f.authorizedAt.has(workItemId)) f.authorizedAt.set(workItemId, e.sequence)
    if (after?.state === 'verified' && !f.verifiedAt.has(workItemId)) f.verifiedAt.set(workItemId, e.sequence)
    if (
      (e.kind === 'work.authorized' || e.kind === 'work.offer.created' || e.kind === 'mission.child.created') &&
      !f.firstAssignment.has(e.actor.id)
    )
      f.firstAssignment.set(e.actor.id, e.sequence)
    switch (e.kind) {
      case 'message.posted': {
        const h = handoverOf(p.message as JsonObject)
        if (h === null) break
        const record: GroupFacts['handovers'][number] = {
          at,
          sequence: e.sequence,
          actorId: e.actor.id,
          coordinatorEpoch: h.coordinatorEpoch,
        }
        f.handovers.push(record)
        void this.#verifyPackage(f.groupId, h.contextPackageHash, e.actor.id, record)
        break
      }
      case 'work.started': {
        const lease = p.lease as {leaseId: string; sessionEpoch: number}
        f.runs.push({
          agentId: e.actor.id,
          groupId: f.groupId,
          workItemId,
          leaseId: lease.leaseId,
          sessionEpoch: lease.sessionEpoch,
          resumed: p.resumeFrom !== undefined,
          startedAt: at,
        })
        break
      }
      case 'work.offer.created': {
        const offer = p.offer as {candidates?: string[]; selectionBasis?: Record<string, unknown>} | undefined
        const candidates = offer?.candidates ?? (p.candidates as string[] | undefined) ?? []
        const basis = offer?.selectionBasis ?? (p.selectionBasis as Record<string, unknown> | undefined) ?? {}
        const pkg: unknown = (offer as {contextPackage?: unknown} | undefined)?.contextPackage ?? p.contextPackage
        const prior = before?.workItems[workItemId]
        f.offers.push({
          workItemId,
          candidates,
          basisFor: Object.keys(basis),
          ownershipEpochBefore: prior?.ownershipEpoch ?? 0,
          at,
          afterRejection: prior?.failure != null && prior.failure.evidenceHashes.length > 0,
          reworkFindings: reworkOf(isRecord(pkg) ? pkg : undefined)?.failures ?? [],
          presence: Object.values(basis).map((b) => {
            const rules = isRecord(b) && Array.isArray(b.policyRulesApplied) ? b.policyRulesApplied.map(String) : []
            return rules.find((r) => r.startsWith('presence: '))?.slice('presence: '.length) ?? 'none'
          }),
        })
        break
      }
      case 'work.offer.accepted':
        f.acceptedAt.set(workItemId, at)
        break
      case 'mission.submitted_for_approval':
        f.submissions.push({
          at,
          missionRevision: Number(p.missionRevision),
          artifactHashes: (p.artifactHashes as string[]) ?? [],
        })
        break
      case 'mission.approved': {
        const approval = p.approval as {approver?: {id: string}; artifactHashes?: string[]; missionRevision?: number}
        f.approvals.push({
          at,
          sequence: e.sequence,
          approverId: approval?.approver?.id ?? e.actor.id,
          artifactHashes: approval?.artifactHashes ?? [],
          missionRevision: Number(approval?.missionRevision),
          document: p.approval as Record<string, unknown>,
        })
        break
      }
      case 'mission.changes_requested':
        f.changeRequests.push({at, reason: String(p.reason)})
        break
      case 'artifact.published': {
        const m = p.artifact as {contentHash?: string; extensions?: Record<string, {data?: {name?: string}}>}
        const name = m.extensions?.[FILE_NAME_EXTENSION]?.data?.name
        if (m.contentHash && name) f.names.set(m.contentHash, name)
        break
      }
      case 'ext.missionweaveprotocol.core.late_result_recorded':
        f.lateResults.push({workItemId, agentId: e.actor.id, at})
        break
      case 'mission.child.created': {
        const child = p.child as {groupId?: string} | undefined
        const g = child?.groupId ?? (p.groupId as string | undefined)
        if (typeof g === 'string' && g !== f.groupId) void this.watch(g)
        break
      }
    }
    const end = END[e.kind]
    if (end !== undefined) {
      const run = openRun()
      if (run) {
        run.endedAt = at
        run.outcome = end
      }
      if (e.kind === 'work.failed' && e.actor.id !== before?.workItems[workItemId]?.owner?.agentId)
        f.rejections.push({
          workItemId,
          actorId: e.actor.id,
          reason: String(p.reason),
          evidenceHashes: (p.evidenceHashes as string[]) ?? [],
          at,
        })
    }
    // A run whose WorkItem was offered to someone else (the lease lapsed) or revoked is lost.
    if ((e.kind === 'work.offer.created' || e.kind === 'ext.missionweaveprotocol.core.lease_revoked') && workItemId) {
      const run = openRun()
      if (run) {
        run.endedAt = at
        run.outcome = 'lost'
      }
    }
  }
}

/** The last element matching `match` (Array.prototype.findLast is ES2023; the project targets ES2022). */
export function lastOf<T>(items: readonly T[], match: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) if (match(items[i]!)) return items[i]
  return undefined
}
