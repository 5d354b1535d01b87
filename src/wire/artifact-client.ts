// The client side of the Artifact store (spec §13.1; server: artifact-routes.ts): HTTPS to the
// server of the WebSocket session, with the same CA trust and TLS 1.3 floor, authenticated by the
// session's token. What is received is hashed before it is returned: bytes that do not match the
// requested hash are refused (ArtifactBlobError 'artifact-integrity'), whatever the server says.

import {request as httpRequest} from 'node:http'
import {request as httpsRequest} from 'node:https'
import {contentHash} from '../crypto/hash.js'
import {type ErrorCode, isErrorCode} from '../errors.js'
import {ArtifactBlobError, isContentHash} from '../store/artifact-blobs.js'
import {artifactPath} from './artifact-routes.js'
import {WireError} from './client.js'

export interface ArtifactSession {
  /** The WebSocket URL of the session (wss://, or ws:// for an --insecure-loopback server). */
  url: string
  ca?: string | Buffer
  /** The session token of server_accept. */
  token: string
}

/** Received bodies above this are cut off (the server's default limit is 64 MiB). */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024

interface Answer {
  status: number
  body: Buffer
}

function exchange(session: ArtifactSession, method: 'GET' | 'PUT', path: string, body?: Uint8Array): Promise<Answer> {
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
          authorization: `Bearer ${session.token}`,
          ...(body ? {'content-type': 'application/octet-stream', 'content-length': body.length} : {}),
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
    req.end(body)
  })
}

/** The server's refusal as a WireError carrying its §19 code (INTERNAL_ERROR when it gave none). */
function refusal(answer: Answer): WireError {
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

/** Puts `bytes` into Group `groupId`; resolves to their content hash once the server holds them. */
export async function putArtifact(session: ArtifactSession, groupId: string, bytes: Uint8Array): Promise<string> {
  const hash = contentHash(bytes)
  const answer = await exchange(session, 'PUT', artifactPath(groupId, hash), bytes)
  if (answer.status !== 200 && answer.status !== 201) throw refusal(answer)
  return hash
}

/** The bytes of `hash` in Group `groupId`, verified against `hash` before they are returned. */
export async function getArtifact(session: ArtifactSession, groupId: string, hash: string): Promise<Buffer> {
  if (!isContentHash(hash))
    throw new ArtifactBlobError('artifact-not-a-hash', `not a content hash (sha256:<64 hex>): ${hash}`)
  const answer = await exchange(session, 'GET', artifactPath(groupId, hash))
  if (answer.status !== 200) throw refusal(answer)
  const actual = contentHash(answer.body)
  if (actual !== hash)
    throw new ArtifactBlobError('artifact-integrity', `the server sent bytes hashing to ${actual}, not ${hash}`)
  return answer.body
}
