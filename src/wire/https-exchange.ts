// One HTTPS request to the server of a WebSocket session (the Artifact and token clients,
// artifact-client.ts and token-client.ts): the same CA trust and TLS 1.3 floor as the session,
// authenticated by the session's token, and the server's {code, detail} refusals as WireErrors.

import {request as httpRequest} from 'node:http'
import {request as httpsRequest} from 'node:https'
import {type ErrorCode, isErrorCode} from '../errors.js'
import {WireError} from './client.js'

export interface HttpsSession {
  /** The WebSocket URL of the session (wss://, or ws:// for an --insecure-loopback server). */
  url: string
  ca?: string | Buffer
  /** The session token of server_accept. */
  token: string
}

/** Received bodies above this are cut off (the server's default Artifact limit is 64 MiB). */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024

export interface Answer {
  status: number
  body: Buffer
}

/** `session` without a token: an unauthenticated request (the public key route). */
export function exchange(
  session: Omit<HttpsSession, 'token'> & {token?: string},
  method: 'GET' | 'PUT' | 'POST',
  path: string,
  body?: {bytes: Uint8Array; contentType: string},
): Promise<Answer> {
  const target = new URL(session.url)
  const secure = target.protocol === 'wss:'
  const request = secure ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = request(
      {
        protocol: secure ? 'https:' : 'http:',
        hostname: target.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: target.port,
        method,
        path,
        headers: {
          ...(session.token !== undefined ? {authorization: `Bearer ${session.token}`} : {}),
          ...(body ? {'content-type': body.contentType, 'content-length': body.bytes.length} : {}),
        },
        ...(secure ? {ca: session.ca, minVersion: 'TLSv1.3' as const} : {}),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (c: Buffer) => {
          size += c.length
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new Error(`the answer exceeds ${MAX_RESPONSE_BYTES} bytes`))
            return
          }
          chunks.push(c)
        })
        res.on('end', () => resolve({status: res.statusCode ?? 0, body: Buffer.concat(chunks)}))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body?.bytes)
  })
}

/** The server's refusal as a WireError carrying its §19 code (INTERNAL_ERROR when it gave none). */
export function refusal(answer: Answer): WireError {
  let code: ErrorCode = 'INTERNAL_ERROR'
  let detail = `HTTP ${answer.status}`
  try {
    const parsed = JSON.parse(answer.body.toString('utf8')) as {code?: unknown; detail?: unknown}
    if (typeof parsed.code === 'string' && isErrorCode(parsed.code)) code = parsed.code
    if (typeof parsed.detail === 'string') detail = `${detail}: ${parsed.detail}`
  } catch {
    // not a JSON error body: the status alone says it
  }
  return new WireError(code, detail)
}
