// One Mission's WorkItem graph: boxes laid out by layout.ts, coloured by state and naming it,
// arrows from each dependency to the item that waits on it, rework rounds and child Missions shown.

import {layoutDag, type PlacedNode} from './layout.js'
import {count} from './format.js'
import {el, escapeText, fitText, num} from '../../html/markup.js'
import {INK, LINK, MUTED, stateSwatch} from './palette.js'
import type {TraceMission, TraceWorkItem} from './trace.js'

const BOX_W = 210
const BOX_H = 78
const FONT = 12

/** The page anchor of a Mission's section, so a child link can point at it. */
export function missionAnchor(missionId: string): string {
  return `mission-${missionId.replace(/[^A-Za-z0-9_-]/g, '_')}`
}

/**
 * The graph of `mission`; `titleOf` names a child Mission for the link line. `key` makes the
 * SVG's ids unique on the page (its arrow marker).
 */
export function renderGraph(
  mission: TraceMission,
  key: string,
  titleOf: (missionId: string) => string | undefined,
): string {
  const items = new Map<string, TraceWorkItem>()
  for (const w of mission.workItems) if (!items.has(w.workItemId)) items.set(w.workItemId, w)
  const layout = layoutDag(
    [...items.values()].map((w) => ({id: w.workItemId, dependsOn: w.dependsOn})),
    {boxWidth: BOX_W, boxHeight: BOX_H, columnGap: 56, rowGap: 22, margin: 12},
  )
  const at = new Map(layout.nodes.map((n) => [n.id, n]))
  const marker = `arrow-${key}`
  const edges = layout.edges.map((e) => {
    const a = at.get(e.from)
    const b = at.get(e.to)
    if (!a || !b) return ''
    const [x1, y1, x2, y2] = [a.x + a.width, a.y + a.height / 2, b.x - 2, b.y + b.height / 2]
    const mid = (x1 + x2) / 2
    return el('path', {
      d: `M${num(x1)},${num(y1)} C${num(mid)},${num(y1)} ${num(mid)},${num(y2)} ${num(x2)},${num(y2)}`,
      fill: 'none',
      stroke: '#4d4d4d',
      'stroke-width': 1.4,
      'marker-end': `url(#${marker})`,
      class: 'edge',
    })
  })
  const boxes = layout.nodes.map((n) => {
    const w = items.get(n.id)
    return w ? box(w, n, titleOf) : ''
  })
  const empty =
    layout.nodes.length === 0 ? [el('text', {x: 12, y: 30, 'font-size': FONT, fill: MUTED}, 'No WorkItems.')] : []
  const width = Math.max(layout.width, 240)
  const height = Math.max(layout.height, 48)
  return el(
    'svg',
    {
      xmlns: 'http://www.w3.org/2000/svg',
      viewBox: `0 0 ${num(width)} ${num(height)}`,
      // Never wider than drawn (a two-box graph stays box-sized instead of filling the page), and
      // never so narrow that its 12 px text shrinks past reading: a narrow window scrolls instead.
      style: `max-width:${num(width)}px;min-width:${num(Math.min(width, 640))}px`,
      role: 'img',
      'aria-labelledby': `${marker}-title`,
      class: 'graph',
      'font-family': 'system-ui, sans-serif',
    },
    el(
      'title',
      {id: `${marker}-title`},
      escapeText(`WorkItem graph of ${mission.title}: ${count(items.size, 'WorkItem')}`),
    ),
    el(
      'defs',
      {},
      el(
        'marker',
        {id: marker, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto'},
        el('path', {d: 'M0,0 L10,5 L0,10 z', fill: '#4d4d4d'}),
      ),
    ),
    ...edges,
    ...boxes,
    ...empty,
  )
}

function box(w: TraceWorkItem, n: PlacedNode, titleOf: (missionId: string) => string | undefined): string {
  const sw = stateSwatch(w.state)
  const inner = n.width - 16
  const lines: string[] = [
    el('text', {x: n.x + 8, y: n.y + 18, 'font-size': 13, 'font-weight': 600, fill: INK}, fit(w.title, inner, 13)),
    el('text', {x: n.x + 8, y: n.y + 35, 'font-size': FONT, fill: INK}, fit(`${w.state} · ${w.stage}`, inner, FONT)),
  ]
  const facts = [w.owner ?? 'unowned', ...(w.attempts > 1 ? [count(w.attempts, 'round')] : [])].join(' · ')
  lines.push(el('text', {x: n.x + 8, y: n.y + 51, 'font-size': FONT, fill: INK}, fit(facts, inner, FONT)))
  const tip = [
    w.title,
    `${w.workItemId} · ${w.state} · stage ${w.stage}`,
    `owner ${w.owner ?? '—'} · ${count(w.attempts, 'round')}`,
    ...(w.dependsOn.length ? [`depends on ${w.dependsOn.join(', ')}`] : []),
  ]
  let child = ''
  if (w.childMissionId !== undefined) {
    const name = titleOf(w.childMissionId) ?? w.childMissionId
    tip.push(`child Mission: ${name}`)
    child = el(
      'a',
      {href: `#${missionAnchor(w.childMissionId)}`},
      el(
        'text',
        {x: n.x + 8, y: n.y + 68, 'font-size': FONT, fill: LINK, 'text-decoration': 'underline'},
        fit(`↳ child: ${name}`, inner, FONT),
      ),
    )
  }
  return el(
    'g',
    {class: 'workitem', 'data-id': w.workItemId, 'data-state': w.state},
    el('title', {}, escapeText(tip.join('\n'))),
    el('rect', {
      x: n.x,
      y: n.y,
      width: n.width,
      height: n.height,
      rx: 6,
      fill: sw.fill,
      stroke: sw.stroke,
      'stroke-width': w.attempts > 1 ? 2.5 : 1.2,
      'stroke-dasharray': w.state === 'cancelled' ? '5 3' : undefined,
    }),
    ...lines,
    child,
  )
}

const fit = (s: string, width: number, size: number) => escapeText(fitText(s, width, size))
