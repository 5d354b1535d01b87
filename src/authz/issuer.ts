// The Authorization Service (spec §12, §11.3; ACCEPTANCE G1, G2, G4, G7): issues a short-lived,
// least-privilege capability token to the Worker executing a WorkItem, and answers a tool
// service's question whether the lease a token was issued under is still live.
//
// Every decision reads the folded Group state (authority.current) and the Organization log's
// Session Epochs — the same authoritative facts the Group Authority decides on — so a token is
// issued only to the current owner, at the current Ownership Epoch and Session Epoch, under the
// current unexpired Execution Lease, after every required approval. Lease closure (checkpoint,
// block, submission, failure, cancellation, reassignment, session replacement) is visible in that
// state, so it revokes every token issued under the lease without a revocation entry; explicit
// revocation of one token is the service's `revoke(tokenId)` list.
//
// §12: the Coordinator MAY ask for authorization but MUST NOT manufacture, copy or forward a
// Worker's credential: a token is minted only for the authenticated Agent that asks, on its own
// session, and only when that Agent owns the WorkItem — a Coordinator (or anyone else) asking for a
// Worker's token is AUTH_FORBIDDEN.
//
// §12 / ACCEPTANCE G3: the token is a secret. It is only ever the return value of issue(): it is
// never submitted as a Command, logged, or placed in Messages, Agent Cards, Context Packages,
// Artifacts or Group Events.

import {randomUUID} from 'node:crypto'
import type {Authority} from '../authority/authority.js'
import {currentSessionEpoch} from '../authority/ingress/sessions.js'
import {
  type Budget,
  DIMENSIONS,
  type Remaining,
  limitsAsUsage,
  missionUsage,
  remaining,
  tightest,
  workItemUsage,
} from '../authority/model/budget.js'
import type {GroupState, WorkItemView} from '../authority/model/state.js'
import {currentLease, plusSeconds} from '../authority/model/work-leases.js'
import {isRefusal} from '../authority/decide/common.js'
import type {SigningKey} from '../crypto/keyfile.js'
import type {ErrorCode} from '../errors.js'
import {compareTimestampText} from '../json/timestamp.js'
import {type CapabilityClaims, TOKEN_DOMAIN, type TokenGrant, type TokenLimits, encodeToken} from './token.js'

/** §12 "short-lived": the longest a token lives, whatever the lease (seconds). */
export const TOKEN_TTL_SECONDS = 600

/** What a Worker asks for: the execution it is bound to, and optionally a narrower scope. */
export interface TokenRequest {
  groupId: string
  workItemId: string
  ownershipEpoch: number
  leaseId: string
  /** Whose token: when present it must be the asking Agent (no token is minted for another). */
  agentId?: string
  /** Narrows the contract's allowedResources: each resource and operation must be allowed there. Absent: all of them. */
  grants?: {resource: string; operations: string[]}[]
  /** Narrows the limits: no dimension may exceed the authoritative cap (BUDGET_EXCEEDED). */
  limits?: TokenLimits
  /** A shorter life than TOKEN_TTL_SECONDS. */
  ttlSeconds?: number
}

/** The authenticated Agent asking, as the service's transport established it. */
export interface Caller {
  agentId: string
  sessionEpoch: number
}

export interface Refused {
  ok: false
  code: ErrorCode
  reason: string
}

export type IssueResult = {ok: true; token: string; claims: CapabilityClaims} | Refused

export interface IssuerOptions {
  /** The Authorization Service key (its principal is the token issuer). */
  key: SigningKey
  /** The longest token life in seconds (default TOKEN_TTL_SECONDS). */
  ttlSeconds?: number
  /** Token ID generator (injectable for deterministic tests). */
  newId?: () => string
}

const refuse = (code: ErrorCode, reason: string): Refused => ({ok: false, code, reason})

/** What ties a token to one execution: checked at issue, and again whenever a tool service asks. */
export interface ExecutionBinding {
  groupId: string
  workItemId: string
  agentId: string
  sessionEpoch: number
  ownershipEpoch: number
  leaseId: string
}

