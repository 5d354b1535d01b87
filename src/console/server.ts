// `mwp console`'s web server: a local HTTP(S) listener serving the server-rendered views (pages.ts),
// the live updates as server-sent events, and the actions (actions.ts), for one operator whose
// key stays in this process. The browser receives HTML and the Changes' IDs, never a key or a
// token of the authority.
//
// Who may use it (another local user must not drive it):
//   - a per-start random access token: in the printed URL (?token=…); the first request with it
//     gets an HttpOnly, SameSite=Strict cookie and is redirected to the same address without it,
//     so the token does not stay in links or the history. Any request without either is 403.
//   - the Host header must name this listener (a DNS-rebinding page cannot talk to it).
//   - a POST must also come from this origin (its Origin header): a page of another origin that
//     somehow holds the cookie cannot submit a form to it.
// Every response carries a Content Security Policy allowing only the console's own script and
// stylesheet; Artifact content is served as a download in a sandbox, never as a page.

import {randomBytes, timingSafeEqual} from 'node:crypto'
import {type IncomingMessage, type ServerResponse, createServer as createHttpServer} from 'node:http'
import {createServer as createHttpsServer} from 'node:https'
import type {AddressInfo} from 'node:net'
import {MwpError} from '../errors.js'
import {el, escapeText} from '../html/markup.js'
import {isLoopbackHost} from '../wire/server.js'
import {OperatorContext} from '../operator/cli-context.js'
import type {GroupPolicySource} from '../agent/scheduling-policy.js'
import {type Form, CONFIRMED, isAction, runAction} from './actions.js'
import {CONSOLE_CSS, CONSOLE_JS} from './assets.js'
import {HistoryReader} from './history.js'
import {type Change, LiveGroups} from './live.js'
import {readRuntime} from './runtime-sources.js'
import {runtimeFragment, runtimePage} from './runtime-page.js'
import {
  MISSION_FRAGMENTS,
  NOT_SENT,
  type MissionFragment,
  type PageContext,
  artifactPage,
  confirmPage,
  missionFragment,
  missionPage,
  missionsFragment,
  missionsPage,
  page,
  resultPage,
  timelinePage,
} from './pages.js'

export interface ConsoleOptions {
  /**
   * The operator's context: its key signs, its transport reaches the authority. Its transport is
   * opened here (reconnecting, reporting the connection state to the pages): pass a context
   * whose transport is not open yet.
   */
  ctx: OperatorContext
  host: string
  port: number
  /** Serve HTTPS with this certificate (required off loopback; the command checks that). */
  tls?: {cert: string | Buffer; key: string | Buffer}
  /** Log lines (stderr in the command). */
  log?: (line: string) => void
  /** How many of a Group's latest Events the timeline keeps and a page of older ones holds (default TIMELINE_WINDOW). */
  timelineWindow?: number
  /** The Organization's scheduling policy the Agents run under: the runtime view's weights. */
  policy?: GroupPolicySource
}

export interface RunningConsole {
  /** The address to open, with the access token. */
  url: string
  /** scheme://host:port */
  origin: string
  token: string
  /** The name of the cookie the token is traded for (per port). */
  cookieName: string
  live: LiveGroups
  close(): Promise<void>
}

const MAX_BODY = 64 * 1024
const KEEPALIVE_MS = 15_000
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

export class ConsoleError extends MwpError<'environment'> {
  constructor(message: string) {
    super('environment', message)
  }
}

