// Facts both renderers derive from a trace: its time span, the Worker slot lanes, each lane's
// utilisation, the verdict, and lookups from a run to its Mission and WorkItem.

import {parseTime} from './format.js'
import type {PocTrace, TraceMission, TraceRun, TraceWorkItem} from './trace.js'

export interface TimeSpan {
  start: number
  end: number
}

/**
 * The span the pictures cover: the run's start and end, widened to every run and mark so nothing
 * the run recorded falls outside the axis (clocks of Agent processes may disagree slightly).
 */
export function timeSpan(trace: PocTrace): TimeSpan {
  const times = [
    trace.startedAt,
    trace.endedAt,
    ...trace.runs.flatMap((r) => [r.startedAt, r.endedAt]),
    ...trace.marks.map((m) => m.at),
  ]
    .map(parseTime)
    .filter((t): t is number => t !== undefined)
  if (times.length === 0) return {start: 0, end: 1}
  const start = parseTime(trace.startedAt) ?? Math.min(...times)
  const lo = Math.min(start, ...times)
  const hi = Math.max(...times)
  return {start: lo, end: hi > lo ? hi : lo + 1}
}

/** The run's declared duration (endedAt − startedAt), 0 when either is unparsable. */
export function durationMs(trace: PocTrace): number {
  const a = parseTime(trace.startedAt)
  const b = parseTime(trace.endedAt)
  return a !== undefined && b !== undefined && b > a ? b - a : 0
}

export interface Lane {
  agent: string
  slot: number
  key: string // `${agent}#${slot}`
  runs: TraceRun[]
}

export const laneKey = (agent: string, slot: number): string => `${agent}#${slot}`

/**
 * One lane per Worker slot, in the order the Agents are listed and by slot number; a run on a
 * slot no Worker declares (a coordinator's, or a slot past its count) still gets its lane, after them.
 */
export function lanes(trace: PocTrace): Lane[] {
  const byKey = new Map<string, Lane>()
  const add = (agent: string, slot: number) => {
    const key = laneKey(agent, slot)
    let lane = byKey.get(key)
    if (!lane) byKey.set(key, (lane = {agent, slot, key, runs: []}))
    return lane
  }
  for (const a of trace.agents) if (a.role === 'worker') for (let s = 0; s < a.slots; s++) add(a.name, s)
  const extra: Lane[] = []
  for (const r of trace.runs) {
    const known = byKey.has(laneKey(r.agent, r.slot))
    const lane = add(r.agent, r.slot)
    if (!known) extra.push(lane)
    lane.runs.push(r)
  }
  const declared = [...byKey.values()].filter((l) => !extra.includes(l))
  extra.sort((a, b) => a.agent.localeCompare(b.agent) || a.slot - b.slot)
  return [...declared, ...extra]
}

/** The share of `span` a lane was occupied, overlapping runs counted once. */
export function utilisation(lane: Lane, span: TimeSpan): number {
  const intervals = lane.runs
    .map((r) => [parseTime(r.startedAt), parseTime(r.endedAt)] as const)
    .filter((i): i is readonly [number, number] => i[0] !== undefined && i[1] !== undefined && i[1] > i[0])
    .map(([a, b]) => [Math.max(a, span.start), Math.min(b, span.end)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0])
  let busy = 0
  let cursor = -Infinity
  for (const [a, b] of intervals) {
    const from = Math.max(a, cursor)
    if (b > from) busy += b - from
    cursor = Math.max(cursor, b)
  }
  const total = span.end - span.start
  return total > 0 ? busy / total : 0
}

export interface Verdict {
  passed: number
  total: number
  ok: boolean // every check passed (and there was at least one)
  mutantsCaught?: number
  mutants?: number
}

export function verdict(trace: PocTrace): Verdict {
  const passed = trace.checks.filter((c) => c.passed).length
  const v: Verdict = {passed, total: trace.checks.length, ok: trace.checks.length > 0 && passed === trace.checks.length}
  if (trace.selfTest) {
    v.mutants = trace.selfTest.length
    v.mutantsCaught = trace.selfTest.filter((m) => m.caughtBy.length > 0).length
  }
  return v
}

/** The failed checks first, each group in the run's order, so a reader meets the problems at the top. */
export function checksFailedFirst(trace: PocTrace): PocTrace['checks'] {
  return [...trace.checks.filter((c) => !c.passed), ...trace.checks.filter((c) => c.passed)]
}

/** The top-level Missions (no parent, or a parent the trace does not hold) in the order recorded. */
export function rootMissions(trace: PocTrace): TraceMission[] {
  const ids = new Set(trace.missions.map((m) => m.missionId))
  return trace.missions.filter((m) => m.parentMissionId === undefined || !ids.has(m.parentMissionId))
}

/** Missions in reading order: each root followed by its descendants (depth first), each Mission once. */
export function missionsInOrder(trace: PocTrace): {mission: TraceMission; depth: number}[] {
  const out: {mission: TraceMission; depth: number}[] = []
  const seen = new Set<string>()
  const visit = (m: TraceMission, depth: number) => {
    if (seen.has(m.missionId)) return
    seen.add(m.missionId)
    out.push({mission: m, depth})
    for (const c of trace.missions) if (c.parentMissionId === m.missionId) visit(c, depth + 1)
  }
  for (const r of rootMissions(trace)) visit(r, 0)
  // A parent cycle leaves Missions no root reaches: show them too.
  for (const m of trace.missions) visit(m, 0)
  return out
}

export interface Lookup {
  missionOfGroup(groupId: string): TraceMission | undefined
  workItem(groupId: string, workItemId: string): TraceWorkItem | undefined
  mission(missionId: string): TraceMission | undefined
}

export function lookup(trace: PocTrace): Lookup {
  const byGroup = new Map(trace.missions.map((m) => [m.groupId, m]))
  const byId = new Map(trace.missions.map((m) => [m.missionId, m]))
  return {
    missionOfGroup: (g) => byGroup.get(g),
    mission: (id) => byId.get(id),
    workItem: (g, w) =>
      byGroup.get(g)?.workItems.find((i) => i.workItemId === w) ??
      // A run's groupId may be off (a reassigned item): fall back to any Mission holding the id.
      trace.missions.flatMap((m) => m.workItems).find((i) => i.workItemId === w),
  }
}
