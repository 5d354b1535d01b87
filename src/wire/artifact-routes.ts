// The Artifact store's HTTPS endpoints (spec §13.1, §17.4), on the WebSocket binding's listener:
//
//   PUT /mwp/0.1/groups/{groupId}/artifacts/{hash}   body: the bytes → 201 (200 when already held)
//   GET /mwp/0.1/groups/{groupId}/artifacts/{hash}   → 200 application/octet-stream
//
// Authenticated by `Authorization: Bearer <sessionToken>` of a live WebSocket session of the caller
// (session-tokens.ts). Access is the Artifact's Group's: reading needs what SUBSCRIBE needs (a
// readable Membership, or the MissionOwner of a Mission above, §14), putting an active Membership.
// A Group that is unknown or that the caller may not read gets exactly the answer a missing
// Artifact gets (§17.2); there is no not-found code for Artifacts in §19, so all three are the one
// GROUP_NOT_FOUND body below. Answers:
//
//   401 AUTH_REQUIRED             no token, or one that is unknown, expired, closed or fenced
//   403 AUTH_FORBIDDEN            PUT by a reader who is not an active member
//   404 GROUP_NOT_FOUND           unknown or unreadable Group, or no such Artifact in it
//   400 SCHEMA_VALIDATION_FAILED  the path's hash is malformed, or the body does not hash to it
//   413 SCHEMA_VALIDATION_FAILED  the body is over the size limit (ArtifactBlobs.maxBytes)
//   500 INTERNAL_ERROR            the stored bytes are damaged: never served, reported and audited
//
// SCHEMA_VALIDATION_FAILED is the §19 code for a request whose content is not what it must be
// (the stated content identity, the size bound); the status tells the two apart.
//
// Organization knowledge (§13.3: an Artifact published for reuse beyond its Group) is not yet
// served to non-members: no Event marks an Artifact as Organization-approved yet, and the
// producer's own classification is not an approval.

import type {IncomingMessage, ServerResponse} from 'node:http'
import type {Authority} from '../authority/authority.js'
import {mayRead} from '../authority/decide/common.js'
import {ownsFromAbove} from '../authority/model/mission-tree-view.js'
import type {Principal} from '../signing/profiles.js'
import {ArtifactBlobError, type ArtifactBlobs, isContentHash} from '../store/artifact-blobs.js'
import {type HttpRoutes, bearerToken, readBody, sendError, sendErrorAndClose, sendJson} from './http-routes.js'
import type {SessionTokens} from './session-tokens.js'

export const ARTIFACT_PATH = /^\/mwp\/0\.1\/groups\/([^/]+)\/artifacts\/([^/]+)$/

/** The path of an Artifact of a Group (the segments percent-encoded). */
export const artifactPath = (groupId: string, hash: string) =>
  `/mwp/0.1/groups/${encodeURIComponent(groupId)}/artifacts/${encodeURIComponent(hash)}`

/** One body for an unknown Group, an unreadable one and a missing Artifact (§17.2). */
const NOT_FOUND = 'no such Artifact in a Group you may read'

interface ArtifactContext {
  authority: Authority
  tokens: SessionTokens
  blobs: ArtifactBlobs
  log(entry: Record<string, unknown>): void
}

export type Access = 'none' | 'read' | 'write'

/** What `principal` may do with the Group's content: read it (SUBSCRIBE's rule), also write it (an active member), or nothing. */
export async function accessOf(authority: Authority, groupId: string, principal: Principal): Promise<Access> {
  const state = await authority.current(groupId)
  if (state === null) return 'none'
  const member = state.members[principal.id]
  if (mayRead(member, principal, authority.clock)) return member.active ? 'write' : 'read'
  return (await ownsFromAbove(authority, state, principal)) ? 'read' : 'none'
}

export function addArtifactRoutes(routes: HttpRoutes, context: ArtifactContext): void {
  const {authority, tokens, blobs, log} = context

  /** The caller and its access, or null once an error is answered (the body, if any, left unread). */
  async function admit(
    req: IncomingMessage,
    res: ServerResponse,
    groupId: string,
    hash: string,
  ): Promise<{principal: Principal; access: Access} | null> {
    // A PUT refused before its body is read must not leave the connection to be reused mid-body.
    const refuse = req.method === 'PUT' ? sendErrorAndClose : sendError
    const token = bearerToken(req)
    const principal = token === null ? null : await tokens.principalOf(token)
    if (principal === null) {
      refuse(res, 401, 'AUTH_REQUIRED', 'give Authorization: Bearer <sessionToken> of a live session')
      return null
    }
    if (!isContentHash(hash)) {
      refuse(res, 400, 'SCHEMA_VALIDATION_FAILED', 'the path names no content hash (sha256:<64 lowercase hex>)')
      return null
    }
    const access = await accessOf(authority, groupId, principal)
    if (access === 'none') {
      refuse(res, 404, 'GROUP_NOT_FOUND', NOT_FOUND)
      return null
    }
    return {principal, access}
  }

  routes.add('GET', ARTIFACT_PATH, async (req, res, [groupId, hash]) => {
    req.resume()
    if ((await admit(req, res, groupId!, hash!)) === null) return
    let bytes: Buffer | null
    try {
      bytes = await blobs.get(groupId!, hash!)
    } catch (e) {
      if (!(e instanceof ArtifactBlobError) || e.code !== 'artifact-integrity') throw e
      log({level: 'error', event: 'artifact-damaged', groupId, hash, reason: e.message})
      await authority.store
        .audit({
          at: authority.clock(),
          stage: 'artifact-integrity',
          reason: 'damaged',
          subject: hash,
          detail: e.message,
        })
        .catch((a: Error) => log({level: 'error', event: 'audit-failed', reason: a.message}))
      return sendError(res, 500, 'INTERNAL_ERROR', 'the stored content of this Artifact is damaged; it is not served')
    }
    if (bytes === null) return sendError(res, 404, 'GROUP_NOT_FOUND', NOT_FOUND)
    res
      .writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': bytes.length,
        'mwp-content-hash': hash!,
      })
      .end(bytes)
  })

  routes.add('PUT', ARTIFACT_PATH, async (req, res, [groupId, hash]) => {
    const admitted = await admit(req, res, groupId!, hash!)
    if (admitted === null) return
    if (admitted.access !== 'write')
      return sendErrorAndClose(res, 403, 'AUTH_FORBIDDEN', 'only an active member puts Artifacts into the Group')
    const body = await readBody(req, blobs.maxBytes)
    if (body === 'too-large')
      return sendErrorAndClose(res, 413, 'SCHEMA_VALIDATION_FAILED', `the body exceeds ${blobs.maxBytes} bytes`)
    let created: boolean
    try {
      ;({created} = await blobs.put(groupId!, hash!, body))
    } catch (e) {
      if (e instanceof ArtifactBlobError && e.code === 'artifact-mismatch')
        return sendError(res, 400, 'SCHEMA_VALIDATION_FAILED', e.message)
      throw e
    }
    log({level: 'info', event: 'artifact-put', groupId, hash, sizeBytes: body.length, principal: admitted.principal.id})
    sendJson(res, created ? 201 : 200, {contentHash: hash, sizeBytes: body.length})
  })
}