interface LiveExecution {
  state: GroupState
  item: WorkItemView
  leaseExpiresAt: string | undefined
}

/**
 * §11.3, §12: the binding names the current execution — the Agent's current session, the
 * WorkItem's owner at the current Ownership Epoch, every required approval for that ownership,
 * and the current, active, unexpired Execution Lease issued to that session — or the §19 code why not.
 */
async function liveExecution(authority: Authority, b: ExecutionBinding, now: string): Promise<LiveExecution | Refused> {
  const state = await authority.current(b.groupId)
  if (state === null) return refuse('GROUP_NOT_FOUND', 'no such Group')
  const member = state.members[b.agentId]
  if (member === undefined || !member.active) return refuse('MEMBERSHIP_REQUIRED', 'not an active member')
  const session = await currentSessionEpoch(authority, b.agentId)
  if (session === 0) return refuse('AUTH_REQUIRED', 'the Agent has no session')
  if (b.sessionEpoch !== session) return refuse('AUTH_STALE_SESSION', `session ${b.sessionEpoch}, current ${session}`)
  const item = state.workItems[b.workItemId]
  if (item === undefined) return refuse('INVALID_COMMAND', 'no such WorkItem')
  if (state.mission.state !== 'active')
    return refuse('INVALID_STATE_TRANSITION', `the Mission is ${state.mission.state}`)
  if (b.ownershipEpoch < item.ownershipEpoch)
    return refuse('WORK_STALE_OWNERSHIP', `ownershipEpoch ${b.ownershipEpoch}, current ${item.ownershipEpoch}`)
  if (item.owner === null || item.owner.agentId !== b.agentId || item.owner.ownershipEpoch !== b.ownershipEpoch)
    return refuse('AUTH_FORBIDDEN', 'not the WorkItem owner')
  // §12 / G4: the approval gate comes before the lease: a gated item waits for it while queued.
  if (
    item.contract.executionApproval !== 'not_required' &&
    (item.executionApproval === null || item.executionApproval.ownershipEpoch !== b.ownershipEpoch)
  )
    return refuse('APPROVAL_REQUIRED', `the ${item.contract.executionApproval} execution approval is missing`)
  const lease = currentLease(item, b.leaseId, b.sessionEpoch, now)
  if (isRefusal(lease)) return refuse(lease.error, lease.reason)
  if (lease.holderAgentId !== b.agentId || lease.sessionEpoch !== b.sessionEpoch)
    return refuse('WORK_LEASE_EXPIRED', 'the Execution Lease was issued to another session')
  if (item.state !== 'active') return refuse('INVALID_STATE_TRANSITION', `the WorkItem is ${item.state}`)
  return {state, item, leaseExpiresAt: lease.expiresAt}
}

/**
 * §11.3: whether the execution a token is bound to is still live (null) or why it ended. A tool
 * service passes this as verifyToken's `leaseCheck`, which is how lease closure revokes tokens.
 */
export async function leaseStatus(
  authority: Authority,
  claims: ExecutionBinding,
  now: string,
): Promise<Refused | null> {
  const live = await liveExecution(authority, claims, now)
  return 'ok' in live ? live : null
}

/**
 * §12: the authoritative cap of each dimension — the least of the Work Contract budget and what
 * remains of the WorkItem's and its Mission's budgets, and of every parent WorkItem's and
 * Mission's up the tree (a child's usage is charged to all of them, decide/budget.ts).
 */
async function budgetCap(authority: Authority, state: GroupState, item: WorkItemView): Promise<Remaining | Refused> {
  const caps: Remaining[] = [limitsAsUsage(item.contract.budget)]
  const seen = new Set<string>()
  for (let s: GroupState | null = state, w = item.workItemId; s !== null;) {
    if (seen.has(s.groupId)) return refuse('INVALID_COMMAND', `cyclic Mission ancestry through ${s.groupId}`)
    seen.add(s.groupId)
    const at = s.workItems[w]
    if (at === undefined) return refuse('INTERNAL_ERROR', `WorkItem ${w} missing in ${s.groupId}`)
    caps.push(remaining(at.contract.budget, workItemUsage(s.budgetLedger, w)))
    caps.push(remaining(s.mission.budget as Budget, missionUsage(s.budgetLedger)))
    const parent = s.mission.parent
    if (parent === undefined) break
    s = await authority.current(parent.groupId)
    if (s === null) return refuse('INTERNAL_ERROR', `the parent Group ${parent.groupId} is missing`)
    w = parent.workItemId
  }
  return tightest(caps)
}

