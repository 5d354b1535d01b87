import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {renderHtml} from '../../../src/poc/report/html.js'
import {stableJson, writeReport} from '../../../src/poc/report/write.js'
import {buildFixture} from './fixture.js'

const tmp = mkdtempSync(join(tmpdir(), 'poc-report-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

/** Whether every object in `v` lists its keys in sorted order. */
function sortedKeys(v: unknown): boolean {
  if (Array.isArray(v)) return v.every(sortedKeys)
  if (v === null || typeof v !== 'object') return true
  const keys = Object.keys(v)
  return keys.every((k, i) => i === 0 || keys[i - 1]! < k) && Object.values(v).every(sortedKeys)
}

describe('writeReport', () => {
  it('writes report.json and report.html into a new folder', () => {
    const trace = buildFixture()
    const dir = join(tmp, 'a', 'b')
    const paths = writeReport(dir, trace)
    expect(paths).toEqual({json: join(dir, 'report.json'), html: join(dir, 'report.html')})
    const json = readFileSync(paths.json, 'utf8')
    expect(JSON.parse(json)).toEqual(trace)
    expect(sortedKeys(JSON.parse(json))).toBe(true)
    expect(json).toContain('\n  "agents": [') // pretty
    expect(json.endsWith('}\n')).toBe(true)
    expect(readFileSync(paths.html, 'utf8')).toBe(renderHtml(trace))
  })

  it('writes the same JSON whatever order the run built its objects in', () => {
    const trace = buildFixture()
    const reversed = JSON.parse(JSON.stringify(trace), (_k, v: unknown) =>
      v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
    )
    expect(Object.keys(reversed)[0]).toBe('selfTest')
    expect(stableJson(reversed)).toBe(stableJson(trace))
    expect(JSON.stringify(reversed)).not.toBe(JSON.stringify(trace)) // the reversal did change the order
    expect(sortedKeys(JSON.parse(JSON.stringify(reversed)))).toBe(false)
  })

  it('overwrites an earlier report', () => {
    const dir = join(tmp, 'again')
    writeReport(dir, buildFixture())
    const t = buildFixture()
    t.seed = 7
    const paths = writeReport(dir, t)
    expect(JSON.parse(readFileSync(paths.json, 'utf8')).seed).toBe(7)
  })
})
