// The Organization's Presence (spec §6.2) over HTTPS, on the WebSocket binding's listener:
//
//   GET /mwp/0.1/presence   → 200 {"presence": [Presence Record, …]}   (presence-record.schema.json)
//
// Authenticated like the Artifact routes, by `Authorization: Bearer <sessionToken>` of a live
// session (401 AUTH_REQUIRED otherwise). Each record is the last one an Agent's live session sent on
// a PING — the connection has checked it names that session's own Agent and Session Epoch — and
// only while it has not expired: a stale record is no evidence of anything (§6.2). One record per
// Agent, its newest session's. A record carries capacity and capability availability only, never a
// Group's identity, content, WorkItems or queue position (§6.2), so any authenticated principal of
// the Organization may read them: a Coordinator estimating availability for its selection basis
// (§10.3), an operator's console.

import type {JsonObject} from '../json/parse.js'
import {type HttpRoutes, bearerToken, sendError, sendJson} from './http-routes.js'
import type {SessionTokens} from './session-tokens.js'

export const PRESENCE_PATH = '/mwp/0.1/presence'

interface PresenceContext {
  tokens: SessionTokens
  /** The last Presence Record of every live session (null: none sent yet). */
  records(): Iterable<JsonObject | null>
  nowMs(): number
}

/** The unexpired records, one per Agent (the highest Session Epoch), in Agent ID order. */
export function currentPresence(records: Iterable<JsonObject | null>, nowMs: number): JsonObject[] {
  const byAgent = new Map<string, JsonObject>()
  for (const r of records) {
    if (r === null || !(Date.parse(String(r.expiresAt)) > nowMs)) continue
    const agentId = String(r.agentId)
    const known = byAgent.get(agentId)
    if (known === undefined || Number(r.sessionEpoch) > Number(known.sessionEpoch)) byAgent.set(agentId, r)
  }
  return [...byAgent.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r)
}

export function addPresenceRoutes(routes: HttpRoutes, context: PresenceContext): void {
  routes.add('GET', /^\/mwp\/0\.1\/presence$/, async (req, res) => {
    req.resume()
    const token = bearerToken(req)
    if (token === null || (await context.tokens.principalOf(token)) === null)
      return sendError(res, 401, 'AUTH_REQUIRED', 'give Authorization: Bearer <sessionToken> of a live session')
    sendJson(res, 200, {presence: currentPresence(context.records(), context.nowMs())})
  })
}