/** §12 least privilege: the requested grants, each inside the contract's allowedResources. */
function narrowGrants(item: WorkItemView, requested: TokenRequest['grants']): TokenGrant[] | Refused {
  const allowed = item.contract.allowedResources
  const wanted = requested ?? allowed
  const out: TokenGrant[] = []
  for (const r of wanted) {
    const grant = allowed.find((a) => a.resource === r.resource)
    if (grant === undefined) return refuse('AUTH_FORBIDDEN', `${r.resource} is not an allowed resource`)
    const outside = r.operations.find((op) => !grant.operations.includes(op))
    if (outside !== undefined)
      return refuse('AUTH_FORBIDDEN', `${outside} on ${r.resource} is not an allowed operation`)
    if (r.operations.length === 0) continue
    out.push({
      resource: r.resource,
      operations: [...new Set(r.operations)].sort(),
      ...(grant.constraints === undefined ? {} : {constraints: grant.constraints}),
    })
  }
  if (out.length === 0) return refuse('AUTH_FORBIDDEN', 'nothing to authorize: no allowed resource and operation')
  return out
}

/** The token's limits: the cap, or a narrower requested limit; an exhausted dimension refuses (§12: work pauses). */
function narrowLimits(cap: Remaining, item: WorkItemView, requested: TokenLimits | undefined): TokenLimits | Refused {
  const currency = item.contract.budget.currency
  if (requested?.currency !== undefined && requested.currency !== currency)
    return refuse('INVALID_COMMAND', `limits are in the contract currency ${currency ?? '(none)'}`)
  const out: TokenLimits = {}
  for (const [d, limit] of DIMENSIONS) {
    const most = cap[d]
    const asked = requested?.[limit]
    if (most !== undefined && most <= 0) return refuse('BUDGET_EXCEEDED', `the ${d} budget is exhausted`)
    if (asked !== undefined && (!(asked >= 0) || (most !== undefined && asked > most)))
      return refuse('BUDGET_EXCEEDED', `${limit} ${asked} exceeds the ${most} that remains`)
    const value = asked ?? most
    if (value !== undefined) out[limit] = value
  }
  if (out.financialLimit !== undefined && currency !== undefined) out.currency = currency
  return out
}

const isText = (v: unknown): v is string => typeof v === 'string' && v !== ''

/**
 * The request arrives from outside (the service's endpoint parses it from JSON), so its shape is
 * checked before anything is looked up: null when it is a TokenRequest, else why not.
 */
function requestProblem(r: TokenRequest): string | null {
  if (r === null || typeof r !== 'object') return 'the request is not an object'
  for (const name of ['groupId', 'workItemId', 'leaseId'] as const)
    if (!isText(r[name])) return `${name} is not a string`
  if (!Number.isSafeInteger(r.ownershipEpoch) || r.ownershipEpoch < 1) return 'ownershipEpoch is not a positive integer'
  if (r.agentId !== undefined && !isText(r.agentId)) return 'agentId is not a string'
  if (
    r.grants !== undefined &&
    (!Array.isArray(r.grants) ||
      !r.grants.every((g) => isText(g?.resource) && Array.isArray(g.operations) && g.operations.every(isText)))
  )
    return 'grants is not a list of {resource, operations}'
  if (r.limits !== undefined) {
    if (r.limits === null || typeof r.limits !== 'object') return 'limits is not an object'
    for (const [, limit] of DIMENSIONS)
      if (r.limits[limit] !== undefined && typeof r.limits[limit] !== 'number') return `limits.${limit} is not a number`
  }
  return null
}

