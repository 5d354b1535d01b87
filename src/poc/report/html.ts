// The report page: one self-contained HTML file (inline CSS and SVG, no script, no external
// resource) an operator opens after `mwp poc run`: the verdict, the timeline, each Mission's
// WorkItem graph, the checks and the self-test.

import {checksFailedFirst, durationMs, lookup, missionsInOrder, rootMissions, timeSpan, verdict} from './derive.js'
import {count, formatDuration, formatMeasured, formatSince, parseTime} from './format.js'
import {missionAnchor, renderGraph} from './graph.js'
import {el, escapeText} from '../../html/markup.js'
import {FAIL, FAIL_BG, INK, LINK, MARKS, MUTED, PASS, groupLetter, groupSwatch, stateSwatch} from './palette.js'
import {groupIndex, renderTimeline} from './timeline.js'
import type {PocTrace, SelfTestResult, TraceCheck, TraceMission} from './trace.js'

export function renderHtml(trace: PocTrace): string {
  const v = verdict(trace)
  const title = `MWP proof of concept — ${v.ok ? 'PASS' : 'FAIL'} (${v.passed} of ${v.total} checks)`
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeText(title)}</title>`,
    `<style>${CSS}</style>`,
    '</head>',
    '<body>',
    header(trace),
    timelineSection(trace),
    missionsSection(trace),
    checksSection(trace),
    trace.selfTest ? selfTestSection(trace.selfTest) : '',
    marksSection(trace),
    '</body>',
    '</html>',
    '',
  ].join('\n')
}

const CSS = `
:root{color-scheme:light}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:${INK};background:#fff;margin:0 auto;padding:16px 20px 40px;max-width:1360px;line-height:1.4}
h1{font-size:1.5rem;margin:.2em 0 .4em}
h2{font-size:1.2rem;margin:1.6em 0 .5em;border-bottom:1px solid #ccc;padding-bottom:.2em}
h3{font-size:1.05rem;margin:1.2em 0 .4em}
a{color:${LINK}}
.verdict{display:inline-block;padding:.15em .6em;border-radius:4px;font-weight:700;border:2px solid}
.verdict.pass{color:${PASS};border-color:${PASS}}
.verdict.fail{color:${FAIL};border-color:${FAIL};background:${FAIL_BG}}
.facts{display:flex;flex-wrap:wrap;gap:.4em 2em;margin:.6em 0;padding:0}
.facts div{min-width:8em}
.facts dt{font-size:.8rem;color:${MUTED}}
.facts dd{margin:0;font-weight:600}
.state{display:inline-block;padding:0 .45em;border-radius:3px;border:1px solid;font-size:.85rem;font-weight:600}
.legend{display:flex;flex-wrap:wrap;gap:.3em 1.4em;margin:.3em 0 .6em;padding:0;list-style:none;font-size:.9rem}
.legend li{display:flex;align-items:center;gap:.4em}
.swatch{display:inline-block;width:1.6em;height:1em;border:1px solid;border-radius:2px;vertical-align:middle}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
svg{display:block;width:100%;height:auto}
svg.timeline{min-width:960px}
table{border-collapse:collapse;font-size:.9rem;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.3em .55em;text-align:left;vertical-align:top}
th{background:#f0f0f0;position:sticky;top:0}
td.id{font-family:ui-monospace,Menlo,Consolas,monospace;white-space:nowrap}
td code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;word-break:break-word}
tr.fail td{background:${FAIL_BG}}
tr.fail td:first-child{box-shadow:inset 4px 0 0 ${FAIL}}
.failed-list{list-style:none;margin:.2em 0;padding:.4em .8em;border-left:4px solid ${FAIL};background:${FAIL_BG}}
.failed-list code{font-weight:600}
.ok{color:${PASS};font-weight:700;white-space:nowrap}
.bad{color:${FAIL};font-weight:700;white-space:nowrap}
.muted{color:${MUTED}}
.child{margin-left:1.5em;padding-left:1em;border-left:3px solid #ccc}
@media (max-width:700px){body{padding:10px}.facts{gap:.3em 1.2em}}
`

function stateBadge(state: string): string {
  const sw = stateSwatch(state)
  return el('span', {class: 'state', style: `background:${sw.fill};border-color:${sw.stroke}`}, escapeText(state))
}

function header(trace: PocTrace): string {
  const v = verdict(trace)
  const fact = (dt: string, dd: string) => el('div', {}, el('dt', {}, escapeText(dt)), el('dd', {}, dd))
  const missions = rootMissions(trace).map((m) =>
    fact(
      `Mission ${groupLetter(groupIndex(trace).get(m.groupId) ?? 0)}`,
      `${escapeText(m.title)} ${stateBadge(m.state)}`,
    ),
  )
  const selfTest =
    v.mutants === undefined
      ? []
      : [
          fact(
            'self-test',
            el(
              'span',
              {class: v.mutantsCaught === v.mutants ? 'ok' : 'bad'},
              escapeText(`${v.mutantsCaught} of ${v.mutants} mutants caught`),
            ),
          ),
        ]
  return el(
    'header',
    {},
    el(
      'h1',
      {},
      'MWP proof of concept ',
      el('span', {class: `verdict ${v.ok ? 'pass' : 'fail'}`}, v.ok ? '✓ PASS' : '✗ FAIL'),
    ),
    el(
      'dl',
      {class: 'facts'},
      fact('checks', el('span', {class: v.ok ? 'ok' : 'bad'}, escapeText(`${v.passed} of ${v.total} passed`))),
      ...selfTest,
      fact('seed', escapeText(String(trace.seed))),
      fact('store', escapeText(trace.store)),
      fact('started', escapeText(trace.startedAt)),
      fact('duration', escapeText(formatDuration(durationMs(trace)))),
      ...missions,
    ),
    problems(trace),
  )
}

function timelineSection(trace: PocTrace): string {
  const groups = groupIndex(trace)
  const look = lookup(trace)
  const groupItems = [...groups].map(([g, i]) => {
    const sw = groupSwatch(i)
    const m = look.missionOfGroup(g)
    return el(
      'li',
      {},
      el('span', {class: 'swatch', style: `background:${sw.fill};border-color:${sw.stroke}`}),
      el('b', {}, groupLetter(i)),
      escapeText(m ? m.title : g),
      m?.parentMissionId ? el('span', {class: 'muted'}, '(child Mission)') : '',
    )
  })
  const outcome = (name: string, svg: string) =>
    el(
      'li',
      {},
      `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 28 14" width="28" height="14" aria-hidden="true" style="display:inline;width:28px">${svg}</svg>`,
      escapeText(name),
    )
  const base = '<rect x="1" y="1" width="26" height="12" rx="2" fill="#dddddd" stroke="#555"'
  const outcomes = [
    outcome('submitted', `${base}/>`),
    outcome(
      'yielded (preempted): hatched end',
      `<defs><pattern id="hatch-legend" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="4" stroke="${INK}" stroke-width="2"/></pattern></defs>${base}/><rect x="17" y="1" width="10" height="12" fill="url(#hatch-legend)"/>`,
    ),
    outcome('failed: red end', `${base}/><rect x="23" y="1" width="4" height="12" fill="${FAIL}"/>`),
    outcome('blocked: brown end', `${base}/><rect x="23" y="1" width="4" height="12" fill="#8a5a00"/>`),
    outcome('lost: dashed', `${base} stroke-dasharray="4 3" fill-opacity="0.6"/>`),
  ]
  const marks = Object.values(MARKS).map((m) =>
    el(
      'li',
      {},
      `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 16" width="10" height="16" aria-hidden="true" style="display:inline;width:10px"><line x1="5" y1="0" x2="5" y2="16" stroke="${m.color}" stroke-width="${m.width}"${m.dash ? ` stroke-dasharray="${m.dash}"` : ''}/></svg>`,
      el('span', {style: `color:${m.color};font-weight:600`}, escapeText(m.symbol)),
      escapeText(m.name),
    ),
  )
  return el(
    'section',
    {id: 'timeline'},
    el('h2', {}, 'Timeline'),
    el(
      'p',
      {class: 'muted'},
      escapeText(
        'One lane per Worker slot; time since the run started. Hover a bar or a mark for its full text; the marks are also listed at the end.',
      ),
    ),
    el('ul', {class: 'legend', 'aria-label': 'Missions'}, ...groupItems),
    el('ul', {class: 'legend', 'aria-label': 'Run outcomes'}, ...outcomes),
    el('ul', {class: 'legend', 'aria-label': 'Marks'}, ...marks),
    el('div', {class: 'scroll'}, renderTimeline(trace)),
  )
}

