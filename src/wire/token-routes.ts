// The Authorization Service's HTTPS endpoints (spec §12, §11.3; ACCEPTANCE G1, G2, G4), on the
// WebSocket binding's listener beside the Artifact routes:
//
//   POST /mwp/0.1/groups/{groupId}/work-items/{workItemId}/token
//        body {leaseId, ownershipEpoch, grants?, limits?, ttlSeconds?, agentId?}  (TokenRequest)
//        → 200 {token, expiresAt, claims}
//   GET  /mwp/0.1/authz/key → 200 {issuer, keyId, algorithm: "Ed25519", publicKey (base64url)}
//
// The token route is authenticated by `Authorization: Bearer <sessionToken>` of a live session
// (session-tokens.ts). The caller's Agent ID and Session Epoch are that session's, never the
// body's: a body `agentId` naming anyone else is refused (AUTH_FORBIDDEN), so no one — the
// Coordinator included (§12) — obtains another Agent's token. The path names the WorkItem, so the
// route is per-execution like the Artifact routes are per-Group, and the body carries only what
// binds the request to one execution and narrows it.
//
// The key route needs no session: the public key is what a tool service verifies tokens with
// offline (verifyToken), fetched once from the deployment it trusts.
//
// Answers (errors are {code, detail}, §19 codes):
//   401 AUTH_REQUIRED / AUTH_STALE_SESSION   no live session token; the session is not the Agent's current one
//   404 GROUP_NOT_FOUND                      unknown Group, or one the caller may not read (as the Artifact routes)
//   400 INVALID_COMMAND                      the body is not a TokenRequest, or no such WorkItem
//   403 AUTH_FORBIDDEN                       not the WorkItem's owner, not a Worker session, a grant outside the contract
//   403 MEMBERSHIP_REQUIRED                  a reader that is not an active member
//   403 APPROVAL_REQUIRED                    the execution approval for this ownership is missing (§12, G4)
//   403 BUDGET_EXCEEDED                      a limit above what remains, or an exhausted dimension
//   409 WORK_STALE_OWNERSHIP / WORK_LEASE_EXPIRED / INVALID_STATE_TRANSITION   the execution is not the current one
//   413 INVALID_COMMAND                      the body is over MAX_REQUEST_BYTES
//
// §12 / ACCEPTANCE G3: the token is a secret. It is written only into the 200 answer: never logged
// (the log line names the token ID), never stored.

import type {AuthorizationService, TokenRequest} from '../authz/issuer.js'
import type {ErrorCode} from '../errors.js'
import {encodeBase64url} from '../json/base64url.js'
import {accessOf} from './artifact-routes.js'
import {type HttpRoutes, bearerToken, readBody, sendError, sendErrorAndClose, sendJson} from './http-routes.js'
import type {SessionTokens} from './session-tokens.js'

export const TOKEN_PATH = /^\/mwp\/0\.1\/groups\/([^/]+)\/work-items\/([^/]+)\/token$/
export const KEY_PATH = /^\/mwp\/0\.1\/authz\/key$/

/** The token path of a WorkItem (the segments percent-encoded). */
export const tokenPath = (groupId: string, workItemId: string) =>
  `/mwp/0.1/groups/${encodeURIComponent(groupId)}/work-items/${encodeURIComponent(workItemId)}/token`
export const KEY_ROUTE = '/mwp/0.1/authz/key'

/** A TokenRequest is small; anything larger is not one. */
export const MAX_REQUEST_BYTES = 64 * 1024

/** What GET /mwp/0.1/authz/key answers. */
export interface AuthzKey {
  issuer: string
  keyId: string
  algorithm: 'Ed25519'
  publicKey: string
}

/** The body fields a caller may set; groupId and workItemId come from the path, the caller from the session. */
const BODY_FIELDS = ['leaseId', 'ownershipEpoch', 'agentId', 'grants', 'limits', 'ttlSeconds'] as const

