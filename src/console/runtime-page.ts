// The console's runtime view: per Agent, its Presence (slots busy and idle, status, queued items,
// heartbeat age) beside what the Events of the Groups this operator sees say it holds (WorkItems
// by state with their Execution Lease), and its slot time over the rolling window per Group against
// the Group's weight, with the runs that gave their slot back at a checkpoint (preemptions) and the
// leases that expired; per Group, the work not yet taken and its oldest age, the ownerships that
// ended without completing; and the authority's delivery of each Group to each subscriber (Cursor
// lag, Events in flight, BACKPRESSURE).
//
// What it shows of a Group it shows only for a Group this operator may read: WorkItems and slot
// time come from the Groups it follows, the delivery metrics from the authority, which answers
// only for Groups the operator may read (wire/metrics-routes.ts). Presence carries no Group at all.

import {shortName} from '../operator/event-lines.js'
import {effectiveWeight} from '../agent/scheduler.js'
import {el} from '../html/markup.js'
import type {LiveGroups} from './live.js'
import {type PageContext, badge, fragmentHref, missionHref, page, shortTime, table, text} from './pages.js'
import {type AgentPresence, type PresenceView, PRESENCE_REFRESH_MS, type RuntimeSources} from './runtime-sources.js'
import type {AgentSlotTime} from './slot-time.js'

/** Up to this many slots are drawn one cell each; a larger Agent gets a meter. */
const SLOT_CELLS = 24