function missionsSection(trace: PocTrace): string {
  const look = lookup(trace)
  const groups = groupIndex(trace)
  const titleOf = (id: string) => look.mission(id)?.title
  const parts = missionsInOrder(trace).map(({mission, depth}, i) =>
    missionPart(mission, depth, `g${i}`, groups.get(mission.groupId) ?? 0, titleOf, trace),
  )
  return el('section', {id: 'missions'}, el('h2', {}, 'Missions and their WorkItems'), ...parts)
}

function missionPart(
  m: TraceMission,
  depth: number,
  key: string,
  gi: number,
  titleOf: (id: string) => string | undefined,
  trace: PocTrace,
): string {
  const sw = groupSwatch(gi)
  const parent = m.parentMissionId
    ? trace.missions
        .find((p) => p.missionId === m.parentMissionId)
        ?.workItems.find((w) => w.childMissionId === m.missionId)
    : undefined
  const start = timeSpan(trace).start
  const approved = m.approvedAt ? parseTime(m.approvedAt) : undefined
  const facts = [
    stateBadge(m.state),
    approved !== undefined ? escapeText(`approved at ${formatSince(approved - start)}`) : '',
    escapeText(count(m.workItems.length, 'WorkItem')),
    m.parentMissionId
      ? `child of ${el('a', {href: `#${missionAnchor(m.parentMissionId)}`}, escapeText(titleOf(m.parentMissionId) ?? m.parentMissionId))}${parent ? escapeText(` for “${parent.title}”`) : ''}`
      : '',
  ].filter((f) => f !== '')
  return el(
    'div',
    {id: missionAnchor(m.missionId), class: depth > 0 ? 'child' : undefined},
    el(
      'h3',
      {},
      el('span', {class: 'swatch', style: `background:${sw.fill};border-color:${sw.stroke}`}),
      ' ',
      escapeText(`${groupLetter(gi)} · ${m.title}`),
    ),
    el('p', {}, facts.join(' · '), ' ', el('span', {class: 'muted'}, escapeText(m.missionId))),
    el('div', {class: 'scroll'}, renderGraph(m, key, titleOf)),
  )
}

