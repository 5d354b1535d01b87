// Terminal text helpers: display width (wide characters take two columns), cutting and wrapping
// to a width, and making trace strings safe to print (an Agent's title must not carry escape
// sequences into the operator's terminal).

import {isWide} from '../../html/markup.js'

/** `s` on one line with every control character (C0, DEL, C1: ESC among them) shown as U+FFFD. */
export function printable(s: string): string {
  // eslint-disable-next-line no-control-regex -- matching the control characters is the point
  return s.replace(/[\t\n\r]/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd')
}

/** Columns `s` takes in a terminal: wide characters two, combining marks none. */
export function displayWidth(s: string): number {
  let w = 0
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0
    if ((c >= 0x300 && c <= 0x36f) || c === 0x200d || (c >= 0xfe00 && c <= 0xfe0f)) continue
    w += isWide(ch) ? 2 : 1
  }
  return w
}

/** `s` cut to `width` columns, ending a cut with an ellipsis. */
export function cut(s: string, width: number): string {
  if (displayWidth(s) <= width) return s
  if (width <= 0) return ''
  let out = ''
  let w = 0
  for (const ch of s) {
    const cw = displayWidth(ch)
    if (w + cw > width - 1) break
    out += ch
    w += cw
  }
  return out + '…'
}

/** `s` padded with spaces (or cut) to exactly `width` columns. */
export function pad(s: string, width: number): string {
  const c = cut(s, width)
  return c + ' '.repeat(Math.max(0, width - displayWidth(c)))
}

/** Words of `s` wrapped into lines of at most `width` columns after `indent`; a word too long is cut. */
export function wrap(s: string, width: number, indent = ''): string[] {
  const room = Math.max(1, width - displayWidth(indent))
  const lines: string[] = []
  let line = ''
  for (const word of s.split(' ').filter((x) => x !== '')) {
    const next = line ? `${line} ${word}` : word
    if (displayWidth(next) <= room) line = next
    else {
      if (line) lines.push(line)
      line = cut(word, room)
    }
  }
  if (line) lines.push(line)
  return lines.map((l) => indent + l)
}

export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow'

const SGR: Record<Style, string> = {bold: '1', dim: '2', red: '31', green: '32', yellow: '33'}

/** A painter that wraps text in SGR codes, or leaves it alone when colour is off (NO_COLOR). */
export function painter(color: boolean): (s: string, ...styles: Style[]) => string {
  return (s, ...styles) =>
    color && styles.length && s !== '' ? `\u001b[${styles.map((x) => SGR[x]).join(';')}m${s}\u001b[0m` : s
}
