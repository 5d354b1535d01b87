// The timeline picture: one lane per Worker slot, time left to right, each run a bar in its
// Group's colour with the WorkItem title when it fits, and the run's marks as vertical lines.

import {type Lane, type Lookup, type TimeSpan, lanes, lookup, timeSpan} from './derive.js'
import {formatDuration, formatOffset, parseTime} from './format.js'
import {el, escapeText, fitText, num, textWidth} from '../../html/markup.js'
import {INK, MARKS, MUTED, groupLetter, groupSwatch, FAIL} from './palette.js'
import type {PocTrace, TraceMark, TraceRun} from './trace.js'

const WIDTH = 1200
const LABEL_W = 110 // the lane names' column
const RIGHT = 16
const LANE_H = 30
const BAR_H = 22
const MARK_ROW_H = 16
/** At most this many rows of mark labels; a label that finds no room is left to its tooltip and the marks table. */
export const MAX_LABEL_ROWS = 8
const AXIS_H = 26
const FONT = 11

/** Group index (colour and letter) by groupId, in the order the Missions are listed, then any other Group seen. */
export function groupIndex(trace: PocTrace): Map<string, number> {
  const index = new Map<string, number>()
  for (const g of [...trace.missions.map((m) => m.groupId), ...trace.runs.map((r) => r.groupId)])
    if (!index.has(g)) index.set(g, index.size)
  return index
}

/** A tick step giving at most about ten ticks across `duration` ms, on round values. */
export function tickStep(duration: number): number {
  const steps = [100, 200, 500, 1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3]
  return steps.find((s) => duration / s <= 10) ?? Math.ceil(duration / 10 / 3600e3) * 3600e3
}

interface PlacedLabel {
  mark: TraceMark
  x: number
  row: number
  text: string
  anchor: 'start' | 'end'
}

/** Places mark labels in rows above the lanes: each goes into the first row where it clears the one before. */
function placeLabels(marks: readonly TraceMark[], xOf: (ms: number) => number, span: TimeSpan): PlacedLabel[] {
  const rowsEnd: number[] = []
  const sorted = marks.map((m) => ({m, t: parseTime(m.at) ?? span.start})).sort((a, b) => a.t - b.t)
  return sorted.map(({m, t}) => {
    const x = xOf(t)
    const text = fitText(`${MARKS[m.kind]?.symbol ?? '•'} ${m.label}`, 200, FONT)
    const w = textWidth(text, FONT)
    // Near the right edge a label reads leftwards from its line.
    const anchor = x + 3 + w > WIDTH - RIGHT ? 'end' : 'start'
    const from = anchor === 'start' ? x + 3 : x - 3 - w
    const to = anchor === 'start' ? x + 3 + w : x - 3
    let row = rowsEnd.findIndex((end) => end + 6 <= from)
    if (row === -1 && rowsEnd.length >= MAX_LABEL_ROWS) return {mark: m, x, row: 0, text: '', anchor}
    if (row === -1) row = rowsEnd.push(to) - 1
    else rowsEnd[row] = to
    return {mark: m, x, row, text, anchor}
  })
}

export function renderTimeline(trace: PocTrace): string {
  const span = timeSpan(trace)
  const all = lanes(trace)
  const look = lookup(trace)
  const groups = groupIndex(trace)
  const plotW = WIDTH - LABEL_W - RIGHT
  const xOf = (ms: number) => LABEL_W + ((ms - span.start) / (span.end - span.start)) * plotW
  const labels = placeLabels(trace.marks, xOf, span)
  const rows = Math.max(0, ...labels.filter((l) => l.text !== '').map((l) => l.row + 1))
  const top = rows * MARK_ROW_H + 8
  const lanesBottom = top + Math.max(1, all.length) * LANE_H
  const height = lanesBottom + AXIS_H

  const parts: string[] = [defs()]
  // Lanes: a light band every other lane, the lane's name on the left.
  all.forEach((lane, i) => {
    const y = top + i * LANE_H
    if (i % 2 === 0) parts.push(el('rect', {x: LABEL_W, y, width: plotW, height: LANE_H, fill: '#f5f5f5'}))
    parts.push(
      el(
        'text',
        {x: LABEL_W - 8, y: y + LANE_H / 2 + 4, 'text-anchor': 'end', 'font-size': 12, fill: INK},
        escapeText(fitText(`${lane.agent} #${lane.slot}`, LABEL_W - 12, 12)),
        el('title', {}, escapeText(`${lane.agent}, slot ${lane.slot}: ${lane.runs.length} runs`)),
      ),
    )
  })
  if (all.length === 0)
    parts.push(el('text', {x: LABEL_W + 8, y: top + 19, 'font-size': 12, fill: MUTED}, 'No runs recorded.'))

  // Time ticks and grid lines.
  const step = tickStep(span.end - span.start)
  for (let t = 0; t <= span.end - span.start + 1e-6; t += step) {
    const x = xOf(span.start + t)
    parts.push(el('line', {x1: x, x2: x, y1: top, y2: lanesBottom, stroke: '#d0d0d0', 'stroke-width': 1}))
    parts.push(
      el(
        'text',
        {x, y: lanesBottom + 16, 'text-anchor': 'middle', 'font-size': FONT, fill: MUTED},
        escapeText(formatOffset(t, step)),
      ),
    )
  }

  all.forEach((lane, i) => parts.push(...lane.runs.map((r) => bar(r, lane, top + i * LANE_H, xOf, look, groups))))

  // Marks above the bars, so a fault line is never hidden behind a run; the labels last, over
  // every line (a white halo keeps a label readable where another mark's line crosses it).
  for (const l of labels) parts.push(markLine(l, top, lanesBottom))
  for (const l of labels) if (l.text !== '') parts.push(markLabel(l))

  return el(
    'svg',
    {
      xmlns: 'http://www.w3.org/2000/svg',
      viewBox: `0 0 ${WIDTH} ${num(height)}`,
      role: 'img',
      'aria-labelledby': 'timeline-title',
      class: 'timeline',
      'font-family': 'system-ui, sans-serif',
    },
    el(
      'title',
      {id: 'timeline-title'},
      escapeText(
        `Timeline: ${trace.runs.length} runs on ${all.length} Worker slots over ${formatDuration(span.end - span.start)}, ${trace.marks.length} marks`,
      ),
    ),
    ...parts,
  )
}

