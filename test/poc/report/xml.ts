// A small strict markup parser for the report's tests: well-formed XML (every tag closed in
// order, attributes quoted and unique, `<` and `&` only as markup or known references), and in
// HTML mode the page around the SVGs too (a doctype and HTML's void elements allowed).
// A fault throws a plain Error naming it and where it is.

export interface XmlElement {
  name: string
  attrs: Record<string, string>
  children: XmlNode[]
}
export type XmlNode = XmlElement | string

const VOID = new Set(['meta', 'br', 'hr', 'img', 'input', 'link', 'col', 'wbr'])
const ENTITIES: Record<string, string> = {amp: '&', lt: '<', gt: '>', quot: '"', apos: "'"}
const NAME = /^[A-Za-z_][\w.:-]*/

function decode(s: string, where: number): string {
  return s.replace(/&([^;\s&<]*);?/g, (all, ref: string) => {
    if (!all.endsWith(';')) throw new Error(`bare & at ${where}`)
    if (ref in ENTITIES) return ENTITIES[ref]!
    const m = /^#(?:x([0-9a-fA-F]+)|([0-9]+))$/.exec(ref)
    if (!m) throw new Error(`unknown reference &${ref}; at ${where}`)
    return String.fromCodePoint(m[1] ? parseInt(m[1], 16) : Number(m[2]))
  })
}

/** Parses `src` into its root nodes, throwing an Error on the first fault. */
export function parseMarkup(src: string, mode: 'xml' | 'html' = 'xml'): XmlNode[] {
  const root: XmlElement = {name: '#root', attrs: {}, children: []}
  const stack: XmlElement[] = [root]
  let i = 0
  while (i < src.length) {
    const top = stack[stack.length - 1]!
    const lt = src.indexOf('<', i)
    const textEnd = lt === -1 ? src.length : lt
    if (textEnd > i) {
      const raw = src.slice(i, textEnd)
      if (raw.includes('>') && mode === 'xml') throw new Error(`raw > in text at ${i}`)
      top.children.push(decode(raw, i))
      i = textEnd
      continue
    }
    if (src.startsWith('<!--', i)) {
      const end = src.indexOf('-->', i)
      if (end === -1) throw new Error(`unclosed comment at ${i}`)
      i = end + 3
      continue
    }
    if (src.startsWith('<!DOCTYPE', i) || src.startsWith('<!doctype', i)) {
      if (mode !== 'html' || stack.length > 1) throw new Error(`doctype at ${i}`)
      i = src.indexOf('>', i) + 1
      continue
    }
    if (src.startsWith('</', i)) {
      const m = NAME.exec(src.slice(i + 2))
      if (!m) throw new Error(`bad end tag at ${i}`)
      const after = i + 2 + m[0].length
      if (src[after] !== '>') throw new Error(`bad end tag at ${i}`)
      if (top.name !== m[0]) throw new Error(`</${m[0]}> closes <${top.name}> at ${i}`)
      stack.pop()
      i = after + 1
      continue
    }
    const m = NAME.exec(src.slice(i + 1))
    if (!m) throw new Error(`raw < at ${i}`)
    const el: XmlElement = {name: m[0], attrs: {}, children: []}
    let j = i + 1 + m[0].length
    for (;;) {
      const ws = /^\s*/.exec(src.slice(j))![0].length
      j += ws
      if (src.startsWith('/>', j)) {
        top.children.push(el)
        j += 2
        break
      }
      if (src[j] === '>') {
        top.children.push(el)
        if (!(mode === 'html' && VOID.has(el.name))) stack.push(el)
        j += 1
        break
      }
      if (ws === 0) throw new Error(`no space before attribute at ${j}`)
      const a = /^([A-Za-z_:][\w.:-]*)="([^"<]*)"/.exec(src.slice(j))
      if (!a) throw new Error(`bad attribute at ${j}: ${src.slice(j, j + 30)}`)
      if (a[1]! in el.attrs) throw new Error(`repeated attribute ${a[1]} at ${j}`)
      el.attrs[a[1]!] = decode(a[2]!, j)
      j += a[0].length
    }
    i = j
  }
  if (stack.length > 1) throw new Error(`<${stack[stack.length - 1]!.name}> never closed`)
  return root.children
}

/** Every element under `nodes` (depth first) that `pick` accepts. */
export function findAll(nodes: XmlNode[], pick: (e: XmlElement) => boolean): XmlElement[] {
  const out: XmlElement[] = []
  const walk = (ns: XmlNode[]) => {
    for (const n of ns) {
      if (typeof n === 'string') continue
      if (pick(n)) out.push(n)
      walk(n.children)
    }
  }
  walk(nodes)
  return out
}

export const hasClass = (e: XmlElement, c: string): boolean => (e.attrs.class ?? '').split(/\s+/).includes(c)

/** The text content of a node, references decoded. */
export function textOf(n: XmlNode): string {
  return typeof n === 'string' ? n : n.children.map(textOf).join('')
}

/** The `<svg>…</svg>` parts of a page, as written (SVGs in this report do not nest). */
export function svgParts(html: string): string[] {
  return [...html.matchAll(/<svg[\s>][\s\S]*?<\/svg>/g)].map((m) => m[0])
}
