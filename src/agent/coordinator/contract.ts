// The complete Work Contract (§10.1) of a planned WorkItem: every field from the plan item, its
// defaults, and what the Group already holds — the verified dependencies' WorkItem IDs and the
// Artifacts they produced, which become this WorkItem's inputArtifacts. `constraints.inputFiles`
// names each input by the file name its producer published it under, so a handler can lay the
// inputs out as files without another lookup.

import type {WorkContract} from '../../authority/model/payloads.generated.js'
import {formatUtcSeconds} from '../../json/timestamp.js'
import type {Plan} from './plan.js'
import type {Planned} from './planned.js'

/** What an input Artifact is, from its `artifact.publish` manifest. */
export interface ArtifactName {
  name: string
  mediaType: string
}

export const DEFAULT_CAPABILITY = {id: 'mwp.dev.general-work', version: '1.0.0'}
const DEFAULT_DEADLINE_MINUTES = 60
const DEFAULT_RETRY = {maxAttempts: 2, backoff: 'fixed', maxDelay: 'PT10S', retryableFailures: []} as const

export function contractFor(
  plan: Plan,
  p: Planned,
  inputs: {dependencyWorkItemIds: string[]; artifacts: {hash: string; name?: ArtifactName}[]},
  nowMs: number,
): WorkContract {
  const d = plan.defaults ?? {}
  const i = p.item
  const inputFiles: Record<string, string> = {}
  for (const a of inputs.artifacts) if (a.name) inputFiles[a.name.name] = a.hash
  const goal = p.reason !== undefined ? i.goal.replaceAll('{reason}', p.reason) : i.goal
  return {
    contractVersion: 1,
    goal,
    requiredDeliverables: i.deliverables.map((x) => ({
      deliverableId: x.id,
      description: x.description,
      mediaType: x.mediaType,
      schema: x.schema ?? `urn:mwp:plan:deliverable:${x.id}`,
    })),
    acceptanceCriteria: i.criteria.map((c) => ({
      criterionId: c.id,
      description: c.description,
      evidenceRequired: c.evidence ?? ['deterministic_test'],
    })),
    inputArtifacts: [...new Set(inputs.artifacts.map((a) => a.hash))],
    dependencyWorkItemIds: inputs.dependencyWorkItemIds,
    allowedResources: [],
    requiredCapabilities: [i.capability ?? d.capability ?? DEFAULT_CAPABILITY],
    deadline: formatUtcSeconds(nowMs + (i.deadlineMinutes ?? d.deadlineMinutes ?? DEFAULT_DEADLINE_MINUTES) * 60_000),
    requestedUrgency: i.urgency ?? 'normal',
    businessImpact: i.businessImpact ?? `part of "${plan.objective}"`,
    retryPolicy: d.retryPolicy ?? {...DEFAULT_RETRY, retryableFailures: []},
    budget: i.budget ?? d.budget ?? {currency: 'EUR', financialLimit: 1},
    sideEffectRisk: i.sideEffectRisk ?? 'none',
    executionApproval: i.executionApproval ?? 'not_required',
    constraints: {
      ...(i.constraints ?? {}),
      inputFiles,
      plan: {instance: p.instance, round: p.round},
    },
  }
}
