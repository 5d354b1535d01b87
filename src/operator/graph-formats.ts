// `mwp work graph --format dot|mermaid|svg`: the WorkItem dependency graph (views.ts workGraph)
// as Graphviz DOT, Mermaid flowchart text, or a self-contained SVG a browser opens. Edges run
// from a dependency to the WorkItem that waits for it. The remaining critical path (views.ts: the
// longest chain of unfinished WorkItems, counted in items — the Work Contract, §10.1, has no
// duration to weigh them by) is drawn in the class `critical`, its nodes and the edges between them.
//
// The SVG layout is a small layered one: a WorkItem's column is its dependency depth (0 for no
// dependency in the graph, else one more than its deepest dependency), rows in graph order.

import type {WorkGraph, WorkNode} from './views.js'
import {fit} from '../cli/output.js'
import {shortId, shortName} from './event-lines.js'

export const GRAPH_FORMATS = ['text', 'dot', 'mermaid', 'svg'] as const
export type GraphFormat = (typeof GRAPH_FORMATS)[number]

interface Edge {
  from: string
  to: string
  critical: boolean
}

/** The edges between WorkItems of the graph (a dependency outside it, §8 visibility, is left out). */
function edgesOf(g: WorkGraph): Edge[] {
  const known = new Set(g.items.map((n) => n.workItemId))
  const path = g.summary.criticalPath
  const onPath = new Set(path.slice(1).map((id, i) => `${path[i]}\n${id}`))
  return g.items.flatMap((n) =>
    n.dependsOn
      .filter((d) => known.has(d))
      .map((d) => ({from: d, to: n.workItemId, critical: onPath.has(`${d}\n${n.workItemId}`)})),
  )
}

/** What a node says: the goal (cut to `max` characters), the WorkItem ID and its state. */
const dotString = (s: string) => `"${s.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`

export function toDot(g: WorkGraph): string {
  const lines = [
    `digraph ${dotString(g.groupId)} {`,
    '  rankdir=LR;',
    '  node [shape=box, style="rounded"];',
    ...g.items.map(
      (n) =>
        `  ${dotString(n.workItemId)} [label=${dotString(`${fit(n.goal, 60)}\n${n.workItemId}\n[${n.state}]`)}${n.critical ? ', class="critical", color="red", penwidth=2' : ''}];`,
    ),
    ...edgesOf(g).map(
      (e) =>
        `  ${dotString(e.from)} -> ${dotString(e.to)}${e.critical ? ' [class="critical", color="red", penwidth=2]' : ''};`,
    ),
    '}',
  ]
  return lines.join('\n')
}

/** Mermaid node IDs are plain words: n0, n1, … in graph order; the label carries the WorkItem. */
const mermaidLabel = (s: string) => s.replaceAll('"', '#quot;').replaceAll('<', '#lt;').replaceAll('>', '#gt;')

export function toMermaid(g: WorkGraph): string {
  const id = new Map(g.items.map((n, i) => [n.workItemId, `n${i}`]))
  const edges = edgesOf(g)
  const critical = g.items.filter((n) => n.critical).map((n) => id.get(n.workItemId)!)
  const criticalEdges = edges.flatMap((e, i) => (e.critical ? [i] : []))
  return [
    'flowchart LR',
    ...g.items.map(
      (n) =>
        `  ${id.get(n.workItemId)}["${[fit(n.goal, 60), n.workItemId, `[${n.state}]`].map(mermaidLabel).join('<br/>')}"]`,
    ),
    ...edges.map((e) => `  ${id.get(e.from)} --> ${id.get(e.to)}`),
    '  classDef critical stroke:#c00,stroke-width:3px',
    ...(critical.length ? [`  class ${critical.join(',')} critical`] : []),
    ...(criticalEdges.length ? [`  linkStyle ${criticalEdges.join(',')} stroke:#c00,stroke-width:3px`] : []),
  ].join('\n')
}

/** Each WorkItem's column: its dependency depth within the graph (a cycle, refused by the authority, is cut). */
export function depths(items: readonly WorkNode[]): Map<string, number> {
  const byId = new Map(items.map((n) => [n.workItemId, n]))
  const depth = new Map<string, number>()
  const visiting = new Set<string>()
  const of = (id: string): number => {
    const known = depth.get(id)
    if (known !== undefined) return known
    const n = byId.get(id)
    if (n === undefined || visiting.has(id)) return -1
    visiting.add(id)
    const d = 1 + Math.max(-1, ...n.dependsOn.map(of))
    visiting.delete(id)
    depth.set(id, d)
    return d
  }
  for (const n of items) of(n.workItemId)
  return depth
}

const NODE_W = 240
const NODE_H = 88
const GAP_X = 80
const GAP_Y = 24
const MARGIN = 20

const xml = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;')

const STATE_FILL: Record<string, string> = {
  verified: '#e6f4ea',
  submitted: '#e8f0fe',
  active: '#fff8e1',
  blocked: '#fdecea',
  failed: '#fdecea',
  cancelled: '#eeeeee',
}

/**
 * The fourth line of a node: what holds it — its own blocker, the first dependency it waits for
 * (by goal), a pending execution approval — or else its deadline.
 */
