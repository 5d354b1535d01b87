// The summary `mwp poc run` prints when it ends: the verdict, each Mission with its WorkItems and
// rounds, how busy each Worker slot was, the failed checks with what they measured, and the
// self-test. Every line fits `width`; colour only when the caller says (it honours NO_COLOR).

import {checksFailedFirst, durationMs, lanes, missionsInOrder, timeSpan, utilisation, verdict} from './derive.js'
import {count, formatDuration, formatMeasured} from './format.js'
import {groupLetter} from './palette.js'
import {cut, displayWidth, pad, painter, printable, wrap, type Style} from './text.js'
import {groupIndex} from './timeline.js'
import type {PocTrace} from './trace.js'

export interface SummaryOptions {
  color: boolean
  width: number
}

const MIN_WIDTH = 20

export function renderSummary(trace: PocTrace, options: SummaryOptions): string {
  const width = Math.max(MIN_WIDTH, Math.floor(options.width))
  const paint = painter(options.color)
  // Each entry is built plain, cut to the width, and only then painted, so colour never counts.
  const out: string[] = []
  const line = (s: string, ...styles: Style[]) => out.push(paint(cut(s, width), ...styles))
  const blank = () => out.push('')
  const t = (s: string) => printable(s)

  const v = verdict(trace)
  line(`${v.ok ? '✓ PASS' : '✗ FAIL'}  ${v.passed} of ${v.total} checks passed`, 'bold', v.ok ? 'green' : 'red')
  if (v.mutants !== undefined)
    line(
      `${v.mutantsCaught === v.mutants ? '✓' : '✗'} self-test: ${v.mutantsCaught} of ${v.mutants} mutants caught`,
      v.mutantsCaught === v.mutants ? 'green' : 'red',
    )
  line(
    `seed ${trace.seed} · ${t(trace.store)} · ${formatDuration(durationMs(trace))} · started ${t(trace.startedAt)}`,
    'dim',
  )

  blank()
  line('Missions', 'bold')
  const groups = groupIndex(trace)
  for (const {mission: m, depth} of missionsInOrder(trace)) {
    const indent = '  '.repeat(depth + 1)
    const tag = groupLetter(groups.get(m.groupId) ?? 0)
    const state = t(m.state)
    const head = `${indent}${tag} `
    const room = width - displayWidth(head) - displayWidth(state) - 2
    const title = cut(t(m.title), Math.max(1, room))
    out.push(
      paint(cut(`${head}${title}`, width), 'bold') +
        (displayWidth(head + title) + 2 + displayWidth(state) <= width
          ? '  ' + paint(state, m.state === 'approved' ? 'green' : m.state === 'failed' ? 'red' : 'yellow')
          : ''),
    )
    const itemIndent = indent + '  '
    const stateW = Math.max(0, ...m.workItems.map((w) => displayWidth(t(w.state))))
    const stageW = Math.max(0, ...m.workItems.map((w) => displayWidth(t(w.stage))))
    const ownerW = Math.max(0, ...m.workItems.map((w) => displayWidth(t(w.owner ?? '—'))))
    const build = (withStage: boolean) =>
      m.workItems.map((w) => {
        const rounds = w.attempts > 1 ? count(w.attempts, 'round') : ''
        const child = w.childMissionId !== undefined ? '↳ child Mission' : ''
        const cells = [...(withStage ? [pad(t(w.stage), stageW)] : []), pad(t(w.owner ?? '—'), ownerW), rounds, child]
        const rest = ['', ...cells.filter((x) => x)].join('  ').trimEnd()
        return {w, stateCell: pad(t(w.state), stateW), rest, facts: [w.state, w.stage, w.owner ?? '—', rounds, child]}
      })
    // One title column for the Mission: indent, the state symbol and a space, the title, two
    // spaces, then the state and the rest, so the columns line up.
    const naturalW = Math.max(0, ...m.workItems.map((w) => displayWidth(t(w.title))))
    const titleRoom = (rs: ReturnType<typeof build>) =>
      Math.min(
        naturalW,
        width - displayWidth(itemIndent) - 2 - 2 - Math.max(0, ...rs.map((r) => displayWidth(r.stateCell + r.rest))),
      )
    let rows = build(true)
    let titleW = titleRoom(rows)
    if (titleW < Math.min(naturalW, 24)) {
      // Squeezed: the stage gives way to the title (the state still says where the item is).
      const without = build(false)
      if (titleRoom(without) > titleW) [rows, titleW] = [without, titleRoom(without)]
    }
    for (const {w, stateCell, rest, facts} of rows) {
      if (titleW >= 8) {
        out.push(
          `${itemIndent}${paint(symbolOf(w.state), colorOf(w.state))} ${pad(t(w.title), titleW)}  ` +
            paint(stateCell, colorOf(w.state)) +
            rest,
        )
      } else {
        // Too narrow for columns: the title on its line, the facts wrapped under it.
        line(`${itemIndent}${symbolOf(w.state)} ${t(w.title)}`)
        // No-break spaces inside a fact, so "2 rounds" wraps as one.
        const text = facts
          .filter((f) => f !== '')
          .map((f) => t(f).replaceAll(' ', '\u00a0'))
          .join(' · ')
        for (const l of wrap(text, width, itemIndent + '  ')) line(l.replaceAll('\u00a0', ' '), 'dim')
      }
    }
  }

  blank()
  line('Worker slots', 'bold')
  const span = timeSpan(trace)
  const all = lanes(trace)
  const nameW = Math.min(Math.max(0, ...all.map((l) => displayWidth(`${t(l.agent)}#${l.slot}`))), Math.floor(width / 3))
  const slotRows = all.map((lane) => {
    const yielded = lane.runs.filter((r) => r.outcome === 'yielded').length
    const lost = lane.runs.filter((r) => r.outcome === 'failed' || r.outcome === 'lost').length
    const facts = [
      count(lane.runs.length, 'run'),
      ...(yielded ? [`${yielded} yielded`] : []),
      ...(lost ? [`${lost} failed/lost`] : []),
    ].join(', ')
    return {lane, u: utilisation(lane, span), facts}
  })
  // One bar width for every slot, so the bars compare; no bar when fewer than 4 columns are left.
  const factsW = Math.max(0, ...slotRows.map((r) => displayWidth(r.facts)))
  const barW = Math.min(24, width - 2 - nameW - 2 - 2 - 4 - 2 - factsW)
  for (const {lane, u, facts} of slotRows) {
    const pct = `${String(Math.round(u * 100)).padStart(3)}%`
    const filled = Math.round(u * barW)
    const bar = barW >= 4 ? '█'.repeat(filled) + '░'.repeat(barW - filled) + '  ' : ''
    line(`  ${pad(t(lane.agent) + '#' + lane.slot, nameW)}  ${bar}${pct}  ${facts}`)
  }

  const failed = checksFailedFirst(trace).filter((c) => !c.passed)
  blank()
  if (failed.length === 0) line(`All ${count(v.total, 'check')} passed`, 'green')
  else {
    line(`Failed checks (${failed.length})`, 'bold', 'red')
    for (const c of failed) {
      out.push(paint(cut(`  ✗ ${t(c.id)}`, width), 'red') + restOf(`  ✗ ${t(c.id)}`, `  ${t(c.title)}`, width))
      for (const l of wrap(`measured: ${t(formatMeasured(c.measured))}`, width, '      ')) line(l)
      if (c.detail) for (const l of wrap(t(c.detail), width, '      ')) line(l, 'dim')
    }
  }

  if (trace.selfTest) {
    blank()
    line(`Self-test: ${v.mutantsCaught} of ${v.mutants} mutants caught`, 'bold')
    const mutantW = Math.min(
      Math.max(6, ...trace.selfTest.map((r) => displayWidth(t(r.mutant)))),
      Math.max(6, Math.floor(width / 3)),
    )
    line(`  ${pad('mutant', mutantW)}  caught by`, 'dim')
    // The uncaught mutants first: they are the gaps in the checks.
    const ordered = [
      ...trace.selfTest.filter((r) => r.caughtBy.length === 0),
      ...trace.selfTest.filter((r) => r.caughtBy.length > 0),
    ]
    for (const r of ordered) {
      const head = `  ${pad(t(r.mutant), mutantW)}  `
      if (r.caughtBy.length === 0)
        out.push(cut(head, width) + restStyled(head, 'NOT CAUGHT', width, paint, 'bold', 'red'))
      else out.push(cut(head, width) + restStyled(head, t(r.caughtBy.join(', ')), width, paint))
      for (const l of wrap(t(r.description), width, '    ')) line(l, 'dim')
    }
  }
  return out.join('\n') + '\n'
}

/** What of `rest` fits after `head` on a line of `width`, plain. */
function restOf(head: string, rest: string, width: number): string {
  const room = width - displayWidth(head)
  return room > 1 ? cut(rest, room) : ''
}

function restStyled(
  head: string,
  rest: string,
  width: number,
  paint: (s: string, ...styles: Style[]) => string,
  ...styles: Style[]
): string {
  return paint(restOf(head, rest, width), ...styles)
}

function symbolOf(state: string): string {
  if (state === 'verified' || state === 'approved') return '✓'
  if (state === 'failed' || state === 'cancelled') return '✗'
  if (state === 'blocked') return '!'
  return '·'
}

function colorOf(state: string): Style {
  if (state === 'verified' || state === 'approved' || state === 'submitted') return 'green'
  if (state === 'failed') return 'red'
  if (state === 'blocked') return 'yellow'
  return 'dim'
}
