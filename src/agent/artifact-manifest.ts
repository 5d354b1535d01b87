// The signed Artifact manifest an Agent publishes for each Artifact it submits (spec §13.1): the
// content hash and where the authority's Artifact store serves it, the producer's Agent Card
// and capability versions, the source Artifacts it was made from, and the tool and model
// versions that made it. The bytes themselves go to the store (PUT before publishing); only
// the manifest enters the log, in `artifact.publish`.

import type {SigningKey} from '../crypto/keyfile.js'
import type {JsonObject} from '../json/parse.js'
import {formatUtcNow} from '../json/timestamp.js'
import {newUrn} from '../operator/command-builder.js'
import {sign} from '../signing/sign.js'
import {artifactPath} from '../wire/artifact-routes.js'
import type {WorkContract} from '../authority/model/payloads.generated.js'
import type {ArtifactMeta} from './handler.js'

/**
 * A noncritical Extension Profile (§18) carrying the file name a handler gave an Artifact
 * (ArtifactMeta.name): the manifest has no name member, and a reviewer laying the Artifacts out as
 * files (a Coordinator running tests on submitted sources) needs it. Authorities relay it unchanged.
 */
export const FILE_NAME_EXTENSION = 'urn:mwp:extension:artifact-file-name'

/** This runtime, recorded as the tool that stored the Artifact when the handler names none. */
export const RUNTIME_TOOL = {name: 'mwp agent run', version: '0.1.0'}

export interface ProducedArtifact {
  hash: string
  sizeBytes: number
  meta: ArtifactMeta
}

/** The https URL the authority at `serverUrl` (wss://…) serves the Artifact at. */
export function artifactUri(serverUrl: string, groupId: string, hash: string): string {
  const u = new URL(serverUrl)
  return `${u.protocol === 'wss:' ? 'https:' : 'http:'}//${u.host}${artifactPath(groupId, hash)}`
}

export function artifactManifest(
  key: SigningKey,
  card: JsonObject,
  scope: {missionId: string; groupId: string; workItemId: string; contract: WorkContract; uri: string},
  artifact: ProducedArtifact,
): JsonObject {
  const {meta, hash} = artifact
  // The producer's capabilities are the versions its card declares for what the contract asked.
  const declared = Array.isArray(card.capabilities) ? (card.capabilities as {id: string; version: string}[]) : []
  const used = declared.filter((c) => scope.contract.requiredCapabilities.some((r) => r.id === c.id))
  // The deliverable of the same media type names the schema the content claims to follow.
  const deliverable = scope.contract.requiredDeliverables.find((d) => d.mediaType === meta.mediaType)
  const unsigned = {
    artifactId: newUrn(),
    contentHash: hash,
    uri: scope.uri,
    sizeBytes: artifact.sizeBytes,
    mediaType: meta.mediaType,
    schemaUri: meta.schemaUri ?? deliverable?.schema ?? `urn:mwp:media-type:${meta.mediaType}`,
    producer: {
      agentId: key.principal!.id,
      agentCardVersion: Number(card.cardVersion),
      capabilities: (used.length > 0 ? used : declared.slice(0, 1)).map(({id, version}) => ({id, version})),
    },
    missionId: scope.missionId,
    groupId: scope.groupId,
    workItemId: scope.workItemId,
    sourceArtifactHashes: [...new Set(meta.sourceArtifactHashes ?? [])],
    toolVersions: meta.toolVersions ?? [RUNTIME_TOOL],
    modelVersions: meta.modelVersions ?? [],
    classification: meta.classification ?? 'internal',
    createdAt: formatUtcNow(),
    ...(meta.name
      ? {extensions: {[FILE_NAME_EXTENSION]: {version: '1.0.0', critical: false, data: {name: meta.name}}}}
      : {}),
  }
  return sign('artifact', unsigned, key).document
}
