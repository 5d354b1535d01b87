// The signed Context Package (§13.3) every offer carries: this WorkItem's scope, the Events it
// summarizes, its input Artifacts, and — when the WorkItem comes back after a rejected review —
// the review's findings as decisions citing the work.failed Event, so the Worker that reworks it
// knows what failed without reading another Mission's content or the whole log (§8 step 2).

import type {WorkItemView} from '../../authority/model/state.js'
import type {SigningKey} from '../../crypto/keyfile.js'
import type {JsonObject} from '../../json/parse.js'
import {formatUtcNow} from '../../json/timestamp.js'
import {newUrn} from '../../operator/command-builder.js'
import {mutated} from '../../mutants.js'
import {sign} from '../../signing/sign.js'
import type {MissionView} from './mission-view.js'

/** The prefix of a rework decision: `rework round N: <finding>`. */
const REWORK = /^rework round (\d+): (.*)$/s

export interface Rework {
  round: number
  failures: string[]
  /** The review reports and the rejected submission's Artifacts. */
  artifactHashes: string[]
}

/** What a package says beyond the envelope every one of them shares (signPackage). */
interface PackageBody {
  workItemId?: string
  /** Event IDs cited besides the first and the latest the Coordinator saw. */
  cites: string[]
  artifactHashes: string[]
  summary: string
  decisions: {description: string; sourceEventIds: string[]}[]
  unresolvedQuestions: string[]
}

/** Signs a Context Package of `view`'s Group: this Mission's scope, the Events seen so far, the objective as a constraint. */
function signPackage(key: SigningKey, view: MissionView, body: PackageBody): JsonObject {
  const state = view.state!
  const {cites, ...rest} = body
  const unsigned = {
    contextPackageId: newUrn(),
    version: 1,
    missionId: state.missionId,
    groupId: state.groupId,
    ...(rest.workItemId !== undefined ? {workItemId: rest.workItemId} : {}),
    sourceEventRange: {
      fromSequence: view.first!.sequence,
      toSequence: view.last!.sequence,
      eventIds: [...new Set([view.first!.eventId, ...cites, view.last!.eventId])],
    },
    artifactHashes: [...new Set(rest.artifactHashes)],
    summary: rest.summary,
    decisions: rest.decisions.map((d) => ({...d, description: d.description.slice(0, 4000)})),
    constraints: [`Mission objective: ${state.mission.objective}`.slice(0, 4000)],
    unresolvedQuestions: rest.unresolvedQuestions.map((q) => q.slice(0, 4000)),
    generatedBy: {type: 'agent', id: key.principal!.id},
    generatedAt: formatUtcNow(),
  }
  return sign('context-package', unsigned, key).document
}

export function offerContext(key: SigningKey, view: MissionView, item: WorkItemView): JsonObject {
  const failedEvents = view.failures.get(item.workItemId) ?? []
  const round = failedEvents.length
  const findings =
    item.failure && !mutated('rework-without-findings')
      ? item.failure.reason.split('\n').filter((l) => l.length > 0)
      : []
  return signPackage(key, view, {
    workItemId: item.workItemId,
    cites: [],
    artifactHashes: [...item.contract.inputArtifacts, ...(item.failure?.evidenceHashes ?? [])],
    summary: `${item.contract.goal}${round > 0 ? ` (rework round ${round}: the last result did not pass review)` : ''}`,
    decisions:
      round > 0
        ? findings.map((f) => ({description: `rework round ${round}: ${f}`, sourceEventIds: [failedEvents.at(-1)!]}))
        : [],
    unresolvedQuestions: [],
  })
}

/**
 * §7.2 "The replacement MUST receive a signed Context Package and MUST reconcile current WorkItem
 * state before issuing new assignments": the replacement Coordinator's own summary of what replay
 * reconciled — every WorkItem's state, the Artifacts already verified, the Event range it read —
 * signed and published before its first assignment, so the handover is in the Mission's history.
 * (The old Coordinator cannot hand one over: it stopped.)
 */
export function handoverContext(key: SigningKey, view: MissionView): JsonObject {
  const state = view.state!
  const epoch = state.mission.coordinator!.coordinatorEpoch
  const items = Object.values(state.workItems)
  const counts = new Map<string, number>()
  for (const w of items) counts.set(w.state, (counts.get(w.state) ?? 0) + 1)
  const tally = [...counts.entries()].map(([s, n]) => `${n} ${s}`).join(', ') || 'no WorkItems'
  const assigned = view.assignedBy.get(epoch) ?? view.last!.eventId
  return signPackage(key, view, {
    cites: [assigned],
    artifactHashes: items.flatMap((w) => (w.state === 'verified' ? (w.submission?.artifactHashes ?? []) : [])),
    summary: `Coordinator epoch ${epoch} took over "${state.mission.objective}" and reconciled by replay through sequence ${view.last!.sequence}: ${tally}.`,
    decisions: [
      {
        description: `Coordinator epoch ${epoch} reconciled ${items.length} WorkItems by replay (${tally})`,
        sourceEventIds: [assigned],
      },
    ],
    unresolvedQuestions: items.filter((w) => w.state === 'blocked').map((w) => `blocked: ${w.contract.goal}`),
  })
}

/** What a Worker reads back: the rework request in an offer's Context Package, or null for first work. */
export function reworkOf(contextPackage: Record<string, unknown> | undefined): Rework | null {
  const decisions = Array.isArray(contextPackage?.decisions) ? (contextPackage.decisions as JsonObject[]) : []
  let round = 0
  const failures: string[] = []
  for (const d of decisions) {
    const m = typeof d.description === 'string' ? REWORK.exec(d.description) : null
    if (!m) continue
    round = Math.max(round, Number(m[1]))
    failures.push(m[2]!)
  }
  if (round === 0) return null
  const hashes = Array.isArray(contextPackage?.artifactHashes) ? contextPackage.artifactHashes.map(String) : []
  return {round, failures, artifactHashes: hashes}
}
