// The report's colours. Every text colour is chosen against the fill it sits on for a contrast of
// at least 4.5:1 (WCAG AA; test/poc/report checks it), and no colour is the only signal: bars carry
// a Group letter, boxes their state in words, marks a symbol and a kind.

import type {TraceMark} from './trace.js'

export const INK = '#1b1b1b' // text on every light fill
export const MUTED = '#555555' // secondary text on white (7.5:1)
export const PAGE = '#ffffff'
export const LINK = '#0b4f8a' // links, also on the state fills

export interface Swatch {
  fill: string
  stroke: string
}

/** Group colours, light enough for INK labels, in the order Missions first appear. */
const GROUPS: Swatch[] = [
  {fill: '#a6cee3', stroke: '#1f5f8b'},
  {fill: '#fdbf6f', stroke: '#a35a00'},
  {fill: '#b2df8a', stroke: '#3d7a1c'},
  {fill: '#cab2d6', stroke: '#5e3c7a'},
  {fill: '#fb9a99', stroke: '#a3262a'},
  {fill: '#8dd3c7', stroke: '#1e6f62'},
  {fill: '#ffed6f', stroke: '#8a7a00'},
]

export function groupSwatch(index: number): Swatch {
  return GROUPS[((index % GROUPS.length) + GROUPS.length) % GROUPS.length] ?? {fill: '#dddddd', stroke: '#555555'}
}

/** A Group's letter beside its colour: A, B, …, Z, AA, … */
export function groupLetter(index: number): string {
  let n = index
  let s = ''
  do {
    s = String.fromCharCode(65 + (n % 26)) + s
    n = Math.floor(n / 26) - 1
  } while (n >= 0)
  return s
}

const STATES: Record<string, Swatch> = {
  // WorkItem states (spec §10)
  open: {fill: '#eeeeee', stroke: '#666666'},
  offered: {fill: '#e4e4f7', stroke: '#4a4a9a'},
  queued: {fill: '#e4e4f7', stroke: '#4a4a9a'},
  active: {fill: '#c6e0f7', stroke: '#1f5f8b'},
  blocked: {fill: '#ffe1a8', stroke: '#8a5a00'},
  submitted: {fill: '#d9ecd0', stroke: '#3d7a1c'},
  verified: {fill: '#b9e3b0', stroke: '#2e6b1f'},
  failed: {fill: '#f8c4c4', stroke: '#a3262a'},
  cancelled: {fill: '#dddddd', stroke: '#555555'},
  // Mission states (spec §7)
  awaiting_approval: {fill: '#ffe1a8', stroke: '#8a5a00'},
  approved: {fill: '#b9e3b0', stroke: '#2e6b1f'},
}

/** The swatch of a WorkItem or Mission state; a state the palette does not know is drawn neutral. */
export function stateSwatch(state: string): Swatch {
  return Object.hasOwn(STATES, state) ? (STATES[state] ?? STATES.open!) : {fill: '#f4f4f4', stroke: '#666666'}
}

export interface MarkStyle {
  color: string // line and label text on white
  dash?: string
  width: number
  symbol: string
  name: string
}

export const MARKS: Record<TraceMark['kind'], MarkStyle> = {
  fault: {color: '#c62828', width: 2, symbol: '✕', name: 'fault'},
  preemption: {color: '#1565c0', dash: '2 3', width: 1.5, symbol: '‖', name: 'preemption'},
  approval: {color: '#2e7d32', width: 2, symbol: '✓', name: 'approval'},
  'change-request': {color: '#8a5a00', dash: '6 3', width: 2, symbol: '↺', name: 'change request'},
  rejection: {color: '#ad1457', dash: '6 2 2 2', width: 2, symbol: '✗', name: 'rejection'},
  reassignment: {color: '#6a1b9a', dash: '8 4', width: 1.5, symbol: '⇄', name: 'reassignment'},
  epoch: {color: '#455a64', dash: '1 3', width: 1.5, symbol: '◆', name: 'epoch'},
}

export const PASS = '#1e6b24' // ✓ text on white (6.6:1)
export const FAIL = '#b3261e' // ✗ text on white (6.3:1)
export const FAIL_BG = '#fde8e7'

/** The WCAG contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [la, lb] = [luminance(a), luminance(b)]
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05)
}

function luminance(hex: string): number {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex)
  if (!m) return 0
  const [r, g, b] = [m[1], m[2], m[3]].map((h) => {
    const c = parseInt(h ?? '0', 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  })
  return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0)
}

/** Every (text, background) pair the page draws, for the contrast test. */
export function textPairs(): [string, string][] {
  return [
    [INK, PAGE],
    [MUTED, PAGE],
    [PASS, PAGE],
    [FAIL, PAGE],
    [FAIL, FAIL_BG],
    [INK, FAIL_BG],
    ...GROUPS.map((g): [string, string] => [INK, g.fill]),
    ...Object.values(STATES).flatMap((s): [string, string][] => [
      [INK, s.fill],
      [LINK, s.fill],
    ]),
    [LINK, PAGE],
    [LINK, FAIL_BG],
    ...Object.values(MARKS).map((m): [string, string] => [m.color, PAGE]),
  ]
}