function checksSection(trace: PocTrace): string {
  const v = verdict(trace)
  const rows = checksFailedFirst(trace).map(checkRow)
  return el(
    'section',
    {id: 'checks'},
    el('h2', {}, escapeText(`Checks: ${v.passed} of ${v.total} passed`)),
    el(
      'div',
      {class: 'scroll'},
      el(
        'table',
        {},
        el('caption', {class: 'muted', style: 'text-align:left'}, 'Failed checks first.'),
        el(
          'thead',
          {},
          el('tr', {}, ...['Result', 'Check', 'Title', 'Measured', 'Detail'].map((h) => el('th', {scope: 'col'}, h))),
        ),
        el('tbody', {}, ...rows),
      ),
    ),
  )
}

function checkRow(c: TraceCheck): string {
  return el(
    'tr',
    {class: c.passed ? 'pass' : 'fail', id: checkAnchor(c.id), 'data-check': c.id},
    el('td', {}, c.passed ? el('span', {class: 'ok'}, '✓ pass') : el('span', {class: 'bad'}, '✗ FAIL')),
    el('td', {class: 'id'}, escapeText(c.id)),
    el('td', {}, escapeText(c.title)),
    el('td', {}, el('code', {}, escapeText(formatMeasured(c.measured)))),
    el('td', {}, escapeText(c.detail ?? '')),
  )
}

/** The page anchor of a check's row (ids hold only safe characters; others become _). */
const checkAnchor = (id: string) => `check-${id.replace(/[^A-Za-z0-9_.-]/g, '_')}`