function holdLine(n: WorkNode, goals: ReadonlyMap<string, string>): string {
  const own = n.blockers.find((b) => !b.startsWith('waits for '))
  if (own) return own
  if (n.waitingOn.length && !WORK_DONE.has(n.state)) {
    const first = goals.get(n.waitingOn[0]!) ?? shortId(n.waitingOn[0]!)
    return `waits for ${first}${n.waitingOn.length > 1 ? ` +${n.waitingOn.length - 1}` : ''}`
  }
  if (n.approval === 'pending') return 'awaiting execution approval'
  return n.deadline ? `due ${n.deadline.slice(0, 16).replace('T', ' ')}${n.overdue ? ' OVERDUE' : ''}` : ''
}

const WORK_DONE: ReadonlySet<string> = new Set(['verified', 'cancelled'])

/**
 * The SVG picture. `standalone` (the default, for a file) adds the XML prolog and a <style>; an
 * inline picture (the console, whose Content Security Policy allows only its own stylesheet) has
 * neither and is styled by the page through the same classes.
 */
export function toSvg(g: WorkGraph, options: {standalone?: boolean} = {}): string {
  const standalone = options.standalone ?? true
  const depth = depths(g.items)
  const rowIn = new Map<number, number>()
  const at = new Map<string, {x: number; y: number}>()
  for (const n of g.items) {
    const col = depth.get(n.workItemId)!
    const row = rowIn.get(col) ?? 0
    rowIn.set(col, row + 1)
    at.set(n.workItemId, {x: MARGIN + col * (NODE_W + GAP_X), y: MARGIN + row * (NODE_H + GAP_Y)})
  }
  const columns = Math.max(1, ...[...depth.values()].map((d) => d + 1))
  const rows = Math.max(1, ...rowIn.values())
  const width = 2 * MARGIN + columns * NODE_W + (columns - 1) * GAP_X
  const height = 2 * MARGIN + rows * NODE_H + (rows - 1) * GAP_Y
  const edges = edgesOf(g).map((e) => {
    const a = at.get(e.from)!
    const b = at.get(e.to)!
    const [x1, y1, x2, y2] = [a.x + NODE_W, a.y + NODE_H / 2, b.x, b.y + NODE_H / 2]
    const mid = (x1 + x2) / 2
    return `  <path class="edge${e.critical ? ' critical' : ''}" d="M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}" marker-end="url(#arrow)"/>`
  })
  const goals = new Map(g.items.map((n) => [n.workItemId, n.goal]))
  const nodes = g.items.map((n) => {
    const {x, y} = at.get(n.workItemId)!
    const fill = STATE_FILL[n.state] ?? '#ffffff'
    const held = n.blockers.length > 0 || n.overdue || n.approval === 'pending'
    const title = [
      n.workItemId,
      n.goal,
      `[${n.state}]${n.owner ? ` owner ${n.owner}` : ''}`,
      ...n.blockers,
      ...(n.deadline ? [`deadline ${n.deadline}${n.overdue ? ' (overdue)' : ''}`] : []),
      ...(n.critical ? ['on the critical path'] : []),
    ].join('\n')
    return [
      `  <g class="workitem state-${xml(n.state)}${n.critical ? ' critical' : ''}${held ? ' held' : ''}" data-workitem="${xml(n.workItemId)}" transform="translate(${x},${y})">`,
      `    <title>${xml(title)}</title>`,
      `    <rect width="${NODE_W}" height="${NODE_H}" rx="8" fill="${fill}"/>`,
      `    <text x="10" y="20" class="goal">${xml(fit(n.goal, 32))}</text>`,
      `    <text x="10" y="37" class="id">${xml(fit(shortId(n.workItemId), 40))}</text>`,
      `    <text x="10" y="56" class="state">${xml(fit(`${n.state}${n.owner ? ` · ${shortName(n.owner)}` : ''}${n.critical ? ' · critical' : ''}`, 40))}</text>`,
      `    <text x="10" y="75" class="hold">${xml(fit(holdLine(n, goals), 34))}</text>`,
      '  </g>',
    ].join('\n')
  })
  const head = standalone
    ? [
        '<?xml version="1.0" encoding="UTF-8"?>',
        `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
        `  <title>${xml(`WorkItems of ${g.groupId}`)}</title>`,
        '  <style>',
        '    .workitem rect { stroke: #555; stroke-width: 1; }',
        '    .workitem.critical rect { stroke: #c00; stroke-width: 3; }',
        '    .edge { fill: none; stroke: #777; stroke-width: 1.5; }',
        '    .edge.critical { stroke: #c00; stroke-width: 3; }',
        '    text { font-family: sans-serif; font-size: 12px; fill: #222; }',
        '    text.id, text.state, text.hold { font-size: 10px; fill: #555; }',
        '  </style>',
      ]
    : [
        `<svg xmlns="http://www.w3.org/2000/svg" class="workgraph" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="workgraph-title">`,
        `  <title id="workgraph-title">${xml(`WorkItems of ${g.groupId}: ${g.items.length} item(s), critical path ${g.summary.criticalPath.length}`)}</title>`,
      ]
  return [
    ...head,
    '  <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#777"/></marker></defs>',
    ...edges,
    ...nodes,
    '</svg>',
  ].join('\n')
}
