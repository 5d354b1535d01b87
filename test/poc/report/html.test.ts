import {mkdirSync, writeFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {renderHtml} from '../../../src/poc/report/html.js'
import {MARKS, groupSwatch} from '../../../src/poc/report/palette.js'
import {MAX_LABEL_ROWS} from '../../../src/poc/report/timeline.js'
import {GROUP_A, GROUP_B, GROUP_C, buildFixture} from './fixture.js'
import {type XmlElement, findAll, hasClass, parseMarkup, svgParts, textOf} from './xml.js'

const page = (html: string) => parseMarkup(html, 'html')
const byClass = (nodes: ReturnType<typeof page>, c: string) => findAll(nodes, (e) => hasClass(e, c))
const rect = (g: XmlElement) => g.children.find((c): c is XmlElement => typeof c !== 'string' && c.name === 'rect')!

describe('the markup checker', () => {
  it('rejects what is not well-formed (so the checks below can fail)', () => {
    for (const bad of [
      '<svg><g></svg>',
      '<svg><text>a<b</text></svg>',
      '<svg><rect x=1/></svg>',
      '<svg><text>R&D</text></svg>',
      '<svg><text>&nbsp;</text></svg>',
      '<svg><rect x="1" x="2"/></svg>',
      '<svg>',
      '<svg><meta charset="utf-8"></svg>',
    ])
      expect(() => parseMarkup(bad), bad).toThrow()
    expect(parseMarkup('<svg a="&lt;&#39;"><text>x &amp; y</text><rect/></svg>')).toHaveLength(1)
  })
})

describe('renderHtml', () => {
  const trace = buildFixture()
  const html = renderHtml(trace)
  const doc = page(html)

  it('is one well-formed page and every SVG is well-formed XML', () => {
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true)
    expect(findAll(doc, (e) => e.name === 'html')).toHaveLength(1)
    const svgs = svgParts(html)
    expect(svgs.length).toBeGreaterThanOrEqual(4) // timeline + three Missions (+ legend swatches)
    for (const s of svgs) expect(() => parseMarkup(s, 'xml')).not.toThrow()
  })

  it('writes the fixture page for the lead to look at', () => {
    mkdirSync('test-results', {recursive: true})
    writeFileSync('test-results/poc-report-fixture.html', html)
  })

  it('loads nothing from outside and runs no script', () => {
    expect(findAll(doc, (e) => ['script', 'link', 'img', 'iframe', 'object'].includes(e.name))).toEqual([])
    expect(findAll(doc, (e) => 'src' in e.attrs)).toEqual([])
    for (const e of findAll(doc, (x) => 'href' in x.attrs)) expect(e.attrs.href).toMatch(/^#/)
    expect(html).not.toMatch(/url\((?!#)|@import|https?:\/\/(?!www\.w3\.org\/2000\/svg)/)
    expect(findAll(doc, (e) => e.name === 'meta' && e.attrs.charset === 'utf-8')).toHaveLength(1)
  })

  it('heads the page with seed, store, duration, verdict and both Missions’ states', () => {
    const header = findAll(doc, (e) => e.name === 'header')[0]!
    const text = textOf(header)
    expect(text).toContain('424242')
    expect(text).toContain('sqlite')
    expect(text).toContain('3 m 40 s')
    expect(text).toContain('61 of 62 passed')
    expect(text).toContain('✗ FAIL')
    expect(text).toContain('Ship the invoice export API')
    expect(text).toContain('Fix the flaky login flow')
    expect(findAll([header], (e) => hasClass(e, 'state')).map(textOf)).toEqual(['approved', 'approved'])
    // The failed check is listed up top, linked to its row.
    const link = findAll([header], (e) => e.name === 'a')[0]!
    expect(textOf(link)).toBe('sched.weighted-share')
    expect(findAll(doc, (e) => e.attrs.id === link.attrs.href!.slice(1))).toHaveLength(1)
  })

  it('draws one bar per run, in its Group’s colour, with the full title in a tooltip', () => {
    const bars = byClass(doc, 'run')
    expect(bars).toHaveLength(trace.runs.length)
    const fill = new Map([GROUP_A, GROUP_B, GROUP_C].map((g, i) => [g, groupSwatch(i).fill]))
    const key = (lane: string, item: string, outcome: string) => `${lane} ${item} ${outcome}`
    expect(bars.map((b) => key(b.attrs['data-lane']!, b.attrs['data-item']!, b.attrs['data-outcome']!)).sort()).toEqual(
      trace.runs.map((r) => key(`${r.agent}#${r.slot}`, r.workItemId, r.outcome)).sort(),
    )
    for (const b of bars) expect(rect(b).attrs.fill).toBe(fill.get(b.attrs['data-group']!))
    // Yielded runs, and only they, have the hatched end.
    const hatched = bars.filter((b) => byClass([b], 'yielded').length === 1)
    expect(hatched).toHaveLength(trace.runs.filter((r) => r.outcome === 'yielded').length)
    expect(hatched.every((b) => b.attrs['data-outcome'] === 'yielded')).toBe(true)
    // A short bar cuts its label; the tooltip keeps the whole title.
    const tips = bars.map((b) =>
      textOf(b.children.find((c): c is XmlElement => typeof c !== 'string' && c.name === 'title')!),
    )
    expect(tips.some((t) => t.startsWith('Security review of the export\n'))).toBe(true)
  })

  it('maps each colour to its Mission in the legend', () => {
    const legend = findAll(doc, (e) => e.name === 'ul' && e.attrs['aria-label'] === 'Missions')[0]!
    const items = findAll([legend], (e) => e.name === 'li')
    expect(items.map(textOf)).toEqual([
      'AShip the invoice export API',
      'BFix the flaky login flow',
      'CPDF rendering (child of a3)(child Mission)',
    ])
    items.forEach((li, i) => expect(byClass([li], 'swatch')[0]!.attrs.style).toContain(groupSwatch(i).fill))
  })

  it('draws one marker per mark, in its kind’s colour, with its label', () => {
    const marks = byClass(doc, 'mark')
    expect(marks).toHaveLength(trace.marks.length)
    for (const m of marks) {
      const kind = m.attrs['data-kind'] as keyof typeof MARKS
      const lines = findAll([m], (e) => e.name === 'line')
      expect(lines.at(-1)!.attrs.stroke).toBe(MARKS[kind].color)
    }
    const labels = byClass(doc, 'mark-label').map(textOf)
    expect(labels.some((l) => l.includes('SIGKILL worker-3'))).toBe(true)
    expect(new Set(marks.map((m) => m.attrs['data-kind']))).toEqual(new Set(Object.keys(MARKS)))
  })

  it('draws one box per WorkItem in each Mission’s graph, naming its state and rounds', () => {
    const boxes = byClass(doc, 'workitem')
    expect(boxes).toHaveLength(trace.missions.reduce((n, m) => n + m.workItems.length, 0))
    const graphs = findAll(doc, (e) => e.name === 'svg' && hasClass(e, 'graph'))
    expect(graphs.map((g) => byClass([g], 'workitem').length)).toEqual([6, 2, 4]) // A, its child C, then B
    const a5 = boxes.find((b) => b.attrs['data-id'] === 'a5')!
    expect(textOf(a5)).toContain('verified · review')
    expect(textOf(a5)).toContain('3 rounds')
    // The promoted WorkItem links to its child Mission's section.
    const a3 = boxes.find((b) => b.attrs['data-id'] === 'a3')!
    const link = findAll([a3], (e) => e.name === 'a')[0]!
    expect(textOf(link)).toContain('child: PDF rendering')
    expect(findAll(doc, (e) => e.attrs.id === link.attrs.href!.slice(1))).toHaveLength(1)
  })

  it('puts every WorkItem right of its dependencies, boxes apart', () => {
    for (const g of findAll(doc, (e) => e.name === 'svg' && hasClass(e, 'graph'))) {
      const at = new Map(
        byClass([g], 'workitem').map((b) => {
          const r = rect(b)
          return [b.attrs['data-id']!, {x: +r.attrs.x!, y: +r.attrs.y!, w: +r.attrs.width!, h: +r.attrs.height!}]
        }),
      )
      const mission = trace.missions.find((m) => m.workItems.some((w) => at.has(w.workItemId)))!
      for (const w of mission.workItems)
        for (const d of w.dependsOn) expect(at.get(d)!.x + at.get(d)!.w).toBeLessThan(at.get(w.workItemId)!.x)
      const boxes = [...at.values()]
      for (const [i, a] of boxes.entries())
        for (const b of boxes.slice(i + 1))
          expect(a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y).toBe(true)
      expect(findAll([g], (e) => hasClass(e, 'edge'))).toHaveLength(
        mission.workItems.reduce((n, w) => n + w.dependsOn.length, 0),
      )
    }
  })

  it('lists the failed checks first, marked red with ✗, and every check once', () => {
    const table = findAll(doc, (e) => e.attrs.id === 'checks')[0]!
    const rows = findAll([table], (e) => e.name === 'tr' && 'data-check' in e.attrs)
    expect(rows).toHaveLength(62)
    expect(rows[0]!.attrs['data-check']).toBe('sched.weighted-share')
    expect(rows[0]!.attrs.class).toBe('fail')
    expect(textOf(rows[0]!)).toContain('✗ FAIL')
    expect(textOf(rows[0]!)).toContain('shareA=0.712 shareB=0.288 target=0.6 tolerance=0.1 runs=24')
    expect(rows.slice(1).every((r) => r.attrs.class === 'pass' && textOf(r).includes('✓'))).toBe(true)
    expect(findAll([table], (e) => e.name === 'th').map(textOf)).toEqual([
      'Result',
      'Check',
      'Title',
      'Measured',
      'Detail',
    ])
    expect(html).toMatch(/tr\.fail td\{background:#/)
  })

  it('shows NOT CAUGHT for the mutant no check caught, and only for it', () => {
    const section = findAll(doc, (e) => e.attrs.id === 'self-test')[0]!
    const rows = findAll([section], (e) => e.name === 'tr' && 'data-mutant' in e.attrs)
    expect(rows).toHaveLength(10)
    const uncaught = rows.filter((r) => textOf(r).includes('NOT CAUGHT'))
    expect(uncaught.map((r) => r.attrs['data-mutant'])).toEqual(['jitterless-renewal'])
    expect(uncaught[0]!.attrs.class).toBe('fail')
    expect(textOf(section)).toContain('9 of 10 mutants caught')
  })

  it('turns green when every check passes, with no self-test section without a self-test', () => {
    const t = buildFixture()
    for (const c of t.checks) c.passed = true
    delete t.selfTest
    const d = page(renderHtml(t))
    expect(textOf(findAll(d, (e) => e.name === 'h1')[0]!)).toContain('✓ PASS')
    expect(findAll(d, (e) => e.name === 'tr' && e.attrs.class === 'fail')).toEqual([])
    expect(findAll(d, (e) => e.attrs.id === 'self-test')).toEqual([])
    expect(textOf(d[1]!)).not.toContain('NOT CAUGHT')
  })

  it('escapes every string from the trace', () => {
    const evil = '<script>alert(1)</script>'
    const t = buildFixture()
    t.store = evil
    t.missions[0]!.title = evil
    t.missions[0]!.workItems[0]!.title = evil
    t.missions[0]!.workItems[1]!.stage = `"><img src=x onerror=alert(1)>`
    t.missions[1]!.workItems[0]!.owner = `' onmouseover='alert(1)`
    t.agents[2]!.name = evil
    t.runs[0]!.agent = evil
    t.marks[0]!.label = evil
    t.checks[0]!.title = evil
    t.checks[0]!.detail = 'a & b\u0000\u001b[31m'
    t.checks[0]!.measured = {[evil]: evil}
    t.selfTest![0]!.description = evil
    t.missions[0]!.missionId = `x"><script>`
    const out = renderHtml(t)
    expect(out).not.toContain('<script')
    expect(out).not.toContain('<img')
    expect(out).not.toContain('\u001b')
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    const d = page(out) // still well-formed
    expect(findAll(d, (e) => e.name === 'script' || e.name === 'img')).toEqual([])
    expect(findAll(d, (e) => Object.keys(e.attrs).some((a) => a.startsWith('on')))).toEqual([])
    for (const s of svgParts(out)) expect(() => parseMarkup(s)).not.toThrow()
    expect(textOf(d[1]!)).toContain(evil) // shown as text
  })

  it('keeps a crowd of marks to a few label rows, each mark still drawn and listed', () => {
    const t = buildFixture()
    t.marks = Array.from({length: 80}, (_, i) => ({
      at: new Date(Date.parse(t.startedAt) + i * 2500).toISOString(),
      kind: 'fault' as const,
      label: `fault number ${i} with a long label`,
    }))
    const d = page(renderHtml(t))
    expect(byClass(d, 'mark')).toHaveLength(80)
    const rows = new Set(byClass(d, 'mark-label').map((l) => l.attrs.y))
    expect(rows.size).toBe(MAX_LABEL_ROWS)
    const table = findAll(d, (e) => e.attrs.id === 'marks')[0]!
    expect(findAll([table], (e) => e.name === 'tr')).toHaveLength(81) // and the header row
  })

  it('copes with an empty run and unknown ids', () => {
    const t = buildFixture()
    t.runs = [{...t.runs[0]!, groupId: 'grp-unknown', workItemId: 'nope', agent: 'ghost', slot: 7}]
    t.marks = []
    t.missions[1]!.workItems[0]!.dependsOn = ['missing', 'b4'] // an unknown id and a cycle b1 → b4 → b2 → b1
    const d = page(renderHtml(t))
    expect(byClass(d, 'run')).toHaveLength(1)
    expect(byClass(d, 'workitem')).toHaveLength(12)
    const empty = {...buildFixture(), missions: [], runs: [], marks: [], checks: [], agents: []}
    expect(() => page(renderHtml(empty))).not.toThrow()
  })
})
