// A layered layout of a WorkItem dependency graph, left to right: longest-path layering puts
// every item one column right of its latest dependency, and a few barycentre sweeps order each
// column so edges cross less. Fixed-size boxes on a grid, so no two boxes overlap.

export interface LayoutNode {
  id: string
  dependsOn: readonly string[]
}

export interface LayoutOptions {
  boxWidth: number
  boxHeight: number
  columnGap: number // between a column's right edge and the next one's left
  rowGap: number
  margin: number
}

export interface PlacedNode {
  id: string
  layer: number
  order: number
  x: number
  y: number
  width: number
  height: number
}

export interface LayoutEdge {
  from: string // the dependency
  to: string // the item that depends on it
}

export interface DagLayout {
  nodes: PlacedNode[]
  edges: LayoutEdge[]
  /** Dependencies the picture cannot draw: on an id the graph does not hold, or closing a cycle. */
  dropped: (LayoutEdge & {why: 'unknown' | 'cycle'})[]
  width: number
  height: number
}

const SWEEPS = 4

export function layoutDag(nodes: readonly LayoutNode[], o: LayoutOptions): DagLayout {
  const ids = new Set(nodes.map((n) => n.id))
  const dropped: DagLayout['dropped'] = []
  const preds = new Map<string, string[]>(nodes.map((n) => [n.id, []]))
  const seenEdge = new Set<string>()
  const taken = new Set<string>()
  for (const n of nodes) {
    if (taken.has(n.id)) continue // a repeated id: its first entry stands
    taken.add(n.id)
    for (const d of n.dependsOn) {
      const key = `${d}\u0000${n.id}`
      if (seenEdge.has(key)) continue
      seenEdge.add(key)
      if (!ids.has(d) || d === n.id) dropped.push({from: d, to: n.id, why: d === n.id ? 'cycle' : 'unknown'})
      else preds.get(n.id)?.push(d)
    }
  }
  const order = [...ids]

  // Longest-path layering by depth-first search; an edge back onto the search path closes a
  // cycle (the run should never record one, but the trace is untrusted) and is dropped.
  const layer = new Map<string, number>()
  const onPath = new Set<string>()
  const visit = (id: string): number => {
    const known = layer.get(id)
    if (known !== undefined) return known
    onPath.add(id)
    let l = 0
    const kept: string[] = []
    for (const d of preds.get(id) ?? []) {
      if (onPath.has(d)) {
        dropped.push({from: d, to: id, why: 'cycle'})
        continue
      }
      kept.push(d)
      l = Math.max(l, visit(d) + 1)
    }
    preds.set(id, kept)
    onPath.delete(id)
    layer.set(id, l)
    return l
  }
  for (const id of order) visit(id)

  const edges: LayoutEdge[] = order.flatMap((to) => (preds.get(to) ?? []).map((from) => ({from, to})))
  const succs = new Map<string, string[]>(order.map((id) => [id, []]))
  for (const e of edges) succs.get(e.from)?.push(e.to)

  const layerCount = Math.max(0, ...layer.values()) + (order.length ? 1 : 0)
  const columns: string[][] = Array.from({length: layerCount}, () => [])
  for (const id of order) columns[layer.get(id) ?? 0]?.push(id)

  const position = new Map<string, number>()
  const index = () => columns.forEach((c) => c.forEach((id, i) => position.set(id, i)))
  index()
  const reorder = (column: string[], neighbours: Map<string, string[]>) => {
    const key = new Map(
      column.map((id, i) => {
        const ps = (neighbours.get(id) ?? []).map((n) => position.get(n) ?? 0)
        return [id, ps.length ? ps.reduce((a, b) => a + b, 0) / ps.length : i] as const
      }),
    )
    column.sort((a, b) => (key.get(a) ?? 0) - (key.get(b) ?? 0)) // stable: ties keep their order
    column.forEach((id, i) => position.set(id, i))
  }
  for (let s = 0; s < SWEEPS; s++) {
    for (let l = 1; l < columns.length; l++) reorder(columns[l] ?? [], preds)
    for (let l = columns.length - 2; l >= 0; l--) reorder(columns[l] ?? [], succs)
  }
  index()

  const tallest = Math.max(0, ...columns.map((c) => c.length))
  const pitch = o.boxHeight + o.rowGap
  const placed: PlacedNode[] = []
  columns.forEach((column, l) => {
    // Centre short columns against the tallest, so a chain reads as a straight line.
    const offset = ((tallest - column.length) * pitch) / 2
    column.forEach((id, i) =>
      placed.push({
        id,
        layer: l,
        order: i,
        x: o.margin + l * (o.boxWidth + o.columnGap),
        y: o.margin + offset + i * pitch,
        width: o.boxWidth,
        height: o.boxHeight,
      }),
    )
  })
  return {
    nodes: placed,
    edges,
    dropped,
    width: 2 * o.margin + layerCount * o.boxWidth + Math.max(0, layerCount - 1) * o.columnGap,
    height: 2 * o.margin + tallest * o.boxHeight + Math.max(0, tallest - 1) * o.rowGap,
  }
}
