// Stores a run's report: report.json (the trace itself, for tools and for a later re-render) and
// report.html (renderHtml) in one folder.

import {mkdirSync, writeFileSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {renderHtml} from './html.js'
import type {PocTrace} from './trace.js'

export interface ReportPaths {
  json: string
  html: string
}

/** Writes both files into `dir` (created with its parents), returning their absolute paths. */
export function writeReport(dir: string, trace: PocTrace): ReportPaths {
  const root = resolve(dir)
  mkdirSync(root, {recursive: true})
  const paths = {json: join(root, 'report.json'), html: join(root, 'report.html')}
  writeFileSync(paths.json, stableJson(trace) + '\n')
  writeFileSync(paths.html, renderHtml(trace))
  return paths
}

/**
 * `value` as pretty JSON with every object's keys sorted, so two runs' reports diff line by line
 * whatever order the run built its objects in. Arrays keep their order: it is the run's order.
 */
export function stableJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2)
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    for (const [k, v] of entries) out[k] = sortKeys(v)
    return out
  }
  return value
}
