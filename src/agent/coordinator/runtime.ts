// The Coordinator runtime (spec §7.2, §7.3, §10, §13.2, §14): one OS process per Coordinator
// Agent, talking to the Group Authority only over `wss`.
//
//   EVENT ──▶ MissionView (apply, per Group) ──▶ planner.nextSteps (pure) ──▶ one signed Command
//   per Group at a time, sent with the view's revision as expectedRevision (§15.3)
//
// Every Command carries `expectedRevision`, so a view that is behind — just started, replaying, or
// a replacement Coordinator reconciling by replay (§7.2) — can never act on stale state: the
// authority answers REVISION_CONFLICT and the Coordinator tries again once it has caught up. The
// WorkItem IDs are derived from the Mission and the plan (planned.ts), so nothing is created twice.
// Reviews run real programs and take seconds: they run beside the loop, and their verdict is sent
// when it is ready, if the WorkItem still holds the reviewed submission.

import type {WorkItemView} from '../../authority/model/state.js'
import type {SigningKey} from '../../crypto/keyfile.js'
import type {JsonObject} from '../../json/parse.js'
import {canonicalize} from '../../json/jcs.js'
import {formatUtcNow, formatUtcSeconds} from '../../json/timestamp.js'
import {buildCommand, buildFinalApproval} from '../../operator/command-builder.js'
import type {RegistryEvidence} from '../../signing/registry.js'
import {type DeliveredEvent, WireClient} from '../../wire/client.js'
import {type AgentEntry, type PresenceView, presenceViews} from './candidates.js'
import {handoverContext, offerContext} from './context.js'
import {type ArtifactName, contractFor} from './contract.js'
import {type MissionView, applyEvent, newView} from './mission-view.js'
import {type Plan, planFor} from './plan.js'
import {derivedUrn, instantiate} from './planned.js'
import {type Step, loadOf, nextSteps} from './planner.js'
import {type ReviewFile, type ReviewReport, failures, reviewSubmission} from './review.js'

export interface CoordinatorOptions {
  url: string
  ca?: string | Buffer
  key: SigningKey
  registry: RegistryEvidence
  plans: Plan[]
  /** The Organization's Agents (verified Agent Cards, candidates.ts readAgentDirectory). */
  agents: AgentEntry[]
  acceptedBy?: string[]
  /** Coordinator lease length asked for at each renewal (default 60 s); renewed at half-time. */
  leaseSeconds?: number
  /** How long an offer stands (default: the plan's offerSeconds, else 60 s). */
  offerSeconds?: number
  reviewTimeoutMs?: number
  log?: (entry: Record<string, unknown>) => void
  clock?: () => number
}

export interface CoordinatorStatus {
  agentId: string
  groups: {groupId: string; missionId: string; state: string; sequence: number; coordinating: boolean}[]
  reviews: number
}

export interface RunningCoordinator {
  readonly agentId: string
  status(): CoordinatorStatus
  stop(): Promise<void>
}

const TICK_MS = 500
const RUN_MS = 30_000
/** How often the Organization's Presence is read again for the selection basis (§6.2 records live 30 s). */
const PRESENCE_REFRESH_MS = 5_000
const REFUSAL_BACKOFF_MS = 2_000

export async function startCoordinator(options: CoordinatorOptions): Promise<RunningCoordinator> {
  const c = new Coordinator(options)
  await c.start()
  return c
}

/** A verdict waiting to be sent: the reviewed submission, and the report kept as an Artifact. */
interface Verdict {
  workItemId: string
  ownershipEpoch: number
  report: ReviewReport
  reportHash: string
}

