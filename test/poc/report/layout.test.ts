import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {type DagLayout, type LayoutNode, layoutDag} from '../../../src/poc/report/layout.js'
import {buildFixture} from './fixture.js'

const OPTIONS = {boxWidth: 100, boxHeight: 40, columnGap: 30, rowGap: 10, margin: 5}

/** What is wrong with a layout of `nodes`: a box not right of a dependency it draws, overlapping boxes, a box missing. */
function problems(nodes: readonly LayoutNode[], layout: DagLayout): string[] {
  const out: string[] = []
  const at = new Map(layout.nodes.map((n) => [n.id, n]))
  for (const id of new Set(nodes.map((n) => n.id))) if (!at.has(id)) out.push(`${id} not placed`)
  if (layout.nodes.length !== at.size) out.push('a node placed twice')
  for (const e of layout.edges) {
    const a = at.get(e.from)
    const b = at.get(e.to)
    if (!a || !b || a.x + a.width >= b.x) out.push(`${e.to} not right of ${e.from}`)
  }
  for (const [i, a] of layout.nodes.entries())
    for (const b of layout.nodes.slice(i + 1))
      if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height)
        out.push(`${a.id} overlaps ${b.id}`)
  for (const n of layout.nodes)
    if (n.x < 0 || n.y < 0 || n.x + n.width > layout.width || n.y + n.height > layout.height)
      out.push(`${n.id} outside the picture`)
  return out
}

/** A random DAG: node i depends only on lower-numbered nodes, so it has no cycle. */
const dag = fc
  .integer({min: 0, max: 14})
  .chain((n) =>
    fc.tuple(
      ...Array.from({length: n}, (_, i) =>
        fc.uniqueArray(fc.integer({min: 0, max: Math.max(0, i - 1)}), {maxLength: i === 0 ? 0 : Math.min(i, 4)}),
      ),
    ),
  )
  .map((deps): LayoutNode[] => deps.map((ds, i) => ({id: `n${i}`, dependsOn: ds.map((d) => `n${d}`)})))

describe('layoutDag', () => {
  it('finds what is wrong with a bad layout (so the property below can fail)', () => {
    const nodes = [
      {id: 'a', dependsOn: []},
      {id: 'b', dependsOn: ['a']},
    ]
    const good = layoutDag(nodes, OPTIONS)
    expect(problems(nodes, good)).toEqual([])
    const swapped = {...good, nodes: good.nodes.map((n) => ({...n, x: n.id === 'a' ? 200 : 5}))}
    expect(problems(nodes, swapped)).toContain('b not right of a')
    const stacked = {...good, nodes: good.nodes.map((n) => ({...n, x: 5, y: 5}))}
    expect(problems(nodes, stacked)).toContain('a overlaps b')
  })

  it('places every fixture WorkItem right of its dependencies, without overlaps', () => {
    for (const m of buildFixture().missions) {
      const nodes = m.workItems.map((w) => ({id: w.workItemId, dependsOn: w.dependsOn}))
      const layout = layoutDag(nodes, OPTIONS)
      expect(problems(nodes, layout)).toEqual([])
      expect(layout.edges).toHaveLength(m.workItems.reduce((n, w) => n + w.dependsOn.length, 0))
      expect(layout.dropped).toEqual([])
    }
  })

  it('layers by the longest path from a source', () => {
    const layout = layoutDag(
      [
        {id: 'a', dependsOn: []},
        {id: 'b', dependsOn: ['a']},
        {id: 'c', dependsOn: ['b']},
        {id: 'd', dependsOn: ['a', 'c']}, // one step from a, but three along a → b → c
      ],
      OPTIONS,
    )
    expect(Object.fromEntries(layout.nodes.map((n) => [n.id, n.layer]))).toEqual({a: 0, b: 1, c: 2, d: 3})
  })

  it('orders a column by its dependencies’ positions, so edges do not cross needlessly', () => {
    // Two chains given interleaved: x1 → x2 and y1 → y2, listed y2 first.
    const layout = layoutDag(
      [
        {id: 'x1', dependsOn: []},
        {id: 'y1', dependsOn: []},
        {id: 'y2', dependsOn: ['y1']},
        {id: 'x2', dependsOn: ['x1']},
      ],
      OPTIONS,
    )
    const order = Object.fromEntries(layout.nodes.map((n) => [n.id, n.order]))
    expect(order.x2! < order.y2!).toBe(order.x1! < order.y1!)
  })

  it('holds on random DAGs', () => {
    fc.assert(
      fc.property(dag, (nodes) => {
        const layout = layoutDag(nodes, OPTIONS)
        expect(problems(nodes, layout)).toEqual([])
        expect(layout.dropped).toEqual([])
      }),
      {numRuns: 300},
    )
  })

  it('drops a cycle, a self-loop and an unknown dependency instead of looping', () => {
    const nodes = [
      {id: 'a', dependsOn: ['c', 'ghost']},
      {id: 'b', dependsOn: ['a']},
      {id: 'c', dependsOn: ['b']},
      {id: 'd', dependsOn: ['d']},
    ]
    const layout = layoutDag(nodes, OPTIONS)
    expect(problems(nodes, layout)).toEqual([])
    const dropped = layout.dropped.map((d) => `${d.from}→${d.to} ${d.why}`)
    expect(dropped).toContain('d→d cycle')
    expect(dropped).toContain('ghost→a unknown')
    // Exactly one edge of the cycle a → b → c → a goes, and the other two are drawn.
    const ring = ['c→a', 'a→b', 'b→c']
    expect(dropped.filter((d) => ring.some((r) => d === `${r} cycle`))).toHaveLength(1)
    expect(dropped).toHaveLength(3)
    expect(layout.edges).toHaveLength(2)
  })

  it('lays out nothing as an empty picture', () => {
    const layout = layoutDag([], OPTIONS)
    expect(layout.nodes).toEqual([])
    expect(layout.width).toBe(2 * OPTIONS.margin)
  })
})
