// HTTPS routes on the WebSocket binding's own TLS listener (server.ts). A service adds its routes
// (a method and a path pattern whose groups are handed over decoded); a request no route matches
// keeps the binding's 426 answer. Errors are JSON bodies {code, detail} with §19 codes.

import type {IncomingMessage, ServerResponse} from 'node:http'
import type {ErrorCode} from '../errors.js'

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, params: string[]) => Promise<void>

interface Route {
  method: string
  pattern: RegExp
  handler: RouteHandler
}

export class HttpRoutes {
  readonly #routes: Route[] = []

  constructor(private readonly log: (entry: Record<string, unknown>) => void) {}

  /** `pattern` matches the whole path (no query); its capture groups arrive percent-decoded. */
  add(method: string, pattern: RegExp, handler: RouteHandler): void {
    this.#routes.push({method, pattern, handler})
  }

  /** Answers `req`; false when no route's path matches (the caller answers it). */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const path = (req.url ?? '/').split('?')[0]!
    const matching = this.#routes.filter((r) => r.pattern.test(path))
    if (matching.length === 0) return false
    const route = matching.find((r) => r.method === req.method)
    if (!route) {
      res.setHeader('allow', matching.map((r) => r.method).join(', '))
      sendError(res, 405, 'PROTOCOL_VIOLATION', `${req.method} is not served here`)
      req.resume()
      return true
    }
    let params: string[]
    try {
      params = route.pattern.exec(path)!.slice(1).map(decodeURIComponent)
    } catch {
      sendError(res, 400, 'PROTOCOL_VIOLATION', 'malformed percent-encoding in the path')
      req.resume()
      return true
    }
    route.handler(req, res, params).catch((e: Error) => {
      this.log({level: 'error', event: 'http-route-failed', method: req.method, path, reason: e.message})
      if (!res.headersSent) sendError(res, 500, 'INTERNAL_ERROR', 'the request could not be served')
      else res.destroy()
    })
    return true
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text)}).end(text)
}

export function sendError(res: ServerResponse, status: number, code: ErrorCode, detail: string): void {
  sendJson(res, status, {code, detail})
}

/** The bearer token of `Authorization: Bearer <token>`, or null. */
export function bearerToken(req: IncomingMessage): string | null {
  const m = /^Bearer ([A-Za-z0-9_-]+)$/.exec(req.headers.authorization ?? '')
  return m ? m[1]! : null
}

/**
 * The request body, or 'too-large' as soon as it passes `limit` bytes (a declared Content-Length
 * over it is refused before anything is read); the rest of the body is then not read.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) return 'too-large'
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) return 'too-large'
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** Answers with `status` after a body that was not (wholly) read: the connection is not reused. */
export function sendErrorAndClose(res: ServerResponse, status: number, code: ErrorCode, detail: string): void {
  res.setHeader('connection', 'close')
  sendError(res, status, code, detail)
}
