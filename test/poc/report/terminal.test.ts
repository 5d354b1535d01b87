import {describe, expect, it} from 'vitest'
import {renderSummary} from '../../../src/poc/report/terminal.js'
import {cut, displayWidth, printable, wrap} from '../../../src/poc/report/text.js'
import {buildFixture} from './fixture.js'

// eslint-disable-next-line no-control-regex -- the SGR sequences the summary paints with
const SGR = /\u001b\[[0-9;]*m/g
const plain = (s: string) => s.replace(SGR, '')
const lines = (s: string) => s.replace(/\n$/, '').split('\n')

describe('renderSummary', () => {
  const trace = buildFixture()

  it('fits every line to the width, with colour or without', () => {
    for (const width of [20, 32, 40, 60, 72, 80, 100, 160])
      for (const color of [false, true]) {
        const out = renderSummary(trace, {color, width})
        for (const l of lines(out)) expect(displayWidth(plain(l)), `${width} ${color}: ${l}`).toBeLessThanOrEqual(width)
      }
  })

  it('fits wide characters by their columns', () => {
    const t = buildFixture()
    t.missions[0]!.workItems[0]!.title = '請求書のエクスポートスキーマを設計する'
    t.missions[0]!.title = '🚀🚀🚀 Ship the invoice export API'
    for (const width of [30, 50, 80])
      for (const l of lines(renderSummary(t, {color: false, width}))) expect(displayWidth(l)).toBeLessThanOrEqual(width)
  })

  it('prints no escape sequence without colour, and paints with it', () => {
    const out = renderSummary(trace, {color: false, width: 100})
    expect(out).not.toContain('\u001b')
    const colored = renderSummary(trace, {color: true, width: 100})
    expect(colored).toContain('\u001b[1;31m✗ FAIL')
    expect(plain(colored)).toBe(out) // colour adds codes, never text
  })

  it('keeps an Agent’s escape sequences out of the terminal', () => {
    const t = buildFixture()
    t.missions[0]!.workItems[0]!.title = 'pwned\u001b[2J\u001b]0;title\u0007\r\nnext'
    t.checks[0]!.detail = '\u009b31m csi'
    for (const color of [false, true]) {
      const out = renderSummary(t, {color, width: 120})
      // eslint-disable-next-line no-control-regex -- the characters an escape sequence needs
      expect(out.replace(SGR, '')).not.toMatch(/[\u001b\u0007\u009b\r]/)
      expect(out).toContain('pwned\ufffd[2J')
    }
  })

  it('gives the verdict, the Missions with their WorkItems and rounds', () => {
    const out = renderSummary(trace, {color: false, width: 100})
    const ls = lines(out)
    expect(ls[0]).toBe('✗ FAIL  61 of 62 checks passed')
    expect(ls[1]).toBe('✗ self-test: 9 of 10 mutants caught')
    expect(ls[2]).toContain('seed 424242 · sqlite · 3 m 40 s')
    expect(out).toMatch(/ {2}A Ship the invoice export API {2}approved/)
    expect(out).toMatch(/ {2}B Fix the flaky login flow {2}approved/)
    expect(out).toMatch(/\n {4}C PDF rendering \(child of a3\) {2}approved\n {6}✓ Pick a PDF library/) // under its parent
    expect(out).toMatch(/✓ Security review of the export +verified +review +worker-3 +3 rounds/)
    expect(out).toMatch(/✓ Render invoices as PDF +verified +implement +worker-3 +↳ child Mission/)
    for (const w of trace.missions.flatMap((m) => m.workItems)) expect(out).toContain(w.title)
  })

  it('shows each Worker slot’s utilisation', () => {
    const out = renderSummary(trace, {color: false, width: 100})
    // worker-3 slot 1 ran 18 + 10 + 8 + 22 = 58 s of the 220 s run.
    expect(out).toMatch(/worker-3#1 +[█░]+ +26% +4 runs, 1 failed\/lost/)
    expect(out).toMatch(/worker-1#0 +[█░]+ +50% +5 runs, 1 yielded, 1 failed\/lost/)
    for (const lane of ['worker-1#0', 'worker-1#1', 'worker-2#0', 'worker-3#0', 'worker-3#1'])
      expect(out).toContain(lane)
    expect(out).not.toContain('coordinator#0') // Workers' slots only
  })

  it('lists the failed checks with their measured numbers', () => {
    const out = renderSummary(trace, {color: false, width: 100})
    expect(out).toContain('Failed checks (1)')
    expect(out).toContain('✗ sched.weighted-share  Slot time follows the Missions’ weights')
    expect(out).toContain('measured: shareA=0.712 shareB=0.288 target=0.6 tolerance=0.1 runs=24')
    expect(out).not.toContain('sched.no-starvation') // passed checks are not listed
  })

  it('shows the self-test with the uncaught mutant first', () => {
    const out = renderSummary(trace, {color: false, width: 100})
    const ls = lines(out)
    const head = ls.findIndex((l) => l === 'Self-test: 9 of 10 mutants caught')
    expect(head).toBeGreaterThan(0)
    expect(ls[head + 2]).toMatch(/^ {2}jitterless-renewal +NOT CAUGHT$/)
    expect(out).toMatch(/skip-fence +fence\.stale-owner-rejected, lease\.single-owner/)
  })

  it('says so when every check passed and there is no self-test', () => {
    const t = buildFixture()
    for (const c of t.checks) c.passed = true
    delete t.selfTest
    const out = renderSummary(t, {color: false, width: 80})
    expect(lines(out)[0]).toBe('✓ PASS  62 of 62 checks passed')
    expect(out).toContain('All 62 checks passed')
    expect(out).not.toContain('Self-test')
    expect(out).not.toContain('NOT CAUGHT')
  })
})

describe('text helpers', () => {
  it('cut and wrap stay within the width', () => {
    expect(cut('abcdef', 4)).toBe('abc…')
    expect(cut('漢字漢字', 5)).toBe('漢字…')
    expect(wrap('one two three four', 9)).toEqual(['one two', 'three', 'four'])
    expect(wrap('supercalifragilistic', 8, '  ')).toEqual(['  super…'])
    expect(printable('a\tb\u001bc')).toBe('a b\ufffdc')
  })
})