function defs(): string {
  return el(
    'defs',
    {},
    el(
      'pattern',
      {id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)'},
      el('rect', {width: 6, height: 6, fill: '#ffffff', 'fill-opacity': 0.55}),
      el('line', {x1: 0, y1: 0, x2: 0, y2: 6, stroke: INK, 'stroke-width': 2.5}),
    ),
  )
}

/** How a run's end is drawn, so the outcome reads without colour: hatched (yielded), a cap (failed, blocked), dashed (lost). */
function bar(
  r: TraceRun,
  lane: Lane,
  laneY: number,
  xOf: (ms: number) => number,
  look: Lookup,
  groups: Map<string, number>,
): string {
  const start = parseTime(r.startedAt)
  const end = parseTime(r.endedAt)
  const x0 = xOf(start ?? 0)
  const x1 = Math.max(xOf(end ?? start ?? 0), x0 + 2) // a zero-length run still shows
  const w = x1 - x0
  const y = laneY + (LANE_H - BAR_H) / 2
  const gi = groups.get(r.groupId) ?? 0
  const sw = groupSwatch(gi)
  const item = look.workItem(r.groupId, r.workItemId)
  const mission = look.missionOfGroup(r.groupId)
  const title = item?.title ?? r.workItemId
  const dur = start !== undefined && end !== undefined ? formatDuration(end - start) : '?'
  const tip = [
    `${title}`,
    `Mission ${groupLetter(gi)}: ${mission?.title ?? r.groupId}`,
    `${lane.agent} slot ${lane.slot} · ${r.outcome} · ${dur}`,
    `${r.startedAt} → ${r.endedAt}`,
  ].join('\n')
  const lost = r.outcome === 'lost'
  const parts = [
    el('title', {}, escapeText(tip)),
    el('rect', {
      x: x0,
      y,
      width: w,
      height: BAR_H,
      rx: 3,
      fill: sw.fill,
      stroke: sw.stroke,
      'stroke-width': 1,
      'stroke-dasharray': lost ? '4 3' : undefined,
      'fill-opacity': lost ? 0.6 : undefined,
    }),
  ]
  const capW = Math.min(12, w / 3)
  if (r.outcome === 'yielded')
    parts.push(el('rect', {x: x1 - capW, y, width: capW, height: BAR_H, fill: 'url(#hatch)', class: 'yielded'}))
  if (r.outcome === 'failed' || r.outcome === 'blocked')
    parts.push(
      el('rect', {
        x: x1 - Math.min(4, w / 3),
        y,
        width: Math.min(4, w / 3),
        height: BAR_H,
        fill: r.outcome === 'failed' ? FAIL : '#8a5a00',
        class: r.outcome,
      }),
    )
  const room = w - 8 - (r.outcome === 'submitted' ? 0 : capW)
  const label = fitText(`${groupLetter(gi)} · ${title}`, room, FONT)
  if (label) parts.push(el('text', {x: x0 + 4, y: y + BAR_H / 2 + 4, 'font-size': FONT, fill: INK}, escapeText(label)))
  return el(
    'g',
    {
      class: 'run',
      'data-outcome': r.outcome,
      'data-lane': lane.key,
      'data-group': r.groupId,
      'data-item': r.workItemId,
    },
    ...parts,
  )
}

function markLine(l: PlacedLabel, top: number, bottom: number): string {
  const style = markStyle(l.mark)
  const labelY = l.row * MARK_ROW_H + 12
  const tip = [
    `${style.name}: ${l.mark.label}`,
    l.mark.at,
    ...(l.mark.agent ? [`agent ${l.mark.agent}`] : []),
    ...(l.mark.groupId ? [`group ${l.mark.groupId}`] : []),
  ].join('\n')
  return el(
    'g',
    {class: 'mark', 'data-kind': l.mark.kind},
    el('title', {}, escapeText(tip)),
    // A faint leader from the label down to the lanes, then the mark's own line across them.
    el('line', {
      x1: l.x,
      x2: l.x,
      y1: labelY + 3,
      y2: top,
      stroke: style.color,
      'stroke-width': 1,
      'stroke-opacity': 0.45,
    }),
    el('line', {
      x1: l.x,
      x2: l.x,
      y1: top,
      y2: bottom,
      stroke: style.color,
      'stroke-width': style.width,
      'stroke-dasharray': style.dash,
    }),
  )
}

function markLabel(l: PlacedLabel): string {
  const style = markStyle(l.mark)
  return el(
    'text',
    {
      x: l.anchor === 'start' ? l.x + 3 : l.x - 3,
      y: l.row * MARK_ROW_H + 12,
      'text-anchor': l.anchor,
      'font-size': FONT,
      fill: style.color,
      'font-weight': 600,
      stroke: '#ffffff',
      'stroke-width': 3,
      'paint-order': 'stroke',
      class: 'mark-label',
    },
    el('title', {}, escapeText(`${style.name}: ${l.mark.label} (${l.mark.at})`)),
    escapeText(l.text),
  )
}

const markStyle = (m: TraceMark) => MARKS[m.kind] ?? {color: INK, width: 1, symbol: '•', name: m.kind}
