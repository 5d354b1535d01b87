// The console's HTML, rendered on the server from the live views (live.ts): whole pages, and the
// fragments the page re-reads when a Change arrives (the `data-fragment` sections). Every string
// from the authority — objectives, goals, Message text, IDs — passes through escapeText (through
// el() and its attributes): Message text is Agent- and human-written, so `<script>` arrives as text.
//
// §9: a Message is conversation. It is drawn in the timeline only, in a bubble labelled "message —
// not an instruction", never in the actions or the WorkItem areas, and nothing on the page turns
// it into an assignment. §7.3: progress is the WorkItem graph's counts, never a percentage.

import {LIMIT_POLICIES} from '../authority/decide/rate-limits.js'
import type {GroupState} from '../authority/model/state.js'
import type {Usage} from '../authority/model/mission-tree.js'
import {EventLines, shortId, shortName} from '../operator/event-lines.js'
import {toSvg} from '../operator/graph-formats.js'
import {type MissionListRow, unknownRow} from '../operator/mission-list.js'
import {awaiting} from '../operator/next-step.js'
import {messageText, progressLine} from '../operator/render.js'
import type {EventDoc} from '../operator/transport.js'
import {type MissionInspection, type WorkGraph, inspectFacts, workGraph} from '../operator/views.js'
import {attrs, el, escapeText} from '../html/markup.js'
import type {LiveGroup, LiveGroups} from './live.js'

/** What every page needs to know about who is looking and when. */
export interface PageContext {
  me: string
  now: string
}

/** A Group's page address. */
export const missionHref = (groupId: string) => `/mission?group=${encodeURIComponent(groupId)}`
export const fragmentHref = (view: string, groupId?: string) =>
  `/fragment?view=${view}${groupId !== undefined ? `&group=${encodeURIComponent(groupId)}` : ''}`
const artifactHref = (groupId: string, hash: string) =>
  `/artifact?group=${encodeURIComponent(groupId)}&hash=${encodeURIComponent(hash)}`

