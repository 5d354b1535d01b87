// The report's trace (report/trace.ts) from what the observer folded: each Mission with its
// WorkItem graph, each Worker slot's runs, and the marks (approvals, change requests, rejections,
// reassignments). The Events do not say which slot ran a WorkItem, so runs are laid into an
// Agent's slots in start order, each into the first slot free at its start (slots are alike).

import type {WorkItemView} from '../authority/model/state.js'
import type {PocFacts} from './checks.js'
import type {GroupFacts} from './observe.js'
import {WORKER_SLOTS} from './plans.js'
import type {PocTrace, TraceCheck, TraceMark, TraceMission, TraceRun} from './report/trace.js'
import {pocStage} from './work/stage.js'

export function buildTrace(
  f: PocFacts,
  checks: TraceCheck[],
  run: {seed: number; store: string; startedAt: string},
): PocTrace {
  const nameOf = (agentId: string) => agentId.slice(agentId.lastIndexOf(':') + 1)
  const groups = [...f.groups.values()].filter((g) => g.state !== null)
  const missions: TraceMission[] = groups.map((g) => mission(g, nameOf))
  const runs: TraceRun[] = []
  for (const [name, slots] of Object.entries(WORKER_SLOTS)) {
    const free = Array.from({length: slots}, () => 0)
    const mine = groups
      .flatMap((g) => g.runs)
      .filter((r) => nameOf(r.agentId) === name)
      .sort((x, y) => Date.parse(x.startedAt) - Date.parse(y.startedAt))
    for (const r of mine) {
      const start = Date.parse(r.startedAt)
      const end = r.endedAt ?? new Date().toISOString()
      let slot = free.findIndex((t) => t <= start)
      if (slot < 0) slot = free.indexOf(Math.min(...free))
      free[slot] = Date.parse(end)
      runs.push({
        agent: name,
        slot,
        groupId: r.groupId,
        workItemId: r.workItemId,
        startedAt: r.startedAt,
        endedAt: end,
        outcome: r.outcome ?? 'lost',
      })
    }
  }
  const marks: TraceMark[] = groups.flatMap((g) => [
    ...g.approvals.map((a): TraceMark => ({
      at: a.at,
      kind: 'approval',
      label: `approved by ${nameOf(a.approverId)}`,
      groupId: g.groupId,
    })),
    ...g.changeRequests.map((c): TraceMark => ({
      at: c.at,
      kind: 'change-request',
      label: c.reason,
      groupId: g.groupId,
    })),
    ...g.rejections.map((r): TraceMark => ({
      at: r.at,
      kind: 'rejection',
      label: `review sent back: ${r.reason.split('\n')[0]}`,
      groupId: g.groupId,
    })),
    ...g.offers
      .filter((o) => o.ownershipEpochBefore > 0 && !g.rejections.some((r) => r.workItemId === o.workItemId))
      .map((o): TraceMark => ({
        at: o.at,
        kind: 'reassignment',
        label: `offered again to ${o.candidates.map(nameOf).join(', ')}`,
        groupId: g.groupId,
      })),
  ])
  marks.sort((x, y) => Date.parse(x.at) - Date.parse(y.at))
  return {
    seed: run.seed,
    store: run.store,
    startedAt: run.startedAt,
    endedAt: new Date().toISOString(),
    missions,
    agents: [
      {agentId: `${f.organization}:human:owner`, name: 'owner', role: 'human', slots: 0},
      ...['coordinator', 'coordinator-2'].map((n) => ({
        agentId: `${f.organization}:agent:${n}`,
        name: n,
        role: 'coordinator' as const,
        slots: 1,
      })),
      ...Object.entries(WORKER_SLOTS).map(([n, slots]) => ({
        agentId: `${f.organization}:agent:${n}`,
        name: n,
        role: 'worker' as const,
        slots,
      })),
    ],
    runs,
    marks,
    checks,
  }
}

function mission(g: GroupFacts, nameOf: (id: string) => string): TraceMission {
  const s = g.state!
  const approval = g.approvals.at(-1)
  const approvedAt = approval?.at
  return {
    missionId: s.missionId,
    groupId: g.groupId,
    title: s.mission.objective,
    ...(s.mission.parent ? {parentMissionId: s.mission.parent.missionId} : {}),
    state: s.mission.state,
    ...(approvedAt ? {approvedAt} : {}),
    ...(approval
      ? {approvedArtifacts: approval.artifactHashes.map((hash) => ({name: g.names.get(hash) ?? hash, hash}))}
      : {}),
    workItems: Object.values(s.workItems).map((w: WorkItemView) => {
      const owner = [...g.runs].reverse().find((r) => r.workItemId === w.workItemId)?.agentId
      return {
        workItemId: w.workItemId,
        title: w.contract.goal,
        stage: pocStage(w.contract.constraints)?.stage ?? 'work',
        state: w.state,
        dependsOn: w.contract.dependencyWorkItemIds,
        ...(owner ? {owner: nameOf(owner)} : {}),
        attempts: Math.max(1, g.offers.filter((o) => o.workItemId === w.workItemId).length),
        ...(w.childMission ? {childMissionId: w.childMission.missionId} : {}),
      }
    }),
  }
}