class Coordinator implements RunningCoordinator {
  readonly agentId: string
  readonly #o: CoordinatorOptions
  readonly #now: () => number
  readonly #log: (entry: Record<string, unknown>) => void
  #client!: WireClient
  readonly #views = new Map<string, MissionView>()
  readonly #names = new Map<string, ArtifactName>()
  /** Per Group, the sequence a sent Command's Events reach: no new Command until the view has it. */
  readonly #awaiting = new Map<string, number>()
  /** Reviews running, by `${workItemId}#${ownershipEpoch}`, and verdicts ready to send, by Group. */
  readonly #reviewing = new Set<string>()
  readonly #verdicts = new Map<string, Verdict[]>()
  /** Steps already reported once (no-plan, give-up), not to flood the log. */
  readonly #said = new Set<string>()
  /** Per Group, no new Command before this time after a refusal other than a revision conflict. */
  readonly #backoff = new Map<string, number>()
  /** The last Presence read (wire/presence-routes.ts), when, and whether a read is under way. */
  #presence = new Map<string, PresenceView>()
  #presenceAt = -Infinity
  #presenceReading = false
  #tick: NodeJS.Timeout | null = null
  #passing: Promise<void> | null = null
  #again = false
  #stopped = false

  constructor(o: CoordinatorOptions) {
    this.#o = o
    this.agentId = o.key.principal!.id
    this.#now = o.clock ?? Date.now
    this.#log = o.log ?? ((e) => process.stderr.write(JSON.stringify({at: new Date().toISOString(), ...e}) + '\n'))
  }

