// One Group Authority instance: its store, Registry evidence, service key and policy, plus a
// per-Group state cache and a per-Group promise queue (ARCHITECTURE principle 3: one Group's
// Commands are serialized in-process; different Groups never wait on each other).
//
// The policy is the Authority's own frozen copy: neither the caller's object nor anyone holding the
// Authority can change it under a running authority. The wire gateway, which requires Agent
// sessions, serves a view of the same Authority with that requirement (requiringAgentSessions):
// the views share caches, queues and in-flight appends, so they still serialize as one.
//
// State is never trusted from the cache alone: `current()` asks the store for the Group head
// (one indexed read) and folds only the Events it has not seen yet, each re-verified with the
// six-stage verifier. Another process sharing a PostgreSQL store therefore cannot make this
// cache decide on stale state; the append's head check catches the remaining race.
//
// Cold start (issue #15): a Group not in the cache starts from its newest signed checkpoint that
// verifies (checkpoints.ts) and folds only the Events after it, in slices that yield to the event
// loop. A checkpoint is written every CHECKPOINT_EVERY Events after commit, off the answer path.

import {randomUUID} from 'node:crypto'
import type {SigningKey} from '../crypto/keyfile.js'
import type {Principal} from '../signing/profiles.js'
import type {RegistryEvidence} from '../signing/registry.js'
import {Rejection, verify} from '../signing/verify.js'
import type {Store} from '../store/types.js'
import type {StoredEvent} from '../store/group-log.js'
import {type AppliedEvent, apply} from './apply/index.js'
import type {GroupState} from './model/state.js'
import {type CooperationLimits, checkLimits} from './decide/rate-limits.js'
import {type LeasePolicy, checkLeasePolicy} from './model/work-leases.js'
import {type PendingMessages, type Tip, drainTips} from './ingress/append-pipeline.js'
import {MwpError} from '../errors.js'
import {KEEP_CHECKPOINTS} from '../store/checkpoints.js'
import {CHECKPOINT_EVERY, checkedCheckpoint, makeCheckpoint} from './checkpoints.js'

export interface AuthorityPolicy {
  /** Human principal IDs allowed to create root Missions (§7.1, issue 4 role policy). */
  rootMissionOwners: string[]
  /** Service principal IDs Organization policy allows to issue mission.terminate (§7.1, §15.1). */
  terminators?: string[]
  /** Service principal IDs Organization policy allows to archive a finished Group (§7.4, decide/archive.ts). */
  archivers?: string[]
  /**
   * §14/§20: the Organization's default maximum Mission depth (root = 0). A child Mission deeper
   * than this needs an explicit depth Approval from the parent MissionOwner (decide/child.ts).
   * Unset: no depth threshold.
   */
  maxMissionDepth?: number
  /**
   * §6.3: an Agent Command must carry the Session Epoch the Organization log last issued to that
   * Agent (src/authority/ingress/sessions.ts). The wire server always serves an Authority with it
   * (requiringAgentSessions); without it (library use with no gateway) an Agent that never opened a
   * session is not fenced, but a lower epoch still is.
   */
  requireAgentSessions?: boolean
  /** §20: service principal IDs Organization policy authorizes to issue Cooperation Override Grants. */
  overrideIssuers?: string[]
  /** §9.1: service principal IDs Organization policy authorizes to redact Messages. */
  redactors?: string[]
  /** §20: per-actor rate and count limits (rate-limits.ts); unset: nothing is limited. */
  limits?: CooperationLimits
  /** §11.3/§11.4: ownership, Execution and blocked lease lengths in seconds (work-leases.ts); unset: the defaults. */
  leases?: LeasePolicy
}

export interface AuthorityOptions {
  store: Store
  registry: RegistryEvidence
  /** The Group Authority service key: every accepted Event is signed with it. */
  authorityKey: SigningKey
  policy: AuthorityPolicy
  /** Trusted clock, RFC 3339 UTC Z (injectable for tests). */
  clock?: () => string
  /** Identifier generator (injectable for deterministic tests). */
  newId?: () => string
}

/** The stored log does not verify or does not fold: never decide on it. */
export class AuthorityIntegrityError extends MwpError<'log-integrity'> {
  constructor(message: string) {
    super('log-integrity', message)
  }
}

const PAGE = 500
/** How long a fold runs before it yields to the event loop (ms). */
const SLICE_MS = 10

/** Told of every append this process commits (Authority.onAppended). */
export type AppendListener = (state: GroupState, events: readonly StoredEvent[]) => void

