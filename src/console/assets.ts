// The console's stylesheet and script, served from the package (/static/…): no framework, no CDN
// (the machine the console runs on may have no internet). The script does three small things:
// follows the server-sent events, re-reads the server-rendered fragments that a Change touches,
// and says on the approval panel when the Mission moved past the revision it shows.

export const CONSOLE_CSS = `
:root { --ink: #1b1b1b; --muted: #4d4d4d; --line: #c8c8c8; --bg: #f5f6f7; --panel: #ffffff;
  --link: #0b4f8a; --focus: #1a5fb4; --crit: #b00020; --ok: #1e6b24; --warn-bg: #fff4d6; --bad-bg: #fde8e7; }
* { box-sizing: border-box; }
html { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: var(--bg); }
body { margin: 0; }
a { color: var(--link); }
a:focus-visible, button:focus-visible, textarea:focus-visible, input:focus-visible, select:focus-visible,
summary:focus-visible, [tabindex]:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 8px; top: 8px; background: #fff; padding: 6px 10px; z-index: 10; }
header.top { display: flex; flex-wrap: wrap; gap: 6px 18px; align-items: center; padding: 10px 20px; background: #23313f; color: #fff; }
header.top a.brand { color: #fff; font-weight: 700; text-decoration: none; font-size: 1.05rem; }
header.top .top-nav a { color: #fff; margin-right: 12px; }
[data-fragment] > .panel + .panel, main > .panel + .panel { margin-top: 16px; }
.note { background: #eef3f8; border: 1px solid #b8c7d6; border-radius: 6px; padding: 8px 12px; }
header.top .who { color: #e3e8ee; font-size: .9rem; overflow-wrap: anywhere; }
header.top .live { margin-left: auto; font-size: .85rem; color: #e3e8ee; }
header.top .live.on::before { content: "● "; color: #7ee787; }
header.top .live.off::before { content: "● "; color: #ffb4a8; }
main { padding: 14px 20px 40px; max-width: 1500px; margin: 0 auto; }
h1 { font-size: 1.45rem; margin: .2em 0 .4em; }
h2 { font-size: 1.1rem; margin: 0 0 .5em; }
h3 { font-size: .98rem; margin: .8em 0 .3em; }
.crumbs { font-size: .9rem; margin-bottom: 8px; overflow-wrap: anywhere; }
.layout { display: grid; grid-template-columns: minmax(0, 1fr) minmax(300px, 380px); gap: 16px; align-items: start; }
.col-main, .col-side { display: grid; gap: 16px; min-width: 0; }
@media (max-width: 980px) { .layout { grid-template-columns: minmax(0, 1fr); } main { padding: 10px; } }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; min-width: 0; }
.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 14px; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .85em; overflow-wrap: anywhere; }
.small { font-size: .86rem; color: var(--muted); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: .82rem; border: 1px solid #666; background: #eee; white-space: nowrap; }
.state-active { background: #dbe9f7; border-color: #1f5f8b; }
.state-awaiting_approval, .state-blocked { background: #ffe1a8; border-color: #8a5a00; }
.state-approved, .state-verified { background: #c9ebc1; border-color: #2e6b1f; }
.state-submitted { background: #e1f0da; border-color: #3d7a1c; }
.state-failed { background: #f8c4c4; border-color: #a3262a; }
.state-cancelled { background: #ddd; border-color: #555; }
.state-offered, .state-queued { background: #e4e4f7; border-color: #4a4a9a; }
.overdue { color: var(--crit); }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
caption { text-align: left; color: var(--muted); padding: 0 0 6px; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid #e2e2e2; }
thead th { border-bottom: 2px solid var(--line); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.budget th[scope=row] { font-weight: 400; }
.table-scroll, .graph-scroll { overflow-x: auto; max-width: 100%; }
table.missions tr.yours { background: var(--warn-bg); }
table.missions td.depth-1 { padding-left: 26px; } table.missions td.depth-2 { padding-left: 44px; }
table.missions td.depth-3, table.missions td.depth-4 { padding-left: 62px; }
@media (max-width: 640px) {
  table.missions thead { display: none; }
  table.missions tr { display: block; padding: 8px 0; border-bottom: 1px solid var(--line); }
  table.missions td { display: block; border: 0; padding: 2px 4px; }
  table.missions td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-family: system-ui, sans-serif; }
}
tr.critical td:first-child { border-left: 4px solid var(--crit); }
.crit-tag { color: var(--crit); font-weight: 600; font-size: .82rem; }
.progress { font-weight: 600; }
figure.graph { margin: 0 0 12px; }
figure.graph figcaption { font-size: .86rem; color: var(--muted); margin-top: 6px; }
.legend-critical { color: var(--crit); font-weight: 600; }
.workgraph { display: block; max-width: 100%; height: auto; }
@media (max-width: 640px) { .workgraph { max-width: none; } }
.workgraph .workitem rect { stroke: #5a5a5a; stroke-width: 1; }
.workgraph .workitem.critical rect { stroke: var(--crit); stroke-width: 3; }
.workgraph .edge { fill: none; stroke: #777; stroke-width: 1.5; }
.workgraph .edge.critical { stroke: var(--crit); stroke-width: 3; }
.workgraph text { font-family: system-ui, "DejaVu Sans", sans-serif; font-size: 12.5px; fill: #1b1b1b; }
.workgraph text.goal { font-weight: 600; }
.workgraph text.id, .workgraph text.state, .workgraph text.hold { font-size: 11px; fill: #3d3d3d; }
.workgraph .workitem.held text.hold { fill: #8a1c1c; font-weight: 600; }
ol.timeline { list-style: none; margin: 0; padding: 0; display: grid; gap: 6px; }
ol.timeline li.event { padding: 4px 6px; border-left: 3px solid #c8d3de; font-size: .9rem; overflow-wrap: anywhere; }
ol.timeline li.kind-mission { border-left-color: #1f5f8b; }
ol.timeline li.kind-work { border-left-color: #3d7a1c; }
.seq { color: var(--muted); font-variant-numeric: tabular-nums; }
ol.timeline li.message { padding: 2px 0; }
.bubble { background: #f1eefb; border: 1px dashed #6a5a9a; border-radius: 12px; padding: 6px 12px; max-width: 46em; }
.bubble.human { background: #eef6ee; border-color: #4d7a4d; }
.msg-head { margin: 0; font-size: .86rem; }
.msg-label { display: inline-block; margin-left: 6px; font-size: .76rem; padding: 0 6px; border-radius: 8px; background: #fff; border: 1px solid #6a5a9a; color: #3f2f6a; }
.msg-text { margin: 4px 0 2px; font-style: italic; overflow-wrap: anywhere; }
.approval { border: 2px solid #8a5a00; background: #fffdf6; }
.approval .what { font-weight: 600; }
.approve-artifacts { padding-left: 18px; font-size: .9rem; }
.stale { background: var(--bad-bg); border: 1px solid var(--crit); padding: 8px 10px; border-radius: 6px; }
form.action { display: grid; gap: 6px; margin: 10px 0 14px; }
.field { display: grid; gap: 3px; }
label { font-size: .9rem; font-weight: 600; }
textarea, select, input:not([type=hidden]) { font: inherit; padding: 6px 8px; border: 1px solid #767676; border-radius: 6px; width: 100%; }
button { font: inherit; justify-self: start; padding: 7px 14px; border-radius: 6px; border: 1px solid #3c4a57; background: #fff; color: var(--ink); cursor: pointer; }
button:hover { background: #eef2f6; }
button.primary { background: #1e6b24; border-color: #14501a; color: #fff; font-weight: 600; }
button.primary:hover { background: #17561c; }
button.danger { border-color: var(--crit); color: var(--crit); }
#actions form.action + form.action, #actions details, #actions details + form.action { border-top: 1px solid #e2e2e2; padding-top: 10px; }
td form.action { margin: 0; }
td form.action button { padding: 3px 8px; font-size: .85rem; }
.result.refused, .refused { border-color: var(--crit); background: var(--bad-bg); }
.result.ok, .verified { border-color: var(--ok); }
code.code { font-size: 1.05rem; font-weight: 700; color: var(--crit); }
.verified { color: var(--ok); font-weight: 600; }
textarea.signed { font-size: .8rem; }
pre.preview { background: #f4f4f4; padding: 10px; overflow: auto; max-height: 60vh; white-space: pre-wrap; overflow-wrap: anywhere; }
details.override { margin: 6px 0 12px; } details.override summary { cursor: pointer; font-weight: 600; }
ul.tree { padding-left: 18px; } ul.tree ul { padding-left: 18px; }
.evidence li.uncovered { color: var(--crit); }
.empty, .unavailable { color: var(--muted); }
meter { width: 64px; }
.presence { margin: 4px 0 8px; }
.slots { display: inline-flex; gap: 3px; vertical-align: middle; }
.slot { display: inline-block; width: 14px; height: 14px; border-radius: 3px; border: 1px solid #3c4a57; }
.slot.busy { background: #1a5fb4; border-color: #0b3f7a; }
.slot.idle { background: #fff; }
`

