// The table styles of output.ts with the terminal given explicitly (the same decision the CLI
// makes from process.stdout; test/cli/operator-output.test.ts drives it under a pseudo-terminal).

import {describe, expect, it} from 'vitest'
import {fitted, grid, tableStyle} from '../../src/cli/output.js'

const ID = 'urn:mwp:dev:org:local:group:0b1d8a53-6a4e-4b7e-9c55-3f2f5d0c7a10'
const rows = [[ID, 'active', 'Publish the release notes for every package, with migration guides']]

describe('table style', () => {
  it('follows the stream: boxed at its width on a TTY, TSV when piped; --output overrides', () => {
    expect(tableStyle(undefined, {isTTY: true, columns: 90})).toEqual({format: 'table', columns: 90})
    expect(tableStyle(undefined, {isTTY: false})).toEqual({format: 'tsv'})
    expect(tableStyle('table', {isTTY: false})).toEqual({format: 'table'})
    expect(tableStyle('tsv', {isTTY: true, columns: 90})).toEqual({format: 'tsv'})
  })

  it('fits the terminal: the kept ID column stays whole while another column has room to give', () => {
    const text = grid(['Group', 'state', 'objective'], rows, {format: 'table', columns: 100}, [0])
    for (const line of text.split('\n')) expect([...line].length).toBeLessThanOrEqual(100)
    expect(text).toContain(ID)
    expect(text).toMatch(/│ Publish the \S[^│]*… │/)
    expect(text).not.toContain(rows[0]![2])
    // Without keep, the widest column (the ID) gives way first.
    expect(grid(['Group', 'state', 'objective'], rows, {format: 'table', columns: 100})).not.toContain(ID)
  })

  it('squeezes kept columns only when nothing else is left, and never below the narrowest column', () => {
    expect(fitted([70, 10, 40], 100, [0])).toEqual([70, 10, 16])
    expect(fitted([70, 10, 40], 80, [0])).toEqual([64, 6, 6])
    expect(fitted([10, 10], 5)).toEqual([6, 6])
  })

  it('TSV: one line per row, a multi-line cell joined with "; ", tabs inside a cell become spaces', () => {
    expect(grid(['a', 'b'], [['x\ny', 'p\tq']], {format: 'tsv'})).toBe('a\tb\nx; y\tp q')
  })
})