const STATUS: Partial<Record<ErrorCode, number>> = {
  AUTH_REQUIRED: 401,
  AUTH_STALE_SESSION: 401,
  GROUP_NOT_FOUND: 404,
  INVALID_COMMAND: 400,
  AUTH_FORBIDDEN: 403,
  MEMBERSHIP_REQUIRED: 403,
  APPROVAL_REQUIRED: 403,
  BUDGET_EXCEEDED: 403,
  WORK_STALE_OWNERSHIP: 409,
  WORK_LEASE_EXPIRED: 409,
  INVALID_STATE_TRANSITION: 409,
}

interface TokenContext {
  service: AuthorizationService
  tokens: SessionTokens
  log(entry: Record<string, unknown>): void
}

export function addTokenRoutes(routes: HttpRoutes, context: TokenContext): void {
  const {service, tokens, log} = context
  const authority = service.authority

  routes.add('GET', KEY_PATH, async (req, res) => {
    req.resume()
    const key = service.options.key
    const body: AuthzKey = {
      issuer: key.principal!.id,
      keyId: key.keyId,
      algorithm: 'Ed25519',
      publicKey: encodeBase64url(key.publicKey),
    }
    sendJson(res, 200, body)
  })

  routes.add('POST', TOKEN_PATH, async (req, res, [groupId, workItemId]) => {
    const bearer = bearerToken(req)
    const session = bearer === null ? null : await tokens.sessionOf(bearer)
    const principal = session?.principal ?? null
    if (session === null || principal === null)
      return sendErrorAndClose(res, 401, 'AUTH_REQUIRED', 'give Authorization: Bearer <sessionToken> of a live session')
    if ((await accessOf(authority, groupId!, principal)) === 'none')
      return sendErrorAndClose(res, 404, 'GROUP_NOT_FOUND', 'no such Group you may read')
    // Only an Agent session has a Session Epoch a lease can be bound to (§6.3).
    if (principal.type !== 'agent' || session.sessionEpoch === undefined)
      return sendErrorAndClose(res, 403, 'AUTH_FORBIDDEN', 'capability tokens are issued to Agent sessions only')
    const raw = await readBody(req, MAX_REQUEST_BYTES)
    if (raw === 'too-large')
      return sendErrorAndClose(res, 413, 'INVALID_COMMAND', `the request exceeds ${MAX_REQUEST_BYTES} bytes`)
    let body: unknown
    try {
      body = JSON.parse(raw.toString('utf8'))
    } catch {
      return sendError(res, 400, 'INVALID_COMMAND', 'the body is not JSON')
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      return sendError(res, 400, 'INVALID_COMMAND', 'the body is not a JSON object')
    const given = body as Record<string, unknown>
    const unknown = Object.keys(given).find((k) => !(BODY_FIELDS as readonly string[]).includes(k))
    if (unknown !== undefined) return sendError(res, 400, 'INVALID_COMMAND', `${unknown} is not a request field`)
    // The issuer checks every field's shape (requestProblem) before it looks anything up.
    const request = {...given, groupId: groupId!, workItemId: workItemId!} as unknown as TokenRequest
    const caller = {agentId: principal.id, sessionEpoch: session.sessionEpoch}
    const issued = await service.issue(request, caller, authority.clock())
    if (!issued.ok) {
      log({level: 'info', event: 'token-refused', groupId, workItemId, principal: principal.id, code: issued.code})
      return sendError(res, STATUS[issued.code] ?? 500, issued.code, issued.reason)
    }
    log({
      level: 'info',
      event: 'token-issued',
      groupId,
      workItemId,
      principal: principal.id,
      tokenId: issued.claims.tokenId,
      expiresAt: issued.claims.expiresAt,
    })
    sendJson(res, 200, {token: issued.token, expiresAt: issued.claims.expiresAt, claims: issued.claims})
  })
}