export const CONSOLE_JS = `'use strict'
;(() => {
  const body = document.body
  const live = document.getElementById('live')
  const stream = body.dataset.stream
  const say = (text, cls) => { if (live) { live.textContent = text; live.className = 'live ' + (cls || '') } }
  const checkStale = () => {
    const panel = document.getElementById('approval')
    const head = document.querySelector('[data-fragment] [data-revision]')
    const note = document.getElementById('stale')
    if (!panel || !head || !note) return
    note.hidden = Number(head.dataset.revision) === Number(panel.dataset.revision)
  }
  const load = async (part) => {
    if (part.contains(document.activeElement) && document.activeElement !== part) {
      part.dataset.pending = '1' // not under the reader's focus: re-read when it leaves
      return
    }
    const r = await fetch(part.dataset.fragment, {credentials: 'same-origin'})
    if (!r.ok) return
    part.innerHTML = await r.text()
    delete part.dataset.pending
  }
  const refresh = async () => {
    await Promise.all([...document.querySelectorAll('[data-fragment]')].map(load))
    checkStale()
    body.dataset.refreshed = String(Number(body.dataset.refreshed || 0) + 1)
  }
  document.addEventListener('focusout', (e) => {
    const part = e.target instanceof Element ? e.target.closest('[data-fragment][data-pending]') : null
    if (part) setTimeout(() => { if (!part.contains(document.activeElement)) void load(part) }, 0)
  })
  // A fragment with data-every is re-read on that period too: Presence changes without an Event.
  for (const part of document.querySelectorAll('[data-fragment][data-every]'))
    setInterval(() => { load(part).catch(() => undefined) }, Number(part.dataset.every))
  checkStale()
  if (!stream) { say('', ''); return } // a result or confirmation page: nothing live on it
  if (!window.EventSource) { say('no live updates in this browser'); return }
  let timer = null
  const soon = () => { if (timer === null) timer = setTimeout(() => { timer = null; void refresh() }, 120) }
  say('connecting…')
  const es = new EventSource(stream)
  es.addEventListener('open', () => say('live', 'on'))
  es.addEventListener('error', () => say('reconnecting…', 'off'))
  es.addEventListener('status', (m) => {
    if (m.data === 'up') say('live', 'on')
    else say(m.data === 'gave-up' ? 'authority unreachable' : 'authority connection lost, reconnecting…', 'off')
  })
  es.addEventListener('change', (m) => { body.dataset.lastEvent = m.lastEventId; soon() })
  es.addEventListener('reset', (m) => { body.dataset.lastEvent = m.lastEventId; soon() })
})()
`