/** An HTML void element (no end tag). */
const input = (a: Parameters<typeof attrs>[0]) => `<input${attrs(a)}>`
export const text = (s: string | number) => escapeText(String(s))
const time = (t: string | null | undefined) =>
  t ? el('time', {datetime: t}, text(t.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC'))) : '–'
/** A time to the minute, for tables (the element keeps the exact instant). */
export const shortTime = (t: string | null | undefined) =>
  t ? el('time', {datetime: t, title: t}, text(`${t.slice(0, 16).replace('T', ' ')} UTC`)) : '–'
export const badge = (state: string) => el('span', {class: `badge state-${state}`}, text(state.replace('_', ' ')))
/** A table that scrolls sideways in its own box on a narrow window, with a header row of `cols`. */
export const table = (cls: string, attrs: Record<string, string>, cols: string[], rows: string[]) =>
  el(
    'div',
    {class: 'table-scroll'},
    el(
      'table',
      {class: cls, ...attrs},
      el('thead', {}, el('tr', {}, ...cols.map((h) => el('th', {scope: 'col'}, h)))),
      el('tbody', {}, ...rows),
    ),
  )
const dl = (rows: [string, string][]) =>
  el('dl', {class: 'facts'}, ...rows.map(([k, v]) => el('dt', {}, text(k)) + el('dd', {}, v)))

/** The page frame: title, the stylesheet, the script, the header with who is signed in. */
export function page(title: string, ctx: PageContext, body: string, stream: string): string {
  return (
    '<!doctype html>\n' +
    el(
      'html',
      {lang: 'en'},
      el(
        'head',
        {},
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        el('title', {}, text(`${title} — mwp console`)),
        '<link rel="stylesheet" href="/static/console.css">',
        el('script', {src: '/static/console.js', defer: true}),
      ),
      el(
        'body',
        {'data-stream': stream},
        el('a', {class: 'skip', href: '#main'}, 'Skip to content'),
        el(
          'header',
          {class: 'top'},
          el('a', {href: '/', class: 'brand'}, 'mwp console'),
          el(
            'nav',
            {class: 'top-nav', 'aria-label': 'Views'},
            el('a', {href: '/'}, 'Missions'),
            ' ',
            el('a', {href: '/runtime'}, 'Runtime'),
          ),
          el('span', {class: 'who'}, 'signed in as ', el('strong', {}, text(ctx.me))),
          el('span', {id: 'live', class: 'live', role: 'status', 'aria-live': 'polite'}), // console.js says how live
        ),
        el('main', {id: 'main'}, body),
      ),
    )
  )
}

// ---------------------------------------------------------------- Missions list

/** One row per followed Group, each child Mission right below its parent (like `mission list`). */
export function missionRows(live: LiveGroups, ctx: PageContext): MissionListRow[] {
  const all = live.all()
  const rows: MissionListRow[] = []
  const seen = new Set<string>()
  const visit = (g: LiveGroup) => {
    if (seen.has(g.groupId)) return
    seen.add(g.groupId)
    const parent = g.parentGroupId !== undefined ? {parentGroupId: g.parentGroupId} : {}
    const v = inspectionOf(g, ctx.now)
    if (v === null) {
      const why = g.unavailable ?? 'no Events yet'
      rows.push({...unknownRow(g.groupId, why), ...parent})
    } else {
      rows.push({
        groupId: g.groupId,
        missionId: v.missionId,
        state: v.state,
        objective: v.objective,
        deadline: v.deadline,
        overdue: v.overdue,
        awaiting: awaiting(v, ctx.me),
        ...parent,
      })
      for (const c of v.children) {
        const child = live.get(c.groupId)
        if (child) visit(child)
      }
    }
  }
  for (const g of all) if (g.parentGroupId === undefined || !live.get(g.parentGroupId)) visit(g)
  for (const g of all) visit(g)
  return rows
}

export function inspectionOf(g: LiveGroup, now: string): MissionInspection | null {
  return g.state === null || g.unavailable !== undefined ? null : inspectFacts(g.state, g.facts, now)
}

export function missionsFragment(live: LiveGroups, ctx: PageContext): string {
  const rows = missionRows(live, ctx)
  if (rows.length === 0) return el('p', {class: 'empty'}, 'No Missions yet: none of your Groups has an Event.')
  const depth = (r: MissionListRow): number => {
    let d = 0
    for (let p = r.parentGroupId; p !== undefined && d < 20; p = live.get(p)?.parentGroupId) d++
    return d
  }
  return el(
    'table',
    {class: 'missions'},
    el('caption', {}, text(`${rows.length} Mission(s) you can see`)),
    el(
      'thead',
      {},
      el('tr', {}, ...['Mission', 'state', 'awaits', 'deadline', 'Group'].map((h) => el('th', {scope: 'col'}, h))),
    ),
    el(
      'tbody',
      {},
      ...rows.map((r) =>
        el(
          'tr',
          {'data-group': r.groupId, class: r.awaiting.startsWith('awaiting your') ? 'yours' : undefined},
          el(
            'td',
            {class: `objective depth-${Math.min(depth(r), 4)}`},
            (r.parentGroupId ? el('span', {class: 'child-mark', 'aria-label': 'child Mission of'}, '↳ ') : '') +
              el('a', {href: missionHref(r.groupId)}, text(r.objective ?? r.groupId)),
          ),
          el('td', {}, r.state ? badge(r.state) : '–'),
          el('td', {class: 'awaits', 'data-label': 'awaits'}, text(r.awaiting)),
          el(
            'td',
            {'data-label': 'deadline'},
            shortTime(r.deadline) + (r.overdue ? ' ' + el('strong', {class: 'overdue'}, 'overdue') : ''),
          ),
          el('td', {class: 'mono', 'data-label': 'Group'}, text(r.groupId)),
        ),
      ),
    ),
  )
}

export function missionsPage(live: LiveGroups, ctx: PageContext): string {
  const latest = live.latest()
  return page(
    'Missions',
    ctx,
    el('h1', {}, 'Missions') +
      el('section', {'data-fragment': fragmentHref('missions'), 'aria-live': 'polite'}, missionsFragment(live, ctx)),
    `/events${latest ? `?after=${encodeURIComponent(latest.id)}` : ''}`,
  )
}

// ---------------------------------------------------------------- Mission page

/** The fragments of a Mission page, by name (the `view` of /fragment). */
export const MISSION_FRAGMENTS = [
  'header',
  'graph',
  'budget',
  'leases',
  'artifacts',
  'evidence',
  'timeline',
  'tree',
  'visible',
] as const
export type MissionFragment = (typeof MISSION_FRAGMENTS)[number]

export function missionFragment(view: MissionFragment, g: LiveGroup, live: LiveGroups, ctx: PageContext): string {
  // §8: with its history outside this operator's visibility, a Group still has a timeline of what
  // it sees, and the WorkItems those Events show.
  if (view === 'timeline') return timelineFragment(g)
  if (view === 'visible') return visibleFragment(g)
  const v = inspectionOf(g, ctx.now)
  if (v === null || g.state === null) return unavailableNote(g)
  const state = g.state
  switch (view) {
    case 'header':
      return headerFragment(v, state, ctx)
    case 'graph':
      return graphFragment(workGraph(state, ctx.now), v, ctx)
    case 'budget':
      return budgetFragment(v.budget, state.budgetLedger?.mission)
    case 'leases':
      return leasesFragment(state)
    case 'artifacts':
      return artifactsFragment(state, v)
    case 'evidence':
      return evidenceFragment(v)
    case 'tree':
      return treeFragment(g, live, ctx)
  }
}

const unavailableNote = (g: LiveGroup) =>
  el('p', {class: 'unavailable'}, text(`This Mission cannot be shown: ${g.unavailable ?? 'no Events yet'}.`))

function headerFragment(v: MissionInspection, state: GroupState, ctx: PageContext): string {
  const c = v.coordinator
  const former = v.coordinators.filter((x) => !x.current)
  return (
    el('h1', {}, text(v.objective)) +
    dl([
      ['state', badge(v.state) + (v.ended ? ` ${text(`by ${shortName(v.ended.by)}`)} ${time(v.ended.at)}` : '')],
      ['awaits', el('strong', {}, text(awaiting(v, ctx.me)))],
      [
        'revision',
        el('span', {'data-revision': state.revision}, text(`${v.revision}`)) + text(` (Group sequence ${v.sequence})`),
      ],
      [
        'Coordinator',
        c
          ? text(`${c.agentId} (epoch ${c.coordinatorEpoch})`) +
            text(', lease ') +
            (c.leaseExpiresAt ? text('until ') + time(c.leaseExpiresAt) : text('not renewed yet'))
          : el('strong', {}, 'none'),
      ],
      ...(former.length
        ? ([
            [
              'former Coordinators',
              text(former.map((x) => `${x.agentId} (epoch ${x.coordinatorEpoch}, fenced)`).join(', ')),
            ],
          ] as [string, string][])
        : []),
      ['deadline', time(v.deadline) + (v.overdue ? ' ' + el('strong', {class: 'overdue'}, 'overdue') : '')],
      ['MissionOwner', text(v.missionOwner.id)],
      ['Group', el('span', {class: 'mono'}, text(v.groupId))],
    ])
  )
}

function graphFragment(graph: WorkGraph, v: MissionInspection, ctx: PageContext): string {
  const s = graph.summary
  const mine = v.missionOwner.id === ctx.me
  const goals = new Map(graph.items.map((n) => [n.workItemId, n.goal]))
  const named = (id: string) => goals.get(id) ?? shortId(id)
  const rows = graph.items.map((n) =>
    el(
      'tr',
      {class: n.critical ? 'critical' : undefined, 'data-workitem': n.workItemId},
      el('td', {}, text(n.goal) + el('div', {class: 'mono small', title: n.workItemId}, text(shortId(n.workItemId)))),
      el('td', {}, badge(n.state) + (n.critical ? ' ' + el('span', {class: 'crit-tag'}, 'critical path') : '')),
      el('td', {}, n.owner ? text(shortName(n.owner)) : '–'),
      el('td', {class: 'small'}, text(n.dependsOn.length ? n.dependsOn.map(named).join('; ') : '–')),
      el(
        'td',
        {class: 'small'},
        text(
          [
            ...n.blockers.filter((b) => !b.startsWith('waits for ')),
            ...(n.waitingOn.length && n.state !== 'verified' && n.state !== 'cancelled'
              ? [`waits for ${n.waitingOn.map(named).join('; ')}`]
              : []),
          ].join('; ') || '–',
        ),
      ),
      el('td', {}, shortTime(n.deadline) + (n.overdue ? ' ' + el('strong', {class: 'overdue'}, 'overdue') : '')),
      el(
        'td',
        {},
        n.approval === 'pending' && mine && n.ownershipEpoch !== null
          ? actionForm('execution-approval', v.groupId, `Approve execution`, {
              workItemId: n.workItemId,
              ownershipEpoch: String(n.ownershipEpoch),
            })
          : text(n.approval.replace('_', ' ')),
      ),
    ),
  )
  return (
    el('h2', {}, 'Work') +
    el('p', {class: 'progress'}, text(progressLine(s))) +
    (graph.items.length === 0
      ? el('p', {class: 'empty'}, 'No WorkItems yet.')
      : el(
          'figure',
          {class: 'graph'},
          el(
            'div',
            {class: 'graph-scroll', tabindex: 0, 'aria-label': 'WorkItem graph (scrollable)'},
            toSvg(graph, {standalone: false}),
          ),
          el(
            'figcaption',
            {},
            'Arrows run from a dependency to the WorkItem waiting for it. ',
            el('span', {class: 'legend-critical'}, 'Red, thick: the remaining critical path'),
            text(` (${s.criticalPath.length} item(s)); each box says its state, owner, and what holds it.`),
          ),
        ) +
        el(
          'div',
          {class: 'table-scroll'},
          el(
            'table',
            {class: 'workitems'},
            el('caption', {}, 'WorkItems'),
            el(
              'thead',
              {},
              el(
                'tr',
                {},
                ...['goal', 'state', 'owner', 'depends on', 'blockers', 'deadline', 'execution approval'].map((h) =>
                  el('th', {scope: 'col'}, h),
                ),
              ),
            ),
            el('tbody', {}, ...rows),
          ),
        ))
  )
}

/** §12: the six dimensions, the Mission's limit (budget) against what the ledger says is used. */
const DIMENSIONS: [keyof Usage, string, string][] = [
  ['financial', 'financialLimit', 'financial'],
  ['modelTokens', 'modelTokenLimit', 'model tokens'],
  ['toolCalls', 'toolCallLimit', 'tool calls'],
  ['computeSeconds', 'computeSecondsLimit', 'compute seconds'],
  ['wallClockSeconds', 'wallClockSecondsLimit', 'wall-clock seconds'],
  ['externalSideEffects', 'externalSideEffectLimit', 'external side effects'],
]

function budgetFragment(budget: Record<string, unknown>, used: Usage | undefined): string {
  const currency = typeof budget.currency === 'string' ? ` ${budget.currency}` : ''
  const rows = DIMENSIONS.map(([dim, limitKey, label]) => {
    const limit = typeof budget[limitKey] === 'number' ? budget[limitKey] : undefined
    const spent = used?.[dim] ?? 0
    const unit = dim === 'financial' ? currency : ''
    return el(
      'tr',
      {},
      el('th', {scope: 'row'}, text(label)),
      el('td', {class: 'num'}, text(`${spent}${unit}`)),
      el('td', {class: 'num'}, limit === undefined ? 'no limit' : text(`${limit}${unit}`)),
      el(
        'td',
        {},
        limit === undefined
          ? ''
          : el('meter', {min: 0, max: limit || 1, value: Math.min(spent, limit || 1), 'aria-label': `${label} used`}) +
              (spent > limit ? ' ' + el('strong', {class: 'overdue'}, 'over') : ''),
      ),
    )
  })
  return (
    el('h2', {}, 'Budget') +
    el(
      'table',
      {class: 'budget'},
      el('thead', {}, el('tr', {}, ...['dimension', 'used', 'limit', ''].map((h) => el('th', {scope: 'col'}, h)))),
      el('tbody', {}, ...rows),
    )
  )
}

/** §8: the WorkItems the Events from this operator's visibility start show, as they stand now. */
function visibleFragment(g: LiveGroup): string {
  const v = g.visible
  if (v === undefined) return ''
  const rows = Object.values(v.workItems).map((w) =>
    el(
      'tr',
      {'data-workitem': w.workItemId},
      el('td', {}, text(typeof w.contract.goal === 'string' ? w.contract.goal : w.workItemId)),
      el('td', {}, badge(w.state)),
      el('td', {}, w.owner ? text(shortName(w.owner.agentId)) : '–'),
      el('td', {class: 'num'}, w.owner ? text(w.owner.ownershipEpoch) : '–'),
      el('td', {}, shortTime(w.lease?.state === 'active' ? w.lease.expiresAt : w.owner?.leaseExpiresAt)),
    ),
  )
  return (
    el('h2', {}, 'WorkItems you can see') +
    el(
      'p',
      {class: 'small'},
      text(`As the Events from #${v.visibleFrom} on show them: your visibility starts there (§8).`),
    ) +
    (rows.length === 0
      ? el('p', {class: 'empty'}, 'None of the Events you can see names a WorkItem.')
      : table('visible-work', {}, ['WorkItem', 'state', 'owner', 'Ownership Epoch', 'lease expires'], rows))
  )
}

function leasesFragment(state: GroupState): string {
  const c = state.mission.coordinator
  const items: string[] = []
  if (c)
    items.push(
      el(
        'li',
        {},
        text(`Coordinator ${shortName(c.agentId)} (epoch ${c.coordinatorEpoch}): `) +
          (c.leaseExpiresAt ? text('expires ') + time(c.leaseExpiresAt) : text('not renewed yet')),
      ),
    )
  for (const w of Object.values(state.workItems)) {
    const goal = typeof w.contract.goal === 'string' ? w.contract.goal : w.workItemId
    if (w.lease && w.lease.state === 'active')
      items.push(
        el(
          'li',
          {},
          text(`Execution lease of "${goal}" held by ${shortName(w.lease.holderAgentId)}: `) +
            (w.lease.expiresAt ? text('expires ') + time(w.lease.expiresAt) : text('no expiry')),
        ),
      )
    else if (w.owner?.leaseExpiresAt)
      items.push(
        el(
          'li',
          {},
          text(`Ownership of "${goal}" by ${shortName(w.owner.agentId)} (${w.state}): `) +
            text('expires ') +
            time(w.owner.leaseExpiresAt),
        ),
      )
  }
  return el('h2', {}, 'Leases') + (items.length ? el('ul', {class: 'leases'}, ...items) : el('p', {}, 'No leases.'))
}

function artifactsFragment(state: GroupState, v: MissionInspection): string {
  const published = Object.values(state.artifacts ?? {})
  const submitted = new Set(v.submission?.artifactHashes ?? [])
  const known = new Set(published.map((a) => a.contentHash))
  const rows = [
    ...published.map((a) =>
      el(
        'tr',
        {},
        el('td', {class: 'mono'}, el('a', {href: artifactHref(state.groupId, a.contentHash)}, text(a.contentHash))),
        el('td', {}, text(goalOf(state, a.workItemId))),
        el('td', {}, text(shortName(a.producerAgentId))),
        el('td', {}, shortTime(a.publishedAt)),
        el('td', {}, submitted.has(a.contentHash) ? 'yes' : 'no'),
      ),
    ),
    ...[...submitted]
      .filter((h) => !known.has(h))
      .map((h) =>
        el(
          'tr',
          {},
          el('td', {class: 'mono'}, el('a', {href: artifactHref(state.groupId, h)}, text(h))),
          el('td', {}, '–'),
          el('td', {}, '–'),
          el('td', {}, '–'),
          el('td', {}, 'yes'),
        ),
      ),
  ]
  return (
    el('h2', {}, 'Artifacts') +
    (rows.length === 0
      ? el('p', {}, 'No Artifacts yet.')
      : el(
          'p',
          {class: 'small'},
          'Opening one fetches it from the authority and checks its content against the hash.',
        ) + table('artifacts', {}, ['content hash', 'WorkItem', 'producer', 'published', 'submitted'], rows))
  )
}

const goalOf = (state: GroupState, workItemId: string) => {
  const goal = state.workItems[workItemId]?.contract.goal
  return typeof goal === 'string' ? goal : workItemId
}

function evidenceFragment(v: MissionInspection): string {
  const parts = v.workEvidence.map((w) =>
    el(
      'div',
      {class: 'evidence'},
      el('h3', {}, text(`${shortId(w.workItemId)} (${w.state})`)),
      el(
        'ul',
        {},
        ...w.criteria.map((c) =>
          el(
            'li',
            {class: c.coveredBy.length ? 'covered' : 'uncovered'},
            el('strong', {}, text(c.criterionId)) +
              text(`: ${c.description} — requires ${c.evidenceRequired.join(', ') || 'nothing'}; `) +
              (c.coveredBy.length
                ? text(
                    `covered by ${c.coveredBy
                      .map((id) => {
                        const e = w.evidence.find((x) => x.evidenceId === id)
                        return e ? `${e.type} (${e.result}) ${shortId(id)}` : id
                      })
                      .join(', ')}`,
                  )
                : el('strong', {class: 'overdue'}, 'no Evidence')),
          ),
        ),
      ),
    ),
  )
  const mission = v.definitionOfDone.map((c) => {
    const x = c as {criterionId?: unknown; description?: unknown; evidenceRequired?: unknown}
    return el(
      'li',
      {},
      el('strong', {}, text(String(x.criterionId ?? ''))) +
        text(
          `: ${String(x.description ?? '')}${Array.isArray(x.evidenceRequired) ? ` — requires ${x.evidenceRequired.join(', ')}` : ''}`,
        ),
    )
  })
  return (
    el('h2', {}, 'Evidence') +
    el('h3', {}, 'Definition of done (the Mission)') +
    el('ul', {}, ...mission) +
    (parts.length ? parts.join('') : el('p', {}, 'No WorkItem has been submitted with Evidence yet.'))
  )
}

/** The timeline: Events in Group order, Messages as conversation (never an instruction, §9). */
export function timelineList(events: readonly EventDoc[], state: GroupState | null): string {
  const lines = new EventLines()
  if (state) lines.learn(state.workItems)
  return el(
    'ol',
    {class: 'timeline'},
    ...events.map((e) => {
      const who = shortName(e.actor.id)
      if (e.kind === 'message.posted') {
        const m = (e.payload as {message?: {authority?: unknown}}).message
        return el(
          'li',
          {class: 'message', 'data-sequence': e.sequence, 'data-kind': e.kind, value: e.sequence},
          el(
            'div',
            {class: `bubble${e.actor.type === 'human' ? ' human' : ''}`},
            el(
              'p',
              {class: 'msg-head'},
              el('span', {class: 'seq'}, text(`#${e.sequence}`)),
              ' ',
              el('strong', {}, text(who)),
              ' ',
              time(e.occurredAt),
              ' ',
              el(
                'span',
                {class: 'msg-label'},
                m?.authority === false
                  ? 'message — not an instruction'
                  : 'message — not an instruction (authority unset)',
              ),
            ),
            el('blockquote', {class: 'msg-text'}, text(messageText(e) ?? '(no text)')),
          ),
        )
      }
      return el(
        'li',
        {
          class: `event kind-${e.kind.split('.')[0]}`,
          'data-sequence': e.sequence,
          'data-kind': e.kind,
          value: e.sequence,
        },
        el('span', {class: 'seq'}, text(`#${e.sequence}`)),
        ' ',
        time(e.occurredAt),
        ' ',
        el('strong', {}, text(who)),
        ' ',
        text(lines.what(e)),
      )
    }),
  )
}

function timelineFragment(g: LiveGroup): string {
  const first = g.window[0]?.sequence
  const older =
    first !== undefined && first > (g.visible?.visibleFrom ?? 1)
      ? el(
          'p',
          {},
          el(
            'a',
            {href: `/timeline?group=${encodeURIComponent(g.groupId)}&before=${first}`},
            text(`Older Events (before #${first})`),
          ),
        )
      : ''
  return (
    el('h2', {}, 'Timeline') +
    el(
      'p',
      {class: 'small'},
      text(`The latest ${g.window.length} Event(s), in Group order; Messages are conversation.`),
    ) +
    older +
    timelineList(g.window, g.state)
  )
}

function treeFragment(g: LiveGroup, live: LiveGroups, ctx: PageContext): string {
  // The root of the tree this Mission is in, then every child Mission below it (§14).
  let root = g
  for (let i = 0; i < 20 && root.parentGroupId !== undefined; i++) {
    const p = live.get(root.parentGroupId)
    if (!p) break
    root = p
  }
  const node = (x: LiveGroup, depth: number): string => {
    const v = inspectionOf(x, ctx.now)
    const label =
      v === null
        ? text(`${x.groupId} (${x.unavailable ?? 'no Events yet'})`)
        : (x.groupId === g.groupId
            ? el('strong', {'aria-current': 'page'}, text(v.objective))
            : el('a', {href: missionHref(x.groupId)}, text(v.objective))) +
          ' ' +
          badge(v.state)
    const children = depth < 20 && v ? v.children.map((c) => live.get(c.groupId)).filter((c) => c !== undefined) : []
    return el('li', {}, label + (children.length ? el('ul', {}, ...children.map((c) => node(c, depth + 1))) : ''))
  }
  return el('h2', {}, 'Mission tree') + el('ul', {class: 'tree'}, node(root, 0))
}

// ---------------------------------------------------------------- actions

/** A POST form for one action; `fields` are hidden inputs; `body` the visible controls. */
export function actionForm(
  action: string,
  groupId: string,
  label: string,
  fields: Record<string, string | string[]> = {},
  body = '',
  buttonClass = '',
): string {
  const hidden = Object.entries({group: groupId, ...fields}).flatMap(([k, v]) =>
    (Array.isArray(v) ? v : [v]).map((x) => input({type: 'hidden', name: k, value: x})),
  )
  return el(
    'form',
    {method: 'post', action: `/action/${action}`, class: `action action-${action}`},
    ...hidden,
    body,
    el('button', {type: 'submit', class: buttonClass || undefined}, text(label)),
  )
}

const field = (id: string, label: string, control: string) =>
  el('div', {class: 'field'}, el('label', {for: id}, text(label)), control)

/**
 * The approval panel: exactly the revision and Artifact set the Approval will name, the Evidence
 * behind it, and the forms. It is not re-read live: what the human reviews does not change under
 * them. When the Mission moves on the page says so (console.js compares revisions), and an
 * approval of the revision shown is then refused by the authority (REVISION_CONFLICT).
 */
function approvalPanel(v: MissionInspection, state: GroupState, ctx: PageContext): string {
  const s = v.submission
  if (v.state !== 'awaiting_approval' || s === null) return ''
  const mine = v.missionOwner.id === ctx.me
  // §14: a child Mission whose policy asks for final human approval needs the root human's
  // Approval beside its MissionOwner's; the root human signs it here (mission approve --sign-only).
  const rootSigner = !mine && v.approval.rootHumanApproval
  const artifacts = s.evidence.map((a) =>
    el(
      'li',
      {},
      el('a', {href: artifactHref(v.groupId, a.artifactHash), class: 'mono'}, text(a.artifactHash)) +
        text(
          ` — produced by ${a.producedBy.length ? a.producedBy.map((p) => `${goalOf(state, p.workItemId)} (${p.state})`).join(', ') : 'no WorkItem'}; Evidence: ${a.evidenceIds.map(shortId).join(', ') || 'none'}`,
        ),
    ),
  )
  const hidden = {
    expectedRevision: String(state.revision),
    missionRevision: String(s.missionRevision),
    artifactHash: [...s.artifactHashes],
  }
  return el(
    'section',
    {id: 'approval', class: 'panel approval', 'data-revision': state.revision, 'aria-labelledby': 'approval-h'},
    el('h2', {id: 'approval-h'}, mine ? 'Your approval is awaited' : text(`Awaiting approval by ${v.missionOwner.id}`)),
    el(
      'p',
      {id: 'stale', class: 'stale', hidden: true, role: 'alert'},
      'The Mission has changed since this page was loaded. What is shown here is what you would approve; the authority will refuse it (REVISION_CONFLICT). ',
      el('a', {href: missionHref(v.groupId)}, 'Reload to review the current state'),
      '.',
    ),
    el(
      'p',
      {class: 'what'},
      text(`You are approving revision ${s.missionRevision} as ${shortName(s.submittedBy)} submitted it `),
      time(s.submittedAt),
      text(`, with exactly these ${s.artifactHashes.length} Artifact(s):`),
    ),
    s.summary ? el('p', {class: 'summary'}, text(`Summary: ${s.summary}`)) : '',
    el('ul', {class: 'approve-artifacts'}, ...artifacts),
    el(
      'p',
      {class: 'small'},
      text(
        `Acceptance criteria: ${s.criteria.map((c) => `${c.criterionId} (${c.evidenceRequired.join(', ') || 'no evidence kind'})`).join('; ')}`,
      ),
    ),
    rootSigner
      ? el(
          'p',
          {class: 'small'},
          text(
            `This child Mission's policy asks for the root human's final Approval beside ${v.missionOwner.id}'s: sign yours here and hand it over (it is printed, not sent).`,
          ),
        ) +
          actionForm('root-approval', v.groupId, `Sign your root Approval of revision ${s.missionRevision}`, {
            missionRevision: String(s.missionRevision),
            artifactHash: [...s.artifactHashes],
          })
      : '',
    mine
      ? el(
          'p',
          {class: 'small'},
          text(
            `The Approval is signed by this console with your key and sent guarded by Mission revision ${state.revision}: if the Mission changes before it arrives, the authority refuses it.`,
          ),
        )
      : '',
    mine
      ? actionForm(
          'approve',
          v.groupId,
          `Approve revision ${s.missionRevision}`,
          hidden,
          field(
            'approve-comments',
            'Comments (recorded in the Approval)',
            el('textarea', {id: 'approve-comments', name: 'comments', rows: 2}, ''),
          ),
          'primary',
        ) +
          actionForm(
            'request-changes',
            v.groupId,
            'Request changes',
            {expectedRevision: String(state.revision)},
            field(
              'changes-reason',
              'What must change',
              el('textarea', {id: 'changes-reason', name: 'reason', rows: 2, required: true}, ''),
            ),
          )
      : '',
  )
}

/** The operator's actions on an active Mission (the MissionOwner's; the authority decides who may). */
function actionsPanel(v: MissionInspection, state: GroupState): string {
  if (v.ended) return ''
  return el(
    'section',
    {id: 'actions', class: 'panel', 'aria-labelledby': 'actions-h'},
    el('h2', {id: 'actions-h'}, 'Actions'),
    actionForm(
      'direct',
      v.groupId,
      'Send direction',
      {},
      field(
        'direct-text',
        'Direct the Coordinator (posts a Message: conversation, not an instruction)',
        el('textarea', {id: 'direct-text', name: 'text', rows: 3, required: true}, ''),
      ),
    ),
    actionForm(
      'replace-coordinator',
      v.groupId,
      'Replace the Coordinator…',
      {expectedRevision: String(state.revision)},
      field(
        'new-coordinator',
        'New Coordinator (Agent ID or short name)',
        input({id: 'new-coordinator', name: 'agent', required: true, autocomplete: 'off'}),
      ),
    ),
    el(
      'details',
      {class: 'override'},
      el('summary', {}, 'Grant a cooperation override (§20)…'),
      actionForm(
        'override-grant',
        v.groupId,
        'Grant the override',
        {},
        field(
          'override-beneficiary',
          'For member',
          el(
            'select',
            {id: 'override-beneficiary', name: 'beneficiary', required: true},
            ...Object.values(state.members)
              .filter((m) => m.active && m.principal.id !== v.missionOwner.id)
              .map((m) => el('option', {value: m.principal.id}, text(`${shortName(m.principal.id)} (${m.role})`))),
          ),
        ) +
          field(
            'override-target',
            'Limit and Command kind',
            el(
              'select',
              {id: 'override-target', name: 'target', required: true},
              ...Object.entries(LIMIT_POLICIES).flatMap(([policy, kinds]) =>
                kinds.map((k) => el('option', {value: `${policy} ${k}`}, text(`${policy}: ${k}`))),
              ),
            ),
          ) +
          field(
            'override-action',
            'Action ID of the refused Command',
            input({id: 'override-action', name: 'targetActionId', required: true, autocomplete: 'off'}),
          ) +
          field('override-reason', 'Reason', input({id: 'override-reason', name: 'reason', required: true})) +
          field(
            'override-minutes',
            'Valid for (minutes)',
            input({
              id: 'override-minutes',
              name: 'minutes',
              type: 'number',
              min: 1,
              max: 10080,
              value: 60,
              required: true,
            }),
          ),
      ),
    ),
    actionForm(
      'cancel',
      v.groupId,
      'Cancel the Mission…',
      {expectedRevision: String(state.revision)},
      field(
        'cancel-reason',
        'Why cancel (recorded in the Event)',
        input({id: 'cancel-reason', name: 'reason', required: true}),
      ),
      'danger',
    ),
  )
}

export function missionPage(g: LiveGroup, live: LiveGroups, ctx: PageContext): string {
  const v = inspectionOf(g, ctx.now)
  const stream = `/events?group=${encodeURIComponent(g.groupId)}${g.state ? `&after=${encodeURIComponent(`${g.groupId}:${g.state.sequence}`)}` : ''}`
  const frag = (view: MissionFragment, cls = 'panel') =>
    el(
      'section',
      {id: `f-${view}`, class: cls, 'data-fragment': fragmentHref(view, g.groupId)},
      missionFragment(view, g, live, ctx),
    )
  if (v === null || g.state === null)
    return page(
      g.groupId,
      ctx,
      unavailableNote(g) + (g.visible ? frag('visible') : '') + (g.window.length > 0 ? frag('timeline') : ''),
      stream,
    )
  const body =
    el(
      'nav',
      {class: 'crumbs', 'aria-label': 'Breadcrumb'},
      el('a', {href: '/'}, 'Missions'),
      ' › ',
      text(v.objective),
    ) +
    el(
      'div',
      {class: 'layout'},
      el(
        'div',
        {class: 'col-main'},
        frag('header', 'panel header'),
        approvalPanel(v, g.state, ctx),
        frag('graph'),
        frag('timeline'),
      ),
      el(
        'div',
        {class: 'col-side'},
        actionsPanel(v, g.state),
        frag('budget'),
        frag('leases'),
        frag('artifacts'),
        frag('evidence'),
        frag('tree'),
      ),
    )
  return page(v.objective, ctx, body, stream)
}

/** An older page of the timeline (read from the authority on request, history.ts). */
export function timelinePage(g: LiveGroup, events: readonly EventDoc[], before: number, ctx: PageContext): string {
  const first = events[0]?.sequence ?? before
  return page(
    `Timeline of ${g.groupId}`,
    ctx,
    el(
      'nav',
      {class: 'crumbs', 'aria-label': 'Breadcrumb'},
      el('a', {href: '/'}, 'Missions'),
      ' › ',
      el('a', {href: missionHref(g.groupId)}, text(g.state?.mission.objective ?? g.groupId)),
      ' › timeline',
    ) +
      el(
        'section',
        {class: 'panel'},
        el('h1', {}, text(`Events #${first}–#${before - 1}`)),
        first > 1
          ? el(
              'p',
              {},
              el('a', {href: `/timeline?group=${encodeURIComponent(g.groupId)}&before=${first}`}, 'Older Events'),
            )
          : '',
        timelineList(events, g.state),
      ),
    '',
  )
}

/** The code of an action the console refused before signing anything. */
export const NOT_SENT = 'NOT_SENT'

/** The outcome of an action: what happened, or the protocol code and the authority's reason. */
export function resultPage(
  ctx: PageContext,
  groupId: string,
  outcome: {ok: true; what: string; document?: string} | {ok: false; code: string; reason?: string; hint?: string},
): string {
  const back = el('p', {}, el('a', {href: missionHref(groupId)}, 'Back to the Mission'))
  const body = outcome.ok
    ? el(
        'section',
        {class: 'panel result ok', role: 'status'},
        el('h1', {}, 'Done'),
        el('p', {}, text(outcome.what)),
        outcome.document
          ? el('label', {for: 'signed'}, 'The signed document') +
              el('textarea', {id: 'signed', class: 'mono signed', rows: 14, readonly: true}, text(outcome.document))
          : '',
        back,
      )
    : el(
        'section',
        {class: 'panel result refused', role: 'alert'},
        // NOT_SENT: the console refused before signing (a malformed form, an unknown Agent).
        el('h1', {}, outcome.code === NOT_SENT ? 'Not sent' : 'Refused'),
        el(
          'p',
          {},
          outcome.code === NOT_SENT ? 'Nothing was signed or sent: ' : 'The authority refused the Command: ',
          el('code', {class: 'code'}, text(outcome.code)),
        ),
        outcome.reason ? el('p', {class: 'reason'}, text(outcome.reason)) : '',
        outcome.hint ? el('p', {}, text(outcome.hint)) : '',
        back,
      )
  return page(outcome.ok ? 'Done' : `Refused: ${outcome.code}`, ctx, body, '')
}

/** The confirmation step of a destructive action: the same form again, with confirm=yes. */
export function confirmPage(
  ctx: PageContext,
  groupId: string,
  action: string,
  question: string,
  fields: Record<string, string>,
): string {
  return page(
    'Confirm',
    ctx,
    el(
      'section',
      {class: 'panel confirm', 'aria-labelledby': 'confirm-h'},
      el('h1', {id: 'confirm-h'}, text(question)),
      actionForm(action, groupId, 'Yes, do it', {...fields, confirm: 'yes'}, '', 'danger'),
      el('p', {}, el('a', {href: missionHref(groupId)}, 'No, go back')),
    ),
    '',
  )
}

/** The Artifact page: fetched, hash checked, and the first bytes shown as text when they are text. */
export function artifactPage(
  ctx: PageContext,
  groupId: string,
  hash: string,
  outcome: {ok: true; bytes: Buffer} | {ok: false; why: string},
): string {
  const rawHref = `/artifact/raw?group=${encodeURIComponent(groupId)}&hash=${encodeURIComponent(hash)}`
  let body: string
  if (outcome.ok) {
    const preview = outcome.bytes.subarray(0, 4096)
    const asText = new TextDecoder('utf-8', {fatal: false}).decode(preview)
    // eslint-disable-next-line no-control-regex -- control characters mark binary content
    const printable = !/[\u0000-\u0008\u000e-\u001f\ufffd]/.test(asText)
    body =
      el(
        'p',
        {class: 'verified', role: 'status'},
        text(`Verified: the ${outcome.bytes.length} byte(s) fetched hash to ${hash}.`),
      ) +
      el('p', {}, el('a', {href: rawHref, download: true}, 'Download')) +
      (printable
        ? el('pre', {class: 'preview'}, text(asText + (outcome.bytes.length > preview.length ? '\n…' : '')))
        : el('p', {}, 'Binary content (no preview).'))
  } else body = el('p', {class: 'refused', role: 'alert'}, text(`Not verified: ${outcome.why}`))
  return page(
    'Artifact',
    ctx,
    el(
      'section',
      {class: 'panel'},
      el('h1', {}, 'Artifact'),
      el('p', {class: 'mono'}, text(hash)),
      body,
      el('p', {}, el('a', {href: missionHref(groupId)}, 'Back to the Mission')),
    ),
    '',
  )
}