export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const {ctx} = options
  const log = options.log ?? (() => undefined)
  const me = ctx.key().principal!.id
  const token = randomBytes(32).toString('base64url')
  const streams = new Set<ServerResponse>()
  // The authority connection's state, told to every open page (the wire client reconnects by itself).
  let connection: 'up' | 'lost' | 'retrying' | 'gave-up' = 'up'
  const tell = (state: typeof connection) => {
    connection = state
    log(`console: authority connection ${state === 'up' ? 'restored' : state}`)
    for (const s of streams) s.write(`event: status\ndata: ${state}\n\n`)
  }
  const transport = await ctx.transport({
    reconnect: {maxDelayMs: 5000},
    onConnection: (state) => tell(state === 'restored' ? 'up' : state),
  })
  const live = new LiveGroups(transport, me, {
    log,
    ...(options.timelineWindow !== undefined ? {window: options.timelineWindow} : {}),
  })
  await live.start()
  const runtime = () => readRuntime(transport, live, options.policy)
  // Older timeline pages are read through a second session on the same flags (history.ts).
  const history = new HistoryReader(() => new OperatorContext(ctx.flags, ctx.config).transport())

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    void handle(req, res).catch((e: unknown) => {
      log(`console: ${(e as Error).message}`)
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error')
      else res.end()
    })
  }
  const server = options.tls
    ? createHttpsServer({cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.3'}, handler)
    : createHttpServer(handler)
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.port, options.host, () => resolve())
    })
  } catch (e) {
    await live.close()
    throw e
  }
  const port = (server.address() as AddressInfo).port
  // Cookies are not kept apart by port: two consoles on one host must not overwrite each other's.
  const cookieName = `mwp_console_${port}`
  const scheme = options.tls ? 'https' : 'http'
  const hostInUrl = options.host.includes(':') && !options.host.startsWith('[') ? `[${options.host}]` : options.host
  const origin = `${scheme}://${hostInUrl}:${port}`
  const hosts = new Set([`${hostInUrl}:${port}`, ...(isLoopbackHost(options.host) ? [`localhost:${port}`] : [])])
  const origins = new Set([...hosts].map((h) => `${scheme}://${h}`))
  const pageCtx = (): PageContext => ({me, now: new Date().toISOString()})

  function authorized(req: IncomingMessage, url: URL): 'cookie' | 'token' | false {
    const given = url.searchParams.get('token')
    if (given !== null && same(given, token)) return 'token'
    const cookie = (req.headers.cookie ?? '')
      .split(';')
      .map((c) => c.trim())
      .find((c) => c.startsWith(`${cookieName}=`))
    return cookie !== undefined && same(cookie.slice(cookieName.length + 1), token) ? 'cookie' : false
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hosts.has(req.headers.host ?? '')) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden: wrong Host')
    const url = new URL(req.url ?? '/', origin)
    const auth = authorized(req, url)
    if (!auth) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden: open the URL mwp console printed')
    if (auth === 'token') {
      // Trade the token for the cookie, and leave it out of the address from now on.
      url.searchParams.delete('token')
      res.setHeader(
        'Set-Cookie',
        `${cookieName}=${token}; HttpOnly; SameSite=Strict; Path=/${options.tls ? '; Secure' : ''}`,
      )
      if (req.method === 'GET') {
        res.writeHead(303, {Location: url.pathname + url.search})
        return void res.end()
      }
    }
    if (req.method === 'POST') {
      if (!origins.has(req.headers.origin ?? ''))
        return send(res, 403, 'text/plain; charset=utf-8', 'forbidden: a POST must come from the console page itself')
      return post(req, res, url)
    }
    if (req.method !== 'GET') return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed')
    const ctxNow = pageCtx()
    switch (url.pathname) {
      case '/':
        return html(res, 200, missionsPage(live, ctxNow))
      case '/runtime':
        return html(res, 200, runtimePage(live, await runtime(), ctxNow))
      case '/static/console.css':
        return send(res, 200, 'text/css; charset=utf-8', CONSOLE_CSS)
      case '/static/console.js':
        return send(res, 200, 'text/javascript; charset=utf-8', CONSOLE_JS)
      case '/events':
        return events(req, res, url)
      case '/fragment': {
        const view = url.searchParams.get('view') ?? ''
        if (view === 'missions') return html(res, 200, missionsFragment(live, ctxNow))
        if (view === 'runtime') return html(res, 200, runtimeFragment(live, await runtime(), ctxNow.now))
        const g = live.get(url.searchParams.get('group') ?? '')
        if (!g || !(MISSION_FRAGMENTS as readonly string[]).includes(view)) return notFound(res, pageCtx())
        return html(res, 200, missionFragment(view as MissionFragment, g, live, ctxNow))
      }
      case '/mission': {
        const g = live.get(url.searchParams.get('group') ?? '')
        return g ? html(res, 200, missionPage(g, live, ctxNow)) : notFound(res, pageCtx())
      }
      case '/timeline': {
        const g = live.get(url.searchParams.get('group') ?? '')
        const before = Number(url.searchParams.get('before'))
        if (!g || !Number.isSafeInteger(before) || before < 2) return notFound(res, pageCtx())
        const from = Math.max(1, before - live.window)
        let older
        try {
          older = await history.page(g.groupId, from, before - 1)
        } catch (e) {
          const why = el(
            'p',
            {class: 'refused', role: 'alert'},
            escapeText(`Cannot read the older Events: ${(e as Error).message}`),
          )
          return html(res, 502, page('Timeline', ctxNow, why, ''))
        }
        return html(res, 200, timelinePage(g, older, before, ctxNow))
      }
      case '/artifact':
      case '/artifact/raw': {
        const groupId = url.searchParams.get('group') ?? ''
        const hash = url.searchParams.get('hash') ?? ''
        if (!live.get(groupId) || !/^sha256:[0-9a-f]{64}$/.test(hash)) return notFound(res, pageCtx())
        let bytes: Buffer
        try {
          if (!transport.artifacts) throw new ConsoleError('this authority serves no Artifacts (a local --store)')
          bytes = await transport.artifacts.get(groupId, hash) // refused unless it hashes to `hash`
        } catch (e) {
          return html(res, 502, artifactPage(ctxNow, groupId, hash, {ok: false, why: (e as Error).message}))
        }
        if (url.pathname === '/artifact') return html(res, 200, artifactPage(ctxNow, groupId, hash, {ok: true, bytes}))
        res.writeHead(200, {
          'Content-Type': 'application/octet-stream',
          'Content-Disposition': `attachment; filename="${hash.slice(7, 23)}.bin"`,
          'Content-Security-Policy': 'sandbox',
          'X-Content-Type-Options': 'nosniff',
          'Cache-Control': 'no-store',
        })
        return void res.end(bytes)
      }
      default:
        return notFound(res, pageCtx())
    }
  }

  /** SSE: the Changes after Last-Event-ID (or ?after=), then each new one; `group` narrows to one Group. */
  function events(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const group = url.searchParams.get('group')
    const wanted = (c: Change) => group === null || c.groupId === group
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    })
    const write = (c: Change) =>
      res.write(
        `id: ${c.id}\nevent: change\ndata: ${JSON.stringify({groupId: c.groupId, sequence: c.sequence, kind: c.kind})}\n\n`,
      )
    res.write(`retry: 1000\n\nevent: status\ndata: ${connection}\n\n`)
    const last = headerOf(req, 'last-event-id') ?? url.searchParams.get('after')
    if (last !== null && last !== '') {
      const missed = live.changesAfter(last, wanted)
      if (missed === null) {
        const latest = live.latest(wanted)
        res.write(`${latest ? `id: ${latest.id}\n` : ''}event: reset\ndata: {}\n\n`)
      } else for (const c of missed) write(c)
    }
    const off = live.onChange((c) => {
      if (wanted(c)) write(c)
    })
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS)
    streams.add(res)
    res.on('close', () => {
      off()
      clearInterval(keepalive)
      streams.delete(res)
    })
  }

  async function post(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const action = url.pathname.startsWith('/action/') ? url.pathname.slice('/action/'.length) : ''
    if (!isAction(action)) return notFound(res, pageCtx())
    let form: Form
    try {
      form = parseForm(await readBody(req))
    } catch (e) {
      return send(res, 413, 'text/plain; charset=utf-8', (e as Error).message)
    }
    const groupId = form.get('group')?.[0] ?? ''
    const g = live.get(groupId)
    const ctxNow = pageCtx()
    if (!g || g.state === null) return notFound(res, pageCtx())
    if (CONFIRMED.has(action) && form.get('confirm')?.[0] !== 'yes') {
      const fields = Object.fromEntries([...form].filter(([k]) => k !== 'group').map(([k, v]) => [k, v[0] ?? '']))
      const question =
        action === 'cancel'
          ? `Cancel the Mission "${g.state.mission.objective}"? This cannot be undone.`
          : `Give the Coordinator lease of "${g.state.mission.objective}" to ${fields.agent ?? '?'}? The current Coordinator is fenced.`
      return html(res, 200, confirmPage(ctxNow, groupId, action, question, fields))
    }
    let outcome
    try {
      outcome = await runAction(ctx, action, groupId, g.state, form)
    } catch (e) {
      // Nothing was sent: a malformed form, an unknown Agent, a key that cannot sign this.
      outcome = {ok: false as const, code: NOT_SENT, reason: (e as Error).message}
    }
    return html(res, outcome.ok ? 200 : 409, resultPage(ctxNow, groupId, outcome))
  }

  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    cookieName,
    live,
    async close() {
      for (const s of streams) s.end()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections?.()
      })
      await live.close()
      await history.close()
    },
  }
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

function headerOf(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name]
  return typeof v === 'string' ? v : null
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Security-Policy': CSP,
    'X-Content-Type-Options': 'nosniff',
    // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on the page's own POSTs.
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  })
  res.end(body)
}

const html = (res: ServerResponse, status: number, body: string) => send(res, status, 'text/html; charset=utf-8', body)

const notFound = (res: ServerResponse, ctx: PageContext) =>
  html(res, 404, page('Not found', ctx, '<p>Not found (or not a Group you can see).</p>', ''))

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY) throw new ConsoleError('the form is too large')
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function parseForm(body: string): Form {
  const form: Form = new Map()
  for (const [k, v] of new URLSearchParams(body)) form.set(k, [...(form.get(k) ?? []), v])
  return form
}
