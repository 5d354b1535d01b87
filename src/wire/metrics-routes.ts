// The authority's delivery metrics over HTTPS, on the WebSocket binding's listener:
//
//   GET /mwp/0.1/metrics   → 200 {"at": timestamp, "groups": [GroupDelivery, …]}
//
// Per Group this server delivers right now (one with at least one live subscription), its head and,
// per subscriber, how far the server has delivered, how far the subscriber has ACKed (its server
// Cursor), the Cursor lag (head − ACKed), the Events in flight, whether the Group is paused for
// BACKPRESSURE now and how many BACKPRESSURE signals it was sent (§16). These are what an operator
// watching a runtime asks of the authority: is an Agent keeping up, is one being held back.
//
// Authenticated like the other routes (401 AUTH_REQUIRED otherwise), and restricted to the Groups
// the caller may read now — a Membership that lets it read (§8), or a live subscription of its own,
// which the server only grants to a principal allowed to read the Group (a Membership or a §14
// inspection). A subscriber's identity is a Member's of that Group, so nothing here names or
// describes a Group to a caller who cannot see it.

import {mayRead} from '../authority/decide/common.js'
import {countOf as count, isJsonObject as isObject} from '../json/parse.js'
import type {Principal} from '../signing/profiles.js'
import type {GroupFeed} from './group-feed.js'
import type {GroupPump} from './group-pump.js'
import {type HttpRoutes, bearerToken, sendError, sendJson} from './http-routes.js'
import type {SessionTokens} from './session-tokens.js'

export const METRICS_PATH = '/mwp/0.1/metrics'

/** One subscriber's delivery of one Group. */
export interface SubscriberDelivery {
  principalId: string
  deliveredThrough: number
  acknowledgedThrough: number
  /** head − acknowledgedThrough: Events the subscriber has not confirmed. */
  cursorLag: number
  unacknowledged: number
  paused: boolean
  backpressureSignals: number
}

export interface GroupDelivery {
  groupId: string
  head: number
  subscribers: SubscriberDelivery[]
}

interface MetricsContext {
  tokens: SessionTokens
  /** The live pumps by Group, and each Group's feed (server.ts). */
  pumps(): Iterable<[string, Iterable<GroupPump>]>
  feed(groupId: string): GroupFeed | undefined
  clock(): string
}

/** The delivery of every Group `viewer` may read, in Group ID order; subscribers in principal order. */
export function deliveryMetrics(context: Omit<MetricsContext, 'tokens'>, viewer: Principal): GroupDelivery[] {
  const groups: GroupDelivery[] = []
  for (const [groupId, pumps] of context.pumps()) {
    const feed = context.feed(groupId)
    if (feed === undefined) continue
    const all = [...pumps].filter((p) => !p.stopped)
    const own = all.some((p) => p.subscriberId === viewer.id)
    if (!own && !mayRead(feed.state?.members[viewer.id], viewer, context.clock)) continue
    const head = feed.head
    const subscribers = all
      .map((p) => ({
        principalId: p.subscriberId,
        deliveredThrough: p.position,
        acknowledgedThrough: p.acknowledgedThrough,
        cursorLag: Math.max(0, head - p.acknowledgedThrough),
        unacknowledged: p.unacknowledged,
        paused: p.paused,
        backpressureSignals: p.backpressureSignals,
      }))
      .sort((a, b) => idOrder(a.principalId, b.principalId))
    groups.push({groupId, head, subscribers})
  }
  return groups.sort((a, b) => idOrder(a.groupId, b.groupId))
}

/** The route's answer typed, or an Error naming what does not fit (a client's check of a server's reply). */
export function parseDeliveryMetrics(body: unknown): GroupDelivery[] {
  const groups = isObject(body) ? body.groups : undefined
  if (!Array.isArray(groups)) throw new Error('the metrics answer has no "groups" list')
  return groups.map((g): GroupDelivery => {
    const head = isObject(g) ? count(g.head) : null
    if (!isObject(g) || typeof g.groupId !== 'string' || head == null || !Array.isArray(g.subscribers))
      throw new Error('a metrics Group lacks groupId, head or subscribers')
    const subscribers = g.subscribers.map((s): SubscriberDelivery => {
      const [deliveredThrough, acknowledgedThrough, cursorLag, unacknowledged, backpressureSignals] = isObject(s)
        ? [s.deliveredThrough, s.acknowledgedThrough, s.cursorLag, s.unacknowledged, s.backpressureSignals].map(count)
        : []
      if (
        !isObject(s) ||
        typeof s.principalId !== 'string' ||
        typeof s.paused !== 'boolean' ||
        deliveredThrough == null ||
        acknowledgedThrough == null ||
        cursorLag == null ||
        unacknowledged == null ||
        backpressureSignals == null
      )
        throw new Error(`a metrics subscriber of ${g.groupId} is malformed`)
      const {principalId, paused} = s
      return {
        principalId,
        deliveredThrough,
        acknowledgedThrough,
        cursorLag,
        unacknowledged,
        paused,
        backpressureSignals,
      }
    })
    return {groupId: g.groupId, head, subscribers}
  })
}

/** Code-unit order of IDs: the same order on every server and client, whatever the locale. */
const idOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export function addMetricsRoutes(routes: HttpRoutes, context: MetricsContext): void {
  routes.add('GET', /^\/mwp\/0\.1\/metrics$/, async (req, res) => {
    req.resume()
    const token = bearerToken(req)
    const viewer = token === null ? null : await context.tokens.principalOf(token)
    if (viewer === null)
      return sendError(res, 401, 'AUTH_REQUIRED', 'give Authorization: Bearer <sessionToken> of a live session')
    sendJson(res, 200, {at: context.clock(), groups: deliveryMetrics(context, viewer)})
  })
}
