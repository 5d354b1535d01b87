// The WorkItems a plan stands for in one Mission, at its current change-request round: the main
// graph, plus the plan's corrective WorkItems once per change request (§7.3: "the Coordinator
// creates revised or corrective WorkItems without deleting earlier submissions").
//
// Every WorkItem ID is derived from the Mission ID and the instance key, so any Coordinator —
// the first one after a crash, or a replacement at a higher epoch (§7.2) — knows which planned
// WorkItems the Group already holds by replay alone, and never authorizes one twice.

import {createHash} from 'node:crypto'
import type {Plan, PlanItem} from './plan.js'

export interface Planned {
  /** `key` for the main graph, `key.cN` for change-request round N. */
  instance: string
  workItemId: string
  item: PlanItem
  /** 0 for the main graph, N for the Nth change request. */
  round: number
  /** The MissionOwner's reason, for a corrective WorkItem. */
  reason?: string
  /** The instances this one depends on, and takes its inputs from. */
  dependsOn: string[]
  inputsFrom: string[]
  independentOf: string[]
}

/** A stable URN from its parts (an RFC 4122 version-8 layout over SHA-256: no randomness). */
export function derivedUrn(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest('hex')
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)
  return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** Every planned WorkItem of the Mission after `changeReasons.length` change requests, in plan order. */
export function instantiate(plan: Plan, missionId: string, changeReasons: readonly string[]): Planned[] {
  const out: Planned[] = []
  // Where a key resolves now: its latest instance, or the latest instance that replaces it.
  const latest = new Map<string, string>()
  const add = (item: PlanItem, round: number, reason?: string) => {
    const instance = round === 0 ? item.key : `${item.key}.c${round}`
    const resolve = (keys: readonly string[]) => keys.map((k) => latest.get(k) ?? k)
    const dependsOn = resolve(item.dependsOn ?? [])
    out.push({
      instance,
      workItemId: derivedUrn(missionId, 'work-item', instance),
      item,
      round,
      ...(reason !== undefined ? {reason} : {}),
      dependsOn,
      inputsFrom: item.inputsFrom ? resolve(item.inputsFrom) : dependsOn,
      independentOf: resolve(item.independentOf ?? []),
    })
    latest.set(item.key, instance)
    if (item.replaces) latest.set(item.replaces, instance)
  }
  for (const item of plan.workItems) add(item, 0)
  changeReasons.forEach((reason, i) => {
    for (const item of plan.onChangeRequest ?? []) add(item, i + 1, reason)
  })
  return out
}

/**
 * The instances whose Artifacts form the submitted set (plan `submit`, default every main
 * WorkItem), each replaced by its latest corrective instance, plus corrective WorkItems that
 * replace nothing.
 */
export function submittedInstances(plan: Plan, planned: readonly Planned[]): string[] {
  const replacedBy = new Map<string, string>()
  for (const p of planned) if (p.item.replaces) replacedBy.set(p.item.replaces, p.instance)
  const follow = (instance: string): string => {
    const key = planned.find((p) => p.instance === instance)!.item.key
    const next = replacedBy.get(key)
    return next !== undefined && next !== instance ? follow(next) : instance
  }
  const base = plan.submit ?? plan.workItems.map((i) => i.key)
  const chosen = new Set(base.map(follow))
  for (const p of planned) if (p.round > 0 && !p.item.replaces) chosen.add(p.instance)
  return planned.filter((p) => chosen.has(p.instance)).map((p) => p.instance)
}