/** What every view of one Authority shares (requiringAgentSessions). */
class Shared {
  readonly cache = new Map<string, GroupState>()
  readonly queues = new Map<string, Promise<unknown>>()
  /** Per Group, the newest append in flight and the state it produces (append-pipeline.ts). */
  readonly tips = new Map<string, Tip>()
  /** Per Group, the Message rows of its in-flight appends (append-pipeline.ts). */
  readonly pendingMessages = new Map<string, Set<PendingMessages>>()
  readonly appendListeners = new Set<AppendListener>()
  /** Per Group, the fold current() is running (one at a time: concurrent callers share it). */
  readonly folds = new Map<string, Promise<GroupState>>()
  /** Per Group, the sequence of the newest checkpoint known stored (checkpoints.ts). */
  readonly checkpointed = new Map<string, number>()
  /** Groups whose checkpoint is being written. */
  readonly checkpointing = new Set<string>()
  /** Per Group, the newest state committed while its checkpoint was being written: written next. */
  readonly checkpointNext = new Map<string, {state: GroupState; eventBytes: Uint8Array}>()
  readonly checkpointWrites = new Set<Promise<void>>()
}

export class Authority {
  readonly store: Store
  readonly registry: RegistryEvidence
  readonly key: SigningKey
  readonly principal: Principal
  readonly policy: Readonly<AuthorityPolicy>
  readonly clock: () => string
  readonly newId: () => string
  readonly #options: AuthorityOptions
  readonly #shared: Shared

  constructor(options: AuthorityOptions, shared = new Shared()) {
    if (!options.authorityKey.principal || options.authorityKey.principal.type !== 'service') {
      throw new Error('the Group Authority key must belong to a service Principal')
    }
    this.store = options.store
    this.registry = options.registry
    this.key = options.authorityKey
    this.principal = options.authorityKey.principal
    checkLimits(options.policy.limits)
    checkLeasePolicy(options.policy.leases)
    this.policy = frozen(structuredClone(options.policy))
    this.clock = options.clock ?? (() => new Date().toISOString())
    this.newId = options.newId ?? (() => `urn:uuid:${randomUUID()}`)
    this.#options = {...options, policy: this.policy}
    this.#shared = shared
  }

  /** Per Group, the newest append in flight and the state it produces (append-pipeline.ts). */
  get tips(): Map<string, Tip> {
    return this.#shared.tips
  }

  /** Per Group, the Message rows of its in-flight appends (append-pipeline.ts). */
  get pendingMessages(): Map<string, Set<PendingMessages>> {
    return this.#shared.pendingMessages
  }

