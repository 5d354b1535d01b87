// The Agent runtime (spec §8, §10.3, §11, §12, §13, §16): one OS process per Agent identity,
// talking to the Group Authority only over `wss` through the wire client.
//
//   Events ──▶ AgentStore.apply (one local transaction: dedupe, contiguity, projection, intent,
//              Cursor) ──▶ ACK ──▶ intents: evaluate an offer, queue owned work, stop lost work
//   Scheduler (pure, slot-time fair) ──▶ work.start ──▶ a slot process runs the handler ──▶
//              lease renewals while it runs ──▶ work.submit | work.checkpoint | work.block | work.fail
//
// Everything the runtime decides comes from Events applied to its local store, so deleting the
// store and replaying rebuilds the same queues; the runtime's in-memory state is only what is
// running right now. The Agent's key stays in this process; slots get their WorkSpec only.

import {mkdirSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import type {UsageDelta} from '../authority/model/budget.js'
import {OFFLINE_GRACE_SECONDS} from '../authority/model/work-leases.js'
import {sha256Hex} from '../crypto/hash.js'
import type {SigningKey} from '../crypto/keyfile.js'
import {type ErrorCode, type ProtocolError, detailsOf} from '../errors.js'
import {parseJsonBytes, type JsonObject} from '../json/parse.js'
import {durationMs, formatUtcNow} from '../json/timestamp.js'
import {canonicalize} from '../json/jcs.js'
import type {RegistryEvidence} from '../signing/registry.js'
import {type DeliveredEvent, WireClient, WireError, isIndeterminate} from '../wire/client.js'
import {admit, type Capability} from './admission.js'
import {
  AgentCommands,
  type CommandTarget,
  type LeaseRef,
  checkpointPayload,
  postPayload,
  progressPayload,
} from './agent-commands.js'
import {type ProducedArtifact, artifactManifest, artifactUri} from './artifact-manifest.js'
import {BlobStore} from './blobs.js'
import type {AgentHandler, EvidenceClaim, Progress, WorkSpec} from './handler.js'
import {
  type BufferedCommand,
  OfflineBufferError,
  bufferCommand,
  offlineBinding,
  rebaseBuffered,
} from './offline-binding.js'
import {mutated} from '../mutants.js'
import {AgentStore, type Intent, type QueueEntry} from './local-store.js'
import {Scheduler, type SchedulerOptions} from './scheduler.js'
import {DEFAULT_GROUP_POLICY, type GroupPolicySource} from './scheduling-policy.js'
import {type HandlerSpec, type SlotResult, type SlotRun, startSlot} from './slots.js'

export interface AgentOptions {
  url: string
  ca?: string | Buffer
  key: SigningKey
  registry: RegistryEvidence
  /** The Agent's verified Agent Card document (capabilities, maxConcurrency). */
  card: JsonObject
  /** The local SQLite file; blobs and slot working directories live beside it. */
  db: string
  /** Execution slots (capped by the Agent Card's maxConcurrency). */
  slots?: number
  handler: HandlerSpec
  /** Owned, unfinished WorkItems the Agent commits to at most (default 4 per slot). */
  capacity?: number
  /** Requested lease length at each renewal (default: the authority's policy). */
  leaseSeconds?: number
  /**
   * Scheduler tuning (slots come from `slots`). maxWaitMs (default 10 minutes) bounds how long a
   * Group with ready work and nothing running waits before a preemptible run is asked to
   * checkpoint for it; preemptLagMs (default none) also preempts on share lag.
   */
  scheduler?: Partial<Omit<SchedulerOptions, 'slots'>>
  /**
   * Organization policy (§11.1): a Group's weight, priority class and quota (default weight 1,
   * class 0); see scheduling-policy.ts for the file `mwp agent run --scheduling-policy` reads.
   */
  groupPolicy?: GroupPolicySource
  /** The Group Authority services trusted to accept Events. */
  acceptedBy?: string[]
  /** JSON log lines (default: stderr). */
  log?: (entry: Record<string, unknown>) => void
  /** The Organization's offline grace after a lease expiry (leases.offlineGraceSeconds, §11.5). */
  offlineGraceSeconds?: number
  /** Milliseconds since the epoch (tests inject a clock). */
  clock?: () => number
}

export interface AgentStatus {
  agentId: string
  sessionEpoch: number | undefined
  slots: number
  running: {groupId: string; workItemId: string; since: number}[]
  groups: number
}

export interface RunningAgent {
  readonly agentId: string
  status(): AgentStatus
  /** A changed Organization policy: every followed Group's share and class, effective at the next decision. */
  setGroupPolicy(source: GroupPolicySource): void
  /** Graceful: no new starts, running work asked to checkpoint (up to `graceMs`), then disconnect. */
  stop(graceMs?: number): Promise<void>
}

interface Run {
  entry: QueueEntry
  target: CommandTarget
  lease: LeaseRef
  leaseExpiresAt: number
  slot: SlotRun | null
  /** What the slot was given (null until the lease is known). */
  spec: WorkSpec | null
  since: number
  progress: Progress
  checkpointHash: string | null
  artifacts: ProducedArtifact[]
  evidence: {criterionIds: string[]; claim: EvidenceClaim}[]
  usage: UsageDelta
  renewTimer: NodeJS.Timeout | null
  /** §11.5: how the slot ended while the service was unreachable, sent once the run has a new lease. */
  held: SlotResult | null
  /** §11.5: its lease lapsed offline; the next checkpoint goes under the historical lease (#rescue). */
  rescue: boolean
}

/**
 * The link to the Group service (§11.5): `offline` while unreachable (progress and checkpoints are
 * buffered), `reconciling` from the new session until the buffer is reconciled and every surviving
 * run holds a new lease. Only `online` acts on intents or starts work.
 */
type Link = 'online' | 'offline' | 'reconciling'

/** Protocol time of an instant in ms. */
const stamp = (ms: number) => formatUtcNow(new Date(ms))
const key = (groupId: string, workItemId: string) => `${groupId}\n${workItemId}`
/**
 * Refusals of a submission that are no verdict on it: this run no longer holds the WorkItem, or
 * the authority could not decide now (retryable). Nothing to fail.
 */
const NO_VERDICT: ReadonlySet<ErrorCode> = new Set([
  'INTERNAL_ERROR',
  'BACKPRESSURE',
  'RATE_LIMITED',
  'WORK_LEASE_EXPIRED',
  'WORK_STALE_OWNERSHIP',
  'AUTH_STALE_SESSION',
  'INVALID_STATE_TRANSITION',
])
/** Work that may be preempted, and may go on while the service is unreachable (§11.3, §11.5). */
/** Refusals that say "not now": a buffered Command stays for the next try. */
const RETRY_LATER: ReadonlySet<ErrorCode> = new Set(['INTERNAL_ERROR', 'BACKPRESSURE', 'RATE_LIMITED'])
const REVERSIBLE_RISK: ReadonlySet<unknown> = new Set(['none', 'reversible'])
/** The failure class of a handler process that died without an outcome (retryable if the contract lists it). */
const HANDLER_CRASHED = 'HANDLER_CRASHED'
const TICK_MS = 1000
/** How long a started run waits for its work.started Event to reach the local projection. */
const ENTRY_WAIT_MS = 6000
/** §6.2/§11.1: Presence (free slots) rides on a PING this often, and when the slots change. */
const PRESENCE_MS = 10_000

export async function startAgent(options: AgentOptions): Promise<RunningAgent> {
  const runtime = new AgentRuntime(options)
  await runtime.start()
  return runtime
}

class AgentRuntime implements RunningAgent {
  readonly agentId: string
  readonly #o: AgentOptions
  readonly #store: AgentStore
  readonly #blobs: BlobStore
  readonly #commands: AgentCommands
  readonly #scheduler: Scheduler
  readonly #slots: number
  readonly #runs = new Map<string, Run>()
  /** Per Group, the runs waiting for an Event to reach their WorkItem's projection (#awaitEntry). */
  readonly #waiters = new Map<string, Set<() => void>>()
  /** Groups this process is subscribed to. */
  readonly #followed = new Set<string>()
  /** §11.4: when a WorkItem waiting out its retry backoff becomes eligible again (ms). */
  readonly #retryAt = new Map<string, number>()
  readonly #now: () => number
  readonly #log: (entry: Record<string, unknown>) => void
  #client!: WireClient
  #tick: NodeJS.Timeout | null = null
  #presenceAt = 0
  #pumping: Promise<void> | null = null
  #again = false
  #stopping = false
  #handler: AgentHandler | null = null
  #link: Link = 'online'
  /** When the service was lost (the binding's disconnectedAt). */
  #offlineSince = 0
  #reconciling: Promise<void> | null = null
  #groupPolicy: GroupPolicySource

  constructor(o: AgentOptions) {
    this.#o = o
    this.#groupPolicy = o.groupPolicy ?? (() => DEFAULT_GROUP_POLICY)
    this.agentId = o.key.principal!.id
    this.#now = o.clock ?? Date.now
    this.#log = o.log ?? ((e) => process.stderr.write(JSON.stringify({at: new Date().toISOString(), ...e}) + '\n'))
    const max = typeof o.card.maxConcurrency === 'number' ? o.card.maxConcurrency : 1
    this.#slots = Math.max(1, Math.min(o.slots ?? max, max))
    mkdirSync(dirname(o.db), {recursive: true})
    this.#store = AgentStore.open(o.db, {agentId: this.agentId})
    this.#blobs = new BlobStore(join(dirname(o.db), 'blobs'))
    this.#commands = new AgentCommands(o.key)
    this.#scheduler = new Scheduler({maxWaitMs: 10 * 60_000, ...o.scheduler, slots: this.#slots})
  }

  async start(): Promise<void> {
    if ('module' in this.#o.handler) {
      const m = (await import(new URL(`file://${this.#o.handler.module}`).href)) as {
        default?: AgentHandler
        handler?: AgentHandler
      }
      this.#handler = m.handler ?? m.default ?? null
    }
    const store = this.#store
    this.#client = await WireClient.connect({
      url: this.#o.url,
      key: this.#o.key,
      registry: this.#o.registry,
      ...(this.#o.ca ? {ca: this.#o.ca} : {}),
      ...(this.#o.acceptedBy ? {acceptedBy: this.#o.acceptedBy} : {}),
      autoAck: false,
      // The local store is the durable Cursor: it commits the Cursor with the Event it applied.
      cursors: {load: (g) => store.cursor(g), save: () => undefined},
      onSession: ({sessionEpoch, reconnect}) => {
        this.#log({level: 'info', event: reconnect ? 'reconnected' : 'connected', sessionEpoch})
        if (reconnect) this.#reconnected()
      },
      onDisconnected: () => this.#disconnected(),
      onNotice: (n) => this.#log({level: 'warn', event: 'notice', ...n}),
    })
    // What a previous process buffered offline is reconciled before this one acts (§11.5).
    if (store.offlineBuffer().length > 0) this.#reconnected()
    for (const g of store.groups()) if (g.ended === null) await this.#subscribe(g.groupId)
    await this.#client.watchGroups(({groupId, afterSequence}) => {
      const known = store.group(groupId)
      // Known and followed: nothing to do. Known but over (its Membership ended): a new Membership
      // reopens it, and the replay from the Cursor passes the invisible stretch by the server's marker.
      if (known && this.#followed.has(groupId)) return
      if (!known) store.join(groupId, afterSequence)
      // A Group-ended intent not acted on yet is moot now: acting on it would unsubscribe the
      // subscription this new Membership is about to open.
      for (const i of store.pendingIntents())
        if (i.workItemId === null && i.groupId === groupId) store.resolveIntent(i.id)
      this.#log({level: 'info', event: 'group-announced', groupId, afterSequence})
      void this.#subscribe(groupId)
    })
    this.#tick = setInterval(() => {
      if (this.#now() - this.#presenceAt >= PRESENCE_MS) this.#presence()
      this.#wake()
    }, TICK_MS)
    this.#tick.unref()
    this.#wake()
  }

  async #subscribe(groupId: string): Promise<void> {
    this.#followed.add(groupId)
    this.#applyPolicy(groupId)
    await this.#client.subscribe(
      groupId,
      {
        onDeliveredThrough: (sequence) => {
          if (this.#store.deliveredThrough(groupId, sequence) > 0) {
            this.#appliedTo(groupId)
            this.#wake()
          }
        },
        onError: (e: ProtocolError) => {
          this.#followed.delete(groupId)
          this.#log({level: 'warn', event: 'subscription-ended', groupId, code: e.code})
        },
      },
      (e) => this.#onEvent(e),
    )
  }

  /** The Group's policy into the Scheduler and its local queue rows; one the Scheduler refuses falls back to the default. */
  #applyPolicy(groupId: string): void {
    let policy = this.#groupPolicy(groupId)
    if (mutated('ignored-quotas')) policy = {weight: policy.weight, priorityClass: policy.priorityClass}
    try {
      this.#scheduler.setGroup(groupId, policy)
    } catch (e) {
      this.#log({level: 'warn', event: 'policy-refused', groupId, why: (e as Error).message})
      policy = DEFAULT_GROUP_POLICY
      this.#scheduler.setGroup(groupId, policy)
    }
    if (this.#store.group(groupId)?.priorityClass !== policy.priorityClass)
      this.#store.setPriorityClass(groupId, policy.priorityClass)
  }

  setGroupPolicy(source: GroupPolicySource): void {
    this.#groupPolicy = source
    for (const groupId of this.#followed) this.#applyPolicy(groupId)
    this.#log({level: 'info', event: 'policy-changed', groups: this.#followed.size})
    this.#wake()
  }

  async #onEvent(e: DeliveredEvent): Promise<void> {
    this.#store.apply(e)
    const cursor = this.#store.cursor(e.groupId)
    if (cursor !== null && !mutated('cursor-never-acked')) void this.#client.ack(e.groupId, cursor)
    this.#appliedTo(e.groupId)
    this.#wake()
  }

  /** Runs one pass of intents and scheduling; passes never overlap, and a wake during one runs another. */
  #wake(): void {
    if (this.#pumping) {
      this.#again = true
      return
    }
    this.#pumping = this.#pass()
      .catch((e: Error) => this.#log({level: 'error', event: 'pass-failed', reason: e.stack ?? e.message}))
      .finally(() => {
        this.#pumping = null
        if (this.#again) {
          this.#again = false
          this.#wake()
        }
      })
  }

  async #pass(): Promise<void> {
    this.#checkLeases()
    // §11.5: nothing new while the service is unreachable or not yet reconciled.
    if (this.#link !== 'online') return
    for (const intent of this.#store.pendingIntents()) {
      if (intent.workItemId === null) {
        // group-ended: the Mission ended or this Agent's Membership did; nothing more to do there.
        this.#client.unsubscribe(intent.groupId)
        this.#followed.delete(intent.groupId)
        this.#log({level: 'info', event: 'group-ended', groupId: intent.groupId, cause: intent.payload.cause})
        this.#store.resolveIntent(intent.id)
        continue
      }
      const entry = this.#store.entry(intent.groupId, intent.workItemId)
      if (!entry || (await this.#act(intent, entry))) this.#store.resolveIntent(intent.id)
    }
    if (this.#stopping) return
    const victim = this.#scheduler.preemption(this.#now())
    if (victim)
      this.#runs
        .get(key(victim.groupId, victim.workItemId))
        ?.slot?.stop(mutated('preempt-unsafe') ? 'lease-lost' : 'yield')
    while (this.#runs.size < this.#slots) {
      const next = this.#scheduler.dispatch(this.#now())
      if (!next) break
      const entry = this.#store.entry(next.groupId, next.workItemId)
      if (!entry || !entry.mine || entry.state !== 'queued') {
        // Dispatched means running in the Scheduler: release it (remove would throw and leave the
        // slot counted busy). Queued again later (e.g. its checkpoint Event not yet applied), the
        // 'schedule' intent puts it back.
        this.#scheduler.release(next.groupId, next.workItemId, 0, this.#now(), false)
        continue
      }
      void this.#startRun(entry)
    }
  }

  /** §6.2 Presence: capacity and capability availability, never another Group's data. */
  #presence(): void {
    const now = this.#now()
    this.#presenceAt = now
    const sessionEpoch = this.#client.sessionEpoch
    if (sessionEpoch === undefined || !this.#client.connected) return
    const active = this.#runs.size
    const queued = Math.max(0, this.#store.ownedUnfinished() - active)
    void this.#client.ping({
      agentId: this.agentId,
      sessionEpoch,
      status: this.#stopping ? 'draining' : active >= this.#slots ? 'busy' : 'online',
      capacity: {maxSlots: this.#slots, activeSlots: active, availableSlots: this.#slots - active, queuedItems: queued},
      capabilityAvailability: this.#capabilities().map(({id, version}) => ({
        capability: {id, version},
        status: 'available',
      })),
      lastHeartbeat: stamp(now),
      expiresAt: stamp(now + 3 * PRESENCE_MS),
    })
  }

  #capabilities(): Capability[] {
    const declared = Array.isArray(this.#o.card.capabilities) ? this.#o.card.capabilities : []
    return declared.map((c) => ({id: String((c as JsonObject).id), version: String((c as JsonObject).version)}))
  }

  /** Returns true when the intent is handled (false: try again at the next pass). */
  async #act(intent: Intent, entry: QueueEntry): Promise<boolean> {
    switch (intent.kind) {
      case 'evaluate-offer':
        return this.#evaluateOffer(entry)
      case 'schedule':
        if (entry.mine && entry.state === 'queued' && this.#enqueue(entry)) await this.#disclose(entry)
        return true
      case 'stop': {
        const run = this.#runs.get(key(entry.groupId, entry.workItemId))
        // A running item leaves the Scheduler when its slot ends (#finish releases it). A run that
        // went on under a new lease after a reconnect (#resume) is not the one this stops.
        const ended = intent.payload.leaseId
        if (run && (ended === null || ended === run.lease.leaseId)) this.#lost(run, 'the authority ended this lease')
        else if (run) return true
        else this.#scheduler.remove(entry.groupId, entry.workItemId)
        return true
      }
      default:
        return true
    }
  }

  #target(entry: QueueEntry): CommandTarget | null {
    const membershipEpoch = this.#store.group(entry.groupId)?.view.membership?.membershipEpoch ?? null
    const sessionEpoch = this.#client.sessionEpoch
    if (membershipEpoch === null || sessionEpoch === undefined) return null
    return {
      groupId: entry.groupId,
      workItemId: entry.workItemId,
      ...(entry.conversationId ? {conversationId: entry.conversationId} : {}),
      sessionEpoch: mutated('no-session-fencing') ? 1 : sessionEpoch,
      membershipEpoch,
    }
  }

  async #evaluateOffer(entry: QueueEntry): Promise<boolean> {
    const offer = entry.offer
    if (!offer || !offer.candidate || entry.state !== 'offered') return true
    const now = this.#now()
    const committed = this.#store.ownedUnfinished()
    const contextPackage = entry.contextPackage ?? undefined
    let answer = admit({
      now,
      contract: entry.contract,
      offerExpiresAt: offer.expiresAt,
      capabilities: this.#capabilities(),
      committed,
      capacity: this.#o.capacity ?? this.#slots * 4,
      // The authority refuses an offer to a candidate the Coordinator does not find eligible (§10.3).
      authorizationEligible: true,
      unresolvedQuestions: (contextPackage?.unresolvedQuestions as string[] | undefined) ?? [],
    })
    if (answer.accept && this.#handler?.onOffer && entry.contract) {
      answer = await this.#handler.onOffer({
        groupId: entry.groupId,
        missionId: entry.missionId ?? '',
        workItemId: entry.workItemId,
        contract: entry.contract,
        expiresAt: offer.expiresAt,
        ...(contextPackage ? {contextPackage} : {}),
      })
    }
    const target = this.#target(entry)
    if (!target) return false
    if (!answer.accept) {
      this.#log({
        level: 'info',
        event: 'offer-declined',
        groupId: entry.groupId,
        workItemId: entry.workItemId,
        ...answer,
      })
      // v0.1 has no decline Command (§15.1): the structured reason goes to the WorkItem Conversation.
      await this.#submit(
        this.#commands.post(
          target,
          JSON.stringify({offerDeclined: offer.offerId, reason: answer.reason, detail: answer.detail ?? ''}),
        ),
        'decline',
      )
      return true
    }
    const r = await this.#submit(this.#commands.acceptOffer(target, offer.offerId), 'accept-offer')
    this.#log({
      level: 'info',
      event: r ? 'offer-accepted' : 'offer-lost',
      groupId: entry.groupId,
      workItemId: entry.workItemId,
    })
    return true
  }

  /** Queues an owned WorkItem with the Scheduler; false when it cannot be run (its contract is unknown). */
  #enqueue(entry: QueueEntry): boolean {
    const c = entry.contract
    if (c === null) return false // a WorkItem whose contract this Agent never saw is never run
    const gated = entry.executionApproval.required !== false && !entry.executionApproval.satisfied
    // §11.4 backoff: not eligible before its retry time; queued again for the Scheduler then.
    const k = key(entry.groupId, entry.workItemId)
    const retryIn = (this.#retryAt.get(k) ?? 0) - this.#now()
    if (retryIn > 0)
      setTimeout(() => {
        this.#retryAt.delete(k)
        const now = this.#store.entry(entry.groupId, entry.workItemId)
        if (now?.mine && now.state === 'queued' && this.#enqueue(now)) this.#wake()
      }, retryIn).unref()
    const item = {
      groupId: entry.groupId,
      workItemId: entry.workItemId,
      // No estimate: the Scheduler charges what this Group's finished runs used (§11.1 slot time).
      enqueuedAt: this.#now(),
      deadline: Date.parse(c.deadline),
      urgency: c.requestedUrgency,
      eligible: !gated && retryIn <= 0,
      preemptible: REVERSIBLE_RISK.has(c.sideEffectRisk),
    }
    this.#scheduler.upsert(item, this.#now())
    return true
  }

  /**
   * §11.2: on acceptance, the estimated start window, completion, confidence, capacity status and
   * calculation time, posted to the WorkItem's Conversation. The Scheduler computes it from this
   * Group's own queue and Worker-wide aggregates only (scheduler-disclosure.ts): nothing of
   * another Group's names, content, assignments or positions.
   */
  async #disclose(entry: QueueEntry): Promise<void> {
    const d = this.#scheduler.disclosure(entry.groupId, entry.workItemId, this.#now())
    const target = this.#target(entry)
    if (!d || !target) return
    const scheduleEstimate = {
      estimatedStart: stamp(d.estimatedStart),
      estimatedCompletion: stamp(d.estimatedCompletion),
      confidence: d.confidence,
      capacityStatus: d.capacityStatus,
      lastCalculatedAt: stamp(d.calculatedAt),
    }
    const startWindow = {earliest: stamp(d.startWindow.earliest), latest: stamp(d.startWindow.latest)}
    await this.#submit(this.#commands.post(target, JSON.stringify({scheduleEstimate, startWindow})), 'disclose')
  }

  /** work.start, then the run in a slot once the Execution Lease is known. */
  async #startRun(entry: QueueEntry): Promise<void> {
    const k = key(entry.groupId, entry.workItemId)
    const target = this.#target(entry)
    if (!target || !entry.owner) return this.#scheduler.release(entry.groupId, entry.workItemId, 0, this.#now(), true)
    const run: Run = {
      entry,
      target,
      lease: {ownershipEpoch: entry.owner.ownershipEpoch, leaseId: ''},
      leaseExpiresAt: 0,
      slot: null,
      spec: null,
      since: this.#now(),
      progress: {phase: 'starting'},
      checkpointHash: null,
      artifacts: [],
      evidence: [],
      usage: {},
      renewTimer: null,
      held: null,
      rescue: false,
    }
    this.#runs.set(k, run)
    const started = await this.#submit(this.#commands.start(target, run.lease.ownershipEpoch), 'start')
    const active = started ? await this.#awaitEntry(entry, (e) => e.state === 'active' && e.lease !== null) : null
    // Dispatched, so running in the Scheduler: release (remove would throw, rejecting this
    // un-awaited promise, and keep the slot counted busy).
    // Lost the service meanwhile: the new session revokes this lease, and the Events requeue it.
    if (!active || !active.lease || this.#link !== 'online') return this.#release(run, 0, false)
    run.entry = active
    run.lease.leaseId = active.lease.leaseId
    run.leaseExpiresAt = Date.parse(active.lease.expiresAt)
    this.#scheduleRenewal(run)
    const capabilityToken = await this.#capabilityToken(run)
    if (capabilityToken === null) return
    const resume = await this.#resumeState(active)
    // Per Agent and WorkItem: Agents sharing a directory never share a slot's files, even when a
    // WorkItem moved from one to the other (a reassignment after a lapsed lease).
    const slotKey = mutated('slot-leaks-context') ? this.agentId : `${this.agentId}\u0000${k}`
    const workDir = join(dirname(this.#o.db), 'slots', sha256Hex(slotKey).slice(0, 32))
    const inputs = await this.#inputs(run, `${workDir}.inputs`)
    if (inputs === null) return
    const spec: WorkSpec = {
      groupId: active.groupId,
      missionId: active.missionId ?? '',
      workItemId: active.workItemId,
      conversationId: active.conversationId ?? '',
      ownershipEpoch: run.lease.ownershipEpoch,
      leaseId: run.lease.leaseId,
      contract: active.contract!,
      ...(active.contextPackage ? {contextPackage: active.contextPackage} : {}),
      resume,
      attempt: this.#store.attempt(active.groupId, active.workItemId, run.lease.ownershipEpoch),
      ...(capabilityToken !== undefined ? {capabilityToken} : {}),
      inputs,
    }
    run.spec = spec
    mkdirSync(workDir, {recursive: true})
    this.#log({
      level: 'info',
      event: 'run-started',
      groupId: spec.groupId,
      workItemId: spec.workItemId,
      leaseId: spec.leaseId,
    })
    run.slot = startSlot(this.#o.handler, spec, workDir, {
      checkpoint: async (state) => (run.checkpointHash = this.#blobs.put(Buffer.from(canonicalize(state ?? null)))),
      artifact: async (content, meta) => {
        const hash = this.#blobs.put(content)
        if (!run.artifacts.some((a) => a.hash === hash)) run.artifacts.push({hash, sizeBytes: content.length, meta})
        return hash
      },
      progress: (p) => (run.progress = p),
      evidence: (criterionIds, claim) => run.evidence.push({criterionIds, claim}),
      usage: (delta) => {
        for (const [d, v] of Object.entries(delta))
          if (typeof v === 'number')
            (run.usage as Record<string, number>)[d] = ((run.usage as Record<string, number>)[d] ?? 0) + v
      },
      log: (line) => this.#log({level: 'info', event: 'handler', workItemId: spec.workItemId, line}),
    })
    this.#presence()
    const result = await run.slot.done
    await this.#ended(run, result)
  }

  /**
   * A slot ended. Online, its result is sent. Offline (§11.5) nothing is sent: a checkpoint is
   * buffered, any other result is held until reconciliation gives the run a new lease (#resume),
   * and a run that lost its lease ends.
   */
  async #ended(run: Run, result: SlotResult): Promise<void> {
    if (run.rescue) {
      if (result.type !== 'stopped') return this.#rescue(run)
      return this.#release(run, this.#now() - run.since, false)
    }
    if (this.#link === 'online' || result.type === 'stopped') return this.#finish(run, result)
    if (result.type === 'yield' && this.#link === 'offline') {
      if (
        this.#buffer(
          run,
          'work.checkpoint',
          checkpointPayload(run.target, run.lease, run.progress.phase, run.checkpointHash),
        )
      )
        this.#log({
          level: 'info',
          event: 'run-ended',
          groupId: run.entry.groupId,
          workItemId: run.entry.workItemId,
          result,
          buffered: true,
        })
      return this.#release(run, this.#now() - run.since, false)
    }
    if (run.renewTimer) clearTimeout(run.renewTimer)
    run.held = result
  }

  /**
   * §12: the capability token for the run's lease, from the Authorization Service of the server
   * this session is on; undefined when the contract allows no resource (nothing to authorize). It
   * goes to the slot in the WorkSpec only — never logged or stored (ACCEPTANCE G3). It expires no
   * later than the lease it was issued under; each renewal hands the running handler the renewed
   * lease's token (#refreshToken).
   *
   * null: no token, so the run does not start. A refusal (APPROVAL_REQUIRED, BUDGET_EXCEEDED …)
   * blocks the WorkItem with the reason: the Coordinator resolves it, and the unblocked item is
   * scheduled again, where the request is re-checked. (Checkpointing instead would re-queue it at
   * once and ask again at its own Event, forever.) A failure to ask at all (no answer,
   * INTERNAL_ERROR) checkpoints, so it is retried at the next Event.
   */
  async #capabilityToken(run: Run): Promise<string | undefined | null> {
    const {entry, target, lease} = run
    if ((entry.contract?.allowedResources ?? []).length === 0) return undefined
    try {
      return (
        await this.#client.requestToken(entry.groupId, entry.workItemId, {
          ownershipEpoch: lease.ownershipEpoch,
          leaseId: lease.leaseId,
        })
      ).token
    } catch (e) {
      const refused = e instanceof WireError && e.code !== 'INTERNAL_ERROR' && e.code !== 'CLOSED'
      const code = e instanceof WireError ? e.code : 'unreachable'
      const detail = (e as Error).message
      this.#log({
        level: 'warn',
        event: 'token-refused',
        groupId: entry.groupId,
        workItemId: entry.workItemId,
        code,
        detail,
      })
      if (run.renewTimer) clearTimeout(run.renewTimer)
      if (refused)
        await this.#submit(this.#commands.block(target, lease, `no capability token: ${code} ${detail}`), 'block')
      else await this.#submit(this.#commands.checkpoint(target, lease, run.progress.phase, null), 'checkpoint')
      this.#release(run, 0, false)
      return null
    }
  }

  /**
   * The contract's input Artifacts (§10.1) as files in `dir`, one per content hash (its hex
   * digest as the name), fetched from the authority's store unless this disk has them. The slot
   * gets the paths of this WorkItem's inputs only. Unreachable: the run checkpoints back to its
   * queue and is tried again later (null).
   */
  async #inputs(run: Run, dir: string): Promise<Record<string, string> | null> {
    const {entry, target, lease} = run
    const out: Record<string, string> = {}
    try {
      for (const hash of entry.contract?.inputArtifacts ?? []) {
        let bytes = this.#blobs.get(hash)
        if (bytes === null) {
          bytes = await this.#client.getArtifact(entry.groupId, hash)
          if (this.#blobs.put(bytes) !== hash) throw new Error(`the store's bytes for ${hash} do not match it`)
        }
        mkdirSync(dir, {recursive: true})
        const path = join(dir, hash.slice('sha256:'.length))
        writeFileSync(path, bytes)
        out[hash] = path
      }
      return out
    } catch (e) {
      this.#log({level: 'warn', event: 'inputs-unavailable', workItemId: entry.workItemId, why: (e as Error).message})
      if (run.renewTimer) clearTimeout(run.renewTimer)
      await this.#submit(this.#commands.checkpoint(target, lease, run.progress.phase, null), 'checkpoint')
      this.#release(run, 0, false)
      return null
    }
  }

  /**
   * §12: the renewed (or new) lease's token to the running handler, which replaces
   * work.capabilityToken; refused or unreachable, it keeps the old one until that expires.
   */
  async #refreshToken(run: Run): Promise<void> {
    const {entry, lease, slot} = run
    if ((entry.contract?.allowedResources ?? []).length === 0 || slot === null) return
    try {
      slot.token((await this.#client.requestToken(entry.groupId, entry.workItemId, lease)).token)
    } catch (e) {
      const code = e instanceof WireError ? e.code : 'unreachable'
      this.#log({level: 'warn', event: 'token-refresh-failed', workItemId: entry.workItemId, code})
    }
  }

  /**
   * The checkpoint this ownership left (a preempted run), else one of an earlier ownership: from
   * the local cache, else from the authority's Artifact store (§13.1: it survives the loss of
   * this disk, and another Agent's checkpoint is resumable). Unreachable: a fresh start.
   */
  async #resumeState(entry: QueueEntry): Promise<WorkSpec['resume']> {
    const hash = (entry.checkpoint ?? entry.resumeFrom)?.artifactHashes[0]
    if (!hash) return null
    let bytes = this.#blobs.get(hash)
    if (bytes === null)
      try {
        bytes = await this.#client.getArtifact(entry.groupId, hash)
        this.#blobs.put(bytes)
      } catch (e) {
        this.#log({level: 'warn', event: 'checkpoint-unavailable', workItemId: entry.workItemId, hash, why: String(e)})
        return null
      }
    return {state: parseJsonBytes(bytes) as unknown, checkpointHash: hash}
  }

  /**
   * Copies locally stored content the authority is about to see cited into its Artifact store
   * (§13.1), so it outlives this disk. False, logged, when the store cannot be reached.
   */
  async #upload(groupId: string, hashes: string[]): Promise<boolean> {
    try {
      for (const hash of hashes) {
        const bytes = this.#blobs.get(hash)
        if (bytes !== null) await this.#client.putArtifact(groupId, bytes)
      }
      return true
    } catch (e) {
      this.#log({level: 'warn', event: 'upload-failed', groupId, why: (e as Error).message})
      return false
    }
  }

  /** work.checkpoint with the checkpoint state stored in the authority's Artifact store first. */
  async #checkpoint(run: Run, progress: string): Promise<void> {
    if (run.checkpointHash !== null) await this.#upload(run.entry.groupId, [run.checkpointHash])
    await this.#submit(this.#commands.checkpoint(run.target, run.lease, progress, run.checkpointHash), 'checkpoint')
  }

  /**
   * §13.1 before a submission: each Artifact's bytes into the authority's store, then its signed
   * manifest (`artifact.publish`). null when all are published, else the refusal's code (or
   * UNREACHABLE when the store could not be reached).
   */
  async #publish(run: Run): Promise<ErrorCode | 'UNREACHABLE' | null> {
    const {entry, target, lease} = run
    if (
      !(await this.#upload(
        entry.groupId,
        run.artifacts.map((a) => a.hash),
      ))
    )
      return 'UNREACHABLE'
    for (const a of run.artifacts) {
      const scope = {
        missionId: entry.missionId ?? '',
        groupId: entry.groupId,
        workItemId: entry.workItemId,
        contract: entry.contract!,
        uri: artifactUri(this.#o.url, entry.groupId, a.hash),
      }
      const manifest = artifactManifest(this.#o.key, this.#o.card, scope, a)
      const refused = await this.#send(this.#commands.publish(target, lease, manifest), 'publish')
      if (refused !== null) return refused
    }
    return null
  }

  async #finish(run: Run, result: SlotResult): Promise<void> {
    const {entry, target, lease} = run
    if (run.renewTimer) clearTimeout(run.renewTimer)
    const used = this.#now() - run.since
    // §11.3: a result under a lease this Agent knows has expired is not sent (the process was
    // stopped past it, say): the WorkItem is someone else's to finish now.
    if (!run.rescue && run.leaseExpiresAt > 0 && run.leaseExpiresAt <= this.#now() && !mutated('stale-lease-local')) {
      this.#log({
        level: 'warn',
        event: 'lease-lost',
        groupId: entry.groupId,
        workItemId: entry.workItemId,
        why: 'expired before the result',
      })
      return this.#release(run, used, false)
    }
    this.#log({level: 'info', event: 'run-ended', groupId: entry.groupId, workItemId: entry.workItemId, result})
    const charged = result.type === 'stopped' ? null : await this.#recordUsage(run)
    switch (result.type) {
      case 'submit': {
        const unpublished = await this.#publish(run)
        // Not now (the store or the authority could not answer): keep the work, try again later.
        if (unpublished === 'UNREACHABLE' || (unpublished !== null && NO_VERDICT.has(unpublished))) {
          await this.#checkpoint(run, 'the Artifacts could not be published yet')
          break
        }
        if (unpublished !== null) {
          await this.#fail(run, `an Artifact manifest was refused: ${unpublished}`)
          break
        }
        const scope = {missionId: entry.missionId ?? '', groupId: entry.groupId, workItemId: entry.workItemId}
        const evidence = run.evidence.map((e) => this.#commands.evidence(scope, e.criterionIds, e.claim))
        const hashes = run.artifacts.map((a) => a.hash)
        const refused = await this.#send(this.#commands.submit(target, lease, hashes, evidence), 'submit')
        // A submission the authority refuses for what it holds (no Evidence for a criterion, an
        // Artifact it cannot cite …) will not pass on a retry: the WorkItem fails with the reason,
        // rather than staying active until its lease runs out. A lost lease or session is not ours to fail.
        if (refused !== null && !NO_VERDICT.has(refused))
          await this.#fail(run, `the submission was refused: ${refused}`)
        break
      }
      case 'yield':
        await this.#checkpoint(run, run.progress.phase)
        break
      case 'block':
        await this.#submit(this.#commands.block(target, lease, result.resolution), 'block')
        break
      case 'fail':
      case 'crashed': {
        const code = result.type === 'crashed' ? HANDLER_CRASHED : (result.code ?? null)
        const delay = this.#retryDelay(run, code, charged)
        if (delay === null) {
          await this.#fail(run, result.reason)
          break
        }
        // §11.4: a retry resumes from the last safe checkpoint under the next attempt (key).
        const {attempt} = run.spec!
        this.#store.setAttempt(entry.groupId, entry.workItemId, lease.ownershipEpoch, attempt + 1)
        this.#retryAt.set(key(entry.groupId, entry.workItemId), this.#now() + delay)
        this.#log({level: 'info', event: 'retry', workItemId: entry.workItemId, code, attempt: attempt + 1, delay})
        await this.#checkpoint(run, `retry ${attempt + 1} after ${code}`)
        break
      }
      case 'stopped':
        break
    }
    this.#release(run, used, result.type === 'yield')
  }

  /** The run's slot is free: out of the Scheduler's running set (requeued or not) and of this process. */
  #release(run: Run, used: number, requeue: boolean): void {
    this.#scheduler.release(run.entry.groupId, run.entry.workItemId, used, this.#now(), requeue)
    this.#runs.delete(key(run.entry.groupId, run.entry.workItemId))
    this.#presence()
    this.#wake()
  }

  /**
   * §11.4: how long to wait before retrying a failed run, or null when it fails for good — its
   * failure class is not retryable, the contract's attempts are spent, the retry would start
   * after the deadline, or the cost budget refused the usage.
   */
  #retryDelay(run: Run, code: string | null, charged: ErrorCode | null): number | null {
    const contract = run.entry.contract
    const policy = contract?.retryPolicy
    if (!contract || !policy || code === null || !policy.retryableFailures.includes(code)) return null
    if (charged === 'BUDGET_EXCEEDED' || run.spec === null || run.spec.attempt >= policy.maxAttempts) return null
    const max = durationMs(policy.maxDelay) ?? 0
    const delay =
      policy.backoff === 'none'
        ? 0
        : policy.backoff === 'fixed'
          ? max
          : Math.min(max, 1000 * 2 ** (run.spec.attempt - 1))
    return this.#now() + delay < Date.parse(contract.deadline) ? delay : null
  }

  /** work.fail with a signed failure report (§11.4: failure Evidence is required). */
  async #fail(run: Run, why: string): Promise<void> {
    const {entry, target, lease} = run
    const criteria = entry.contract?.acceptanceCriteria.map((c) => c.criterionId).slice(0, 1) ?? []
    const report = this.#commands.evidence(
      {missionId: entry.missionId ?? '', groupId: entry.groupId, workItemId: entry.workItemId},
      criteria,
      {method: `the handler's run ended: ${why}`.slice(0, 4000), result: 'failed', type: 'failure_report'},
    )
    const hash = this.#blobs.put(Buffer.from(canonicalize(report)))
    await this.#upload(entry.groupId, [hash])
    await this.#submit(this.#commands.fail(target, lease, why.slice(0, 4000), [hash]), 'fail')
  }

  /** Records the run's metered usage under its lease; the refusal's code, or null. */
  async #recordUsage(run: Run): Promise<ErrorCode | null> {
    if (!Object.values(run.usage).some((v) => typeof v === 'number' && v > 0)) return null
    const refused = await this.#send(this.#commands.usage(run.target, run.lease, run.usage), 'usage')
    run.usage = {}
    return refused
  }

  /**
   * Renews at half the remaining lease; a refused renewal means the lease is gone (§11.3). While
   * the service is unreachable (§11.5) the progress is buffered instead, at half the time left to
   * the end of the grace; once reconnected nothing is (the new session closed this lease).
   */
  #scheduleRenewal(run: Run): void {
    // Reconciling, the run holds the lease the new session was just issued (#resume): renew against
    // it. Against the grace end the renewal would fall due after that lease expired.
    const until = this.#link === 'offline' ? this.#graceEnd(run) : run.leaseExpiresAt
    run.renewTimer = setTimeout(
      async () => {
        if (!this.#runs.has(key(run.entry.groupId, run.entry.workItemId))) return
        if (this.#link !== 'online') {
          if (this.#link === 'offline') this.#buffer(run, 'message.post', this.#progressMessage(run))
          return this.#scheduleRenewal(run)
        }
        const ok = await this.#submit(
          this.#commands.renew(run.target, run.lease, run.progress, this.#o.leaseSeconds),
          'renew',
        )
        // Refused while the link went down: the lease is not lost, the renewal is now a buffered progress.
        if (!ok && this.#link !== 'online') return this.#scheduleRenewal(run)
        if (!ok) return this.#lost(run, 'the lease renewal was refused')
        const e = this.#store.entry(run.entry.groupId, run.entry.workItemId)
        if (e?.lease?.leaseId === run.lease.leaseId) run.leaseExpiresAt = Date.parse(e.lease.expiresAt)
        else run.leaseExpiresAt = this.#now() + (this.#o.leaseSeconds ?? 600) * 1000
        this.#scheduleRenewal(run)
        await this.#refreshToken(run)
      },
      Math.max(1000, (until - this.#now()) / 2),
    )
    run.renewTimer.unref()
  }

  /** When a run's work must stop if the service stays unreachable: lease expiry plus the Organization's grace. */
  #graceEnd(run: Run): number {
    return run.leaseExpiresAt + (this.#o.offlineGraceSeconds ?? OFFLINE_GRACE_SECONDS) * 1000
  }

  /**
   * A lease past its expiry stops its slot before any further side effect; offline (§11.5), past
   * the grace — and a result held for reconciliation is dropped then.
   */
  #checkLeases(): void {
    const now = this.#now()
    for (const run of [...this.#runs.values()]) {
      const end = this.#link === 'online' && !run.rescue ? run.leaseExpiresAt : this.#graceEnd(run)
      if (run.leaseExpiresAt === 0 || end > now || mutated('stale-lease-local')) continue
      if (run.held === null)
        this.#lost(run, end === run.leaseExpiresAt ? 'the lease expired' : 'the offline grace ended')
      else {
        this.#log({level: 'warn', event: 'held-result-dropped', workItemId: run.entry.workItemId, result: run.held})
        this.#release(run, now - run.since, false)
      }
    }
  }

  #lost(run: Run, why: string): void {
    this.#log({level: 'warn', event: 'lease-lost', groupId: run.entry.groupId, workItemId: run.entry.workItemId, why})
    if (mutated('stale-lease-local')) return
    if (run.renewTimer) clearTimeout(run.renewTimer)
    run.slot?.stop('lease-lost')
  }

  /**
   * §11.5: the service is unreachable. Already-active reversible work goes on for the lease grace;
   * other work is asked to checkpoint now (it may not act without a valid lease and token).
   */
  #disconnected(): void {
    if (this.#link === 'online') this.#offlineSince = this.#now()
    this.#link = 'offline'
    this.#log({level: 'warn', event: 'offline', running: this.#runs.size})
    for (const run of this.#runs.values())
      if (!REVERSIBLE_RISK.has(run.entry.contract?.sideEffectRisk)) run.slot?.stop('yield')
  }

  /** A new session after a lost one (or a buffer left by a previous process): reconcile before anything else. */
  #reconnected(): void {
    this.#link = 'reconciling'
    this.#reconciling ??= this.#reconcile()
      .catch((e: Error) => this.#log({level: 'error', event: 'reconcile-failed', reason: e.stack ?? e.message}))
      .finally(() => {
        this.#reconciling = null
        // Lost and regained while this one ran, or the authority could not answer: try again.
        if (this.#link === 'reconciling' && !this.#stopping)
          setTimeout(() => this.#link === 'reconciling' && this.#reconnected(), TICK_MS).unref()
      })
  }

  /**
   * §11.5 "reconcile on reconnect before submission or further side effects": every buffered
   * Command, oldest first, rebased and re-signed under the current session (rebaseBuffered keeps
   * its binding and Action ID, so a resend after another loss is answered by its receipt, never
   * charged twice); the authority charges its usage delta in the same decision or refuses both,
   * and a refused one is dropped with the reason logged. Then every run that lived through the
   * disconnect continues under a new lease (#resume). Returns early when the link is lost again.
   */
  async #reconcile(): Promise<void> {
    let reconciled = 0
    let refused = 0
    for (const {id, command} of this.#store.offlineBuffer()) {
      if (this.#link !== 'reconciling') return
      const sent = await this.#sendBuffered(command)
      if (sent === 'later') return
      if (sent === 'accepted') reconciled++
      else refused++
      this.#store.unbufferOffline(id)
    }
    for (const run of [...this.#runs.values()]) {
      if (this.#link !== 'reconciling') return
      await this.#resume(run)
    }
    if (this.#link !== 'reconciling') return
    this.#link = 'online'
    this.#log({level: 'info', event: 'reconciled', reconciled, refused, running: this.#runs.size})
    this.#presence()
    this.#wake()
  }

  /**
   * One buffered Command, rebased and re-signed under the current session and submitted (a
   * checkpoint's state stored in the Artifact store first). `later` when there is no answer now:
   * it is sent again, same Action ID, at the next try.
   */
  async #sendBuffered(command: BufferedCommand): Promise<'accepted' | 'refused' | 'later'> {
    const membershipEpoch = this.#store.group(command.binding.groupId)?.view.membership?.membershipEpoch
    const sessionEpoch = this.#client.sessionEpoch
    if (sessionEpoch === undefined) return 'later'
    if (membershipEpoch === undefined) {
      this.#log({
        level: 'warn',
        event: 'offline-dropped',
        actionId: command.actionId,
        why: 'no Membership in its Group',
      })
      return 'refused'
    }
    const cited = command.payload.artifactHashes
    if (Array.isArray(cited)) await this.#upload(command.binding.groupId, cited as string[])
    const issuedAt = stamp(this.#now())
    const rebased = rebaseBuffered(this.#o.key, command, {issuedAt, sessionEpoch, membershipEpoch})
    const r = await this.#client.submit(rebased.bytes)
    if (!('error' in r)) return 'accepted'
    if (isIndeterminate(r.error) || RETRY_LATER.has(r.error.code)) return 'later'
    this.#log({
      level: 'warn',
      event: 'offline-refused',
      kind: command.kind,
      workItemId: command.binding.workItemId,
      code: r.error.code,
      detail: detailsOf(r.error)?.detail ?? r.error.message,
    })
    return 'refused'
  }

  /**
   * A run whose lease lapsed while the service was unreachable (the new session had nothing to
   * revoke, §11.5): its last checkpoint, bound to the historical lease inside the grace, returns
   * the WorkItem to the queue, and it resumes from there under a new lease.
   */
  async #rescue(run: Run): Promise<void> {
    const payload = checkpointPayload(run.target, run.lease, run.progress.phase, run.checkpointHash)
    const command = this.#bind(run, 'work.checkpoint', payload)
    const sent = command === null ? 'refused' : await this.#sendBuffered(command)
    this.#log({level: 'info', event: 'run-rescued', workItemId: run.entry.workItemId, sent})
    // Requeued at once: its checkpoint Event may already have been applied (and its 'schedule'
    // intent acted on) while the run still held its slot.
    this.#release(run, this.#now() - run.since, sent === 'accepted')
  }

  /**
   * A run that lived through a disconnect, under a new lease: the new session revoked its old one
   * and returned the WorkItem to `queued` (§11.3, ACCEPTANCE B9), so it starts again under this
   * session — the slot goes on, or the result held offline is sent now. Refused (reassigned
   * meanwhile, or the Mission ended): the work stops.
   */
  async #resume(run: Run): Promise<void> {
    if (run.renewTimer) clearTimeout(run.renewTimer)
    const old = run.lease.leaseId
    const target = this.#target(run.entry)
    const started =
      target !== null && (await this.#submit(this.#commands.start(target, run.lease.ownershipEpoch), 'start'))
    const active = started
      ? await this.#awaitEntry(run.entry, (e) => e.state === 'active' && e.lease !== null && e.lease.leaseId !== old)
      : null
    if (!active?.lease || target === null) {
      // A live slot checkpoints first (#ended rescues it then); a held result has its checkpoint.
      run.rescue = true
      if (run.held === null) return run.slot?.stop('yield')
      return this.#rescue(run)
    }
    run.entry = active
    run.target = target
    run.lease = {ownershipEpoch: run.lease.ownershipEpoch, leaseId: active.lease.leaseId}
    run.leaseExpiresAt = Date.parse(active.lease.expiresAt)
    this.#log({level: 'info', event: 'run-resumed', workItemId: active.workItemId, leaseId: run.lease.leaseId})
    const held = run.held
    run.held = null
    if (held !== null) return this.#finish(run, held)
    this.#scheduleRenewal(run)
    await this.#refreshToken(run)
  }

  /**
   * §11.5: buffers a progress Message or checkpoint of `run` durably, under the
   * bounded-offline-execution binding of its lease, with the usage metered since the last report.
   * False when it may not be buffered (past the grace): the work stops.
   */
  #buffer(run: Run, kind: 'message.post' | 'work.checkpoint', payload: Record<string, unknown>): boolean {
    const command = this.#bind(run, kind, payload)
    if (command === null) {
      this.#lost(run, 'past the offline grace')
      return false
    }
    this.#store.bufferOffline(command)
    run.usage = {}
    this.#log({level: 'info', event: 'offline-buffered', kind, workItemId: run.entry.workItemId})
    return true
  }

  /**
   * `run`'s Command under the bounded-offline-execution binding of its lease, carrying the usage
   * metered since the last report; null (logged) when it may not be bound: past the grace.
   */
  #bind(run: Run, kind: 'message.post' | 'work.checkpoint', payload: Record<string, unknown>): BufferedCommand | null {
    const {entry, target, lease} = run
    // The expiry the authority granted, as its Events said; a renewal not yet seen claims less, never more.
    const granted = this.#store.entry(entry.groupId, entry.workItemId)?.lease
    const execution = {
      agentId: this.agentId,
      groupId: entry.groupId,
      workItemId: entry.workItemId,
      sessionEpoch: target.sessionEpoch,
      ownershipEpoch: lease.ownershipEpoch,
      leaseId: lease.leaseId,
      leaseExpiresAt: granted?.leaseId === lease.leaseId ? granted.expiresAt : stamp(run.leaseExpiresAt),
    }
    const times = {
      disconnectedAt: stamp(this.#offlineSince),
      bufferedAt: stamp(this.#now()),
      ...(this.#o.offlineGraceSeconds !== undefined ? {graceSeconds: this.#o.offlineGraceSeconds} : {}),
    }
    try {
      return bufferCommand(
        kind,
        payload,
        offlineBinding(execution, times, run.usage),
        entry.conversationId ?? undefined,
      )
    } catch (e) {
      if (!(e instanceof OfflineBufferError)) throw e
      this.#log({level: 'warn', event: 'offline-buffer-refused', workItemId: entry.workItemId, why: e.message})
      return null
    }
  }

  /** A progress Message (§11.4: phase, milestones, next checkpoint, blockers, estimate; never a percentage). */
  #progressMessage(run: Run): Record<string, unknown> {
    return postPayload(run.target, JSON.stringify({progress: progressPayload(run.progress)}))
  }

  /**
   * Waits (at most ENTRY_WAIT_MS) until the local projection of the WorkItem satisfies `ready`:
   * re-read after each Event applied to its Group, not polled.
   */
  async #awaitEntry(entry: QueueEntry, ready: (e: QueueEntry) => boolean): Promise<QueueEntry | null> {
    const deadline = Date.now() + ENTRY_WAIT_MS
    for (;;) {
      const e = this.#store.entry(entry.groupId, entry.workItemId)
      if (e && ready(e)) return e
      const left = deadline - Date.now()
      if (left <= 0) return null
      await new Promise<void>((resolve) => {
        const waiters = this.#waiters.get(entry.groupId) ?? new Set()
        this.#waiters.set(entry.groupId, waiters)
        const done = () => {
          clearTimeout(timer)
          waiters.delete(done)
          if (waiters.size === 0) this.#waiters.delete(entry.groupId)
          resolve()
        }
        const timer = setTimeout(done, left)
        waiters.add(done)
      })
    }
  }

  /** Wakes whatever waits on this Group's projection (an Event was applied to it). */
  #appliedTo(groupId: string): void {
    for (const done of [...(this.#waiters.get(groupId) ?? [])]) done()
  }

  /** Submits a signed Command; logs and returns false on a refusal. */
  async #submit(bytes: Buffer, what: string): Promise<boolean> {
    return (await this.#send(bytes, what)) === null
  }

  /** Submits a signed Command; null when accepted, else the refusal's code (logged). */
  async #send(bytes: Buffer, what: string): Promise<ErrorCode | null> {
    const r = await this.#client.submit(bytes)
    if (!('error' in r)) return null
    this.#log({
      level: 'warn',
      event: 'command-refused',
      what,
      code: r.error.code,
      detail: detailsOf(r.error)?.detail ?? r.error.message,
    })
    return r.error.code
  }

  status(): AgentStatus {
    return {
      agentId: this.agentId,
      sessionEpoch: this.#client?.sessionEpoch,
      slots: this.#slots,
      running: [...this.#runs.values()].map((r) => ({
        groupId: r.entry.groupId,
        workItemId: r.entry.workItemId,
        since: r.since,
      })),
      groups: this.#store.groups().length,
    }
  }

  async stop(graceMs = 10_000): Promise<void> {
    this.#stopping = true
    if (this.#tick) clearInterval(this.#tick)
    for (const run of this.#runs.values())
      if (run.slot && REVERSIBLE_RISK.has(run.entry.contract?.sideEffectRisk)) run.slot.stop('yield')
    const deadline = Date.now() + graceMs
    // A result held for reconciliation (§11.5) is not waited for: its checkpoint is the last reconciled one.
    const running = () => [...this.#runs.values()].some((r) => r.held === null)
    while (running() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    for (const run of this.#runs.values()) run.slot?.stop('lease-lost')
    await this.#pumping
    await this.#reconciling
    await this.#client.close()
    this.#store.close()
  }
}
