// The Artifact commands' access to the server's Artifact store (mwp artifact put / get): over the
// wire transport only, since the store is served over HTTPS beside the WebSocket binding
// (src/wire/artifact-routes.ts). A refusal by the server keeps its wire code (exit 1); content
// that fails its hash check is an environment error (exit 3, MwpError 'artifact-integrity'); a
// server that cannot be reached is an environment error.

import {environment, usage} from '../cli/base.js'
import {MwpError} from '../errors.js'
import type {OperatorContext} from './cli-context.js'

type ArtifactStore = NonNullable<Awaited<ReturnType<OperatorContext['transport']>>['artifacts']>

export async function artifactStore(ctx: OperatorContext): Promise<ArtifactStore> {
  if (ctx.flags.store !== undefined)
    throw usage(
      'Artifacts are served by the authority server: give --url (or a configuration with a server), not --store',
    )
  const transport = await ctx.transport()
  if (!transport.artifacts) throw usage(`${transport.target} offers no Artifact store`)
  const artifacts = transport.artifacts
  const call = async <T>(what: string, p: () => Promise<T>): Promise<T> => {
    try {
      return await p()
    } catch (e) {
      if (e instanceof MwpError) throw e
      throw environment(`cannot ${what} on ${transport.target}: ${(e as Error).message}`, {cause: e})
    }
  }
  return {
    put: (groupId, bytes) => call('put the Artifact', () => artifacts.put(groupId, bytes)),
    get: (groupId, hash) => call('get the Artifact', () => artifacts.get(groupId, hash)),
  }
}
