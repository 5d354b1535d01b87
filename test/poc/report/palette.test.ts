import {describe, expect, it} from 'vitest'
import {escapeText, fitText, textWidth} from '../../../src/html/markup.js'
import {contrastRatio, groupLetter, textPairs} from '../../../src/poc/report/palette.js'

describe('palette', () => {
  it('gives every text colour a contrast of at least 4.5:1 on what it sits on', () => {
    for (const [fg, bg] of textPairs()) expect(contrastRatio(fg, bg), `${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5)
  })

  it('measures contrast as WCAG does (so the check above can fail)', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5)
    expect(contrastRatio('#777777', '#ffffff')).toBeLessThan(4.5) // the classic near miss
    expect(contrastRatio('#767676', '#ffffff')).toBeGreaterThanOrEqual(4.5)
  })

  it('names Groups A, B, … Z, AA', () => {
    expect([0, 1, 25, 26, 27].map(groupLetter)).toEqual(['A', 'B', 'Z', 'AA', 'AB'])
  })
})

describe('markup', () => {
  it('escapes markup and drops what XML cannot carry', () => {
    expect(escapeText(`<a href="x">&'`)).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&#39;')
    expect(escapeText('a\u0000b\u001bc\ud800d\ufffe')).toBe('a\ufffdb\ufffdc\ufffdd\ufffd')
    expect(escapeText('🚀 ok\n')).toBe('🚀 ok\n')
  })

  it('cuts a label to the room it has', () => {
    const long = 'Security review of the export'
    for (const room of [0, 20, 60, 100, 400]) {
      const cut = fitText(long, room, 11)
      expect(textWidth(cut, 11)).toBeLessThanOrEqual(room)
      if (cut !== '' && cut !== long) expect(cut.endsWith('…')).toBe(true)
    }
    expect(fitText(long, 1000, 11)).toBe(long)
  })
})