  /**
   * This Authority with Agent sessions required (§6.3: behind the gateway every Agent Command must
   * come from an issued session). The same store, key, caches, queues, in-flight appends and
   * append listeners; only the policy differs. This Authority itself is left as it is.
   */
  requiringAgentSessions(): Authority {
    if (this.policy.requireAgentSessions === true) return this
    return new Authority({...this.#options, policy: {...this.policy, requireAgentSessions: true}}, this.#shared)
  }

  /** Runs `task` after every earlier task of the same Group settled. */
  serialize<T>(groupId: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#shared.queues.get(groupId) ?? Promise.resolve()
    const run = previous.then(task, task)
    const tail = run.catch(() => undefined)
    this.#shared.queues.set(groupId, tail)
    void tail.then(() => {
      if (this.#shared.queues.get(groupId) === tail) this.#shared.queues.delete(groupId)
    })
    return run
  }

  /**
   * Runs `task` after every earlier task of each of `groupIds` settled, and holds all of them
   * until it settles (multi-Group Commands, see store/multi-append.ts). Queues are claimed in
   * sorted group_id order in one synchronous step, so two multi-Group tasks cannot deadlock.
   */
  serializeAll<T>(groupIds: readonly string[], task: () => Promise<T>): Promise<T> {
    const ids = [...new Set(groupIds)].sort()
    if (ids.length === 1) return this.serialize(ids[0]!, task)
    const previous = Promise.all(
      ids.map((g) => (this.#shared.queues.get(g) ?? Promise.resolve()).catch(() => undefined)),
    )
    const run = previous.then(task)
    const tail = run.catch(() => undefined)
    for (const g of ids) {
      this.#shared.queues.set(g, tail)
      void tail.then(() => {
        if (this.#shared.queues.get(g) === tail) this.#shared.queues.delete(g)
      })
    }
    return run
  }

  /** The Group's state at the store's current head, or null for a Group with no Events. */
  async current(groupId: string): Promise<GroupState | null> {
    const head = await this.store.head(groupId)
    const state = this.#shared.cache.get(groupId) ?? null
    // Only committed states are cached: one ahead of the head just read was remembered by an
    // append of this process that committed while the read was in flight.
    if (state !== null && state.sequence >= (head?.sequence ?? 0)) return state
    if (head === null) return null
    // Commits become visible before their answers arrive (the SQLite writer thread): when this
    // process still has appends of the Group in flight, their answers bring the states without
    // folding (and re-verifying) the Events they wrote. Waited for once; the rest is folded.
    if (this.tips.has(groupId)) {
      await drainTips(this, [groupId])
      const drained = this.#shared.cache.get(groupId) ?? null
      if (drained !== null && drained.sequence >= head.sequence) return drained
    }
    // One fold per Group at a time: a caller arriving during a fold waits for it, then looks again.
    const running = this.#shared.folds.get(groupId)
    if (running !== undefined) {
      await running
      return this.current(groupId)
    }
    const fold = this.#foldTo(groupId, this.#shared.cache.get(groupId) ?? null, head.sequence)
    this.#shared.folds.set(groupId, fold)
    try {
      this.#remember(await fold)
    } finally {
      if (this.#shared.folds.get(groupId) === fold) this.#shared.folds.delete(groupId)
    }
    return this.#shared.cache.get(groupId)!
  }

  /**
   * Folds the Group from `state` (null: from nothing) to at least `head`: from the newest valid
   * checkpoint when it is ahead of `state` (checkpoints.ts), then Event by Event, each verified.
   * The work runs in slices of about SLICE_MS that yield to the event loop, so a long tail never
   * stalls the connections this process serves; a long fold leaves a checkpoint behind.
   */
  async #foldTo(groupId: string, from: GroupState | null, head: number): Promise<GroupState> {
    // A gap shorter than the checkpoint interval is folded as it is: no newer checkpoint can be
    // more than that ahead, so the read would save nothing (another process's appends, mostly).
    const far = head - (from?.sequence ?? 0) >= CHECKPOINT_EVERY
    let state = (far ? await this.#restore(groupId, head, from?.sequence ?? 0) : null) ?? from
    const start = state?.sequence ?? 0
    let last: Uint8Array | undefined
    let slice = performance.now()
    while ((state?.sequence ?? 0) < head) {
      const page = await this.store.read(groupId, state?.sequence ?? 0, PAGE)
      if (page.events.length === 0)
        throw new AuthorityIntegrityError(`Group ${groupId} head ${head} but no Event after ${state?.sequence ?? 0}`)
      for (const logged of page.events) {
        state = this.#fold(groupId, state, logged.sequence, logged.bytes)
        last = logged.bytes
        if (performance.now() - slice >= SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve))
          slice = performance.now()
        }
      }
    }
    if (last !== undefined && state!.sequence - start >= CHECKPOINT_EVERY) this.#checkpointLater(state!, last)
    return state!
  }

  /**
   * The state of the Group's newest checkpoint above `above` that verifies (checkpoints.ts), or
   * null. A checkpoint that does not verify is reported to the audit log and never used.
   */
  async #restore(groupId: string, head: number, above: number): Promise<GroupState | null> {
    let candidates
    try {
      candidates = await this.store.checkpoints().newest(groupId, head, KEEP_CHECKPOINTS)
    } catch (e) {
      await this.#report(groupId, 0, `checkpoints unreadable: ${(e as Error).message}`)
      return null
    }
    for (const c of candidates) {
      if (c.sequence <= above) break
      const state = await checkedCheckpoint(this.key, c, groupId, async (sequence) => {
        const [at] = (await this.store.read(groupId, sequence - 1, 1)).events
        return at?.sequence === sequence ? at.bytes : null
      })
      if (typeof state !== 'string') {
        this.#noteCheckpoint(groupId, c.sequence)
        return state
      }
      await this.#report(groupId, c.sequence, state)
    }
    return null
  }

  /** A checkpoint not used: the operator's to know (protected audit log), never the decider's. */
  async #report(groupId: string, sequence: number, reason: string): Promise<void> {
    try {
      await this.store.audit({
        at: this.clock(),
        stage: 'checkpoint',
        reason: `Group state checkpoint not used: ${reason}`,
        subject: `${groupId}#${sequence}`,
      })
    } catch {
      // the fold goes on without the checkpoint either way
    }
  }

  #noteCheckpoint(groupId: string, sequence: number): void {
    const known = this.#shared.checkpointed.get(groupId) ?? 0
    if (sequence > known) this.#shared.checkpointed.set(groupId, sequence)
  }

  /**
   * Writes a checkpoint of the committed `state` (its last Event's stored bytes: `eventBytes`) after
   * the current turn, off every answer's path; one per Group at a time, and a state committed
   * meanwhile is written next (the newest only). A failed write is reported and costs only speed:
   * the next cold start folds from an older checkpoint.
   */
  #checkpointLater(state: GroupState, eventBytes: Uint8Array): void {
    const groupId = state.groupId
    if (this.#shared.checkpointing.has(groupId)) {
      const queued = this.#shared.checkpointNext.get(groupId)
      if (queued === undefined || queued.state.sequence < state.sequence)
        this.#shared.checkpointNext.set(groupId, {state, eventBytes})
      return
    }
    this.#shared.checkpointing.add(groupId)
    const write = async () => {
      try {
        await this.store.checkpoints().put(makeCheckpoint(this.key, state, eventBytes))
        this.#noteCheckpoint(groupId, state.sequence)
      } catch (e) {
        await this.#report(groupId, state.sequence, `not written: ${(e as Error).message}`)
      } finally {
        this.#shared.checkpointing.delete(groupId)
        const queued = this.#shared.checkpointNext.get(groupId)
        this.#shared.checkpointNext.delete(groupId)
        if (queued !== undefined && queued.state.sequence > (this.#shared.checkpointed.get(groupId) ?? 0))
          this.#checkpointLater(queued.state, queued.eventBytes)
      }
    }
    const written = new Promise<void>((resolve) => setImmediate(() => void write().then(resolve)))
    this.#shared.checkpointWrites.add(written)
    void written.then(() => this.#shared.checkpointWrites.delete(written))
  }

  /** Settles when every checkpoint write this Authority started has settled (tests, orderly shutdown). */
  async checkpointsWritten(): Promise<void> {
    while (this.#shared.checkpointWrites.size > 0) await Promise.all(this.#shared.checkpointWrites)
  }

  /** Records a committed state; the cache only moves forward. */
  #remember(state: GroupState): void {
    const cached = this.#shared.cache.get(state.groupId)
    if (cached === undefined || cached.sequence < state.sequence) this.#shared.cache.set(state.groupId, state)
  }

  /**
   * Calls `listener` with the state and Events of every append this process commits, right after
   * its COMMIT (the wire server's Group feeds take them from here instead of reading them back).
   * Returns the function that stops it.
   */
  onAppended(listener: AppendListener): () => void {
    this.#shared.appendListeners.add(listener)
    return () => this.#shared.appendListeners.delete(listener)
  }

  /** The live path's append committed: remember the state it produced and tell the listeners. */
  committed(state: GroupState, events: readonly StoredEvent[]): void {
    this.#remember(state)
    const last = events[events.length - 1]
    if (last !== undefined && state.sequence - (this.#shared.checkpointed.get(state.groupId) ?? 0) >= CHECKPOINT_EVERY)
      this.#checkpointLater(state, last.bytes)
    for (const listener of this.#shared.appendListeners) {
      try {
        listener(state, events)
      } catch {
        // a listener's failure is its own; the append stands
      }
    }
  }

  #fold(groupId: string, state: GroupState | null, sequence: number, bytes: Uint8Array): GroupState {
    const verified = verify('event', bytes, this.registry)
    if (verified instanceof Rejection) {
      const d = Rejection.diagnostic(verified)
      throw new AuthorityIntegrityError(
        `stored Event ${sequence} of ${groupId} fails verification at ${d.stage}: ${d.reason}`,
      )
    }
    const doc = verified.document as unknown as AppliedEvent & {acceptedBy: Principal}
    // H9: a Group Event must be accepted by an authorized Group Authority (here: this one).
    if (doc.acceptedBy.type !== this.principal.type || doc.acceptedBy.id !== this.principal.id) {
      throw new AuthorityIntegrityError(`stored Event ${sequence} of ${groupId} was accepted by ${doc.acceptedBy.id}`)
    }
    if (doc.groupId !== groupId || doc.sequence !== sequence)
      throw new AuthorityIntegrityError(
        `stored Event ${sequence} of ${groupId} declares ${doc.groupId}#${doc.sequence}`,
      )
    try {
      return apply(state, doc)
    } catch (e) {
      throw new AuthorityIntegrityError(
        `stored Event ${sequence} of ${groupId} does not apply: ${(e as Error).message}`,
      )
    }
  }
}

export function openAuthority(options: AuthorityOptions): Authority {
  return new Authority(options)
}

/** Freezes a plain-JSON value all the way down (the Authority's private policy copy). */
function frozen<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) frozen(member)
    Object.freeze(value)
  }
  return value
}