/** Seconds (or minutes) between `t` and `now`. */
function age(t: string, now: string): string {
  const s = Math.max(0, Math.round((Date.parse(now) - Date.parse(t)) / 1000))
  if (!Number.isFinite(s)) return '?'
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`
}

const percent = (part: number, whole: number) => (whole > 0 ? `${Math.round((100 * part) / whole)}%` : '–')
const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`

/** An Agent's Presence: its slots busy and idle, status, queue, heartbeat age, capabilities not available. */
function presenceLine(agent: string, presence: PresenceView): string {
  if (!presence.served)
    return el('p', {class: 'presence empty', 'data-presence': agent}, 'No Presence shown (see the note above).')
  const r = presence.value.find((p) => p.agentId === agent)
  if (r === undefined)
    return el(
      'p',
      {class: 'presence empty', 'data-presence': agent},
      'No fresh Presence Record: the Agent has no live session that reported one, or it expired.',
    )
  return presenceOf(r, presence.at)
}

function presenceOf(r: AgentPresence, now: string): string {
  const busy = Math.min(r.activeSlots, r.maxSlots)
  const label = `${r.activeSlots} of ${r.maxSlots} slots busy, ${r.availableSlots} available`
  const cells =
    r.maxSlots <= SLOT_CELLS
      ? el(
          'span',
          {class: 'slots', role: 'img', 'aria-label': label},
          ...Array.from({length: r.maxSlots}, (_, i) =>
            el('span', {class: i < busy ? 'slot busy' : 'slot idle', title: i < busy ? 'busy' : 'idle'}),
          ),
        )
      : el('meter', {min: 0, max: r.maxSlots, value: busy, 'aria-label': label}, text(label))
  const notAvailable = r.capabilities.filter((c) => c.status !== 'available')
  return el(
    'div',
    {
      class: 'presence',
      'data-presence': r.agentId,
      'data-busy': r.activeSlots,
      'data-slots': r.maxSlots,
      'data-queued': r.queuedItems,
    },
    cells,
    ' ',
    el('span', {class: 'slot-count'}, text(label)),
    ' · ',
    el('span', {class: `badge presence-${r.status}`}, text(r.status)),
    ' · ',
    el('span', {class: 'queued'}, text(`${r.queuedItems} queued`)),
    ' · last heartbeat ',
    el(
      'time',
      {datetime: r.lastHeartbeat, title: r.lastHeartbeat, class: 'heartbeat'},
      text(`${age(r.lastHeartbeat, now)} ago`),
    ),
    notAvailable.length > 0
      ? el(
          'span',
          {class: 'small'},
          text(` · ${notAvailable.map((c) => `${c.id} ${c.version}: ${c.status}`).join(', ')}`),
        )
      : '',
  )
}

/**
 * An Agent's slot time in the window, per Group: its share of the Agent's time in the Groups shown
 * and, with a policy, the share its effective weight gives it among them (the scheduler's target
 * when each of them has work waiting); the runs that gave their slot back at a checkpoint, and the
 * leases that expired.
 */
function slotTimeTable(
  agent: string,
  time: AgentSlotTime | undefined,
  objective: (groupId: string) => string,
  sources: RuntimeSources,
): string {
  if (time === undefined || time.groups.size === 0)
    return el('p', {class: 'empty'}, text(`No slot time in the last ${sources.windowMs / 60_000} min.`))
  const {policy} = sources
  const groups = [...time.groups.entries()].sort(([a], [b]) => a.localeCompare(b))
  const weights = new Map(groups.map(([g]) => [g, policy ? effectiveWeight(policy(g)) : 0]))
  const totalWeight = [...weights.values()].reduce((a, b) => a + b, 0)
  const rows = groups.map(([groupId, g]) => {
    const p = policy?.(groupId)
    return el(
      'tr',
      {'data-group': groupId, 'data-share': Math.round((1000 * g.ms) / Math.max(1, time.totalMs)) / 10},
      el('td', {}, el('a', {href: missionHref(groupId)}, text(objective(groupId)))),
      el('td', {class: 'num'}, text(seconds(g.ms))),
      el('td', {class: 'num share'}, text(percent(g.ms, time.totalMs))),
      el('td', {class: 'num'}, text(p ? `${p.weight} · class ${p.priorityClass}` : '–')),
      el('td', {class: 'num target'}, text(p ? percent(weights.get(groupId)!, totalWeight) : '–')),
      el('td', {class: 'num checkpointed'}, text(g.checkpointed)),
      el('td', {class: 'num expired'}, text(g.expired)),
    )
  })
  return table(
    'slot-time',
    {'data-agent': agent},
    ['Mission', 'slot time', 'share', 'weight · class', 'share by weight', 'yielded at a checkpoint', 'leases expired'],
    rows,
  )
}

/** The authority's delivery of each Group this operator may read, to each of its subscribers. */
function deliveryPanel(sources: RuntimeSources, objective: (groupId: string) => string): string {
  const {delivery} = sources
  const body = !delivery.served
    ? el('p', {class: 'empty'}, text(delivery.why))
    : delivery.value.length === 0
      ? el('p', {class: 'empty'}, 'The authority delivers none of the Groups you can see right now.')
      : table(
          'delivery',
          {},
          [
            'Mission',
            'head',
            'subscriber',
            'delivered through',
            'ACKed (server Cursor)',
            'Cursor lag',
            'in flight',
            'backpressure',
          ],
          delivery.value.flatMap((g) =>
            g.subscribers.map((s) =>
              el(
                'tr',
                {'data-group': g.groupId, 'data-subscriber': s.principalId, 'data-lag': s.cursorLag},
                el('td', {}, el('a', {href: missionHref(g.groupId)}, text(objective(g.groupId)))),
                el('td', {class: 'num'}, text(g.head)),
                el('td', {}, text(shortName(s.principalId))),
                el('td', {class: 'num'}, text(s.deliveredThrough)),
                el('td', {class: 'num'}, text(s.acknowledgedThrough)),
                el('td', {class: 'num lag'}, text(s.cursorLag)),
                el('td', {class: 'num'}, text(s.unacknowledged)),
                el(
                  'td',
                  {class: 'backpressure'},
                  s.paused ? `${badge('paused')} ` : '',
                  text(`${s.backpressureSignals} signal${s.backpressureSignals === 1 ? '' : 's'}`),
                ),
              ),
            ),
          ),
        )
  return el(
    'section',
    {class: 'panel', 'aria-labelledby': 'delivery-h'},
    el('h2', {id: 'delivery-h'}, 'Delivery'),
    el(
      'p',
      {class: 'small'},
      'From the authority: how far it delivered each Group to each live subscriber and how far the subscriber ACKed. The Cursor lag is the Events at the head it has not confirmed; BACKPRESSURE pauses one Group of a subscriber that does not keep up.',
    ),
    body,
  )
}

export function runtimeFragment(live: LiveGroups, sources: RuntimeSources, now: string): string {
  const {presence} = sources
  const groups = live.all().filter((g) => g.state !== null && g.unavailable === undefined)
  const objective = (groupId: string) => live.get(groupId)?.state?.mission.objective ?? shortName(groupId)
  const held = new Map<string, string[]>()
  const groupRows: string[] = []
  for (const g of groups) {
    const state = g.state!
    const link = el('a', {href: missionHref(g.groupId)}, text(state.mission.objective))
    let waiting = 0
    let oldest: string | null = null
    let ended = 0
    for (const w of Object.values(state.workItems)) {
      ended += w.endedOwnerships?.length ?? 0
      if (['open', 'offered', 'queued'].includes(w.state)) {
        waiting++
        if (oldest === null || w.createdAt < oldest) oldest = w.createdAt
      }
      if (w.owner === null || !['queued', 'active', 'blocked', 'submitted'].includes(w.state)) continue
      const lease = w.lease?.state === 'active' ? w.lease : null
      // The holder's last report under this lease: what it is doing and where it will next checkpoint.
      const reported = lease ? g.progress.get(w.workItemId) : undefined
      const progress = reported?.leaseId === lease?.leaseId ? reported : undefined
      const row = el(
        'tr',
        {'data-workitem': w.workItemId},
        el('td', {}, link),
        el('td', {}, text(typeof w.contract.goal === 'string' ? w.contract.goal : w.workItemId)),
        el('td', {}, badge(w.state)),
        el('td', {class: 'num'}, text(String(w.owner.ownershipEpoch))),
        el('td', {class: 'running'}, lease ? `${shortTime(lease.issuedAt)} · ${text(age(lease.issuedAt, now))}` : '–'),
        el(
          'td',
          {class: 'progress'},
          progress
            ? text(
                `${progress.phase}${progress.nextCheckpoint ? ` · next checkpoint: ${progress.nextCheckpoint}` : ''}`,
              )
            : '–',
        ),
        el('td', {}, shortTime(lease?.expiresAt ?? w.owner.leaseExpiresAt ?? null)),
      )
      const rows = held.get(w.owner.agentId)
      if (rows === undefined) held.set(w.owner.agentId, [row])
      else rows.push(row)
    }
    groupRows.push(
      el(
        'tr',
        {'data-group': g.groupId, 'data-waiting': waiting},
        el('td', {}, link),
        el('td', {class: 'num'}, text(String(waiting))),
        el('td', {}, oldest === null ? '–' : text(age(oldest, now))),
        el('td', {class: 'num'}, text(String(ended))),
        el('td', {}, state.mission.coordinator ? text(shortName(state.mission.coordinator.agentId)) : '–'),
      ),
    )
  }
  const agents = [
    ...new Set([
      ...held.keys(),
      ...sources.slotTime.keys(),
      ...(presence.served ? presence.value.map((r) => r.agentId) : []),
    ]),
  ].sort((a, b) => a.localeCompare(b))
  const minutes = sources.windowMs / 60_000
  return (
    el('h1', {}, 'Runtime') +
    el(
      'p',
      {class: 'note'},
      text(
        `Work held and slot time: from the Events of the Groups you can see; a share is of the Agent's slot time in those Groups over the last ${minutes} min. ` +
          (sources.policy
            ? 'Weights: from the scheduling policy this console was given. '
            : 'Weights: not known (start the console with --scheduling-policy FILE, the policy the Agents run under). ') +
          `Slots, status and queue: from the Agents' Presence, re-read every ${PRESENCE_REFRESH_MS / 1000} s${presence.served ? '' : ` — ${presence.why}`}.`,
      ),
    ) +
    el(
      'section',
      {class: 'panel', 'aria-labelledby': 'agents-h'},
      el('h2', {id: 'agents-h'}, 'Agents: Presence, slot time and work held'),
      agents.length === 0
        ? el('p', {class: 'empty'}, 'No Agent holds a WorkItem, has slot time or reports Presence.')
        : agents
            .map((agent) => {
              const rows = held.get(agent) ?? []
              return (
                el('h3', {'data-agent': agent}, text(`${shortName(agent)} — ${rows.length} WorkItem(s) held`)) +
                presenceLine(agent, presence) +
                slotTimeTable(agent, sources.slotTime.get(agent), objective, sources) +
                (rows.length === 0
                  ? el('p', {class: 'empty'}, 'Holds no WorkItem in the Groups you can see.')
                  : table(
                      'runtime',
                      {'data-agent': agent},
                      [
                        'Mission',
                        'WorkItem',
                        'state',
                        'Ownership Epoch',
                        'running since · for',
                        'phase · next checkpoint',
                        'lease expires',
                      ],
                      rows,
                    ))
              )
            })
            .join(''),
    ) +
    el(
      'section',
      {class: 'panel', 'aria-labelledby': 'groups-h'},
      el('h2', {id: 'groups-h'}, 'Groups'),
      table(
        'runtime-groups',
        {},
        [
          'Mission',
          'waiting to run (open, offered, queued)',
          'oldest waiting',
          'ended ownerships (fenced, failed)',
          'Coordinator',
        ],
        groupRows,
      ),
    ) +
    deliveryPanel(sources, objective)
  )
}

export function runtimePage(live: LiveGroups, sources: RuntimeSources, ctx: PageContext): string {
  const latest = live.latest()
  return page(
    'Runtime',
    ctx,
    // data-every: the script re-reads the fragment on that period too, for the Presence and the metrics (no Event says they changed).
    el(
      'div',
      {'data-fragment': fragmentHref('runtime'), 'data-every': PRESENCE_REFRESH_MS},
      runtimeFragment(live, sources, ctx.now),
    ),
    `/events${latest ? `?after=${encodeURIComponent(latest.id)}` : ''}`,
  )
}
