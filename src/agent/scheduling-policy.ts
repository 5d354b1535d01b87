// The Organization's scheduling policy for one Agent (spec §11.1: "Escalation of organization
// priority goes through policy or the MissionOwner"): per Group, its weight (share of slot time),
// priority class and quota, with a default for every other Group. A JSON file the operator owns:
//
//   {"default": {"weight": 1, "priorityClass": 0},
//    "groups": {"urn:…:group:…": {"weight": 3, "priorityClass": 1, "quota": 1}}}
//
// `mwp agent run --scheduling-policy FILE` reads it at start and again whenever it changes; a
// change reorders queued work at the next decision (Scheduler.setGroup). A Coordinator's urgency
// is not an input here: only this file (or the library's groupPolicy) moves a Group's share.

import {readFileSync, unwatchFile, watchFile} from 'node:fs'
import {MwpError} from '../errors.js'
import type {GroupPolicy} from './scheduler.js'

/** A policy file that cannot be used: a usage error (exit 2) like any invalid Agent configuration. */
export class SchedulingPolicyError extends MwpError<'agent-invalid'> {
  constructor(message: string) {
    super('agent-invalid', message)
  }
}

export const DEFAULT_GROUP_POLICY: GroupPolicy = {weight: 1, priorityClass: 0}

/** Each Group's policy: its own entry over the default's members over DEFAULT_GROUP_POLICY. */
export type GroupPolicySource = (groupId: string) => GroupPolicy

export function parseSchedulingPolicy(text: string, where: string): GroupPolicySource {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (e) {
    throw new SchedulingPolicyError(`${where} is not JSON: ${(e as Error).message}`)
  }
  if (!isObject(doc)) throw new SchedulingPolicyError(`${where} must be a JSON object`)
  for (const k of Object.keys(doc))
    if (k !== 'default' && k !== 'groups') throw new SchedulingPolicyError(`${where}: unknown member "${k}"`)
  const fallback = {...DEFAULT_GROUP_POLICY, ...entry(doc.default, `${where} default`)}
  const groups = new Map<string, GroupPolicy>()
  if (doc.groups !== undefined) {
    if (!isObject(doc.groups)) throw new SchedulingPolicyError(`${where}: "groups" must be an object of Group IDs`)
    for (const [groupId, e] of Object.entries(doc.groups))
      groups.set(groupId, {...fallback, ...entry(e, `${where} groups["${groupId}"]`)})
  }
  return (groupId) => groups.get(groupId) ?? fallback
}

export function readSchedulingPolicy(path: string): GroupPolicySource {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    throw new SchedulingPolicyError(`cannot read the scheduling policy ${path}: ${(e as Error).message}`)
  }
  return parseSchedulingPolicy(text, path)
}

/**
 * Re-reads `file` when it changes (polled: an editor may replace the file rather than write it);
 * `onChange` gets each good policy, `onError` why an edit is unusable, and the last good policy
 * stays. Returns the function that stops watching.
 */
export function watchSchedulingPolicy(
  file: string,
  onChange: (source: GroupPolicySource) => void,
  onError: (why: string) => void,
): () => void {
  const reread = () => {
    try {
      onChange(readSchedulingPolicy(file))
    } catch (e) {
      onError((e as Error).message)
    }
  }
  watchFile(file, {interval: 1000}, reread)
  return () => unwatchFile(file, reread)
}

function entry(value: unknown, where: string): Partial<GroupPolicy> {
  if (value === undefined) return {}
  if (!isObject(value)) throw new SchedulingPolicyError(`${where} must be an object`)
  const out: Partial<GroupPolicy> = {}
  for (const [k, v] of Object.entries(value)) {
    if (k === 'weight') {
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
        throw new SchedulingPolicyError(`${where}.weight must be a number > 0`)
      out.weight = v
    } else if (k === 'priorityClass' || k === 'quota') {
      const min = k === 'quota' ? 1 : 0
      if (!Number.isSafeInteger(v) || (v as number) < min)
        throw new SchedulingPolicyError(`${where}.${k} must be an integer ≥ ${min}`)
      out[k] = v as number
    } else throw new SchedulingPolicyError(`${where}: unknown member "${k}" (weight, priorityClass, quota)`)
  }
  return out
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
