// The client side of the Artifact store (spec §13.1; server: artifact-routes.ts): HTTPS to the
// server of the WebSocket session, with the same CA trust and TLS 1.3 floor, authenticated by the
// session's token. What is received is hashed before it is returned: bytes that do not match the
// requested hash are refused (ArtifactBlobError 'artifact-integrity'), whatever the server says.

import {contentHash} from '../crypto/hash.js'
import {ArtifactBlobError, isContentHash} from '../store/artifact-blobs.js'
import {artifactPath} from './artifact-routes.js'
import {type HttpsSession, exchange, refusal} from './https-exchange.js'

export type ArtifactSession = HttpsSession

/** Puts `bytes` into Group `groupId`; resolves to their content hash once the server holds them. */
export async function putArtifact(session: ArtifactSession, groupId: string, bytes: Uint8Array): Promise<string> {
  const hash = contentHash(bytes)
  const answer = await exchange(session, 'PUT', artifactPath(groupId, hash), {
    bytes,
    contentType: 'application/octet-stream',
  })
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