  async start(): Promise<void> {
    this.#client = await WireClient.connect({
      url: this.#o.url,
      key: this.#o.key,
      registry: this.#o.registry,
      ...(this.#o.ca ? {ca: this.#o.ca} : {}),
      ...(this.#o.acceptedBy ? {acceptedBy: this.#o.acceptedBy} : {}),
      onSession: ({sessionEpoch, reconnect}) => {
        this.#log({level: 'info', event: reconnect ? 'reconnected' : 'connected', role: 'coordinator', sessionEpoch})
        this.#wake()
      },
      onNotice: (n) => this.#log({level: 'warn', event: 'notice', ...n}),
    })
    // Every Group this Agent is a member of: the Missions it coordinates and the child Missions
    // it owns. The view is rebuilt by replay from the visibility start; nothing is kept on disk.
    await this.#client.watchGroups(({groupId, afterSequence}) => {
      if (this.#views.has(groupId)) return
      this.#views.set(groupId, newView(groupId))
      this.#log({level: 'info', event: 'group-announced', groupId, afterSequence})
      void this.#client.subscribe(groupId, {afterSequence}, (e) => this.#onEvent(e))
    })
    this.#refreshPresence()
    this.#tick = setInterval(() => {
      this.#refreshPresence()
      this.#wake()
    }, TICK_MS)
    this.#tick.unref()
  }

  #onEvent(e: DeliveredEvent): void {
    const view = this.#views.get(e.groupId)
    if (view === undefined) return
    applyEvent(view, e.document, this.#names)
    this.#wake()
  }

  #wake(): void {
    if (this.#stopped) return
    if (this.#passing) {
      this.#again = true
      return
    }
    this.#passing = (async () => {
      do {
        this.#again = false
        try {
          await this.#pass()
        } catch (e) {
          this.#log({level: 'error', event: 'pass-failed', why: (e as Error).stack ?? String(e)})
        }
      } while (this.#again && !this.#stopped)
      this.#passing = null
    })()
  }

  /** Reads the Organization's Presence in the background (every tick, once connected); a pass uses what was last read. */
  #refreshPresence(): void {
    if (this.#presenceReading || this.#now() - this.#presenceAt < PRESENCE_REFRESH_MS) return
    this.#presenceReading = true
    this.#client
      .presence()
      .then((records) => {
        this.#presence = presenceViews(records)
        this.#presenceAt = this.#now()
      })
      .catch((e: Error) => this.#log({level: 'warn', event: 'presence-unavailable', why: e.message}))
      .finally(() => (this.#presenceReading = false))
  }

  async #pass(): Promise<void> {
    const ctx = {
      self: this.agentId,
      plans: this.#o.plans,
      agents: this.#o.agents,
      names: this.#names,
      load: loadOf(this.#views.values()),
      nowMs: this.#now(),
      renewBeforeMs: ((this.#o.leaseSeconds ?? 60) * 1000) / 2,
      runMs: RUN_MS,
      presence: this.#presence,
    }
    // Groups in parallel: one Group's Command never waits for another's.
    await Promise.all(
      [...this.#views.values()].map(async (view) => {
        if (view.state === null || (this.#awaiting.get(view.groupId) ?? 0) > (view.last?.sequence ?? 0)) return
        const verdict = this.#verdicts.get(view.groupId)?.shift()
        if (verdict !== undefined) return this.#sendVerdict(view, verdict)
        if ((this.#backoff.get(view.groupId) ?? 0) > ctx.nowMs) return
        for (const step of nextSteps(ctx, view)) {
          if (step.kind === 'review') this.#startReview(view, step.item)
          else if (step.kind === 'no-plan')
            this.#once(`no-plan:${view.groupId}`, {
              level: 'warn',
              event: 'no-plan',
              groupId: view.groupId,
              objective: view.state.mission.objective,
            })
          else if (step.kind === 'give-up')
            this.#once(`give-up:${step.item.workItemId}`, {
              level: 'warn',
              event: 'rounds-exhausted',
              groupId: view.groupId,
              workItemId: step.item.workItemId,
              instance: step.planned.instance,
            })
          else return this.#take(view, step)
        }
      }),
    )
  }

  /** Sends the one Command of `step`. */
  async #take(view: MissionView, step: Exclude<Step, {kind: 'review' | 'no-plan' | 'give-up'}>): Promise<void> {
    const state = view.state!
    const g = view.groupId
    switch (step.kind) {
      case 'renew': {
        const leaseExpiresAt = formatUtcSeconds(this.#now() + (this.#o.leaseSeconds ?? 60) * 1000)
        return this.#command(view, 'mission.renew_coordinator', {leaseExpiresAt}, {revision: false})
      }
      case 'authorize': {
        const plan = this.#planOf(view)!
        const contract = contractFor(
          plan,
          step.planned,
          {dependencyWorkItemIds: step.dependencyWorkItemIds, artifacts: step.inputs},
          this.#now(),
        )
        // Inputs made in another Group (a child Mission's result) are copied into this Group's
        // store first, so the Worker can fetch them here.
        await this.#ensureStored(
          view,
          step.inputs.map((i) => i.hash),
        )
        return this.#command(view, 'work.authorize', {workItemId: step.planned.workItemId, contract})
      }
      case 'offer': {
        const plan = this.#planOf(view)!
        const seconds = this.#o.offerSeconds ?? plan.defaults?.offerSeconds ?? 60
        const candidate = step.candidate.agent.agentId
        this.#log({
          level: 'info',
          event: 'offer',
          groupId: g,
          workItemId: step.item.workItemId,
          instance: step.planned.instance,
          candidate,
          why: step.why,
          basis: step.candidate.basis,
        })
        return this.#command(view, 'work.offer', {
          workItemId: step.item.workItemId,
          candidates: [candidate],
          expiresAt: formatUtcSeconds(this.#now() + seconds * 1000),
          selectionBasis: {[candidate]: step.candidate.basis},
          contextPackage: offerContext(this.#o.key, view, step.item),
        })
      }
      case 'child': {
        const child = step.planned.item.child!
        const missionId = derivedUrn(state.missionId, 'child-mission', step.planned.instance)
        const c = step.item.contract
        const payload = {
          workItemId: step.item.workItemId,
          missionId,
          groupId: derivedUrn(state.missionId, 'child-group', step.planned.instance),
          objective: child.objective,
          definitionOfDone: c.acceptanceCriteria,
          deadline: c.deadline,
          budget: child.budget ?? c.budget,
          // §14: a child may tighten, never relax, its parent's execution-approval policy.
          approvalPolicy: {
            finalHumanApproval: false,
            highRiskExecutionApproval: state.mission.approvalPolicy.highRiskExecutionApproval === true,
          },
          coordinatorAgentId: step.coordinator.agentId,
          childFailurePolicy: {onFailure: child.onFailure ?? 'block', indispensable: false},
        }
        this.#log({level: 'info', event: 'child-mission', groupId: g, workItemId: step.item.workItemId, missionId})
        return this.#command(view, 'mission.create_child', payload)
      }
      case 'submit':
        this.#log({level: 'info', event: 'submit-for-approval', groupId: g, artifacts: step.artifactHashes.length})
        return this.#command(view, 'mission.submit_for_approval', {
          artifactHashes: step.artifactHashes,
          summary: summaryOf(view),
        })
      case 'handover': {
        const pkg = handoverContext(this.#o.key, view)
        const bytes = Buffer.from(canonicalize(pkg))
        const contextPackageHash = await this.#client.putArtifact(g, bytes)
        const coordinatorEpoch = state.mission.coordinator!.coordinatorEpoch
        this.#log({level: 'info', event: 'handover', groupId: g, coordinatorEpoch, contextPackageHash})
        const notice = {
          coordinatorHandover: {coordinatorEpoch, contextPackageId: pkg.contextPackageId, contextPackageHash},
        }
        return this.#command(view, 'message.post', {text: JSON.stringify(notice)}, {revision: false})
      }
      case 'approve-child': {
        // §14: the Parent Coordinator is the child's MissionOwner; the child Coordinator reviewed
        // every WorkItem, and the approved result becomes the parent WorkItem's Evidence.
        const approval = buildFinalApproval(this.#o.key, state, {
          comments: 'Child Mission result reviewed by its Coordinator; accepted by the Parent Coordinator.',
        })
        this.#log({level: 'info', event: 'approve-child', groupId: g, missionId: state.missionId})
        return this.#command(view, 'mission.approve', {approval})
      }
    }
  }

  /** Runs the review of `item`'s current submission beside the loop (once per submission). */
  #startReview(view: MissionView, item: WorkItemView): void {
    const id = `${item.workItemId}#${item.ownershipEpoch}`
    if (this.#reviewing.has(id)) return
    this.#reviewing.add(id)
    const g = view.groupId
    void (async () => {
      try {
        const plan = this.#planOf(view)!
        const planned = instantiate(plan, view.state!.missionId, view.changeReasons)
        const criteria = planned.find((p) => p.workItemId === item.workItemId)?.item.criteria
        const submitted = await this.#files(g, item.submission?.artifactHashes ?? [])
        const inputs = await this.#files(g, item.contract.inputArtifacts)
        const report = await reviewSubmission({
          workItemId: item.workItemId,
          ownershipEpoch: item.ownershipEpoch,
          submitted,
          inputs,
          criteria: criteria ?? [],
          evidence: item.submission?.evidence ?? [],
          ...(this.#o.reviewTimeoutMs ? {timeoutMs: this.#o.reviewTimeoutMs} : {}),
        })
        const reportHash = await this.#client.putArtifact(g, Buffer.from(canonicalize(report as unknown as JsonObject)))
        this.#log({
          level: 'info',
          event: 'reviewed',
          groupId: g,
          workItemId: item.workItemId,
          verdict: report.verdict,
          failed: failures(report),
          reportHash,
        })
        const list = this.#verdicts.get(g) ?? []
        list.push({workItemId: item.workItemId, ownershipEpoch: item.ownershipEpoch, report, reportHash})
        this.#verdicts.set(g, list)
      } catch (e) {
        // Unreachable store, a vanished Artifact: the review is tried again at the next pass.
        this.#reviewing.delete(id)
        this.#log({level: 'warn', event: 'review-failed', groupId: g, workItemId: item.workItemId, why: String(e)})
      }
      this.#wake()
    })()
  }

  async #sendVerdict(view: MissionView, v: Verdict): Promise<void> {
    const item = view.state!.workItems[v.workItemId]
    // The submission moved on (a cancellation, a replacement Coordinator decided): nothing to say.
    if (item?.state !== 'submitted' || item.ownershipEpoch !== v.ownershipEpoch) return
    if (v.report.verdict === 'accept')
      return this.#command(view, 'work.accept_result', {workItemId: v.workItemId}, {revision: false})
    const reason = failures(v.report).join('\n').slice(0, 4000) || 'review failed'
    return this.#command(
      view,
      'work.fail',
      {workItemId: v.workItemId, reason, evidenceHashes: [v.reportHash]},
      {revision: false},
    )
  }

  /** Signs and sends one Command in `view`'s Group; on acceptance, waits for its Events before the next. */
  async #command(
    view: MissionView,
    kind: string,
    payload: Record<string, unknown>,
    o: {revision?: boolean} = {},
  ): Promise<void> {
    const state = view.state!
    // The view's position when the Command was decided: a conflict means the log moved past it.
    const decidedAt = view.last?.sequence ?? 0
    const built = buildCommand(this.#o.key, {
      kind,
      groupId: view.groupId,
      payload,
      state,
      ...(this.#client.sessionEpoch !== undefined ? {sessionEpoch: this.#client.sessionEpoch} : {}),
      ...(o.revision === false ? {} : {expectedRevision: state.revision}),
      ...(typeof payload.workItemId === 'string' && kind.startsWith('work.') ? {workItemId: payload.workItemId} : {}),
    })
    const r = await this.#client.submit(built.bytes)
    if ('receipt' in r) {
      this.#awaiting.set(view.groupId, r.receipt.lastSequence)
      this.#log({level: 'info', event: 'accepted', kind, groupId: view.groupId, sequence: r.receipt.lastSequence})
      return
    }
    const level = r.error.code === 'REVISION_CONFLICT' ? 'debug' : 'warn'
    this.#log({level, event: 'refused', kind, groupId: view.groupId, code: r.error.code, details: r.error.details})
    // A refusal changed nothing. A revision conflict means the view is behind: try again once the
    // Event after the decision's position is in (it may be already, while the answer travelled). Anything else is not going to change by itself soon: back off.
    if (r.error.code === 'REVISION_CONFLICT') this.#awaiting.set(view.groupId, decidedAt + 1)
    else this.#backoff.set(view.groupId, this.#now() + REFUSAL_BACKOFF_MS)
  }

  async #files(groupId: string, hashes: readonly string[]): Promise<ReviewFile[]> {
    const out: ReviewFile[] = []
    for (const hash of hashes) {
      const bytes = await this.#fetch(groupId, hash)
      out.push({name: this.#names.get(hash)?.name ?? hash, hash, bytes})
    }
    return out
  }

  /** Artifact bytes from this Group's store, else from the Group this Coordinator saw publish them. */
  async #fetch(groupId: string, hash: string): Promise<Buffer> {
    try {
      return await this.#client.getArtifact(groupId, hash)
    } catch (first) {
      const publisher = [...this.#views.values()].find(
        (v) => v.groupId !== groupId && Object.values(v.state?.artifacts ?? {}).some((a) => a.contentHash === hash),
      )
      if (publisher === undefined) throw first
      return await this.#client.getArtifact(publisher.groupId, hash)
    }
  }

  /** Copies into `view`'s Group the inputs published elsewhere (a child Mission's result); those published here are there. */
  async #ensureStored(view: MissionView, hashes: readonly string[]): Promise<void> {
    const here = new Set(Object.values(view.state!.artifacts ?? {}).map((a) => a.contentHash))
    for (const hash of hashes) {
      if (here.has(hash)) continue
      try {
        await this.#client.getArtifact(view.groupId, hash)
      } catch {
        await this.#client.putArtifact(view.groupId, await this.#fetch(view.groupId, hash))
      }
    }
  }

  #planOf(view: MissionView): Plan | null {
    return planFor(this.#o.plans, view.state!.mission)
  }

  #once(key: string, entry: Record<string, unknown>): void {
    if (this.#said.has(key)) return
    this.#said.add(key)
    this.#log(entry)
  }

  status(): CoordinatorStatus {
    return {
      agentId: this.agentId,
      groups: [...this.#views.values()]
        .filter((v) => v.state !== null)
        .map((v) => ({
          groupId: v.groupId,
          missionId: v.state!.missionId,
          state: v.state!.mission.state,
          sequence: v.last?.sequence ?? 0,
          coordinating: v.state!.mission.coordinator?.agentId === this.agentId,
        })),
      reviews: this.#reviewing.size,
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#tick) clearInterval(this.#tick)
    await this.#passing
    await this.#client.close()
  }
}

/** §7.3: a narrative summary beside the derived state — counts, never a percentage. */
function summaryOf(view: MissionView): string {
  const items = Object.values(view.state!.workItems)
  const verified = items.filter((w) => w.state === 'verified').length
  const rounds = [...view.failures.values()].reduce((n, f) => n + f.length, 0)
  return `${verified} WorkItems verified by review; ${rounds} submission(s) sent back for rework; ${view.changeReasons.length} change request(s) addressed. Submitted at ${formatUtcNow()}.`
}
