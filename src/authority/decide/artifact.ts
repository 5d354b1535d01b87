// artifact.publish (spec §13.1; ACCEPTANCE F5): the owning Worker publishes the signed manifest of
// an immutable, content-addressed Artifact produced for its WorkItem. Ingress has verified the
// manifest's signature (its signer is the producing Agent, producer.agentId); here the publisher
// must be that producer, the WorkItem owner with its current Ownership Epoch, presenting the
// current Execution Lease ID (an older Lease ID is fenced even with the same Ownership Epoch).
// Binary content never enters the log: the Event carries the manifest (hash, URI, size, media
// type, producer Agent Card and capability versions, provenance) and nothing else.

import type {CommandFields} from './command.js'
import {type Refusal, isRefusal, refuse} from './common.js'
import {type Handlers, ownerCheck} from './gate.js'
import type {ArtifactManifest} from '../model/events.js'
import {TERMINAL} from '../model/state.js'
import {currentLease} from '../model/work-leases.js'

/** The verified manifest (ingress checked it against artifact.schema.json with the six stages). */
const manifestOf = (command: CommandFields) => command.artifact?.document as ArtifactManifest | undefined

export const ARTIFACT_HANDLERS: Handlers = {
  'artifact.publish': {
    on: 'group',
    gate: {
      membership: 'active',
      who: {
        by: 'rule',
        check: (state, command): Refusal | null => {
          const manifest = manifestOf(command)
          if (manifest === undefined) return refuse('INVALID_COMMAND', 'no verified Artifact manifest')
          if (command.actor.type !== 'agent' || manifest.producer.agentId !== command.actor.id)
            return refuse('AUTH_FORBIDDEN', 'only the producing Agent publishes its Artifact')
          const item = state.workItems[manifest.workItemId]
          // §11.3, the same fence as work.submit
          return item === undefined ? null : ownerCheck(item, command.actor, command.payload.ownershipEpoch)
        },
      },
    },
    decide: ({state}, command, ctx) => {
      const manifest = manifestOf(command)!
      const item = state.workItems[manifest.workItemId]
      if (manifest.missionId !== state.missionId || manifest.groupId !== state.groupId)
        return refuse('INVALID_COMMAND', 'the manifest names another Mission or Group')
      if (item === undefined) return refuse('INVALID_COMMAND', 'the manifest names no WorkItem of this Group')
      if (TERMINAL.has(state.mission.state))
        return refuse('INVALID_STATE_TRANSITION', `the Mission is ${state.mission.state}`)
      const lease = currentLease(item, command.payload.leaseId, command.sessionEpoch, ctx.acceptedAt)
      if (isRefusal(lease)) return lease
      // §13.1: an Artifact is immutable; its ID names one manifest forever.
      if (state.artifacts?.[manifest.artifactId] !== undefined)
        return refuse('INVALID_STATE_TRANSITION', 'that Artifact ID is already published')

      return {
        events: [
          {
            eventId: ctx.newId(),
            kind: 'artifact.published',
            conversationId: item.conversationId,
            payload: {
              workItemId: item.workItemId,
              leaseId: lease.leaseId,
              artifact: command.artifact!.document,
              publishedAt: ctx.acceptedAt,
            },
          },
        ],
      }
    },
  },
}