/** The failed checks and uncaught mutants, linked to their rows: what the operator reads first. */
function problems(trace: PocTrace): string {
  const failed = trace.checks.filter((c) => !c.passed)
  const uncaught = (trace.selfTest ?? []).filter((r) => r.caughtBy.length === 0)
  if (failed.length === 0 && uncaught.length === 0) return ''
  const items = [
    ...failed.map(
      (c) =>
        `${el('span', {class: 'bad'}, '✗ failed')} ${el('a', {href: `#${checkAnchor(c.id)}`}, el('code', {}, escapeText(c.id)))} ${escapeText(c.title)}`,
    ),
    ...uncaught.map(
      (r) =>
        `${el('span', {class: 'bad'}, '✗ NOT CAUGHT')} ${el('code', {}, escapeText(r.mutant))} ${escapeText(r.description)}`,
    ),
  ]
  return el('ul', {class: 'failed-list', 'aria-label': 'Problems'}, ...items.map((i) => el('li', {}, i)))
}

function selfTestSection(results: readonly SelfTestResult[]): string {
  const caught = results.filter((r) => r.caughtBy.length > 0).length
  // The mutants no check caught first: they are the gaps in the checks.
  const ordered = [...results.filter((r) => r.caughtBy.length === 0), ...results.filter((r) => r.caughtBy.length > 0)]
  const rows = ordered.map((r) =>
    el(
      'tr',
      {class: r.caughtBy.length ? 'pass' : 'fail', 'data-mutant': r.mutant},
      el('td', {class: 'id'}, escapeText(r.mutant)),
      el('td', {}, escapeText(r.description)),
      el(
        'td',
        {},
        r.caughtBy.length
          ? `${el('span', {class: 'ok'}, '✓')} ${el('code', {}, escapeText(r.caughtBy.join(', ')))}`
          : el('span', {class: 'bad'}, '✗ NOT CAUGHT'),
      ),
    ),
  )
  return el(
    'section',
    {id: 'self-test'},
    el('h2', {}, escapeText(`Self-test: ${caught} of ${results.length} mutants caught`)),
    el('p', {class: 'muted'}, 'Each mutant breaks the system on purpose; a check that fails on it has caught it.'),
    el(
      'div',
      {class: 'scroll'},
      el(
        'table',
        {},
        el(
          'thead',
          {},
          el('tr', {}, ...['Mutant', 'What it breaks', 'Caught by'].map((h) => el('th', {scope: 'col'}, h))),
        ),
        el('tbody', {}, ...rows),
      ),
    ),
  )
}

function marksSection(trace: PocTrace): string {
  if (trace.marks.length === 0) return ''
  const start = timeSpan(trace).start
  const look = lookup(trace)
  const groups = groupIndex(trace)
  const rows = [...trace.marks]
    .map((m) => ({m, t: parseTime(m.at)}))
    .sort((a, b) => (a.t ?? 0) - (b.t ?? 0))
    .map(({m, t}) => {
      const style = MARKS[m.kind]
      const found = m.groupId ? look.missionOfGroup(m.groupId) : undefined
      const gi = m.groupId ? groups.get(m.groupId) : undefined
      const mission = found ? `${groupLetter(gi ?? 0)} · ${found.title}` : (m.groupId ?? '')
      return el(
        'tr',
        {},
        el('td', {class: 'id'}, escapeText(t === undefined ? m.at : formatSince(t - start))),
        el(
          'td',
          {style: `color:${style?.color ?? INK};font-weight:600;white-space:nowrap`},
          escapeText(`${style?.symbol ?? '•'} ${style?.name ?? m.kind}`),
        ),
        el('td', {}, escapeText(m.label)),
        el('td', {}, escapeText(m.agent ?? '')),
        el('td', {}, escapeText(mission)),
      )
    })
  return el(
    'section',
    {id: 'marks'},
    el('h2', {}, escapeText(`Marks (${trace.marks.length})`)),
    el(
      'div',
      {class: 'scroll'},
      el(
        'table',
        {},
        el(
          'thead',
          {},
          el('tr', {}, ...['When', 'Kind', 'What', 'Agent', 'Mission'].map((h) => el('th', {scope: 'col'}, h))),
        ),
        el('tbody', {}, ...rows),
      ),
    ),
  )
}
