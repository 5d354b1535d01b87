// Markup helpers for the server-built HTML of the PoC report (poc/report/, with its inline SVGs) and of
// `mwp console` (console/). Every string from a trace or the authority passes through escapeText or an
// attribute value: both carry Agent-supplied text, so a title such as `<script>` must arrive as text.
// Children passed to el() are markup already built here.

/**
 * Text or an attribute value made safe for HTML and XML alike: the five markup characters become
 * references, and control characters XML cannot carry (even escaped) become U+FFFD.
 */
export function escapeText(s: string): string {
  return (
    s
      // eslint-disable-next-line no-control-regex -- matching the control characters is the point
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffe\uffff]/g, '\ufffd')
      .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&#39;')
  )
}

export type Attrs = Record<string, string | number | boolean | undefined>

/** ` a="v" b="w"`; undefined and false drop the attribute, true writes it bare (HTML only). */
export function attrs(a: Attrs): string {
  return Object.entries(a)
    .filter(([, v]) => v !== undefined && v !== false)
    .map(([k, v]) => (v === true ? ` ${k}` : ` ${k}="${escapeText(typeof v === 'number' ? num(v) : String(v))}"`))
    .join('')
}

/** An element; with no children an SVG element closes itself, so the SVG parts are well-formed XML. */
export function el(name: string, a: Attrs = {}, ...children: string[]): string {
  const inner = children.join('')
  return inner === '' && SELF_CLOSING.test(name) ? `<${name}${attrs(a)}/>` : `<${name}${attrs(a)}>${inner}</${name}>`
}

const SELF_CLOSING = /^(rect|line|path|circle|polyline|polygon|use|stop)$/

/** A coordinate without float noise. */
export function num(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100)
}

/**
 * About how wide `s` is in a sans-serif face at `fontSize` px. The page cannot measure text while
 * it is built, so labels are cut on this estimate: a little generous, so a cut label never spills.
 */
export function textWidth(s: string, fontSize: number): number {
  let w = 0
  for (const ch of s) w += /[ilIj.,:;'|!()[\]1 ]/.test(ch) ? 0.33 : /[mwMW@%]/.test(ch) ? 0.9 : isWide(ch) ? 1.05 : 0.6
  return w * fontSize
}

/** `s` cut with an ellipsis to fit `maxWidth` px, or '' when not even two characters and the ellipsis fit. */
export function fitText(s: string, maxWidth: number, fontSize: number): string {
  if (textWidth(s, fontSize) <= maxWidth) return s
  const chars = [...s]
  for (let n = chars.length - 1; n >= 2; n--) {
    const cut = chars.slice(0, n).join('').trimEnd() + '…'
    if (textWidth(cut, fontSize) <= maxWidth) return cut
  }
  return ''
}

/** East Asian wide and emoji code points, which take about two columns (terminal) or a full em (page). */
export function isWide(ch: string): boolean {
  const c = ch.codePointAt(0) ?? 0
  return (
    (c >= 0x1100 && c <= 0x115f) ||
    (c >= 0x2e80 && c <= 0xa4cf) ||
    (c >= 0xac00 && c <= 0xd7a3) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xfe30 && c <= 0xfe4f) ||
    (c >= 0xff00 && c <= 0xff60) ||
    (c >= 0xffe0 && c <= 0xffe6) ||
    (c >= 0x1f300 && c <= 0x1faff) ||
    (c >= 0x20000 && c <= 0x3fffd)
  )
}