/**
 * §12, ACCEPTANCE G1/G2/G4: a signed capability token for `caller`'s current execution of the
 * WorkItem, or the §19 code why none may be issued. `now` is the trusted time (RFC 3339 UTC Z).
 */
export async function issueToken(
  authority: Authority,
  request: TokenRequest,
  caller: Caller,
  now: string,
  options: IssuerOptions,
): Promise<IssueResult> {
  const problem = requestProblem(request)
  if (problem !== null) return refuse('INVALID_COMMAND', problem)
  if (request.agentId !== undefined && request.agentId !== caller.agentId)
    return refuse(
      'AUTH_FORBIDDEN',
      "a token is issued only to the Agent that asks: no one obtains another Agent's token",
    )
  const binding: ExecutionBinding = {
    groupId: request.groupId,
    workItemId: request.workItemId,
    agentId: caller.agentId,
    sessionEpoch: caller.sessionEpoch,
    ownershipEpoch: request.ownershipEpoch,
    leaseId: request.leaseId,
  }
  const live = await liveExecution(authority, binding, now)
  if ('ok' in live) return live
  const grants = narrowGrants(live.item, request.grants)
  if ('ok' in grants) return grants
  const cap = await budgetCap(authority, live.state, live.item)
  if ('ok' in cap) return cap
  const limits = narrowLimits(cap, live.item, request.limits)
  if ('ok' in limits) return limits

  const maxTtl = options.ttlSeconds ?? TOKEN_TTL_SECONDS
  const ttl = request.ttlSeconds === undefined ? maxTtl : request.ttlSeconds
  if (!Number.isSafeInteger(ttl) || ttl < 1 || ttl > maxTtl)
    return refuse('INVALID_COMMAND', `ttlSeconds must be a whole number from 1 to ${maxTtl}`)
  const short = plusSeconds(now, ttl)
  // §11.3: never past the lease boundary under which it is issued.
  const expiresAt =
    live.leaseExpiresAt !== undefined && compareTimestampText(live.leaseExpiresAt, short) < 0
      ? live.leaseExpiresAt
      : short

  const principal = options.key.principal
  if (principal === undefined) return refuse('INTERNAL_ERROR', 'the Authorization Service key names no principal')
  const claims: CapabilityClaims = {
    typ: TOKEN_DOMAIN,
    tokenId: options.newId?.() ?? `urn:uuid:${randomUUID()}`,
    issuer: principal.id,
    keyId: options.key.keyId,
    agentId: caller.agentId,
    sessionEpoch: caller.sessionEpoch,
    missionId: live.state.missionId,
    groupId: live.state.groupId,
    workItemId: live.item.workItemId,
    ownershipEpoch: request.ownershipEpoch,
    leaseId: request.leaseId,
    grants,
    limits,
    issuedAt: now,
    expiresAt,
  }
  return {ok: true, token: encodeToken(claims, options.key), claims}
}

/**
 * One Authorization Service: its key, its Group Authority, and the tokens it revoked explicitly
 * (§12, G7). Implicit revocation needs no entry: leaseStatus sees the lease end in the Group state.
 */
export class AuthorizationService {
  readonly #revoked = new Set<string>()

  constructor(
    readonly authority: Authority,
    readonly options: IssuerOptions,
  ) {}

  /** The public key tool services verify this service's tokens with. */
  get publicKey(): Uint8Array {
    return this.options.key.publicKey
  }

  issue(request: TokenRequest, caller: Caller, now: string): Promise<IssueResult> {
    return issueToken(this.authority, request, caller, now, this.options)
  }

  revoke(tokenId: string): void {
    this.#revoked.add(tokenId)
  }

  revoked(tokenId: string): boolean {
    return this.#revoked.has(tokenId)
  }

  /** verifyToken's leaseCheck for tokens of this service: null while the execution is live. */
  leaseStatus(claims: ExecutionBinding, now: string): Promise<Refused | null> {
    return leaseStatus(this.authority, claims, now)
  }
}
