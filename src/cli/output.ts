// How the CLI prints a table: boxed (cli-table3) and fitted to the width of a terminal,
// plain tab-separated lines when stdout is a pipe or a file (so `cut -f` and `grep` work on it),
// and, with --output json, the --json envelope (src/cli/base.ts). The default follows stdout: a
// reader at a terminal gets boxes, a script gets TSV.

import {Flags} from '@oclif/core'
import Table from 'cli-table3'

export const OUTPUT_FORMATS = ['table', 'tsv', 'json'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]

export const outputFlag = Flags.string({
  description:
    'table: boxed, fitted to the terminal width; tsv: tab-separated lines; json: the --json envelope. Default: table on a terminal, tsv when piped.',
  options: [...OUTPUT_FORMATS],
})

/** How text tables are drawn: boxed to a width (undefined: natural width), or tab-separated. */
export type TableStyle = {format: 'table'; columns?: number} | {format: 'tsv'}

/** The style for `--output` (json prints the envelope and draws no table) on a stream like process.stdout. */
export function tableStyle(
  output: string | undefined,
  stream: {isTTY?: boolean; columns?: number} = process.stdout,
): TableStyle {
  const format = output ?? (stream.isTTY ? 'table' : 'tsv')
  if (format === 'tsv') return {format: 'tsv'}
  return {format: 'table', ...(stream.isTTY && stream.columns ? {columns: stream.columns} : {})}
}

/** The default style of a caller that does not say (piped: TSV). */
export const PIPED: TableStyle = {format: 'tsv'}

/** The narrowest a column is squeezed to (its padding, two characters and the ellipsis). */
const MIN_COLUMN = 6

/**
 * One table: a header row and rows of cells; a cell may hold several lines. The columns in `keep`
 * (the IDs a reader copies into the next command) are cut only when nothing else is left to cut.
 */
export function grid(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  style: TableStyle,
  keep: readonly number[] = [],
): string {
  if (style.format === 'tsv') {
    // One line per row: a cell's lines are joined with "; ", tabs inside a cell become spaces.
    const line = (cells: readonly string[]) =>
      cells.map((c) => c.split('\n').join('; ').replaceAll('\t', ' ')).join('\t')
    return [line(head), ...rows.map(line)].join('\n')
  }
  const widths = head.map((h, i) => Math.max(...[h, ...rows.map((r) => r[i] ?? '')].map(widest)) + 2)
  const t = new Table({
    head: [...head],
    style: {head: [], border: []}, // no colors, so NO_COLOR needs no special case
    ...(style.columns === undefined ? {} : {colWidths: fitted(widths, style.columns, keep), wordWrap: false}),
  })
  for (const r of rows) t.push([...r])
  return t.toString()
}

const widest = (cell: string) => Math.max(...cell.split('\n').map((l) => [...l].length))

/**
 * Column widths (padding included) that fit `columns` characters with the borders: the widest
 * column outside `keep` gives up a character at a time, so short columns keep their content and
 * long goals and objectives are cut (cli-table3 ends a cut line with an ellipsis); the kept
 * columns shrink the same way only after every other one is as narrow as it goes.
 */
export function fitted(widths: readonly number[], columns: number, keep: readonly number[] = []): number[] {
  const out = [...widths]
  const total = () => out.reduce((a, b) => a + b, 0) + out.length + 1
  const widestOf = (candidates: number[]) => {
    const i = candidates.reduce((best, c) => (out[c]! > out[best]! ? c : best), candidates[0]!)
    return out[i]! > MIN_COLUMN ? i : undefined
  }
  const all = out.map((_, i) => i)
  const others = all.filter((i) => !keep.includes(i))
  while (total() > columns) {
    const i = (others.length ? widestOf(others) : undefined) ?? widestOf(all)
    if (i === undefined) break // as narrow as it goes: the terminal wraps the rest
    out[i]!--
  }
  return out
}

/** Cuts `line` to `columns` characters (code points), ending a cut line with an ellipsis. */
export function fit(line: string, columns?: number): string {
  const chars = [...line]
  if (columns === undefined || columns < 2 || chars.length <= columns) return line
  return chars.slice(0, columns - 1).join('') + '…'
}
